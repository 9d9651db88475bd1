#include "railsim/perf/collective_time.hpp"

#include <algorithm>

#include "railsim/perf/expansion.hpp"

namespace railsim::perf {

using spec::DesignKind;

NetworkModel make_network_model(const spec::Cluster& c, const spec::NetworkDesign& d) {
  const topo::NetworkView v = topo::make_network_view(c, d);
  const spec::GpuEfficiency& e = c.gpu.eff;
  NetworkModel n;
  n.kind = v.kind;
  n.hb_Bps = v.hb_Bps * e.hb;
  n.nic_Bps = v.nic_Bps() * e.nic;
  n.latency_s = e.collective_latency_s;
  n.view = v;
  n.routing = d.routing;
  n.forwarding = d.forwarding;
  if (d.kind != DesignKind::ideal) n.contention = std::make_shared<const ContentionModel>(c, d);
  return n;
}

CollectiveTime collective_time(const CommOp& op, const Placement& pl, const NetworkModel& net) {
  CollectiveTime r;
  const GroupShape shape = pl.shape(op.axis);
  if (shape.size <= 1 || op.bytes <= 0) return r;
  // ideal: one HB domain over every GPU, whatever the cluster's K.
  const bool ideal = net.kind == DesignKind::ideal || !net.contention;
  const GroupShape g = ideal ? GroupShape{shape.size, shape.size, 1, true} : shape;
  const double a = net.latency_s;
  // The hierarchical dispatch forwards each token over the HB domain as it arrives along the
  // rail: its two phases run at once on disjoint links (the NIC network, the HB links), as the
  // simulator runs them, and the slower one sets the time (DeepSeek-V3 report, Sec. 3.2.2).
  const bool overlapped = op.algorithm == Algorithm::rail_then_domain;
  for (const CollectivePhase& ph : phase_plan(op, g)) {
    const double n = static_cast<double>(ph.members);
    double steps = 1, step_bytes = ph.bytes;
    if (ph.algorithm == Algorithm::ring || ph.algorithm == Algorithm::hierarchical) {
      steps = static_cast<double>(ring_steps(ph));
      step_bytes = ph.bytes / n;
    } else if (ph.algorithm == Algorithm::direct) {
      step_bytes = (op.op == CollectiveOp::all_reduce ? 2.0 : 1.0) * ph.bytes / n;
    }
    StepLoad load;
    if (ideal || ph.scope == Scope::in_domain || g.domains == 1) {
      // Inside HB domains every GPU sends its step on its own HB link: one flow per GPU, an
      // all-to-all's n - 1 (the census's count, without building it).
      load.s_per_byte = (ph.algorithm == Algorithm::direct ? n - 1.0 : 1.0) / net.hb_Bps;
    } else {
      // sim sends the backward pass's pipeline traffic from stage i + 1 to stage i.
      const bool reverse = op.op == CollectiveOp::send_recv && op.phase == Phase::backward;
      load = net.contention->step_load(pl, op.axis, op.algorithm, ph.scope, reverse);
    }
    const double t = steps * (step_bytes * load.s_per_byte + a * load.latency_steps);
    r.time_s = overlapped ? std::max(r.time_s, t) : r.time_s + t;
    // The second latency of a two-phase step is forwarding's too: without it, one step.
    r.forwarding_s +=
        steps * (step_bytes * load.forwarding_s_per_byte + a * (load.latency_steps - 1.0));
    r.cross_rail = r.cross_rail || load.cross_rail;
  }
  return r;
}

}  // namespace railsim::perf
