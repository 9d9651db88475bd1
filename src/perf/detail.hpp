#pragma once
// Shared arithmetic of the schedule builder and the time model (internal to src/perf).
#include "railsim/perf/model.hpp"
#include "railsim/perf/pipeline_order.hpp"
#include "railsim/perf/strategy.hpp"

namespace railsim::perf::detail {

inline constexpr double kActBytes = 2.0;    // bf16 activations and activation gradients
inline constexpr double kParamBytes = 2.0;  // bf16 weights (all-gathered by the dist. optimizer)

// Full sharding (FSDP) under pipeline parallelism. PyTorch's pipeline stage turns FSDP's gradient
// synchronisation and its resharding off for every micro-batch's backward and runs FSDP's post-
// backward once, after the stage's last backward (torch.distributed.pipelining.stage,
// backward_maybe_with_nosync: set_requires_gradient_sync(False), set_reshard_after_backward(False),
// then post_backward on the last); TorchTitan also keeps the gathered weights across micro-batches
// (reshard_after_forward = False when pipelining: Liang et al., arXiv 2410.06511). So the weights
// and the fp32-accumulated gradients are whole from the first forward to the last backward, and
// the gradients are reduce-scattered once per iteration: ZeRO-1's memory and traffic, over the
// FSDP (or HSDP shard) group.
inline bool fsdp_under_pipeline(const Training& tr, const Strategy& s) {
  return s.dist_opt && s.pp > 1 && tr.stack.knobs.distributed_optimizer == spec::Sharding::full;
}

// What the distributed optimizer shards for this strategy: none without it; the stack's level,
// except under pipeline parallelism, where full sharding (FSDP) shards the optimizer state alone
// (fsdp_under_pipeline).
inline spec::Sharding sharding_of(const Training& tr, const Strategy& s) {
  if (!s.dist_opt) return spec::Sharding::none;
  if (fsdp_under_pipeline(tr, s)) return spec::Sharding::optimizer;
  return tr.stack.knobs.distributed_optimizer;
}

// The stack's recomputation of cheap tensors (norms, MLA up-projections, the MoE SwiGLU;
// spec::Stack) applies under selective or no recompute; full, per-op and per-layer recompute keep
// what their own policies keep.
inline bool cheap_recompute(const Training& tr, const Strategy& s) {
  const spec::Stack& k = tr.stack;
  return (k.recompute_norms || k.recompute_up_projections || k.moe_swiglu_recompute) &&
         (s.recompute == Recompute::selective || s.recompute == Recompute::none);
}

struct StageShape {
  double layers = 0;        // transformer layers on the fullest pipeline stage
  double layers_first = 0;  // on the first stage (which also holds the embedding)
  double layers_avg = 0;    // L / p
  double layers_last = 0;   // on the last stage (which also runs the output layer)
  double mtp_layers = 0;    // the MTP modules' layers, on the last stage after its own
  double moe_layers = 0;    // of which MoE (spread evenly over stages)
  double moe_fraction = 0;  // the model's MoE layers' share of its layers
  double dense_layers = 0;
  double dense_params = 0;   // non-expert weights per GPU: the fullest stage's plus the embedding
  double expert_params = 0;  // expert weights per GPU
  double embedding_params = 0;  // of dense_params: the embedding (and untied output layer)
  double tokens_mb = 0;         // tokens per micro-batch on one GPU: b s / cp
  double micro_batches = 0;     // m
};

// The sequence-parallel pairs (an all-gather and a reduce-scatter each way) of one pass of a
// stage's layers, by group. On the TP group: the attention's in every layer, the dense FFN's in
// the dense layers and the shared experts' in the MoE layers (a TP-split MLP that gathers its own
// input). On the expert TP group, when it has more than one member, the routed experts' in the
// MoE layers: Megatron-Core's all-to-all dispatcher sends each GPU's SP shard of the routed token
// copies over the EP group, then all-gathers what arrived over the expert TP group (and
// reduce-scatters it before the combine), so folded to etp = 1 the routed experts gather nothing
// (Megatron-Core MoEAlltoAllTokenDispatcher; Liu et al. 2025, arXiv 2504.14960).
struct SpPairs {
  double attention = 0, dense_ffn = 0, shared_ffn = 0;  // on the TP group
  double routed = 0;                                    // on the expert TP group
  double tp() const { return attention + dense_ffn + shared_ffn; }
};
inline SpPairs sp_pairs(const Model& m, const Strategy& s, const StageShape& st) {
  SpPairs p;
  p.attention = st.layers;
  p.dense_ffn = st.dense_layers;
  if (m.shared_experts > 0) p.shared_ffn = st.moe_layers;
  if (m.is_moe() && s.expert_tp() > 1) p.routed = st.moe_layers;
  return p;
}

// The routed token copies of one GPU's sequence shard per micro-batch: (T / t) top_k c, what it
// dispatches over the EP group.
inline double own_routed_copies(const Model& m, const Strategy& s, const StageShape& st) {
  return st.tokens_mb / static_cast<double>(s.tp) * static_cast<double>(m.top_k) *
         m.capacity_factor;
}

// The buffer the routed experts' all-gather fills on each GPU, bytes: the routed copies of the
// expert TP group's etp SP shards, etp (T / t) top_k c tokens of h bf16 values.
inline double etp_gather_bytes(const Model& m, const Strategy& s, const StageShape& st) {
  return own_routed_copies(m, s, st) * static_cast<double>(s.expert_tp()) *
         static_cast<double>(m.hidden) * kActBytes;
}

// The layers the pipeline split deals out: with more than one stage, the model's
// pipeline_layers() (each MTP module counted as two, perf::model_stage_layers); on one stage, its
// layers.
inline std::int64_t split_layers(const Model& m, const Strategy& s) {
  return s.pp > 1 ? m.pipeline_layers() : m.layers;
}

inline StageShape stage_shape(const Model& m, const Training& tr, const Strategy& s) {
  StageShape st;
  const double p = static_cast<double>(s.pp), t = static_cast<double>(s.tp);
  // Stages get floor(L/p) or ceil(L/p) layers (perf::stage_layers). The L mod p spare layers go to
  // the middle stages first, then to the first stage, never to the last: the first stage holds the
  // embedding and the most micro-batches in flight, the last runs the output layer (Dubey et al.
  // 2024, Sec. 3.3.2: Llama 3 405B's 126 layers over 16 stages, one layer fewer on the first and
  // the last; Megatron-Core's account_for_embedding/loss_in_pipeline_split does the same).
  // A model with multi-token prediction splits its pipeline_layers(), the last stage holding
  // the MTP modules in place of two of its layers each (perf::model_stage_layers: Megatron-
  // Bridge's and MLPerf's DeepSeek-V3 layouts).
  const std::int64_t units = split_layers(m, s);
  const std::int64_t lo = units / s.pp, rem = units % s.pp;
  st.layers = static_cast<double>(rem > 0 ? lo + 1 : lo);
  st.layers_first = static_cast<double>(perf::model_stage_layers(m.layers, m.mtp_layers, s.pp, 0));
  st.layers_avg = static_cast<double>(m.layers) / p;
  st.layers_last =
      static_cast<double>(perf::model_stage_layers(m.layers, m.mtp_layers, s.pp, s.pp - 1));
  st.mtp_layers = static_cast<double>(m.mtp_layers);
  st.moe_fraction =
      m.layers > 0 ? static_cast<double>(m.moe_layers()) / static_cast<double>(m.layers) : 0.0;
  st.moe_layers = st.layers * st.moe_fraction;
  st.dense_layers = st.layers - st.moe_layers;
  const double h = static_cast<double>(m.hidden);
  // The first stage holds the token embedding; with one stage, or as ZB-V's first GPU (the
  // first and the last chunk of its V), an untied output layer too.
  const double first_stage_embedding =
      s.pp == 1 || s.schedule == PipelineSchedule::zb_v
          ? m.embedding_params()
          : static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
  // Each MoE layer's router and shared experts (replicated over EP, reduced over DP).
  const double router =
      m.is_moe() ? h * static_cast<double>(m.experts) + m.shared_ffn_params() : 0.0;
  st.dense_params = (st.layers * m.attention_params() + st.dense_layers * m.dense_ffn_params() +
                     st.moe_layers * router + first_stage_embedding) /
                    t;
  st.embedding_params = first_stage_embedding / t;
  // Expert weights split over the expert tensor-parallel group: the TP group, or none when folded.
  st.expert_params = st.moe_layers * (static_cast<double>(m.experts) / static_cast<double>(s.ep)) *
                     m.expert_params() / static_cast<double>(s.expert_tp());
  // Context parallelism: each CP rank holds s / cp tokens of every sequence (Megatron-Core).
  st.tokens_mb = static_cast<double>(s.micro_batch) * static_cast<double>(tr.seq_len) /
                 static_cast<double>(s.cp);
  st.micro_batches = static_cast<double>(tr.global_batch) /
                     (static_cast<double>(s.dp) * static_cast<double>(s.micro_batch));
  return st;
}

// Implemented in memory.cpp, shared with the time model:
// Megatron's interleaved warm-up: forward chunks stage i runs before its first backward.
double interleaved_warmup_chunks(double p, double v, double i);
// FFN units a token passes through in one layer, averaged over the layers.
double ffn_units(const Model& m, double moe_fraction, double capacity);
// Bytes one layer keeps per micro-batch under TorchTitan's per-op selective checkpointing.
double op_checkpoint_bytes(const Model& m, double tokens, double moe_fraction, double t, bool sp);
// One layer's activations per micro-batch per GPU: all of them (`full`) and what the strategy's
// recomputation keeps (`kept`), bytes.
struct LayerBytes {
  double full = 0, kept = 0;
};
LayerBytes layer_bytes(const Model& m, const Training& tr, const Strategy& s, const StageShape& st);

}  // namespace railsim::perf::detail
