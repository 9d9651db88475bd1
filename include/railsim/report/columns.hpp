#pragma once
// Column makers for the views that modules build (report::Table): a name, a label for people,
// and the type, unit, precision and style of the values, as every table prints them.
#include "railsim/report/table.hpp"

namespace railsim::report::columns {

inline Column text(const char* name, const char* label, bool human = true) {
  return {.name = name, .label = label, .human = human};
}
inline Column count(const char* name, const char* label, bool human = true) {
  return {.name = name, .label = label, .type = Type::integer, .human = human};
}
inline Column counts(const char* name, const char* label, bool human = true) {
  return {.name = name, .label = label, .type = Type::integers, .human = human};
}
inline Column usd(const char* name, const char* label, bool human = true) {
  return {.name = name, .label = label, .type = Type::real, .style = Style::usd, .human = human};
}
inline Column watts(const char* name, const char* label, bool human = true) {
  return {.name = name,
          .label = label,
          .type = Type::real,
          .unit = "W",
          .precision = 4,
          .style = Style::si,
          .human = human};
}
inline Column real(const char* name, const char* label, const char* unit, int precision,
                   bool human = true) {
  return {.name = name,
          .label = label,
          .type = Type::real,
          .unit = unit,
          .precision = precision,
          .human = human};
}
inline Column fraction(const char* name, const char* label, bool human = true) {
  return {.name = name,
          .label = label,
          .type = Type::real,
          .precision = 1,
          .style = Style::fraction,
          .human = human};
}
inline Column flag(const char* name, const char* label, bool human = true) {
  return {.name = name, .label = label, .type = Type::boolean, .human = human};
}

inline Column seconds(const char* name, const char* label, int digits) {
  return {.name = name,
          .label = label,
          .type = Type::real,
          .unit = "s",
          .precision = digits,
          .style = Style::si};
}

}  // namespace railsim::report::columns
