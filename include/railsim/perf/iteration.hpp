#pragma once
// The analytic time of one training iteration: compute, memory and the communication of the
// strategy's CommSchedule timed on the network design. Every equation is in docs/model.md.
#include <array>
#include <cstdint>
#include <memory>

#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/contention.hpp"
#include "railsim/perf/model.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/strategy.hpp"
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

// Where the time of one iteration goes. The entries add up to iteration_time_s.
struct Breakdown {
  double compute_s = 0;  // forward and backward (GEMMs, attention, element-wise), all micro-batches
  double recompute_s = 0;  // the extra forward work of selective or full recomputation
  double tp_comm_s = 0;  // TP/SP collectives, the exposed part (all of it without tp_comm_overlap)
  // tp_comm_overlap: the GEMMs' slowdown from the SMs that overlapped reduce-scatters take
  double tp_overlap_s = 0;
  double ep_comm_s = 0;          // MoE all-to-all
  double cp_comm_s = 0;          // context-parallel K/V all-gathers and reduce-scatters (exposed)
  double pp_comm_s = 0;          // pipeline send/recv
  double dp_comm_s = 0;          // exposed part of the gradient reduction and parameter all-gather
  double rail_forwarding_s = 0;  // rail_only: HB-hop forwarding of cross-rail traffic (exposed)
  double bubble_s = 0;           // pipeline fill and drain, and waiting on the slowest stage
  // The pipeline schedule's own cost: a host step per chunk and micro-batch, and the chunk
  // boundaries that the fill and drain cross beyond the plain pipeline's (grows with interleaving)
  double pipeline_overhead_s = 0;
  double optimizer_s = 0;  // Adam step (HBM bound)
  // Activation offload: the copies to and from host memory longer than the layers they overlap
  double offload_s = 0;
  // tp_comm_overlap: TP/SP communication hidden behind the GEMMs (not part of the total)
  double tp_hidden_s = 0;
  // Context parallelism's exchanges hidden behind the attention by ring attention (not in total).
  double cp_hidden_s = 0;
  // pp_comm_overlap: pipeline sends of the 1F1B body hidden behind other chunks' computations
  // (not part of the total)
  double pp_hidden_s = 0;
  double total() const {
    return compute_s + recompute_s + tp_comm_s + tp_overlap_s + ep_comm_s + pp_comm_s + dp_comm_s +
           rail_forwarding_s + bubble_s + pipeline_overhead_s + optimizer_s + cp_comm_s + offload_s;
  }
};

struct MemoryUse {  // bytes per GPU on the fullest pipeline stage
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double reserved_bytes = 0;  // CUDA context, NCCL buffers, allocator slack
  // Activations offloaded to host memory (--offload-layers), not part of total()
  double host_bytes = 0;
  double total() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + reserved_bytes;
  }
};

// Whether a memory use fits the GPU: its HBM and, with activation offload, its share of the host
// memory.
inline bool fits(const MemoryUse& m, const spec::GpuSpec& g) {
  return m.total() <= g.hbm_bytes && m.host_bytes <= g.host_memory_bytes;
}

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

// The GEMM model of one GPU at one precision (docs/model.md section 3), precomputed per context.
struct GemmCaps {
  double peak_flops = 0;  // the precision's peak x the preset's gemm_max (or gemm_max_fp8)
  double sms = 1, tile_m = 128, tile_n = 256;
  double k_overhead = 0;  // elements of k
  double in_bytes = 2;    // bytes per operand element (spec::cast_bytes: 1 for fp8)
  // bf16 bytes read per element before its cast to find a per-tensor scale (nvfp4's global amax
  // of its two-level scaling; 0 where the cast finds its scales as it goes)
  double scale_pass_bytes = 0;
  double hbm_Bps = 1;  // achievable HBM bandwidth
};
GemmCaps make_gemm_caps(const spec::GpuSpec& gpu, Dtype dtype);
// The GPU's dense peak in the precision (nvfp4: the fp4 peak; fp8 and mxfp8: the fp8 peak).
// Throws InputError("--dtype") when the GPU has no tensor cores for it.
double dtype_peak_flops(const spec::GpuSpec& gpu, Dtype dtype);
// Time of one m x n x k GEMM (2 m n k FLOPs): tile and wave quantization over the SMs, the k-loop's
// fixed cost, and a roofline on the operands' HBM traffic.
double gemm_time(const GemmCaps& g, double m, double n, double k);
// The forward GEMM's time; adds its two backward GEMMs (input and weight gradients) to *bwd.
double gemm_fwd_bwd_time(const GemmCaps& g, double m, double n, double k, double* bwd);

