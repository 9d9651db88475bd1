#pragma once
// `railsim traffic` with its pairs: what the Python module returns as NumPy arrays next to the
// command's JSON document.
#include <cstdint>
#include <string>
#include <vector>

#include "railsim/command/command.hpp"

namespace railsim::command {

// Every GPU pair with traffic in one iteration (sparse COO): src, dst, and per pair the bytes of
// each parallelism (tp, sp, pp, dp, ep, and cp when the strategy has context parallelism:
// `columns` values a pair).
struct TrafficPairs {
  std::vector<std::int64_t> src, dst;
  std::vector<double> bytes;
  int columns = 5;
};

// Runs `railsim traffic` on `args` (of the traffic command's table) and also fills `pairs`; the
// returned text is what the command prints.
std::string traffic_with_pairs(const Args& args, TrafficPairs& pairs);

}  // namespace railsim::command
