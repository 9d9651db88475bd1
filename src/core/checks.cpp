#include "railsim/core/checks.hpp"

#include <fmt/format.h>

#include <cmath>

#include "railsim/core/error.hpp"

namespace railsim {

namespace {

std::string fmt_num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:g}", v);
}

}  // namespace

bool Range::contains(double v) const {
  if (!std::isfinite(v)) return false;
  if (exclusive_min ? !(v > min) : !(v >= min)) return false;
  return v <= max;
}

std::string Range::describe() const {
  const bool has_min = min > -std::numeric_limits<double>::max();
  const bool has_max = max < 1e29;
  if (has_min && has_max)
    return fmt::format("a number {} {} and <= {}", exclusive_min ? ">" : ">=", fmt_num(min),
                       fmt_num(max));
  if (has_min) return fmt::format("a number {} {}", exclusive_min ? ">" : ">=", fmt_num(min));
  if (has_max) return fmt::format("a number <= {}", fmt_num(max));
  return "a finite number";
}

double check_number(const std::string& field, double value, Range r) {
  if (!r.contains(value))
    throw InputError(field, fmt::format("got {}, expected {}", fmt_num(value), r.describe()));
  return value;
}

std::int64_t check_integer(const std::string& field, std::int64_t value, std::int64_t min,
                           std::int64_t max) {
  if (value < min || value > max)
    throw InputError(field,
                     fmt::format("got {}, expected an integer from {} to {}", value, min, max));
  return value;
}

std::int64_t checked_mul(const std::string& field, std::int64_t a, std::int64_t b,
                         std::string_view what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw InputError(field,
                     fmt::format("{} = {} x {} is beyond 2^63; give smaller values", what, a, b));
  return r;
}

}  // namespace railsim
