#include "railsim/traffic/iteration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "railsim/core/error.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/placement.hpp"

namespace railsim::traffic {

StrategyChoice choose_strategy(const perf::Model& m, const perf::Training& tr,
                               const perf::StrategyPins& pins, const spec::Cluster& c,
                               const spec::NetworkDesign& d, bool best) {
  const bool degrees_given = pins.tp || pins.pp || pins.dp || pins.ep || pins.cp;
  if (degrees_given && !best) return {perf::default_strategy(m, tr, pins, c), false, 0};
  perf::PlanOptions po;
  po.pins = pins;
  po.top = 1;
  const perf::PlanResult res = perf::plan(perf::make_context(m, tr, c, d), po);
  if (res.plans.empty()) {
    const InputError e = perf::explain_no_plan(res, m, tr, pins, c);
    if (res.evaluated == 0) throw e;
    throw InputError(e.field(), e.message() +
                                    "; give --tp/--pp/--dp to see the traffic of a strategy "
                                    "anyway");
  }
  return {res.plans.front().strategy, true, res.evaluated};
}

IterationTraffic iteration_traffic(const perf::Model& m, const perf::Training& tr,
                                   const perf::Strategy& s, const spec::Cluster& c,
                                   const spec::NetworkDesign& d, perf::PlacementKind placement,
                                   std::uint64_t seed) {
  const perf::Placement pl(c, s.degrees(), placement, seed);
  const perf::CommSchedule cs = perf::build_comm_schedule(m, tr, s, pl);
  IterationTraffic t;
  t.matrix = TrafficMatrix::build(cs, pl, c);
  t.summary = summarize(t.matrix, c, d.kind);
  // One producer, two consumers: the matrix must carry exactly the bytes the time model charges.
  const perf::WireBytes wire = perf::wire_bytes(cs, pl);
  for (int p = 0; p < kParallelisms; ++p) {
    const double want = wire.by_parallelism[static_cast<std::size_t>(p)];
    const double got = t.summary.bytes_by_parallelism(static_cast<perf::Parallelism>(p));
    if (std::fabs(got - want) > 1e-9 * std::max(1.0, want))
      throw std::logic_error(fmt::format("traffic: {} bytes {} differ from the time model's {}",
                                         perf::to_string(static_cast<perf::Parallelism>(p)), got,
                                         want));
  }
  t.time = perf::estimate(perf::make_context(m, tr, c, d, placement), s, pl, cs);
  return t;
}

}  // namespace railsim::traffic
