#pragma once
// Counter-based random streams for the Monte Carlo: trial t of seed s draws from its own stream,
// whatever thread runs it, so results do not depend on the thread count.
//
// The stream is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): x_i = x_0 + i * gamma, output mix(x_i), with x_0 = mix(mix(s) + t).
#include <cmath>
#include <cstdint>

namespace railsim::fail {

// The SplitMix64 finalizer (a bijection of 64-bit words).
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class TrialRng {
 public:
  static constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ULL;

  TrialRng(std::uint64_t seed, std::uint64_t trial)
      : state_(splitmix64_mix(splitmix64_mix(seed) + trial)) {}

  std::uint64_t next() { return splitmix64_mix(state_ += kGamma); }
  // Uniform in (0, 1]: never 0, so that -log(u) is finite.
  double uniform_open0() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
  // Exponential with the given rate (> 0), by inversion.
  double exponential(double rate) { return -std::log(uniform_open0()) / rate; }

 private:
  std::uint64_t state_;
};

}  // namespace railsim::fail
