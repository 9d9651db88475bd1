#pragma once
// The one vocabulary of numbers for people: thousands separators, money, percentages, durations,
// watts and SI prefixes, as every table, text report and chart writes them.
#include <string>

namespace railsim::report {

// Commas between the thousands of the first run of digits of a written number:
// "-1234567.25" is "-1,234,567.25" (the sign, decimals and a unit after it stay as they are).
std::string group_thousands(std::string written);
// Thousands separators on a number written with `decimals` digits after the point:
// thousands(1234567.8) is "1,234,568", thousands(12345.67, 1) is "12,345.7".
std::string thousands(double v, int decimals = 0);
// Money: "$201.93M" from a million, "$56,120" below, "-$1,200" when negative.
std::string money(double usd);
// Small amounts too (a cost per GPU-hour): as money, with three decimals below $100 ("$0.412").
std::string money_fine(double usd);
// A fraction as a percentage: percent(0.1234, 1) is "12.3%".
std::string percent(double fraction, int decimals);
// A share of a whole as a percentage with enough digits that neither a tiny share nor one just
// short of the whole rounds to a misleading 0% or 100%: "0.0012%", "99.98%", "37.5%".
std::string share(double fraction);
// A duration: "45 s" below two minutes, "12.5 min" below two hours, "3.20 h" below three days,
// then "4.1 days"; "never" when infinite.
std::string duration(double seconds);
// Watts with four significant digits and a prefix: "599.7 kW", "1.950 MW".
std::string watts(double w);
// Three significant digits and an SI prefix (k, M, G, T, P, E), trailing zeros dropped:
// si(1.5e9, "B") is "1.5 GB".
std::string si(double v, const std::string& unit);
// A large count as people write token budgets: "15T", "300B", "2.5M", then "40,000".
std::string count(double n);

}  // namespace railsim::report
