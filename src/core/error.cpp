#include "railsim/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace railsim {

std::string printable(std::string_view s, std::size_t max) {
  std::string out;
  out.reserve(std::min(s.size(), max) + 3);
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::string piece;
    std::size_t len = 1;
    if (c == '\n') {
      piece = "\\n";
    } else if (c == '\r') {
      piece = "\\r";
    } else if (c == '\t') {
      piece = "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      piece = fmt::format("\\x{:02x}", c);
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      // C1 controls (U+0080..U+009F, e.g. CSI) in UTF-8: terminals may act on them too.
      piece = fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
      len = 2;
    } else {
      // Keep a UTF-8 sequence whole so that a cut never splits a character.
      if (c >= 0xc0)
        while (i + len < s.size() && (static_cast<unsigned char>(s[i + len]) & 0xc0) == 0x80 &&
               len < 4)
          ++len;
      piece.assign(s.substr(i, len));
    }
    if (out.size() + piece.size() > max) {
      out += "...";
      break;
    }
    out += piece;
    i += len;
  }
  return out;
}

}  // namespace railsim
