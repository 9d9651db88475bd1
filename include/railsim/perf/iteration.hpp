#pragma once
// The analytic time of one training iteration: compute, memory and the communication of the
// strategy's CommSchedule timed on the network design. Every equation is in docs/model.md.
#include <cstdint>

#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/model.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/network_view.hpp"

namespace railsim::perf {

// The network as the collective model sees it: the Fabric's view (topo::NetworkView) with the
// GPU preset's achievable fractions of line rate and per-step latency. Built once per cluster
// and design.
struct NetworkModel {
  spec::DesignKind kind = spec::DesignKind::rail_optimized;
  double hb_Bps = 0;     // HB-domain bandwidth per GPU per direction a collective reaches
  double nic_Bps = 0;    // NIC bandwidth per GPU per direction a collective reaches
  double latency_s = 0;  // per collective step
  topo::NetworkView view;
};
NetworkModel make_network_model(const topo::NetworkView& view, const spec::GpuEfficiency& eff);
NetworkModel make_network_model(const spec::Cluster& c, const spec::NetworkDesign& d);

// Time of one instance of a collective over a group of this shape.
struct CollectiveTime {
  double time_s = 0;        // total, forwarding included
  double forwarding_s = 0;  // rail_only: the extra HB hop for traffic between rails
  bool cross_rail = false;  // some of the traffic goes between rails through the NIC network
};
CollectiveTime collective_time(const CommOp& op, const GroupShape& g, const NetworkModel& net);

// Where the time of one iteration goes. The entries add up to iteration_time_s.
struct Breakdown {
  double compute_s = 0;  // forward and backward (GEMMs, attention, element-wise), all micro-batches
  double recompute_s = 0;        // the extra forward work of selective or full recomputation
  double tp_comm_s = 0;          // TP/SP collectives (never overlapped)
  double ep_comm_s = 0;          // MoE all-to-all
  double pp_comm_s = 0;          // pipeline send/recv
  double dp_comm_s = 0;          // exposed part of the gradient reduction and parameter all-gather
  double rail_forwarding_s = 0;  // rail_only: HB-hop forwarding of cross-rail traffic (exposed)
  double bubble_s = 0;           // pipeline fill and drain, and waiting on the slowest stage
  double optimizer_s = 0;        // Adam step (HBM bound)
  double total() const {
    return compute_s + recompute_s + tp_comm_s + ep_comm_s + pp_comm_s + dp_comm_s +
           rail_forwarding_s + bubble_s + optimizer_s;
  }
};

struct MemoryUse {  // bytes per GPU on the fullest pipeline stage
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double reserved_bytes = 0;  // CUDA context, NCCL buffers, allocator slack
  double total() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + reserved_bytes;
  }
};

struct IterationTime {
  double iteration_time_s = 0;
  Breakdown breakdown;
  MemoryUse memory;
  bool feasible = false;      // memory fits in HBM
  double model_flops = 0;     // per iteration, whole cluster, no recomputation
  double hardware_flops = 0;  // with recomputation
  double mfu = 0;             // model FLOPs / (time x N x peak)
  double hfu = 0;
  double tokens_per_s = 0;
  bool cross_rail = false;  // some collective sends traffic between rails
};

// Everything fixed for a search: model, training, cluster, design (precomputed once).
struct EstimateContext {
  const Model* model = nullptr;
  Training training;
  const spec::Cluster* cluster = nullptr;
  NetworkModel net;
  PlacementKind placement = PlacementKind::rail_aligned;
  double peak_flops = 0;  // per GPU at the training dtype
};
// Checks dtype support (fp8 on a GPU without fp8 throws InputError("--dtype", ...)).
EstimateContext make_context(const Model& m, const Training& tr, const spec::Cluster& c,
                             const spec::NetworkDesign& d,
                             PlacementKind placement = PlacementKind::rail_aligned);

// Times one valid strategy (call validate() first). Allocation-free for rail_aligned and
// tp_across_domains placements with regular groups.
IterationTime estimate(const EstimateContext& ctx, const Strategy& s);
// The same, with the placement and schedule given (they must belong to `s`).
IterationTime estimate(const EstimateContext& ctx, const Strategy& s, const Placement& pl,
                       const CommSchedule& cs);

// Convenience: validates, builds the placement and schedule, and times.
IterationTime estimate(const Model& m, const Training& tr, const Strategy& s,
                       const spec::Cluster& c, const spec::NetworkDesign& d,
                       PlacementKind placement = PlacementKind::rail_aligned);

// Memory per GPU alone (used for the "no feasible strategy" message).
MemoryUse memory_use(const Model& m, const Training& tr, const Strategy& s);

}  // namespace railsim::perf
