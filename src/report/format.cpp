#include "railsim/report/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace railsim::report {

std::string group_thousands(std::string s) {
  const std::size_t begin = s.find_first_of("0123456789");
  if (begin == std::string::npos) return s;
  std::size_t end = s.find_first_not_of("0123456789", begin);
  if (end == std::string::npos) end = s.size();
  for (std::size_t i = end; i > begin + 3; i -= 3) s.insert(i - 3, 1, ',');
  return s;
}

std::string thousands(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);  // "-0"
  return group_thousands(std::move(s));
}

std::string money(double usd) {
  const std::string sign = usd < 0 ? "-" : "";
  const double a = std::fabs(usd);
  if (a >= 1e6) return fmt::format("{}${:.2f}M", sign, a / 1e6);
  return sign + "$" + thousands(a);
}

std::string money_fine(double usd) {
  if (std::fabs(usd) >= 100) return money(usd);
  return fmt::format("${:.3f}", usd);
}

std::string percent(double fraction, int decimals) {
  return fmt::format("{:.{}f}%", 100 * fraction, decimals);
}

std::string share(double x) {
  if (x <= 0) return "0%";
  if (x >= 1) return "100%";
  if (x < 0.001) return fmt::format("{:.2g}%", 100 * x);
  const double rest = 1.0 - x;
  int digits = 1;
  while (digits < 6 && 100 * rest < 0.5 * std::pow(10.0, -digits + 1)) ++digits;
  return fmt::format("{:.{}f}%", 100 * x, digits);
}

std::string duration(double s) {
  if (!std::isfinite(s)) return "never";
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 2 * 3600) return fmt::format("{:.1f} min", s / 60);
  if (s < 3 * 86400) return fmt::format("{:.2f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

std::string watts(double w) {
  if (w == 0) return "0 W";
  static const char* kPrefix[] = {"", "k", "M", "G"};
  int p = 0;
  while (std::fabs(w) >= 1000 && p < 3) {
    w /= 1000;
    ++p;
  }
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(w))));
  return fmt::format("{:.{}f} {}W", w, std::max(0, 3 - magnitude), kPrefix[p]);
}

std::string count(double n) {
  if (n >= 1e12) return fmt::format("{:g}T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:g}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:g}M", n / 1e6);
  return thousands(n);
}

std::string si(double v, const std::string& unit) {
  static const char* kPrefix[] = {"", "k", "M", "G", "T", "P", "E"};
  int p = 0;
  double x = v;
  while (std::fabs(x) >= 999.5 && p < 6) {
    x /= 1000.0;
    ++p;
  }
  const int digits = std::fabs(x) >= 99.95 ? 0 : std::fabs(x) >= 9.995 ? 1 : 2;
  std::string s = fmt::format("{:.{}f}", x, digits);
  if (s.find('.') != std::string::npos) {  // 1.50 -> 1.5, 2.00 -> 2
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s + " " + kPrefix[p] + unit;
}

}  // namespace railsim::report
