#pragma once
// The values of one swept option, written as a list, a range or a geometric series:
//   "8,16,32"        a list (items separated by commas)
//   "200:800:200"    start:stop:step, ascending, stop included when the steps reach it
//   "1024..8192x2"   start..stop x factor: 1024, 2048, 4096, 8192 (stop included when reached)
// Items of a list may themselves be ranges ("8,64:256:64"). Names are plain lists
// ("GPT-1T,MoE-1.2T"). Errors are InputError naming the option, with the position of a bad item.
#include <cstdint>
#include <string>
#include <vector>

namespace railsim::sweep {

// Most points a sweep (or one option's list) may expand to unless --max-points says otherwise.
inline constexpr std::int64_t kDefaultMaxPoints = 10'000;
// --max-points may rise to this: a point's rows take about 7 kB, so a million points take about
// 7 GB (split a larger grid into several sweeps, or over MPI ranks that write their own).
inline constexpr std::int64_t kMaxSweepPoints = 1'000'000;

// Integer values (every number, bound, step and factor an integer).
std::vector<std::int64_t> parse_integers(const std::string& option, const std::string& text,
                                         std::int64_t max_points = kDefaultMaxPoints);
// Real values (a range's points are start + i x step, so 0.1 steps do not accumulate errors).
std::vector<double> parse_reals(const std::string& option, const std::string& text,
                                std::int64_t max_points = kDefaultMaxPoints);
// Names: a comma-separated list, no ranges.
std::vector<std::string> parse_names(const std::string& option, const std::string& text,
                                     std::int64_t max_points = kDefaultMaxPoints);

}  // namespace railsim::sweep
