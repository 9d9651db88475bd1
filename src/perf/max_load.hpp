#pragma once
// The busiest link of hashed (ECMP) traffic, for the contention census (internal to src/perf):
// balls into bins (perf::max_load_cdf, perf::expected_max_load in contention.hpp) and bundles of
// links whose flows hash onto them, equally likely or shaped by the switches above them.
#include <cstdint>
#include <span>
#include <tuple>
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

// A kind of hashed bundle as the census collects them: flows (or balls), links (or bins), the
// boundary and the shape, ordered by the shape's content (null first), not its address, so that
// the kinds come out in an order that does not vary from run to run.
struct KindKey {
  std::int64_t flows, links, t;
  const std::vector<double>* shape;
  bool operator<(const KindKey& o) const {
    if (std::tie(flows, links, t) != std::tie(o.flows, o.links, o.t))
      return std::tie(flows, links, t) < std::tie(o.flows, o.links, o.t);
    if (!shape || !o.shape) return !shape && o.shape;
    return *shape < *o.shape;
  }
};

// Sub-block i's down links over round-robin tier `hi` as a HashedBundles shape (empty where
// every link is equally likely).
std::vector<double> switch_shape(const topo::ClosTier& hi, std::int64_t i,
                                 std::span<const double> share);

// E[max(d, T)], T the busiest link of independent hashed bundles of the given kinds.
double expected_max_over(double d, const std::vector<HashedBundles>& kinds);

}  // namespace railsim::perf::detail
