#pragma once
// The analytic time of one training iteration: compute (perf/gemm.hpp), memory (perf/memory.hpp)
// and the communication of the strategy's CommSchedule timed on the network design
// (perf/collective_time.hpp), assembled. Every equation is in docs/model.md.
#include <array>
#include <cstdint>
#include <memory>

#include "railsim/perf/collective_time.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/gemm.hpp"
#include "railsim/perf/memory.hpp"
#include "railsim/perf/model.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"

namespace railsim::perf {

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

// HBM bytes a stage's fp8 casts move per GPU and micro-batch when they run as kernels of their own
// (spec::Stack::fp8_separate_casts: torchao's float8 training, tensorwise dynamic scaling; the
// roofline of torchao's torchao/testing/float8/roofline_utils.py). Each activation operand (a
// linear's input in the forward, its output gradient in the backward) is read once for its
// absolute maximum and once for the cast that writes it in row- and column-major fp8: 2 + 2 + 1 + 1
// = 6 bytes per element; under torch.compile the maximum fuses into the kernel that produced the
// tensor (4 bytes) and the casts of one tensor feeding several linears are one. Under sequence
// parallelism a column-parallel linear's input is cast on its sequence shard and all-gathered in
// fp8 (torchao's float8 tensor parallelism), its column-major copy transposed from the gathered
// fp8 (2 bytes per gathered element). Each weight: its maximum (2), the forward's cast (2 + 1)
// and the backward's (2 + 1), 8 bytes per element per micro-batch. The linears of a layer as
// TorchTitan's Llama block has them: wq, wk and wv on the attention's input, wo, w1 and w3 (w1
// alone without a gate) on the FFN's input, w2; an MoE layer's routed experts on the rows they
// run, its shared experts as a dense FFN.
struct Fp8CastShape {
  double tokens = 0;        // T, tokens per micro-batch on the GPU
  double tp = 1;            // t
  double dense_layers = 0;  // the stage's
  double moe_layers = 0;
  double local_experts = 0, expert_rows = 0, expert_tp = 1;  // as the MoE GEMMs run them
  bool sp = false;        // sequence parallelism over t > 1: inputs gathered in fp8
  bool compiled = false;  // torch.compile on
};
struct Fp8CastBytes {
  double fwd = 0, bwd = 0;
  // Of fwd, the absolute-maximum passes: a weight's 2 bytes per element, an activation's 2 eager.
  double fwd_max = 0;
};
Fp8CastBytes fp8_cast_bytes(const spec::Model& m, const Fp8CastShape& s);

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

}  // namespace railsim::perf
