#pragma once
// The time of one collective of the CommSchedule on the network design: the Fabric's view, the
// GPU's achievable fractions of line rate, and the contention model's load on the links
// (docs/model.md section 5).
#include <memory>

#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/contention.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/network_view.hpp"

namespace railsim::perf {

// The network as the collective model sees it: the Fabric's view (topo::NetworkView) with the
// GPU preset's achievable fractions of line rate and per-step latency, the design's routing and
// forwarding, and the contention model that loads the Fabric's links with each collective's
// flows (perf/contention.hpp). Built once per cluster and design; copies share the contention
// model and its cache.
struct NetworkModel {
  spec::DesignKind kind = spec::DesignKind::rail_optimized;
  double hb_Bps = 0;     // HB-domain bandwidth per GPU per direction a collective reaches
  double nic_Bps = 0;    // NIC bandwidth per GPU per direction a collective reaches
  double latency_s = 0;  // per collective step
  topo::NetworkView view;
  spec::Routing routing = spec::Routing::ecmp;
  spec::ForwardingMode forwarding = spec::ForwardingMode::store;
  std::shared_ptr<const ContentionModel> contention;  // null for ideal (every link is HB)
};
// With the design's routing and forwarding.
NetworkModel make_network_model(const spec::Cluster& c, const spec::NetworkDesign& d);

// Time of one instance of a collective over the groups of op.axis under `pl`.
struct CollectiveTime {
  double time_s = 0;        // total, forwarding included
  double forwarding_s = 0;  // rail_only: the extra HB hop for traffic between rails
  bool cross_rail = false;  // some of the traffic goes between rails through the NIC network
};
// Each phase of perf::phase_plan (ring phases step by step, the all-to-all and the pipeline
// sends at once) takes steps x (bytes per step x the contention model's time per byte + the
// per-step latency); docs/model.md section 5. Allocation-free once the contention model has seen
// the op's signature.
CollectiveTime collective_time(const CommOp& op, const Placement& pl, const NetworkModel& net);

}  // namespace railsim::perf
