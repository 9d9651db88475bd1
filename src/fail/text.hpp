#pragma once
// Number formats shared by the fail module's text reports (private to src/fail).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace railsim::fail::text {

inline std::string grouped(double v, int decimals = 0) {
  const std::string digits = fmt::format("{:.{}f}", std::fabs(v), decimals);
  const std::size_t dot = std::min(digits.find('.'), digits.size());
  std::string out = v < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && i < dot && (dot - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

inline std::string pct(double f, int decimals = 2) {
  return fmt::format("{:.{}f}%", 100 * f, decimals);
}

inline std::string duration(double s) {
  if (!std::isfinite(s)) return "never";
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 2 * 3600) return fmt::format("{:.1f} min", s / 60);
  if (s < 3 * 86400) return fmt::format("{:.2f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

inline std::string money(double usd) {
  if (usd >= 1e6) return fmt::format("${:.2f}M", usd / 1e6);
  if (usd >= 100) return fmt::format("${}", grouped(usd));
  return fmt::format("${:.3f}", usd);
}

}  // namespace railsim::fail::text
