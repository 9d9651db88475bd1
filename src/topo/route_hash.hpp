#pragma once
// Private to topo: the per-hop hash of ECMP routing, shared by Fabric::route and the live routing
// of a DegradedFabric, so that a live healthy choice is the first one the latter tries.
#include <cstdint>

namespace railsim::topo::detail {

// splitmix64: decorrelates the ECMP choice at each hop from the same flow hash.
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Deepest Clos the routes walk (tiers + 1).
constexpr int kMaxLevels = 16;

}  // namespace railsim::topo::detail
