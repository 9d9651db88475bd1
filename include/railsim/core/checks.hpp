#pragma once
// Range checks for numbers from the user (command line, Python keywords, spec files): each
// failure throws an InputError that names the field.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace railsim {

// Range of a numeric field; `exclusive_min` lets a field require strictly positive values.
struct Range {
  double min = -std::numeric_limits<double>::max();
  double max = std::numeric_limits<double>::max();
  bool exclusive_min = false;

  static Range positive(double max = 1e30) { return {0.0, max, true}; }
  static Range non_negative(double max = 1e30) { return {0.0, max, false}; }
  static Range between(double lo, double hi) { return {lo, hi, false}; }
  bool contains(double v) const;
  std::string describe() const;
};

// Checks for values coming from the command line (or computed): throw InputError naming `field`.
double check_number(const std::string& field, double value, Range r);
std::int64_t check_integer(const std::string& field, std::int64_t value, std::int64_t min,
                           std::int64_t max);
// a x b for integers from the user (tp x pp x dp, batch x seq, GPUs x NICs): throws
// InputError(field, "<what> = a x b is beyond 2^63 ...") instead of overflowing.
std::int64_t checked_mul(const std::string& field, std::int64_t a, std::int64_t b,
                         std::string_view what);

}  // namespace railsim
