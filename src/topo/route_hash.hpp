#pragma once
// Private to topo: the per-hop hash of ECMP routing, shared by Fabric::route and the live routing
// of a DegradedFabric, so that a live healthy choice is the first one the latter tries.
#include <cstdint>

#include "railsim/core/hash.hpp"

namespace railsim::topo::detail {

// Decorrelates the ECMP choice at each hop from the same flow hash.
inline std::uint64_t mix(std::uint64_t x) {
  return splitmix64(x);
}

// Deepest Clos the routes walk (tiers + 1).
constexpr int kMaxLevels = 16;

}  // namespace railsim::topo::detail
