#include "railsim/sweep/values.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "railsim/core/error.hpp"

namespace railsim::sweep {

namespace {

std::vector<std::string> split_items(const std::string& option, const std::string& text) {
  if (text.empty()) throw InputError(option, "empty list; expected a value, a list or a range");
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      throw InputError(option,
                       fmt::format("item {} of '{}' is empty", items.size() + 1, printable(text)));
    items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

std::string where(std::size_t item, std::size_t items) {
  return items > 1 ? fmt::format("item {} ", item + 1) : "";
}

// One number of an item; `integer` demands an integer.
double number(const std::string& option, std::string_view part, bool integer,
              const std::string& context) {
  const std::string s(part);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || *end != '\0' || !std::isfinite(v))
    throw InputError(option, fmt::format("{}'{}' is not a number", context, printable(s)));
  if (integer && v != std::floor(v))
    throw InputError(option, fmt::format("{}'{}' is not an integer", context, printable(s)));
  if (integer && std::fabs(v) > 9.0e15)
    throw InputError(option, fmt::format("{}'{}' is too large", context, printable(s)));
  return v;
}

void check_count(const std::string& option, std::size_t have, double more,
                 std::int64_t max_points) {
  if (static_cast<double>(have) + more > static_cast<double>(max_points))
    throw InputError(option, fmt::format("more than {} values (--max-points); the list expands to "
                                         "at least {:.0f}",
                                         max_points, static_cast<double>(have) + more));
}

std::vector<double> parse(const std::string& option, const std::string& text, bool integer,
                          std::int64_t max_points) {
  const std::vector<std::string> items = split_items(option, text);
  std::vector<double> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    const std::string ctx = where(i, items.size());
    const std::size_t colon = item.find(':');
    const std::size_t dots = item.find("..");
    if (colon != std::string::npos) {  // start:stop:step
      const std::size_t colon2 = item.find(':', colon + 1);
      if (colon2 == std::string::npos || item.find(':', colon2 + 1) != std::string::npos)
        throw InputError(option,
                         fmt::format("{}'{}': a range is start:stop:step", ctx, printable(item)));
      const std::string_view sv(item);
      const double start = number(option, sv.substr(0, colon), integer, ctx);
      const double stop = number(option, sv.substr(colon + 1, colon2 - colon - 1), integer, ctx);
      const double step = number(option, sv.substr(colon2 + 1), integer, ctx);
      if (step <= 0)
        throw InputError(option, fmt::format("{}'{}': the step must be positive, got {}", ctx,
                                             printable(item), step));
      if (stop < start)
        throw InputError(option, fmt::format("{}'{}': the range descends ({} > {}); write it "
                                             "ascending",
                                             ctx, printable(item), start, stop));
      // A relative tolerance so that 0.1:0.3:0.1 includes 0.3.
      const double n = std::floor((stop - start) / step * (1 + 1e-12)) + 1;
      check_count(option, out.size(), n, max_points);
      for (std::int64_t k = 0; k < static_cast<std::int64_t>(n); ++k)
        out.push_back(start + static_cast<double>(k) * step);
    } else if (dots != std::string::npos) {  // start..stop x factor
      const std::size_t x = item.find('x', dots + 2);
      if (x == std::string::npos)
        throw InputError(option, fmt::format("{}'{}': a geometric range is start..stop x factor "
                                             "(1024..8192x2)",
                                             ctx, printable(item)));
      const std::string_view sv(item);
      const double start = number(option, sv.substr(0, dots), integer, ctx);
      const double stop = number(option, sv.substr(dots + 2, x - dots - 2), integer, ctx);
      const double factor = number(option, sv.substr(x + 1), integer, ctx);
      if (factor <= 1)
        throw InputError(option, fmt::format("{}'{}': the factor must be greater than 1, got {}",
                                             ctx, printable(item), factor));
      if (start <= 0)
        throw InputError(option, fmt::format("{}'{}': a geometric range starts above 0, got {}",
                                             ctx, printable(item), start));
      if (stop < start)
        throw InputError(option, fmt::format("{}'{}': the range descends ({} > {}); write it "
                                             "ascending",
                                             ctx, printable(item), start, stop));
      for (double v = start; v <= stop * (1 + 1e-12); v *= factor) {
        check_count(option, out.size(), 1, max_points);
        out.push_back(v);
      }
    } else {
      check_count(option, out.size(), 1, max_points);
      out.push_back(number(option, item, integer, ctx));
    }
  }
  return out;
}

}  // namespace

std::vector<std::int64_t> parse_integers(const std::string& option, const std::string& text,
                                         std::int64_t max_points) {
  std::vector<std::int64_t> out;
  for (double v : parse(option, text, /*integer=*/true, max_points))
    out.push_back(static_cast<std::int64_t>(v));
  return out;
}

std::vector<double> parse_reals(const std::string& option, const std::string& text,
                                std::int64_t max_points) {
  return parse(option, text, /*integer=*/false, max_points);
}

std::vector<std::string> parse_names(const std::string& option, const std::string& text,
                                     std::int64_t max_points) {
  std::vector<std::string> items = split_items(option, text);
  check_count(option, 0, static_cast<double>(items.size()), max_points);
  return items;
}

}  // namespace railsim::sweep
