#pragma once
// Strategy: how one iteration is parallelised. Degrees multiply to the GPU count:
// tp x cp x pp x dp = N; ep divides dp (expert parallelism is carved out of data parallelism),
// or, with the experts folded (etp below tp), tp x cp x dp / etp.
#include <cstdint>
#include <string>
#include <string_view>

#include "railsim/perf/model.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/spec/cluster.hpp"

namespace railsim::perf {

// Recomputation modes live with the software stacks (spec/stack.hpp).
using spec::parse_recompute;
using spec::PipelineSchedule;
using spec::Recompute;

struct Strategy {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  std::int64_t ep = 1;
  std::int64_t micro_batch = 1;  // sequences per micro-batch
  std::int64_t interleave = 1;   // virtual pipeline stages per GPU (1 = plain 1F1B)
  Recompute recompute = Recompute::none;
  bool sp = false;  // sequence parallelism (needs tp > 1 to matter)
  // Distributed optimizer; what it shards over DP is the stack's (Training::stack): the optimizer
  // state (Megatron, ZeRO-1) or weights, gradients and optimizer state (FSDP, ZeRO-3).
  bool dist_opt = false;
  bool dp_overlap = false;  // overlap the DP gradient reduction with the backward pass
  // Context parallelism (Megatron-Core, Llama 3): each of the cp ranks holds s / cp tokens of
  // every sequence (2 cp chunks, load-balanced for causal attention) and all-gathers K and V.
  std::int64_t cp = 1;
  // The pipeline schedule (pp > 1; zb_h1, zb_v and dualpipe without interleaving, where the stack
  // has them; zb_v with at least two layers per stage, dualpipe with even pp and an even number of
  // micro-batches).
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  // Hybrid sharding (HSDP, on stacks whose distributed optimizer is full sharding): weights,
  // gradients and optimizer state sharded over groups of `hsdp` consecutive DP x CP ranks and
  // replicated across the groups (PyTorch FSDP's HYBRID_SHARD); 0 = sharded over the whole group.
  std::int64_t hsdp = 0;
  // Activation offload (stacks with activation_offload): the activations of the first
  // `offload_layers` layers copied to host memory after their forward and back before their
  // backward (Megatron-Core's cpu_offloading_num_layers); 0 = none. pp 1, recompute none, fewer
  // than the model's layers, a GPU whose preset gives its host link.
  std::int64_t offload_layers = 0;

  // MoE parallel folding (stacks with expert_folding; Megatron-Core's
  // expert_tensor_parallel_size): a divisor of tp below it splits the expert layers over etp
  // consecutive ranks instead of the TP group (1: whole experts on every GPU), their ep group
  // carved from tp x cp x dp / etp; 0 (or tp) splits them over the TP group like the dense FFN.
  std::int64_t etp = 0;

  Degrees degrees() const { return Degrees{tp, pp, dp, ep, cp, hsdp, etp}; }
  // The expert layers' tensor-parallel size (tp unless folded), and whether they are folded.
  std::int64_t expert_tp() const { return degrees().expert_tp(); }
  bool folded() const { return expert_tp() < tp; }
  // Micro-batches per pipeline per iteration: global_batch / (dp x micro_batch).
  std::int64_t micro_batches(const Training& tr) const {
    return tr.global_batch / (dp * micro_batch);
  }
};

// The expert-parallel degree as the strategy lines print it: "32", or folded "32 etp 1" (`gap`
// " ") or "32 etp1" (`gap` "").
std::string describe_ep(const Strategy& s, std::string_view gap);
// One line naming every knob ("tp 8 pp 32 dp 128 ep 1, micro-batch 1, ..."), for human output.
std::string describe(const Strategy& s);
// The degrees as plans and sweeps print them: "tp8 pp16 dp256", cp and ep only when above 1
// ("tp8 cp2 pp16 dp256 ep64"), etp only when folded ("tp2 pp8 dp16 ep32 etp1").
std::string describe_degrees(const Strategy& s);
// The same for a page people read (the HTML report): the degrees as sweeps and plans write them,
// then the knobs in words, those off left out: "tp8 pp16 dp256; micro-batch 1, 8 virtual stages,
// selective recompute, sequence parallel, distributed optimizer, DP overlapped".
std::string describe_for_people(const Strategy& s);

// Checks that a strategy can run this model and batch on this cluster; throws InputError naming
// the knob ("--tp", "--pp", "--batch", ...) with the value and what would be valid. Memory is not
// checked here (an over-full strategy is valid but infeasible; see IterationTime::feasible).
void validate(const Model& m, const Training& tr, const Strategy& s, const spec::Cluster& c);
// Only the checks of the training's software stack (tr.stack): a knob it lacks (sp, selective
// recompute, pp > 1, interleave > 1, the distributed optimizer, DP overlap, flash attention, fp8,
// a pipeline schedule)
// or a pp / pp x interleave that does not divide the layers on a stack without uneven stages.
void validate_stack(const Model& m, const Training& tr, const Strategy& s);
// Only the model's rules on tp, pp and cp: tp divides the attention heads (--tp), pp is at most
// the layers (--pp), 2 cp divides the sequence (--cp).
void validate_tp_pp(const Model& m, const Strategy& s);
// The sequence rule of context parallelism alone: seq_len divisible by 2 cp (--cp).
void validate_cp(const Training& tr, const Strategy& s);
// The same checks without throwing, for the search (allocation-free).
bool is_valid(const Model& m, const Training& tr, const Strategy& s, const spec::Cluster& c);

}  // namespace railsim::perf
