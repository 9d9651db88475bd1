#pragma once
// Names of enumerations: one table per enum gives its one spelling, used by to_string, by the
// parsers of CLI options and JSON fields, and in every error that lists the valid names.
//
//   inline constexpr EnumNames<Color, 2> kColorNames{{{Color::red, "red"}, {Color::blue, "blue"}}};
//   std::string_view to_string(Color c) { return kColorNames.name(c); }
//   Color parse_color(std::string_view s, const std::string& option) {
//     return kColorNames.parse(s, option, "color");
//   }
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "railsim/core/error.hpp"

namespace railsim {

template <class E, std::size_t N>
struct EnumNames {
  std::array<std::pair<E, std::string_view>, N> entries;

  constexpr std::string_view name(E e) const {
    for (const auto& [v, n] : entries)
      if (v == e) return n;
    return "?";
  }
  // "a, b, c": for error messages and --help.
  std::string list() const {
    std::string out;
    for (const auto& [v, n] : entries) {
      if (!out.empty()) out += ", ";
      out += n;
    }
    return out;
  }
  // Throws InputError(option, "unknown <what> '<s>'; valid: ...").
  E parse(std::string_view s, const std::string& option, std::string_view what) const {
    for (const auto& [v, n] : entries)
      if (n == s) return v;
    throw InputError(option,
                     "unknown " + std::string(what) + " '" + printable(s) + "'; valid: " + list());
  }
};

}  // namespace railsim
