#include "railsim/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace railsim {

namespace {

// One UTF-8 character at s[i]: its code point and length, or -1 (length 1) for a byte that does
// not start a well-formed sequence (a stray continuation byte, an overlong form, a surrogate, a
// value beyond U+10FFFF, a sequence cut short).
std::pair<long, std::size_t> decode(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return {c, 1};
  std::size_t len = 0;
  long cp = 0, min = 0;
  if ((c & 0xe0) == 0xc0) {
    len = 2, cp = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3, cp = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return {-1, 1};
  }
  if (i + len > s.size()) return {-1, 1};
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return {-1, 1};
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {-1, 1};
  return {cp, len};
}

bool is_control(long cp) {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

// Unicode's explicit bidirectional formatting characters (UAX #9, section 2): they reorder the
// text around them on screen, so a name could show as something it is not.
bool is_bidi_control(long cp) {
  return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string printable(std::string_view s, std::size_t max) {
  std::string out;
  out.reserve(std::min(s.size(), max) + 3);
  for (std::size_t i = 0; i < s.size();) {
    const auto [cp, len] = decode(s, i);
    std::string piece;
    if (cp == '\n') {
      piece = "\\n";
    } else if (cp == '\r') {
      piece = "\\r";
    } else if (cp == '\t') {
      piece = "\\t";
    } else if (cp < 0) {
      piece = fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
    } else if (cp < 0x80 && is_control(cp)) {
      piece = fmt::format("\\x{:02x}", cp);
    } else if (is_control(cp) || is_bidi_control(cp)) {
      piece = fmt::format("\\u{:04x}", cp);
    } else {
      piece.assign(s.substr(i, len));  // a whole character: a cut never splits one
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

std::optional<Unprintable> find_unprintable(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto [cp, len] = decode(s, i);
    if (cp < 0)
      return Unprintable{
          i, fmt::format("byte 0x{:02x} (not UTF-8)", static_cast<unsigned char>(s[i]))};
    if (is_control(cp)) return Unprintable{i, fmt::format("U+{:04X} (a control character)", cp)};
    if (is_bidi_control(cp))
      return Unprintable{i, fmt::format("U+{:04X} (a bidirectional-text control)", cp)};
    i += len;
  }
  return std::nullopt;
}

void check_printable(const std::string& field, std::string_view text) {
  if (const auto u = find_unprintable(text))
    throw InputError(field, fmt::format("'{}' holds {} at byte {}; names and notes are shown on "
                                        "terminals and in reports, so they must be printable text",
                                        printable(text), u->what, u->byte));
}

std::string python_spelling(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const bool starts = text.compare(i, 2, "--") == 0 && i + 2 < text.size() &&
                        std::isalpha(static_cast<unsigned char>(text[i + 2])) != 0 &&
                        (i == 0 || text[i - 1] == ' ' || text[i - 1] == '(' || text[i - 1] == '\'');
    if (!starts) {
      out += text[i++];
      continue;
    }
    std::size_t j = i + 2;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) != 0 ||
                               text[j] == '-' || text[j] == '_'))
      ++j;
    std::string name(text.substr(i + 2, j - i - 2));
    if (name == "help") {
      out += text.substr(i, j - i);
    } else {
      for (char& c : name)
        if (c == '-') c = '_';
      out += name;
    }
    i = j;
  }
  return out;
}

}  // namespace railsim