// HBM bytes one MoE layer moves to sort its tokens by expert and back, per GPU and micro-batch
// (docs/model.md section 3, counted from Megatron-Core's all-to-all token dispatcher): the GPU's
// own routed copies gathered into expert order before the dispatch and scattered back, weighted,
// after the combine; with more than one local expert, the received rows sorted by expert and
// back; each pass reads and writes a bf16 row of `hidden`. The backward runs the passes on the
// gradients and reads the expert outputs once more for the router probabilities' gradients.
struct MoePermutationBytes {
  double fwd = 0, bwd = 0;
};
// own_copies: the routed copies of the GPU's own tokens (T top_k capacity / t); expert_rows: the
// rows its local experts run in all (local experts x rows each).
MoePermutationBytes moe_permutation_bytes(double own_copies, double expert_rows,
                                          double local_experts, double hidden);

// The MoE all-to-all left exposed per micro-batch under Megatron-Core's combined 1F1B (the stack's
// ep_overlap; docs/model.md section 6): ep_s of all-to-all per micro-batch against the blocks of
// the stage's computation it runs under (per micro-batch: the forward's and the backward's
// attention blocks, everything but the experts, and their expert GEMMs), `micro_batches` per
// pipeline, on a GPU of `sms` SMs.
struct CombinedPairCompute {
  double fwd_attn = 0, fwd_mlp = 0, bwd_attn = 0, bwd_mlp = 0;
};
double combined_1f1b_exposed(const Strategy& s, double micro_batches, double ep_s,
                             const CombinedPairCompute& c, double sms);

// Everything fixed for a search: model, training, cluster, design (precomputed once).
struct EstimateContext {
  const Model* model = nullptr;
  Training training;
  const spec::Cluster* cluster = nullptr;
  NetworkModel net;
  PlacementKind placement = PlacementKind::rail_aligned;
  double peak_flops = 0;  // per GPU at the training dtype
  GemmCaps gemm;          // the GEMM model at the training dtype
  GemmCaps gemm_bf16;     // in bf16: the output layer, which fp8 training leaves in bf16
};
// Checks dtype support (fp8 on a GPU without fp8 throws InputError("--dtype", ...)).
EstimateContext make_context(const Model& m, const Training& tr, const spec::Cluster& c,
                             const spec::NetworkDesign& d,
                             PlacementKind placement = PlacementKind::rail_aligned);
// A job on part of a network (spec::job_cluster): the job's GPUs are `job`'s (the first of the
// network's), the links, tiers and contention those of the whole `network` cluster under `d`.
EstimateContext make_context(const Model& m, const Training& tr, const spec::Cluster& job,
                             const spec::Cluster& network, const spec::NetworkDesign& d,
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

// Days to train on `tokens` tokens at the iteration's throughput (ours: tokens / tokens_per_s /
// 86,400 s): every iteration as timed, without failures, restarts or checkpoints (`railsim fail
// goodput` adds those). Throws InputError("--train-tokens") unless tokens is in (0, 1e18].
double days_to_train(const IterationTime& it, double tokens);

// Memory per GPU alone (used for the "no feasible strategy" message).
MemoryUse memory_use(const Model& m, const Training& tr, const Strategy& s);

}  // namespace railsim::perf
