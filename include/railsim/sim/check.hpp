#pragma once
// The flow simulation of a whole iteration next to the analytic model, like for like: the
// simulated links run at the GPU preset's achievable fractions of line rate and every transfer
// pays its per-step latency, as perf::collective_time assumes; per op the simulated and the
// analytic time of one occurrence. And the JSON of simulation results.
#include <vector>

#include "railsim/core/json_fwd.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/sim/moe.hpp"
#include "railsim/topo/fabric.hpp"
#include "railsim/topo/failures.hpp"

namespace railsim::sim {

struct ScheduleCheck {
  ScheduleResult sim;
  std::vector<double> analytic_s;  // per op of the schedule, one occurrence
  double analytic_total_s = 0;     // sum of analytic_s x count
};

// `cfg`'s forwarding options are used; its latencies are replaced by the like-for-like ones.
// The placement must have been built on fabric.cluster.
ScheduleCheck check_schedule(const topo::Fabric& fabric, const perf::CommSchedule& schedule,
                             const perf::Placement& placement, SimConfig cfg);

// SimNetwork of a fabric scaled like for like with the analytic model (the GPU preset's
// achievable fractions of HB and NIC line rate), and cfg's transfer latency set to the GPU's
// per-step collective latency.
SimNetwork like_for_like(const topo::Fabric& fabric, SimConfig& cfg);
// The same on a degraded fabric (live routing; it must outlive the result).
SimNetwork like_for_like(const topo::DegradedFabric& degraded, SimConfig& cfg);

Json to_json(const CollectiveResult& r);
Json to_json(const ScheduleCheck& r);  // {"ops": [...], "completion_time_s", "analytic_time_s"}
// The settings of a simulation as its JSON documents state them (design, gpus, hb_domain, routing,
// seed, forwarding, forward_via, chunks, hop_latency_s, efficiency, batching), added to `j`: one
// writer for the CLI's `sim --json` and the Python module's `sim()`.
void add_settings_json(Json& j, const topo::Fabric& fabric, const SimConfig& cfg, bool efficiency);
// "batching": {"tolerance", "exact", "error_bound" (relative, about the tolerance; 0 when exact),
// "measured_error" (at kDefaultBatchTolerance only: the worst of docs/sim.md's set), "text"
// (describe_batching)}.
Json batching_json(double batch_tolerance);

// The documents `railsim sim --json` prints and Python's sim() returns, one writer each.
// One collective: to_json(r), "collective", "algorithm", "group" (as the user wrote it), "groups",
// "bytes" (per GPU) and the settings above.
Json collective_document(const CollectiveResult& r, const CollectiveRequest& req,
                         const std::string& group, const topo::Fabric& fabric, const SimConfig& cfg,
                         bool efficiency);
// One iteration's schedule (--schedule): to_json(chk), "design", "gpus", "strategy" (tp, pp,
// dp, ep), the routing columns and "batching".
Json schedule_document(const ScheduleCheck& chk, const topo::Fabric& fabric,
                       const perf::Strategy& s, double batch_tolerance);
// A skewed (MoE) all-to-all: to_json(m.sim), "collective" (all_to_all), "group" (as the user
// wrote it), "groups", the settings above and "moe" (to_json(req, m.stats)).
Json moe_document(const MoeResult& m, const MoeRequest& req, const std::string& group,
                  const topo::Fabric& fabric, const SimConfig& cfg, bool efficiency);

}  // namespace railsim::sim
