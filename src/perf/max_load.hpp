#pragma once
// The busiest link of hashed (ECMP) traffic, for the contention census (internal to src/perf):
// balls into bins (perf::max_load_cdf, perf::expected_max_load in contention.hpp) and bundles of
// links whose flows hash onto them, equally likely or shaped by the switches above them.
#include <cstdint>
#include <span>
#include <vector>

#include "railsim/perf/contention.hpp"
#include "railsim/topo/builders.hpp"

namespace railsim::perf::detail {

// One kind of hashed bundle: `count` bundles of `links` links carrying `flows` flows each, a
// flow taking `seconds` on one of its links.
struct HashedBundles {
  std::int64_t flows = 0, links = 0;
  double count = 0;  // bundles of this kind (a fraction: bins of a family drawn on their own)
  double seconds = 0;
  // Links not equally likely (switch_shape): the flows pick one of `ports`
  // ports, then a top switch by its share, then one of its links; nullptr: `links` equal bins.
  const std::vector<double>* shape = nullptr;
  std::int64_t ports = 1;
};

// Sub-block i's down links over round-robin tier `hi` as a HashedBundles shape (empty where
// every link is equally likely).
std::vector<double> switch_shape(const topo::ClosTier& hi, std::int64_t i,
                                 std::span<const double> share);

// E[max(d, T)], T the busiest link of independent hashed bundles of the given kinds.
double expected_max_over(double d, const std::vector<HashedBundles>& kinds);

}  // namespace railsim::perf::detail
