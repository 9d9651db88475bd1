#pragma once
// The traffic of one training iteration as `railsim traffic` reports it: the strategy (the one
// given, or the best plan's), its matrix and summary, and its estimated iteration time.
#include <cstdint>

#include "railsim/perf/iteration.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/traffic/summary.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

namespace railsim::traffic {

struct StrategyChoice {
  perf::Strategy strategy;
  bool searched = false;       // false: the strategy the pins give (default_strategy)
  std::int64_t evaluated = 0;  // searched: the strategies the search evaluated
};

// The strategy given (some of tp, pp, dp, ep pinned, and `best` false: perf::default_strategy
// fills the rest), or else the best plan the pins allow. The search runs on the rail-aligned
// placement: the placement then only moves the ranks, so that a careless placement shows what it
// costs for the same strategy. No plan: perf::explain_no_plan's InputError, which asks for
// --tp/--pp/--dp when the search evaluated strategies and none fits.
StrategyChoice choose_strategy(const perf::Model& m, const perf::Training& tr,
                               const perf::StrategyPins& pins, const spec::Cluster& c,
                               const spec::NetworkDesign& d, bool best);

struct IterationTraffic {
  TrafficMatrix matrix;
  TrafficSummary summary;
  perf::IterationTime time;  // the strategy's estimate under `placement`
};

// The matrix of strategy `s` placed by `placement` (`seed`: of a shuffled placement), its summary
// and estimate. The matrix carries exactly the bytes the time model charges (perf::wire_bytes,
// per parallelism): std::logic_error if not.
IterationTraffic iteration_traffic(const perf::Model& m, const perf::Training& tr,
                                   const perf::Strategy& s, const spec::Cluster& c,
                                   const spec::NetworkDesign& d, perf::PlacementKind placement,
                                   std::uint64_t seed);

}  // namespace railsim::traffic
