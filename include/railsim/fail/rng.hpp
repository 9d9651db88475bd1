#pragma once
// Counter-based random streams for the Monte Carlo: trial t of seed s draws from its own stream,
// whatever thread runs it, so results do not depend on the thread count.
//
// The stream is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): x_i = x_0 + i * gamma, output mix(x_i), with x_0 = mix(mix(s) + t).
#include <cmath>
#include <cstdint>

#include "railsim/core/hash.hpp"

namespace railsim::fail {

class TrialRng {
 public:
  TrialRng(std::uint64_t seed, std::uint64_t trial)
      : stream_(splitmix64_mix(splitmix64_mix(seed) + trial)) {}

  std::uint64_t next() { return stream_.next(); }
  // Uniform in (0, 1]: never 0, so that -log(u) is finite.
  double uniform_open0() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
  // Exponential with the given rate (> 0), by inversion.
  double exponential(double rate) { return -std::log(uniform_open0()) / rate; }

 private:
  SplitMix64 stream_;
};

}  // namespace railsim::fail
