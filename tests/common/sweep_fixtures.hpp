#pragma once
// Sweeps for the sweep tests.
#include <cstdint>
#include <utility>
#include <vector>

#include "railsim/sweep/sweep.hpp"

namespace railsim::test {

// A sweep of the designs alone (cost and power, no plan search) over these cluster sizes.
inline sweep::SweepOptions design_sweep(std::vector<std::int64_t> gpus) {
  sweep::SweepOptions o;
  o.perf = false;
  o.axes.gpus = std::move(gpus);
  return o;
}

}  // namespace railsim::test
