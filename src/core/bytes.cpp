#include "railsim/core/bytes.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <stdexcept>

#include "railsim/core/error.hpp"
#include "railsim/core/units.hpp"

namespace railsim::units {

double parse_bytes(const std::string& s, const std::string& option) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (const std::exception&) {
    throw InputError(
        option, fmt::format("'{}' is not a size; write e.g. 1e9, 512MB or 1GiB", printable(s)));
  }
  std::string unit = s.substr(pos);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.erase(0, 1);
  double mul = 0;
  if (unit.empty() || unit == "B")
    mul = 1;
  else if (unit == "KB")
    mul = 1e3;
  else if (unit == "MB")
    mul = 1e6;
  else if (unit == "GB")
    mul = 1e9;
  else if (unit == "TB")
    mul = 1e12;
  else if (unit == "KiB")
    mul = 1024.0;
  else if (unit == "MiB")
    mul = 1024.0 * 1024;
  else if (unit == "GiB")
    mul = units::kGiB;
  else if (unit == "TiB")
    mul = units::kGiB * 1024;
  else
    throw InputError(option, fmt::format("unknown unit '{}' in '{}'; valid: B, KB, MB, GB, TB, "
                                         "KiB, MiB, GiB, TiB",
                                         printable(unit), printable(s)));
  const double b = v * mul;
  if (!std::isfinite(b) || !(b > 0) || b > 1e15)
    throw InputError(option, fmt::format("'{}' must be a size in (0, 1e15] bytes", printable(s)));
  return b;
}

}  // namespace railsim::units
