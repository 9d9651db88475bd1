#pragma once
// The one hash and the one portable random stream of railsim: SplitMix64 (Steele, Lea and Flood,
// "Fast splittable pseudorandom number generators", OOPSLA 2014). ECMP's flow and per-hop hashes,
// the shuffled placement, random failure sets, the MoE token routing and the Monte Carlo's trial
// streams all draw from it, so that a seed gives the same numbers on every platform (std::
// distributions are not specified bit for bit).
#include <cstdint>

namespace railsim {

// The stream's increment: 2^64 / golden ratio, odd.
inline constexpr std::uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ULL;

// The SplitMix64 finalizer (a bijection of 64-bit words).
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A hash of one word: the first output of the stream that starts at x.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  return splitmix64_mix(x + kSplitMix64Gamma);
}

// Folds one more word into a hash of several (the boost::hash_combine step, 64-bit): the keys of
// railsim's in-memory caches. Not for anything a seed must reproduce.
constexpr std::uint64_t hash_combine(std::uint64_t h, std::uint64_t v) {
  return h ^ (v + kSplitMix64Gamma + (h << 6) + (h >> 2));
}

// The stream x_i = x_0 + i * gamma, output mix(x_i) (i = 1, 2, ...).
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(std::uint64_t state) : state_(state) {}
  constexpr std::uint64_t next() { return splitmix64_mix(state_ += kSplitMix64Gamma); }

 private:
  std::uint64_t state_;
};

}  // namespace railsim
