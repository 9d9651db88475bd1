#include "railsim/perf/memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "detail.hpp"
#include "railsim/core/units.hpp"
#include "railsim/perf/pipeline_order.hpp"

namespace railsim::perf {

namespace detail {

// Megatron's interleaved schedule: stage i (of p, v chunks each) runs 2 (p - 1 - i) + (v - 1) p
// forward chunks before its first backward (Narayanan et al. SC'21, Sec. 2.2; Megatron-Core's
// get_forward_backward_func, interleaved warm-up).
double interleaved_warmup_chunks(double p, double v, double i) {
  return 2.0 * (p - 1.0 - i) + (v - 1.0) * p;
}

// FFN units a token passes through in one layer, averaged over the layers: f in a dense layer;
// top_k f_e (times `capacity`, where the capacity factor is paid) plus the shared experts' in an
// MoE layer, weighted by the MoE layers' share `moe_fraction` (ours).
double ffn_units(const Model& m, double moe_fraction, double capacity) {
  return moe_fraction *
             (static_cast<double>(m.top_k) * capacity * static_cast<double>(m.expert_ffn_hidden) +
              m.shared_ffn()) +
         (1.0 - moe_fraction) * static_cast<double>(m.ffn_hidden);
}

// Per-op selective checkpointing (TorchTitan's op policy, applied to the Llama block as TorchTitan
// writes it: the matmuls wq, wk, wv, wo, w1, w3 (gated only), w2 in that order, every second one
// recomputed, the attention kernel's output and the TP reduce-scatters' outputs kept): bytes a
// layer keeps per micro-batch (ours, counted from that policy). Kept: the layer's input (split by
// SP), wq's and wv's outputs, the attention output, w1's output (the gate's: f units per token,
// f_e top_k c plus the shared experts' in an MoE layer) and, gated, w2's output (its
// reduce-scatter's with SP); wk, wo and w3 (w2 without a gate) are recomputed with the
// element-wise kernels. bf16 throughout (the saved matmul outputs are bf16 also under fp8).
double op_checkpoint_bytes(const Model& m, double tokens, double moe_fraction, double t, bool sp) {
  const double h = static_cast<double>(m.hidden);
  const double hidden_part = 2.0 * tokens * h / (sp ? t : 1.0);
  const double split = 2.0 * tokens *
                       (m.q_width() + m.v_width() + m.attn_out_width() +
                        ffn_units(m, moe_fraction, m.capacity_factor));
  return hidden_part * (m.gated_ffn ? 2.0 : 1.0) + split / t;
}

}  // namespace detail

namespace {
constexpr double kReservedBytes = 2.0 * units::kGiB;  // ours: CUDA context, NCCL, allocator slack

// Korthikanti et al. 2022, Sec. 4, generalised to GQA, any FFN width, gated FFNs and MoE (ours):
// bytes stored per layer per micro-batch. `shared` is the part that tensor parallelism alone does
// not split (LayerNorm inputs, the inputs of the QKV and FC1 GEMMs, the dropout masks: 10 s b h
// for a GPT layer), `split` the part it splits, `attn` the attention-core part (5 a s^2 b).
struct LayerActivations {
  double shared = 0, split = 0, attn = 0;
};

// `cheap`: the stack's recomputation of cheap tensors applies (Stack::recompute_norms,
// recompute_up_projections, moe_swiglu_recompute; with selective or no recompute).
LayerActivations layer_activations(const Model& m, double tokens, double seq, double moe_fraction,
                                   Dtype dtype, const spec::Stack& stack, bool cheap) {
  // A Linear's input kept for its weight gradient: bf16 (2 bytes), or its cast (c bytes, block
  // scales included) when the GEMMs run below bf16.
  const double c = spec::cast_bytes(dtype);
  const bool low = spec::low_precision(dtype);
  const double h = static_cast<double>(m.hidden);
  const double a = static_cast<double>(m.heads);
  // FFN bytes per token per FFN unit: FC1's output (2 units gated, 1 plain, bf16) and FC2's input
  // (bf16; its cast when the GEMMs run below bf16: Transformer Engine keeps the cast of a Linear's
  // input for its weight-gradient GEMM, not the bf16 tensor).
  const double ffn_bytes = (m.gated_ffn ? 4.0 : 2.0) + c;
  double ffn = ffn_bytes * tokens * detail::ffn_units(m, moe_fraction, m.capacity_factor);
  if (cheap && stack.moe_swiglu_recompute && moe_fraction > 0) {
    // The MoE layers keep FC1's output alone (cast under low-precision GEMMs) and recompute the
    // SwiGLU's output, FC2's input (DeepSeek-V3 report, Sec. 3.3.3).
    const double moe_units = moe_fraction * detail::ffn_units(m, 1.0, m.capacity_factor);
    ffn -= (ffn_bytes - (m.gated_ffn ? 2.0 : 1.0) * c) * tokens * moe_units;
  }
  LayerActivations la;
  // The two hidden dropout masks (s b h bytes each) are part of the 10; without dropout, 8. Below
  // bf16 the inputs of QKV and FC1 (2 s b h each) are kept as their casts (c s b h each; fp8:
  // s b h). Norms recomputed in the backward pass keep their inputs only, not their outputs
  // (those GEMM inputs).
  la.shared = ((m.dropout ? 10.0 : 8.0) - 2.0 * (2.0 - c)) * tokens * h;
  if (cheap && stack.recompute_norms) la.shared -= 2.0 * c * tokens * h;
  // Q (2sbh), K and V (4 s b kvd) for Q K^T and A V, the projection input (2sbh), the FFN's
  // intermediate tensors, the FC1 output side (sbh bias-dropout): 24 s b h for a GPT layer.
  // MLA also keeps its two latents and the rotary key, the up-projections' inputs (ours).
  const double latents =
      m.is_mla() ? static_cast<double>(m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim) : 0.0;
  // Below bf16 the projection keeps a cast of its input besides the attention output that the
  // fused attention's backward keeps in bf16 (ours, from Transformer Engine's Linear).
  // Up-projections recomputed in the backward pass keep the latents, not their outputs: K and V,
  // and Q where it comes from a latent (q_lora_rank > 0).
  double qkv = m.q_width() + m.k_width() + m.v_width();
  if (cheap && stack.recompute_up_projections && m.is_mla())
    qkv -= m.k_width() + m.v_width() + (m.q_lora_rank > 0 ? m.q_width() : 0.0);
  la.split = 2.0 * tokens * (qkv + m.attn_out_width()) +
             (low ? c * tokens * m.attn_out_width() : 0.0) + 2.0 * tokens * latents + ffn;
  // QK^T and softmax outputs (2 + 2 bytes per score) and the attention-dropout mask (1).
  la.attn = (m.dropout ? 5.0 : 4.0) * a * seq * tokens;
  return la;
}

}  // namespace

namespace detail {

LayerBytes layer_bytes(const Model& m, const Training& tr, const Strategy& s,
                       const StageShape& st) {
  const double t = static_cast<double>(s.tp);
  LayerActivations la =
      layer_activations(m, st.tokens_mb, static_cast<double>(tr.seq_len), st.moe_fraction, tr.dtype,
                        tr.stack, cheap_recompute(tr, s));
  if (tr.flash_attention) la.attn = 0;  // fused attention stores no s x s tensor
  const double full_layer = (s.sp ? la.shared / t : la.shared) + la.split / t + la.attn / t;
  // The input of a layer, all that full recompute keeps of it: 2 s b h bytes (split by SP).
  const double layer_input = 2.0 * st.tokens_mb * static_cast<double>(m.hidden) / (s.sp ? t : 1.0);
  double per_layer = 0;
  switch (s.recompute) {
    case Recompute::none:
      per_layer = full_layer;
      break;
    case Recompute::selective:
      per_layer = full_layer - la.attn / t;
      break;
    case Recompute::op:
      per_layer = op_checkpoint_bytes(m, st.tokens_mb, st.moe_fraction, t, s.sp) +
                  (tr.flash_attention ? 0.0 : la.attn / t);
      break;
    case Recompute::qkv:
      // The layer's input and the outputs of its Q, K and V projections, each TP rank its heads'
      // (MaxText's save_qkv_proj with scanned layers; ours, counted from that policy).
      per_layer = layer_input + 2.0 * st.tokens_mb * (m.q_width() + m.k_width() + m.v_width()) / t;
      break;
    case Recompute::layer:
      // Every second layer keeps only its input, the others everything (TorchTitan's selective
      // layer checkpointing, frequency 2): half of each, on average over the stage's layers.
      per_layer = 0.5 * (full_layer + layer_input);
      break;
    case Recompute::full:
    default:
      per_layer = layer_input;
      break;
  }
  return {full_layer, per_layer};
}

}  // namespace detail

MemoryUse memory_use(const Model& m, const Training& tr, const Strategy& s) {
  const detail::StageShape st = detail::stage_shape(m, tr, s);
  const double t = static_cast<double>(s.tp), p = static_cast<double>(s.pp);
  const double v = static_cast<double>(s.interleave);
  // Context-parallel ranks hold the same weights: the data-parallel group of the gradients and of
  // the distributed optimizer is dp x cp (Megatron-Core's DP x CP group), or the HSDP shard group
  // when there is one (then ep = 1): `shard`, and `eshard` for the experts.
  const double edp = static_cast<double>(s.degrees().expert_dp());
  const double shard = static_cast<double>(s.degrees().shard_size());
  const double eshard = s.hsdp > 0 ? shard : edp;
  const spec::Sharding sharding = detail::sharding_of(tr, s);
  const detail::LayerBytes lb = detail::layer_bytes(m, tr, s, st);
  const double full_layer = lb.full, per_layer = lb.kept;
  // Weights per GPU per layer (the stage's layers, MoE ones spread evenly over stages).
  const double dense_layer =
      st.layers > 0 ? (st.dense_params - st.embedding_params) / st.layers : 0;
  const double expert_layer = st.layers > 0 ? st.expert_params / st.layers : 0;
  const double mb = st.micro_batches;
  // The weights outside the layers that sharding gathers at once: the embedding and an untied
  // output layer on the same stage together (FSDP's root module), or the larger of the two alone
  // where each weight is gathered at its use (Stack::fsdp_gather_per_weight; ours).
  const bool output_here =
      !m.tied_embeddings && (s.pp == 1 || s.schedule == PipelineSchedule::zb_v);
  const double outside_parts = tr.stack.fsdp_gather_per_weight && output_here ? 2.0 : 1.0;

  // One stage of `layers` layers (plus `embedding` weights) holding `in_flight` chunk-micro-batches
  // of activations, chunks of layers / v layers.
  // `held`: the layer-micro-batches the stage holds at its peak.
  auto stage = [&](double layers, double embedding, double held) {
    MemoryUse mem;
    // Mixed-precision Adam: bf16 weights (2), fp32 gradients (4), fp32 master weights, momentum
    // and variance (12) = 18 bytes per parameter (Korthikanti et al. 2022, Fig. 1); the
    // distributed optimizer shards the 12 optimizer bytes over the data-parallel group
    // (Megatron-LM docs).
    const double dense = layers * dense_layer + embedding, expert = layers * expert_layer;
    const double params = dense + expert;
    mem.weights_bytes = 2.0 * params;
    // With a bf16 gradient buffer the optimizer steps on an fp32 copy of its gradient shard: 2 +
    // 2 + 16 bytes per parameter at the step, the 16 sharded by the distributed optimizer
    // (Megatron-LM, distributed optimizer documentation: "bf16 param, bf16 grads": 4 + 16/d).
    // The copy is made for the step (Megatron-Core's DistributedOptimizer,
    // _copy_model_grads_to_main_grads: `shard_main_param.grad = shard_model_grad.float()`) and
    // freed by the next zero_grad (set_to_none), so it never meets the activations (ours).
    const double grad_bytes = tr.stack.grad_bytes;
    // The optimizer's fp32 master weights (4) and Adam's two moments (fp32 or bf16).
    const double adam_bytes = 4.0 + 2.0 * tr.stack.moment_bytes;
    const double copy_bytes = grad_bytes < 4.0 ? 4.0 : 0.0;
    mem.gradients_bytes = grad_bytes * params;
    // (FSDP under pipelining shards this state alone, over the HSDP shard group where there is
    // one: detail::fsdp_under_pipeline.)
    const double sharded = dense / shard + expert / eshard;
    const double stepped = s.dist_opt ? sharded : params;
    mem.optimizer_bytes = adam_bytes * stepped;
    mem.step_bytes = copy_bytes * stepped;
    // Sharded (ZeRO-2, ZeRO-3): what is gathered or reduced at once, one layer or the weights
    // outside the layers gathered together.
    const double unit = std::max(dense_layer + expert_layer, embedding / outside_parts);
    if (sharding == spec::Sharding::gradients) {
      // ZeRO-2 (Rajbhandari et al. 2020, stage 2): the bf16 weights whole, the gradients
      // accumulated in an fp32 shard (4 bytes over the shard group) and Adam's 12 bytes sharded;
      // the full-size gradients of two units (one being reduced, one being computed) exist only
      // in flight (ours, as for ZeRO-3 below).
      mem.gradients_bytes = 4.0 * sharded + 2.0 * grad_bytes * unit;
      mem.optimizer_bytes = adam_bytes * sharded;
      mem.step_bytes = 0.0;
    }
    if (sharding == spec::Sharding::full) {
      // ZeRO-3 / FSDP: weights and gradients sharded too (Rajbhandari et al. 2020, stage 3). The
      // persistent state is the fp32 shard of the weights (the optimizer's 4 master bytes), its
      // fp32 gradient shard (4) and Adam's two moments (8): 16 bytes per parameter over dp; the
      // bf16 weights exist only gathered, cast from the shard for the all-gather (Zhao et al.
      // 2023, Sec. 3.4, mixed precision). Plus the unit in use and the one prefetched: bf16
      // weights and fp32 gradients of two units, a unit being one layer or the embedding (ours,
      // after Zhao et al. 2023's one-unit prefetch).
      mem.weights_bytes = 2.0 * 2.0 * unit;
      mem.gradients_bytes = 4.0 * sharded + 2.0 * grad_bytes * unit;
      mem.optimizer_bytes = adam_bytes * sharded;
      mem.step_bytes = 0.0;
    }
    // DualPipe keeps two copies of the stage's weights and gradients (each GPU holds the stage
    // of both directions; DeepSeek-V3 report, Table 2: parameters 2x); one optimizer (ours).
    if (s.schedule == PipelineSchedule::dualpipe) {
      mem.weights_bytes *= 2.0;
      mem.gradients_bytes *= 2.0;
    }
    // Activation offload (pp 1): the offloaded layers' activations live in host memory but for
    // the one in transit (ours, after Transformer Engine's double-buffered CPU offload).
    const double kept_layers =
        s.offload_layers > 0 ? std::max(1.0, layers - static_cast<double>(s.offload_layers) + 1.0)
                             : layers;
    const double held_per_layer = layers > 0 ? held / layers : 0.0;  // micro-batches per layer
    double act = per_layer * kept_layers * held_per_layer;
    mem.host_bytes = per_layer * static_cast<double>(std::max<std::int64_t>(0, s.offload_layers)) *
                     held_per_layer;
    // Recomputation rebuilds one layer's activations at a time during the backward pass: all of
    // them (full, and layer's recomputed layers), or what per-op or Q, K and V checkpointing
    // dropped.
    if (s.recompute == Recompute::full || s.recompute == Recompute::layer) act += full_layer;
    if (s.recompute == Recompute::op || s.recompute == Recompute::qkv)
      act += std::max(0.0, full_layer - per_layer);
    mem.activations_bytes = act;
    mem.reserved_bytes = kReservedBytes;
    return mem;
  };
  // Chunk-micro-batches a stage holds at the peak: 1F1B's stage i holds p - i micro-batches;
  // interleaved, Megatron's warm-up of 2 (p - i - 1) + (v - 1) p chunks plus one, so the first
  // stage holds L (1 + (p - 1) / (p v)) layers' worth (Korthikanti et al. 2022, Sec. 4.2.3);
  // never more than there are.
  // ZB-H1 keeps 1F1B's (Qi et al. 2024); ZB-V 1F1B's peak, p micro-batches (2 p chunks of half a
  // stage), on every stage (Qi et al. 2024, Sec. 6; PyTorch's ZB-V order: 2 (p - r) - 1 + 2 r +
  // 1 chunks forward before GPU r's first weight pass); DualPipe p + 1 micro-batches on every
  // stage (DeepSeek-V3 report, Table 2).
  auto in_flight = [&](double i) {
    if (s.schedule == PipelineSchedule::dualpipe) return std::min(p + 1.0, mb);
    if (s.schedule == PipelineSchedule::zb_v) return std::min(p, mb);
    return s.interleave <= 1 ? std::min(p - i, mb)
                             : std::min(detail::interleaved_warmup_chunks(p, v, i) + 1.0, mb * v);
  };
  // Layer-micro-batches at the peak: the chunks in flight times layers / v; where p v does not
  // divide the layers, Megatron-Core's order counted chunk by chunk, since its larger chunks run
  // first (perf::peak_layers_in_flight).
  const std::int64_t units = detail::split_layers(m, s);
  const bool uneven_chunks = s.schedule == PipelineSchedule::one_f_one_b && s.interleave > 1 &&
                             units % (s.pp * s.interleave) != 0;
  auto held = [&](std::int64_t i, double layers) {
    if (uneven_chunks)
      return peak_layers_in_flight(units, s.pp, s.interleave,
                                   std::max<std::int64_t>(1, std::llround(mb)), i,
                                   tr.stack.knobs.embedding_loss_chunks);
    return layers / v * in_flight(static_cast<double>(i));
  };
  // The MTP modules' own weights beyond their layers (projection and norms) and the fp32 logits
  // of one micro-batch per output head (4 s b V / t, Korthikanti et al. 2022, Sec. 4.3): the
  // model's head and each module's.
  const double mtp = st.mtp_layers, h = static_cast<double>(m.hidden);
  const double mtp_extra = mtp * m.mtp_input_params() / t;
  const double logits = (1.0 + mtp) * 4.0 * st.tokens_mb * static_cast<double>(m.vocab) / t;
  if (s.pp == 1) {
    // The single stage holds every layer, the MTP modules' too, and the logits.
    MemoryUse one = stage(st.layers_first + mtp, st.embedding_params + mtp_extra,
                          held(0, st.layers_first + mtp));
    one.activations_bytes += logits;
    return one;
  }
  MemoryUse mem = stage(st.layers_first, st.embedding_params, held(0, st.layers_first));
  // With fewer layers on the first stage the fullest one (the second) can hold more (ours).
  if (st.layers > st.layers_first) {
    const MemoryUse second = stage(st.layers, 0.0, held(1, st.layers));
    if (second.total() > mem.total()) mem = second;
  }
  // With MTP modules the last stage holds their layers, the output head, a copy of the embedding
  // for the modules' inputs (Megatron-Core builds it where the MTP block is) and the logits of
  // every head; it holds the fewest micro-batches in flight, so it sets the peak only when the
  // modules outweigh them (ours). Where p v does not divide the split, its chunks in flight are
  // counted over pipeline_layers(), each module's as two layers.
  if (mtp > 0) {
    const double vh = static_cast<double>(m.vocab) * h / t;
    const double last_layers = st.layers_last + mtp;
    MemoryUse last = stage(last_layers, 2.0 * vh + mtp_extra, held(s.pp - 1, last_layers));
    last.activations_bytes += logits;
    if (last.total() > mem.total()) mem = last;
  }
  return mem;
}

}  // namespace railsim::perf
