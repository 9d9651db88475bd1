#include "railsim/perf/iteration.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

#include "detail.hpp"
#include "railsim/core/checks.hpp"
#include "railsim/perf/expansion.hpp"
#include "railsim/perf/pipeline_order.hpp"
#include "railsim/perf/zero_bubble.hpp"

namespace railsim::perf {

using spec::DesignKind;

// ---- context ------------------------------------------------------------------------------------

EstimateContext make_context(const Model& m, const Training& tr, const spec::Cluster& c,
                             const spec::NetworkDesign& d, PlacementKind placement) {
  return make_context(m, tr, c, c, d, placement);
}

EstimateContext make_context(const Model& m, const Training& tr, const spec::Cluster& c,
                             const spec::Cluster& network, const spec::NetworkDesign& d,
                             PlacementKind placement) {
  if (c.gpus > network.gpus || c.hb_domain != network.hb_domain)
    throw std::logic_error("make_context: a job larger than its network or of other HB domains");
  EstimateContext ctx;
  ctx.model = &m;
  ctx.training = tr;
  ctx.cluster = &c;
  ctx.net = make_network_model(network, d);
  ctx.placement = placement;
  ctx.peak_flops = dtype_peak_flops(c.gpu, tr.dtype);
  ctx.gemm = make_gemm_caps(c.gpu, tr.dtype);
  ctx.gemm_bf16 = make_gemm_caps(c.gpu, Dtype::bf16);
  return ctx;
}

// ---- time ---------------------------------------------------------------------------------------

namespace {
// Kernels per transformer layer in the forward pass (ours, counted from a Megatron-Core layer with
// Transformer Engine: LayerNorm, QKV, rotary/bias, attention (1 fused, 3 unfused), projection,
// bias-dropout-add, LayerNorm, FC1, activation, FC2, bias-dropout-add); the backward launches
// about twice as many.
constexpr double kLayerKernels = 10.0;
// The same for TorchTitan's Llama block run eagerly (ours, counted from its model code): two
// RMSNorms of 6 kernels each (cast to fp32, square, mean, scale, cast back, weight), wq, wk, wv,
// the rotary embedding of Q and K (3 kernels each: cast, complex multiply, cast back), the two
// copies of repeat_kv, SDPA, the output's contiguous copy, wo, two residual adds, w1, w3, SiLU,
// the gate's multiply, w2.
constexpr double kEagerLayerKernels = 32.0;
// A fused (flash) attention backward runs at 0.86 of its forward's FLOP rate: on H100 SXM5 at
// head dimension 128 and 8K tokens, backward against forward, FlashAttention-2 318 vs 370
// TFLOP/s, cuDNN 518 vs 600 and FlashAttention-3 559 vs 646 (Shah et al. 2024,
// FlashAttention-3, benchmarks of Sec. 4.1): 0.86 each. A GPU preset with a backward fraction
// of its own (GpuEfficiency::flash_attention_bwd, measured) uses that instead.
constexpr double kFlashBwdRate = 0.86;
// FlashAttention-1-class kernels run at half FlashAttention-2's rate: "around 2x speedup
// compared to FlashAttention", 25-40% of A100's peak against 50-73% (Dao 2023, FlashAttention-2,
// abstract); the Triton port that LLM Foundry ran is, forward and backward together, "slightly
// slower" than the CUDA one (flash-attention repository, flash_attn/flash_attn_triton.py).
constexpr double kFa1OverFa2 = 0.5;

// Element-wise bytes per token of one layer of TorchTitan's Llama block in eager PyTorch (ours,
// counted from torchtitan/models/llama/model.py and norms.py, 2024, and the backward formulas of
// PyTorch's autograd, tools/autograd/derivatives.yaml), bf16 tensors 2 bytes, fp32 4; widths per
// GPU: hs the hidden (split by t with SP), q, k, v and o the Q, K, V and attention-output widths,
// f the FFN's.
//   forward: RMSNorm x.float() 6 hs, pow(2) 8 hs, mean 4 hs, x * rsqrt 8 hs, type_as 6 hs,
//     * weight 4 hs: 36 hs each, two; two residual adds 6 hs each; rotary embedding of Q and K,
//     x.float() 6, complex multiply 8, type_as 6 per element: 20 (q + k); repeat_kv's copies of
//     K and V to the query heads (grouped-query attention only): 2 k + 2 q + 2 v + 2 q; the
//     output's transpose-contiguous copy 4 o; SiLU 4 f and the gate's multiply 6 f.
//   backward: per RMSNorm the weight's multiply and its reduction 12 hs, the cast to fp32 6 hs,
//     x * rsqrt's two gradients 24 hs, mean's expansion 4 hs, pow's 28 hs, the fp32 gradient's
//     two uses summed 12 hs, the cast back 6 hs: 92 hs; the residual stream's two gradient sums
//     6 hs each; the rotary embedding 20 (q + k) and repeat_kv's sums as forward; the contiguous
//     copy of the output gradient 4 o; the multiply's two gradients 12 f, SiLU's 6 f.
struct EagerBytes {
  double fwd_common = 0, bwd_common = 0;  // per token, the layer less its FFN
  double fwd_per_f = 0, bwd_per_f = 0;    // per token per FFN element (gated: SwiGLU)
};
EagerBytes eager_bytes(const Model& m, double t, bool sp) {
  const double hs = static_cast<double>(m.hidden) / (sp ? t : 1.0);
  const double q = m.q_width() / t, k = m.k_width() / t, v = m.v_width() / t,
               o = m.attn_out_width() / t;
  const double rep = !m.is_mla() && m.kv_heads < m.heads ? 2.0 * k + 4.0 * q + 2.0 * v : 0.0;
  const double mid = 20.0 * (q + k) + rep + 4.0 * o;
  EagerBytes b;
  b.fwd_common = 2.0 * 36.0 * hs + 2.0 * 6.0 * hs + mid;
  b.bwd_common = 2.0 * 92.0 * hs + 2.0 * 6.0 * hs + mid;
  // SwiGLU: SiLU and the multiply; a plain FFN's activation: read and write (ours, as SiLU's).
  b.fwd_per_f = m.gated_ffn ? 10.0 : 4.0;
  b.bwd_per_f = m.gated_ffn ? 18.0 : 6.0;
  return b;
}
// Host-side cost of one chunk step of the pipeline schedule (posting the step's p2p operations
// and waiting on them, the schedule's bookkeeping): ours, tens of microseconds of Python and
// NCCL launch per step.
constexpr double kPipelineStepS = 30e-6;
// SMs DualPipe's all-to-all and PP kernels occupy (DeepSeek-V3 report, Sec. 3.2.2).
constexpr double kDualPipeCommSms = 20.0;
// The slowdown of `overlapped_s` of computation that shares the GPU's `sms` SMs with a
// communication kernel holding `comm_sms` of them (ours): the computation runs on the rest.
double sm_share_slowdown(double overlapped_s, double sms, double comm_sms) {
  return sms > comm_sms ? overlapped_s * comm_sms / (sms - comm_sms) : 0.0;
}
}  // namespace

namespace {
// One TP collective next to the GEMM it overlaps with (per layer, per micro-batch).
struct OverlapPair {
  double comm_s = 0;    // the collective's time alone
  double gemm_s = 0;    // the GEMM's time alone
  bool reduce = false;  // a reduce-scatter: summed by SM kernels; an all-gather: copy engines
  bool bulk = false;    // independent of its GEMM (whole, not chunked)
};
struct OverlapTime {
  double exposed_s = 0;     // communication left on the critical path
  double contention_s = 0;  // the GEMM's slowdown from the SMs the collective takes
};
// SMs a reduce-scatter overlap takes from the GEMM: Transformer Engine's default for its
// pipelined and bulk userbuffers overlaps (16; ring exchange by copy engines takes none).
constexpr double kOverlapSms = 16.0;

// Chunked overlap (Wang et al., ASPLOS'23, "Overlap communication with dependent computation via
// decomposition"; Transformer Engine's userbuffers): an all-gather in t ring-exchange steps feeds
// t GEMM chunks, the first chunk local: exposed max(0, C - (t-1)/t G). A reduce-scatter follows
// t GEMM chunks, the last chunk's share waits for the last GEMM chunk: (t-1)/t max(0, C - G) +
// C/t. A bulk overlap (independent GEMM) exposes max(0, C - G). While a reduce-scatter runs (at
// most min(C, G)), its 16 SMs are lost to the GEMM: min(C, G) x s/(S - s) more GEMM time. HBM
// contention is left out: the GEMMs that overlap are compute-bound (their operands and the
// collective's chunks together use a fraction of HBM bandwidth; docs/model.md section 6).
// A DP collective of `time` split over `chunks` equal parts: part k (k = chunks-1 .. 1) becomes
// ready k x gap before the end of the computation and runs whole; part 0 may start `window`
// before the end and its last bucket (`last_bucket`) cannot end before it. The parts share one
// network, one after another. Returns how far the last one ends after the computation (ours).
double dp_chunked_exposed(double time, double chunks, double gap, double window,
                          double last_bucket) {
  const double part = time / chunks;
  // Parts chunks-1 .. 1 one after another: the network is free when the longest back-to-back run
  // ends, max over s of s (part - gap) (the run of parts s .. 1), taken at s = chunks - 1 or 1.
  const double free = chunks < 2.0 ? -std::numeric_limits<double>::infinity()
                                   : (part > gap ? chunks - 1.0 : 1.0) * (part - gap);
  return std::max(std::max(free, -window) + part, last_bucket);
}

OverlapTime overlap_time(const OverlapPair& p, double t, double sms) {
  OverlapTime o;
  const double C = p.comm_s, G = p.gemm_s;
  if (p.bulk)
    o.exposed_s = std::max(0.0, C - G);
  else if (!p.reduce)
    o.exposed_s = std::max(0.0, C - (t - 1.0) / t * G);
  else
    o.exposed_s = (t - 1.0) / t * std::max(0.0, C - G) + C / t;
  if (p.reduce) o.contention_s = sm_share_slowdown(std::min(C, G), sms, kOverlapSms);
  return o;
}
}  // namespace

MoePermutationBytes moe_permutation_bytes(double own_copies, double expert_rows,
                                          double local_experts, double hidden) {
  const double row = 2.0 * hidden * detail::kActBytes;  // a bf16 row read and written
  MoePermutationBytes b;
  b.fwd = 2.0 * own_copies * row;  // permute before the dispatch, unpermute after the combine
  if (local_experts > 1.0) b.fwd += 2.0 * expert_rows * row;  // sorted by local expert and back
  b.bwd = b.fwd + own_copies * hidden * detail::kActBytes;    // the expert outputs read again
  return b;
}

Fp8CastBytes fp8_cast_bytes(const Model& m, const Fp8CastShape& s) {
  // Bytes per activation element: its absolute maximum read (2; fused into its producer under
  // torch.compile) and its cast read and written in row- and column-major fp8 (2 + 1 + 1).
  const double max = s.compiled ? 0.0 : 2.0, act = max + 4.0;
  const double t = s.tp, T = s.tokens, h = static_cast<double>(m.hidden);
  const double gates = m.gated_ffn ? 2.0 : 1.0;  // linears on the FFN's input
  // Forward and backward bytes, and of the forward the maximum passes'.
  struct Part {
    double fwd = 0, bwd = 0, fwd_max = 0;
  };
  // The input of `linears` linears, `rows` x h per GPU: cast whole (eager: once per linear), or,
  // gathered under SP, cast on the sequence shard to row-major fp8 (the maximum, 2 + 1),
  // all-gathered in fp8 and its column-major copy transposed from what the gather brought (1 + 1).
  const auto input = [&](double rows, double linears, bool gathered) {
    const double elems = (s.compiled ? 1.0 : linears) * rows * h;
    if (gathered && s.sp) return Part{elems * ((max + 3.0) / t + 2.0), 0.0, elems * max / t};
    return Part{elems * act, 0.0, elems * max};
  };
  // A layer: its linears' inputs (above, and `other_in` elements cast alone), their output
  // gradients (`grads` elements) and its weights.
  const auto layer = [&](Part in, double other_in, double grads, double weights) {
    // Weights: the maximum (2), the forward's cast (2 + 1), the backward's (2 + 1).
    return Part{in.fwd + act * other_in + 5.0 * weights, act * grads + 3.0 * weights,
                in.fwd_max + max * other_in + 2.0 * weights};
  };
  // wq, wk and wv on the attention's input, wo on its output; their output gradients.
  const Part attn =
      layer(input(T, 3.0, true), T * m.attn_out_width() / t,
            T * ((m.q_width() + m.k_width() + m.v_width()) / t + h), m.attention_params() / t);
  // An FFN of `rows` tokens against `f` columns per GPU: w1 and w3 (w1 alone without a gate) on
  // its input, w2 on f; the output gradients of w1 and w3 (f each) and of w2 (h).
  const auto ffn = [&](double rows, double f, bool gathered, double weights) {
    return layer(input(rows, gates, gathered), rows * f, rows * (gates * f + h), weights);
  };
  const Part dense = ffn(T, static_cast<double>(m.ffn_hidden) / t, true, m.dense_ffn_params() / t);
  Part moe{};
  if (m.is_moe()) {
    // The routed experts' rows arrive by the all-to-all, in bf16, and are cast where they run.
    moe =
        ffn(s.local_experts * s.expert_rows, static_cast<double>(m.expert_ffn_hidden) / s.expert_tp,
            false, s.local_experts * m.expert_params() / s.expert_tp);
    if (m.shared_experts > 0) {
      const Part sh = ffn(T, m.shared_ffn() / t, true, m.shared_ffn_params() / t);
      moe = {moe.fwd + sh.fwd, moe.bwd + sh.bwd, moe.fwd_max + sh.fwd_max};
    }
  }
  const double L = s.dense_layers + s.moe_layers;
  const auto sum = [&](double Part::*x) {
    return L * attn.*x + s.dense_layers * dense.*x + s.moe_layers * moe.*x;
  };
  return {sum(&Part::fwd), sum(&Part::bwd), sum(&Part::fwd_max)};
}

namespace {

// The sizes the stages of the estimate read: degrees, micro-batches, tokens and widths per GPU.
struct Dims {
  double t = 0, p = 0, v = 0, cp = 1;   // tp, pp, interleave, cp
  double mb = 0;                        // micro-batches per iteration
  double T = 0;                         // tokens per micro-batch
  double seq = 0, b = 0;                // sequence length, micro-batch in sequences
  double h = 0, a = 0, V = 0, ffn = 0;  // hidden, heads, vocabulary, FFN
  double qkv_w = 0, out_w = 0;          // Q + K + V widths; the attention output (projection input)
  double hbm = 0;                       // effective HBM bandwidth, bytes/s
  double moe_tokens = 0;  // routed token copies per micro-batch: T top_k capacity_factor
  // MoE: experts on a GPU (E / e), the rows each runs (the routed copies of e GPUs' SP shards
  // gathered over the expert TP group: etp T / t tokens against f_e / etp of each expert;
  // unfolded, all the TP group's tokens; folded to 1, a GPU's own T / t against whole experts,
  // Liu et al. 2025) and that TP size.
  double local_experts = 0, expert_rows = 0, expert_tp = 1;
};

Dims dims_of(const EstimateContext& ctx, const Strategy& s, const detail::StageShape& st) {
  const Model& m = *ctx.model;
  const spec::Cluster& c = *ctx.cluster;
  Dims d;
  d.t = static_cast<double>(s.tp);
  d.p = static_cast<double>(s.pp);
  d.v = static_cast<double>(s.interleave);
  d.cp = static_cast<double>(s.cp);
  d.mb = st.micro_batches;
  d.T = st.tokens_mb;
  d.seq = static_cast<double>(ctx.training.seq_len);
  d.b = static_cast<double>(s.micro_batch);
  d.h = static_cast<double>(m.hidden);
  d.qkv_w = m.q_width() + m.k_width() + m.v_width();
  d.out_w = m.attn_out_width();
  d.a = static_cast<double>(m.heads);
  d.V = static_cast<double>(m.vocab);
  d.ffn = static_cast<double>(m.ffn_hidden);
  d.hbm = c.gpu.hbm_bw_Bps * c.gpu.eff.hbm;
  d.moe_tokens = d.T * static_cast<double>(m.top_k) * m.capacity_factor;
  if (m.is_moe()) {
    d.local_experts = static_cast<double>(m.experts) / static_cast<double>(s.ep);
    d.expert_tp = static_cast<double>(s.expert_tp());
    d.expert_rows = d.moe_tokens * d.expert_tp / d.t / d.local_experts;
  }
  return d;
}

// MLA's K and V up-projection width: the heads' non-rotary key and value dimensions.
double mla_kv_up_width(const Model& m) {
  return static_cast<double>(m.heads * (m.qk_dim() - m.qk_rope_head_dim + m.v_dim()));
}

// The GEMMs from a layer's input to its Q, K and V, each T x n over k: one fused QKV GEMM (T x
// (q + k + v widths)/t over h), or MLA's (DeepSeek-V2, Liu et al. 2024, Sec. 2.1): Q through its
// bottleneck (or straight from h), the kv latent and rotary key from h, K and V up from the latent;
// the down-projections run whole on every TP rank and the up-projections split by heads (ours, as
// Megatron-Core's MLA). At most four, in a fixed array (no allocation on the search's path).
struct QkvGemm {
  double n = 0, k = 0;
  bool up = false;  // an MLA up-projection (from a latent)
};
struct QkvGemms {
  std::array<QkvGemm, 4> gemm{};
  int count = 0;
  const QkvGemm* begin() const { return gemm.data(); }
  const QkvGemm* end() const { return gemm.data() + count; }
};

QkvGemms qkv_gemms(const Model& m, double t) {
  const double h = static_cast<double>(m.hidden);
  QkvGemms g;
  auto add = [&](double n, double k, bool up) {
    g.gemm[static_cast<std::size_t>(g.count++)] = {n, k, up};
  };
  if (!m.is_mla()) {
    add((m.q_width() + m.k_width() + m.v_width()) / t, h, false);
    return g;
  }
  const double ql = static_cast<double>(m.q_lora_rank), kl = static_cast<double>(m.kv_lora_rank);
  if (ql > 0) {
    add(ql, h, false);
    add(m.q_width() / t, ql, true);
  } else {
    add(m.q_width() / t, h, false);
  }
  add(kl + static_cast<double>(m.qk_rope_head_dim), h, false);
  add(mla_kv_up_width(m) / t, kl, true);
  return g;
}

// The attention projections' GEMMs of one layer, forward (returned) and backward (added to *bwd):
// those of qkv_gemms and the projection (T x h over the attention output / t) (Megatron-LM's TP
// splits, Shoeybi et al. 2019).
double attention_gemms(const GemmCaps& gc, const Model& m, double T, double t, double* bwd) {
  const double h = static_cast<double>(m.hidden);
  const double proj = gemm_fwd_bwd_time(gc, T, h, m.attn_out_width() / t, bwd);
  double qkv = 0;
  for (const QkvGemm& q : qkv_gemms(m, t)) qkv += gemm_fwd_bwd_time(gc, T, q.n, q.k, bwd);
  return qkv + proj;
}

// Which of qkv_gemms a forward time counts: all of them (what Recompute::qkv keeps), or MLA's
// up-projections alone (Q from its latent where it has one, K and V from the kv latent; none
// without MLA), which Stack::recompute_up_projections runs again in the backward pass.
enum class QkvPart { all, up_projections };

double qkv_forward(const GemmCaps& gc, const Model& m, double T, double t, QkvPart part) {
  double time = 0;
  for (const QkvGemm& q : qkv_gemms(m, t))
    if (part == QkvPart::all || q.up) time += gemm_time(gc, T, q.n, q.k);
  return time;
}

// Stage 1, compute: one micro-batch through the fullest pipeline stage's layers, seconds.
struct StageCompute {
  double fwd = 0;        // forward: GEMMs, attention core, element-wise kernels, kernel gaps
  double bwd = 0;        // backward
  double recompute = 0;  // the forward work recomputed in the backward
  double wgrad = 0;      // of bwd: the weight-gradient GEMMs (ZB-H1's and DualPipe's W)
  double logits = 0;     // output layer and cross entropy (the last stage's)
  // Of fwd, bwd and recompute: the attention cores (what ring attention's transfers hide behind).
  double attn_fwd = 0, attn_bwd = 0, attn_recompute = 0;
  // Of fwd and bwd: the MoE layers' expert GEMMs (what combined 1F1B hides an all-to-all behind).
  double moe_fwd = 0, moe_bwd = 0;
};

// The GEMMs of one layer per micro-batch by shape (Megatron-LM's TP splits, Shoeybi et al. 2019):
// QKV (T x (h + 2 kvd)/t over h), projection (T x h over h/t), FC1 (T x f/t, gate and up fused:
// 2 f/t, over h), FC2 (T x h over f/t); each with its two backward GEMMs. Forward and backward
// seconds: the attention's in every layer, the dense FFN's, an MoE layer's experts and shared
// experts.
struct LayerGemms {
  double qkv = 0, qkv_bwd = 0;
  double dense = 0, dense_bwd = 0;
  double moe = 0, moe_bwd = 0;
};

LayerGemms layer_gemms(const GemmCaps& gc, const Model& m, const Dims& d) {
  const double t = d.t, T = d.T, h = d.h, ffn = d.ffn;
  LayerGemms g;
  g.qkv = attention_gemms(gc, m, T, t, &g.qkv_bwd);
  g.dense = gemm_fwd_bwd_time(gc, T, (m.gated_ffn ? 2.0 : 1.0) * ffn / t, h, &g.dense_bwd) +
            gemm_fwd_bwd_time(gc, T, h, ffn / t, &g.dense_bwd);
  if (m.is_moe()) {
    // Each local expert runs its share of the routed tokens (Dims::expert_rows).
    const double te = d.expert_rows, et = d.expert_tp;
    const double fe = static_cast<double>(m.expert_ffn_hidden);
    double b_routed = 0;
    g.moe = d.local_experts *
            (gemm_fwd_bwd_time(gc, te, (m.gated_ffn ? 2.0 : 1.0) * fe / et, h, &b_routed) +
             gemm_fwd_bwd_time(gc, te, h, fe / et, &b_routed));
    g.moe_bwd = b_routed * d.local_experts;
    if (m.shared_experts > 0) {  // shared experts: a dense FFN on every token, no routing
      const double fs = m.shared_ffn();
      g.moe += gemm_fwd_bwd_time(gc, T, (m.gated_ffn ? 2.0 : 1.0) * fs / t, h, &g.moe_bwd) +
               gemm_fwd_bwd_time(gc, T, h, fs / t, &g.moe_bwd);
    }
  }
  return g;
}

// The attention core of one layer per micro-batch: its forward seconds and the bytes of one
// score tensor (what unfused attention moves through HBM).
struct AttentionCore {
  double fwd = 0;
  double score_bytes = 0;
  double bwd_ratio = 2.0;  // the backward's seconds per forward second
};

AttentionCore attention_core(const EstimateContext& ctx, const Dims& d) {
  const Model& m = *ctx.model;
  const spec::GpuEfficiency& e = ctx.cluster->gpu.eff;
  // Forward FLOPs per GPU (2 per multiply-add): Q K^T and A V over the full s x s (Megatron);
  // with CP the T = b s / cp local queries against all s keys: 1/cp of it, the load-balanced
  // chunks giving every rank the same causal share. (4 T s h / t for heads of h / a.)
  const double f_attn = 2.0 * d.T * d.seq * d.a * static_cast<double>(m.qk_dim() + m.v_dim()) / d.t;
  // A batched GEMM over s x s scores per head, bounded by the tensor cores or by HBM traffic of
  // the score matrix (roofline; ours). It runs in bf16 even when the GEMMs run fp8 (Transformer
  // Engine's fp8 recipes keep attention in bf16 unless fp8_dpa is set).
  const double attn_peak = ctx.cluster->gpu.peak_bf16_flops;
  AttentionCore core;
  // One score tensor, bytes: a CP rank scores its s / cp queries against the whole sequence.
  core.score_bytes = d.b * (d.a / d.t) * d.seq * d.seq * detail::kActBytes / d.cp;
  // With a fused (flash) attention kernel nothing of size s x s touches HBM and causal masking
  // skips half the work (Dao 2023, FlashAttention-2); it runs at the preset's flash_attention
  // fraction of peak (gemm_max when not given).
  const double fused_eff = e.flash_attention > 0 ? e.flash_attention : e.gemm_max;
  const spec::AttentionKernel kernel = ctx.training.stack.attention_kernel;
  // A FlashAttention-1- or -2-class kernel starts from the preset's FA2-class fractions.
  const bool fa2_class = kernel != spec::AttentionKernel::fused && e.flash_attention_fa2 > 0;
  const double fa2_eff = fa2_class ? e.flash_attention_fa2 : fused_eff;
  // Its backward: 2.5 x the forward's FLOPs (it recomputes the scores; Dao 2023) at the
  // preset's measured backward fraction of that kernel, else at 0.86 of the forward's rate.
  double bwd_eff = fa2_class ? e.flash_attention_fa2_bwd : e.flash_attention_bwd;
  double flash_eff = fa2_eff;
  // A FlashAttention-1-class kernel: the preset's own fraction, else half FlashAttention-2's
  // (Dao 2023), its backward slowed alike (the two kernels' backward-to-forward ratio the same).
  if (kernel == spec::AttentionKernel::fa1) {
    flash_eff = e.flash_attention_fa1 > 0 ? e.flash_attention_fa1 : kFa1OverFa2 * fa2_eff;
    bwd_eff *= flash_eff / fa2_eff;
  }
  if (ctx.training.flash_attention)
    core.bwd_ratio = bwd_eff > 0 ? 2.5 * flash_eff / bwd_eff : 2.5 / kFlashBwdRate;
  // A fused kernel skips the keys outside a sliding window too (the layers' average share of the
  // causal work, Model::attention_share); unfused attention computes the whole masked s x s.
  core.fwd = ctx.training.flash_attention
                 ? 0.5 * f_attn * m.attention_share(d.seq) / (attn_peak * flash_eff)
                 : std::max(f_attn / (attn_peak * e.attention),
                            2.0 * core.score_bytes / d.hbm);  // write scores, read probs
  return core;
}

// Element-wise kernels of a stage per micro-batch: forward and backward seconds, and the
// per-layer bytes the recomputation paths run again.
struct Elementwise {
  double fwd = 0, bwd = 0;
  double hidden_bytes = 0;  // one hidden-sized bf16 tensor of a layer (split by t with SP)
  double attn_bytes = 0;    // a layer's score-sized traffic (unfused attention)
  double moe_bytes = 0;     // an MoE layer's FFN-sized traffic
  double cast_max_fwd = 0;  // of fwd: the fp8 casts' absolute-maximum passes, seconds
};

Elementwise elementwise(const EstimateContext& ctx, const Strategy& s, const detail::StageShape& st,
                        const Dims& d, double score_bytes) {
  const Model& m = *ctx.model;
  const double t = d.t, T = d.T, h = d.h, hbm = d.hbm;
  // LayerNorm, softmax, dropout, bias-GeLU, bias-dropout-add: bytes moved in the forward pass
  // (ours, counted from Megatron-LM kernels): 11 hidden-sized tensors (split by t with SP), 2 (3
  // gated) FFN-sized, 4.5 score-sized.
  Elementwise ew;
  ew.hidden_bytes = T * h * detail::kActBytes / (s.sp ? t : 1.0);
  const double dense_F = T * static_cast<double>(m.ffn_hidden) * detail::kActBytes / t;
  const double moe_F =
      (d.moe_tokens * static_cast<double>(m.expert_ffn_hidden) + T * m.shared_ffn()) *
      detail::kActBytes / t;
  const double ew_common = 11.0 * ew.hidden_bytes;
  ew.attn_bytes = ctx.training.flash_attention ? 0.0 : 4.5 * score_bytes;
  const double ew_dense = (m.gated_ffn ? 3.0 : 2.0) * dense_F;
  ew.moe_bytes = (m.gated_ffn ? 3.0 : 2.0) * moe_F;
  // Sorting the tokens by expert and back (ours, counted from Megatron-Core's dispatcher).
  const MoePermutationBytes perm =
      m.is_moe() ? moe_permutation_bytes(d.moe_tokens / t, d.local_experts * d.expert_rows,
                                         d.local_experts, h)
                 : MoePermutationBytes{};
  const double L_dense = st.dense_layers, L_moe = st.moe_layers;
  // A stack that runs its block eagerly (torch.compile off) moves what eager_bytes counts
  // instead, forward and backward each counted; unfused attention's score traffic is the same.
  if (ctx.training.eager_elementwise()) {
    const EagerBytes eb = eager_bytes(m, t, s.sp);
    // dense_F and moe_F are bytes of FFN-wide bf16 tensors: their elements, 2 bytes each.
    const double ffn_elems = (L_dense * dense_F + L_moe * moe_F) / detail::kActBytes;
    ew.fwd = (st.layers * (T * eb.fwd_common + ew.attn_bytes) + ffn_elems * eb.fwd_per_f) / hbm;
    ew.bwd =
        (st.layers * (T * eb.bwd_common + 1.25 * ew.attn_bytes) + ffn_elems * eb.bwd_per_f) / hbm;
  } else {
    ew.fwd =
        (st.layers * (ew_common + ew.attn_bytes) + L_dense * ew_dense + L_moe * ew.moe_bytes) / hbm;
    // Element-wise backward kernels read the saved tensor and the incoming gradient and write
    // one gradient: 1.25 x the forward traffic (ours).
    ew.bwd = 1.25 * ew.fwd;
  }
  ew.fwd += L_moe * perm.fwd / hbm;
  ew.bwd += L_moe * perm.bwd / hbm;
  // fp8 casts as kernels of their own (torchao): full recomputation runs the forward's again with
  // the forward, per-op recomputation all but their maximum passes (recomputed()).
  if (spec::fp8_casts_apart(ctx.training.stack, ctx.training.dtype)) {
    const Fp8CastBytes c = fp8_cast_bytes(m, {T, t, L_dense, L_moe, d.local_experts, d.expert_rows,
                                              d.expert_tp, s.sp && s.tp > 1, ctx.training.compile});
    ew.fwd += c.fwd / hbm;
    ew.bwd += c.bwd / hbm;
    ew.cast_max_fwd = c.fwd_max / hbm;
  }
  return ew;
}

// The forward work the strategy's recomputation runs again in the backward pass, seconds, and
// of it the attention cores. `fwd` is the stage's whole forward, `gaps` its kernel gaps.
struct Recomputed {
  double time = 0, attn = 0;
};

Recomputed recomputed(const EstimateContext& ctx, const Strategy& s, const detail::StageShape& st,
                      const Dims& d, double fwd, const AttentionCore& core, const Elementwise& ew,
                      double gaps) {
  const Model& m = *ctx.model;
  const GemmCaps& gc = ctx.gemm;
  const double t = d.t, T = d.T, h = d.h, hbm = d.hbm;
  const double fwd_attn = st.layers * core.fwd;
  Recomputed r;
  if (s.recompute == Recompute::selective && !ctx.training.flash_attention) {
    // flash keeps no s x s tensor, so selective recompute has nothing to run again under it
    r.time = st.layers * (core.fwd + ew.attn_bytes / hbm);
    r.attn = fwd_attn;
  } else if (s.recompute == Recompute::full) {
    r.time = fwd;
    r.attn = fwd_attn;
  } else if (s.recompute == Recompute::layer) {  // every second layer's whole forward
    r.time = 0.5 * fwd;
    r.attn = 0.5 * fwd_attn;
  } else if (s.recompute == Recompute::op) {
    // Per-op checkpointing recomputes wk, wo and w3 (w2 without a gate) of every layer, per
    // expert in MoE layers (op_checkpoint_bytes), and the forward's element-wise kernels but the
    // attention's, which the kept attention output covers; the kernels launch again.
    // (A GEMM of `tokens` rows against f / split FFN columns.)
    auto ffn_half = [&](double tokens, double f, double split) {
      return m.gated_ffn ? gemm_time(gc, tokens, f / split, h)
                         : gemm_time(gc, tokens, h, f / split);
    };
    double moe_half = 0;
    if (m.is_moe()) {
      moe_half = d.local_experts *
                 ffn_half(d.expert_rows, static_cast<double>(m.expert_ffn_hidden), d.expert_tp);
      if (m.shared_experts > 0) moe_half += ffn_half(T, m.shared_ffn(), t);
    }
    const double gemms = st.layers * (gemm_time(gc, T, m.k_width() / t, h) +
                                      gemm_time(gc, T, h, m.attn_out_width() / t)) +
                         st.dense_layers * ffn_half(T, d.ffn, t) + st.moe_layers * moe_half;
    // The policy keeps the fp8 casts' absolute maxima (TorchTitan's list has max): the casts run
    // again, the passes that find the maxima do not.
    r.time = gemms + ew.fwd - ew.cast_max_fwd - st.layers * ew.attn_bytes / hbm + gaps;
  } else if (s.recompute == Recompute::qkv) {
    // Keeping the Q, K and V projections (MaxText's save_qkv_proj): the rest of the forward runs
    // again, but for what the backward does not use: XLA keeps of the recomputation only what
    // the layer's gradients need (JAX's remat drops dead code), and no gradient needs the
    // output of the FFN's down projection, FC2, dense, shared or per expert (ours).
    double skipped = st.layers * qkv_forward(gc, m, T, t, QkvPart::all) +
                     st.dense_layers * gemm_time(gc, T, h, d.ffn / t);
    if (m.is_moe()) {
      double fc2 =
          d.local_experts *
          gemm_time(gc, d.expert_rows, h, static_cast<double>(m.expert_ffn_hidden) / d.expert_tp);
      if (m.shared_experts > 0) fc2 += gemm_time(gc, T, h, m.shared_ffn() / t);
      skipped += st.moe_layers * fc2;
    }
    r.time = std::max(0.0, fwd - skipped);
    r.attn = fwd_attn;
  }
  if (detail::cheap_recompute(ctx.training, s)) {
    // The cheap tensors the stack recomputes instead of keeping (DeepSeek-V3 report, Sec. 3.2.3
    // and 3.3.3; spec::Stack): two norms per layer, each reading its input and writing its
    // output, and their launches; MLA's up-projection GEMMs; the MoE layers' SwiGLU, its forward
    // element-wise traffic once more (ours).
    const spec::Stack& k = ctx.training.stack;
    const double kernel_gap = ctx.cluster->gpu.eff.kernel_gap_s;
    if (k.recompute_norms) r.time += st.layers * (4.0 * ew.hidden_bytes / hbm + 2.0 * kernel_gap);
    if (k.recompute_up_projections)
      r.time += st.layers * qkv_forward(gc, m, T, t, QkvPart::up_projections);
    if (k.moe_swiglu_recompute) r.time += st.moe_layers * ew.moe_bytes / hbm;
  }
  return r;
}

// Stage 1 assembled: the GEMMs, attention cores and element-wise kernels of the stage's layers,
// their kernel gaps, the recomputation and the output layer.
StageCompute stage_compute(const EstimateContext& ctx, const Strategy& s,
                           const detail::StageShape& st, const Dims& d) {
  const Model& m = *ctx.model;
  const spec::GpuEfficiency& e = ctx.cluster->gpu.eff;
  const LayerGemms g = layer_gemms(ctx.gemm, m, d);
  const AttentionCore core = attention_core(ctx, d);
  const Elementwise ew = elementwise(ctx, s, st, d, core.score_bytes);
  const bool flash = ctx.training.flash_attention;
  const double L_dense = st.dense_layers, L_moe = st.moe_layers;
  const double fwd_gemm = st.layers * g.qkv + L_dense * g.dense + L_moe * g.moe;
  const double bwd_gemm = st.layers * g.qkv_bwd + L_dense * g.dense_bwd + L_moe * g.moe_bwd;
  const double fwd_attn = st.layers * core.fwd;
  // Idle time between dependent kernels (launch latency, tails), per layer (ours): the layer's
  // kernels, two more for unfused attention, two per local expert in an MoE layer.
  const double fwd_gaps =
      e.kernel_gap_s *
      (st.layers * ((ctx.training.eager_elementwise() ? kEagerLayerKernels : kLayerKernels) +
                    (flash ? 0.0 : 2.0)) +
       (m.is_moe() ? L_moe * 2.0 * d.local_experts : 0.0));
  StageCompute out;
  out.fwd = fwd_gemm + fwd_attn + ew.fwd + fwd_gaps;  // per micro-batch per stage
  // Backward: the input- and weight-gradient GEMMs of each forward GEMM (above), two attention
  // cores per forward one, the element-wise backward (above); twice the kernels.
  // FlashAttention's backward recomputes the scores: 2.5 x its forward's FLOPs (Dao 2023), run
  // at its own fraction of peak (attention_core); unfused, twice the forward's GEMMs.
  out.attn_bwd = core.bwd_ratio * fwd_attn;
  out.bwd = bwd_gemm + out.attn_bwd + ew.bwd + 2.0 * fwd_gaps;
  // Each forward GEMM has an input-gradient and a weight-gradient GEMM of the same FLOPs: half
  // the backward GEMM time is weight gradients (ours); attention and element-wise backward
  // kernels are input gradients.
  out.wgrad = 0.5 * bwd_gemm;
  out.attn_fwd = fwd_attn;
  out.moe_fwd = L_moe * g.moe;
  out.moe_bwd = L_moe * g.moe_bwd;
  const Recomputed r = recomputed(ctx, s, st, d, out.fwd, core, ew, fwd_gaps);
  out.recompute = r.time;
  out.attn_recompute = r.attn;
  // Output layer and cross entropy on the last stage (fp32 logits read and written ~3 times). The
  // output layer runs in bf16 under fp8 training: Megatron-Core's fp8 autocast covers the
  // transformer block only, its output layer being a plain ColumnParallelLinear; TorchTitan's
  // float8 conversion skips the output layer; DeepSeek-V3 keeps its output head in BF16 (report,
  // Sec. 3.3.1); Megatron-Core's fp8_output_proj runs it under MXFP8 (the stack's
  // fp8_output_layer, which needs MXFP8 training).
  double logits_bwd = 0;
  const GemmCaps& head = ctx.training.stack.defaults.fp8_output_layer ? ctx.gemm : ctx.gemm_bf16;
  out.logits = gemm_fwd_bwd_time(head, d.T, d.V / d.t, d.h, &logits_bwd) + logits_bwd +
               3.0 * 12.0 * d.T * d.V / d.t / d.hbm;
  // Each MTP module runs the output head and cross entropy again, after its 2h -> h projection
  // (a GEMM in the training's precision, TP-split like the layer's; DeepSeek-V3 report, Sec.
  // 2.2); its layer is timed with the stage's (StageShape::mtp_layers).
  if (m.mtp_layers > 0) {
    double proj_bwd = 0;
    const double proj = gemm_fwd_bwd_time(ctx.gemm, d.T, d.h / d.t, 2.0 * d.h, &proj_bwd);
    out.logits *= 1.0 + static_cast<double>(m.mtp_layers);
    out.logits += static_cast<double>(m.mtp_layers) * (proj + proj_bwd);
  }
  return out;
}

// Stage 2, communication: every op of the CommSchedule timed on the network, summed per micro-
// batch per stage (TP, SP, EP, PP, with what rail-only forwarding adds apart) or per iteration
// (DP, by phase).
struct CommTotals {
  double tp_mb = 0, ep_mb = 0, cp_mb = 0, pp_mb = 0, fw_mb = 0, fw_pp_mb = 0;
  double cp_fwd_mb = 0;                                   // of cp_mb: the forward's exchanges
  double ag_fwd = 0, rs_fwd = 0, ag_bwd = 0, rs_bwd = 0;  // one SP collective, its NIC/HB time
  double sp_fwd_n = 0, sp_bwd_n = 0;  // SP collectives per stage per micro-batch
  double dp_fwd = 0, dp_bwd = 0, dp_opt = 0, dp_fw = 0;
  double dp_fwd_n = 1, dp_bwd_n = 1;  // instances (FSDP: one per micro-batch)
  double dp_bwd_once = 0;             // backward DP time once per iteration
  bool dp_fwd_overlap = false, dp_bwd_overlap = false, dp_opt_overlap = false;
  bool cross_rail = false;
};

// Whether two ops take the same time: the same collective of the same bytes on the same groups
// (a collective's forward and backward instances differ only in phase and count), except a
// pipeline send, whose backward runs the other way.
bool same_time(const CommOp& a, const CommOp& b) {
  return a.op == b.op && a.op != CollectiveOp::send_recv && a.axis == b.axis &&
         a.algorithm == b.algorithm && a.bytes == b.bytes &&
         a.routing.experts == b.routing.experts && a.routing.top_k == b.routing.top_k &&
         a.routing.groups == b.routing.groups &&
         a.routing.groups_per_token == b.routing.groups_per_token;
}

CommTotals comm_totals(const CommSchedule& cs, const Placement& pl, const NetworkModel& net,
                       double mb) {
  CommTotals k;
  std::array<CollectiveTime, CommSchedule::kMaxOps> times{};
  for (int i = 0; i < cs.size; ++i) {
    const CommOp& op = cs.ops[static_cast<std::size_t>(i)];
    int j = 0;  // an earlier op of the same time, timed once
    while (j < i && !same_time(cs.ops[static_cast<std::size_t>(j)], op)) ++j;
    CollectiveTime& ct = times[static_cast<std::size_t>(i)];
    ct = j < i ? times[static_cast<std::size_t>(j)] : collective_time(op, pl, net);
    k.cross_rail = k.cross_rail || ct.cross_rail;
    switch (op.parallelism) {
      case Parallelism::tp:
      case Parallelism::sp:
        k.tp_mb += (ct.time_s - ct.forwarding_s) * op.count / mb;
        k.fw_mb += ct.forwarding_s * op.count / mb;
        // The TP group's pairs, which the TP overlap may hide; the expert TP group's (the
        // dispatcher's plain collectives) stay in tp_mb, exposed.
        if (op.parallelism == Parallelism::sp && op.axis == Axis::tp) {
          const bool fwd_phase = op.phase == Phase::forward;
          const bool ag = op.op == CollectiveOp::all_gather;
          (fwd_phase ? (ag ? k.ag_fwd : k.rs_fwd) : (ag ? k.ag_bwd : k.rs_bwd)) =
              ct.time_s - ct.forwarding_s;
          (fwd_phase ? k.sp_fwd_n : k.sp_bwd_n) += op.count / mb;
        }
        break;
      case Parallelism::ep:
        k.ep_mb += (ct.time_s - ct.forwarding_s) * op.count / mb;
        k.fw_mb += ct.forwarding_s * op.count / mb;
        break;
      case Parallelism::cp:  // exposed, or hidden by ring attention (cp_exposed below)
        k.cp_mb += (ct.time_s - ct.forwarding_s) * op.count / mb;
        if (op.phase == Phase::forward)
          k.cp_fwd_mb += (ct.time_s - ct.forwarding_s) * op.count / mb;
        k.fw_mb += ct.forwarding_s * op.count / mb;
        break;
      case Parallelism::pp:
        k.pp_mb += (ct.time_s - ct.forwarding_s) * op.count / mb;
        k.fw_pp_mb += ct.forwarding_s * op.count / mb;
        break;
      case Parallelism::dp:
        if (op.phase == Phase::optimizer) {
          k.dp_opt += ct.time_s * op.count;
          k.dp_opt_overlap = op.overlappable;
        } else if (op.phase == Phase::forward) {
          k.dp_fwd += ct.time_s * op.count;
          k.dp_fwd_n = std::max(1.0, op.count);
          k.dp_fwd_overlap = op.overlappable;
        } else if (op.count > 1.0) {  // once per micro-batch (FSDP, ZeRO-2)
          k.dp_bwd += ct.time_s * op.count;
          k.dp_bwd_n = op.count;
          k.dp_bwd_overlap = op.overlappable;
        } else {  // once per iteration (ZeRO-1, all-reduce; HSDP's replica all-reduce)
          k.dp_bwd_once += ct.time_s * op.count;
          k.dp_bwd_overlap = op.overlappable;
        }
        k.dp_fw += ct.forwarding_s * op.count;
        break;
    }
  }
  return k;
}

// Stage 3, TP communication overlapped with the GEMMs (Megatron-Core + Transformer Engine
// tp_comm_overlap; docs/model.md section 6). Each SP collective of a layer is chunked and
// pipelined with the GEMM it feeds or follows; what stays exposed replaces its full time. Per
// stage per micro-batch: the change to the TP time, what was hidden, and the GEMMs' slowdown.
struct TpOverlap {
  double tp_mb_change = 0, hidden_mb = 0, contention_mb = 0;
};

TpOverlap tp_overlap(const EstimateContext& ctx, const Strategy& s, const detail::StageShape& st,
                     const Dims& d, const Placement& pl, const CommTotals& k) {
  const Model& m = *ctx.model;
  TpOverlap out;
  // Userbuffers exchange the chunks over NVLink (peer memory inside the node): only a TP group
  // inside one HB domain overlaps; one spread over domains runs plain NCCL collectives.
  const bool tp_in_domain = ctx.net.kind == DesignKind::ideal || pl.shape(Axis::tp).domains == 1;
  if (!(ctx.training.stack.knobs.tp_comm_overlap && s.sp && s.tp > 1 && k.sp_fwd_n > 0 &&
        tp_in_domain))
    return out;
  const double t = d.t, T = d.T, h = d.h, ffn = d.ffn;
  const GemmCaps& gc = ctx.gemm;
  const double dense_share = st.layers > 0 ? st.dense_layers / st.layers : 1.0;
  const double gated = m.gated_ffn ? 2.0 : 1.0;
  const double f_n = gated * ffn / t;
  // The FFN pairs on the TP group (detail::sp_pairs): the dense FFN's in the dense layers, the
  // shared experts' (a TP-split FFN of f_s columns on the layer's tokens) in the MoE layers. The
  // routed experts' pair is on the expert TP group, a plain collective of the dispatcher that
  // Transformer Engine's userbuffers do not chunk (its grouped GEMMs take no overlap): exposed.
  const double shared_share = detail::sp_pairs(m, s, st).shared_ffn > 0 ? 1.0 - dense_share : 0.0;
  const double f_s = shared_share > 0 ? m.shared_ffn() : 0.0;
  const double ffn_reps = dense_share + shared_share;  // FFN pairs per layer
  // The GEMMs next to each FFN collective, the dense and shared-expert layers weighted.
  auto ffn_pair = [&](double dense, double shared) {
    return ffn_reps > 0 ? (dense_share * dense + shared_share * shared) / ffn_reps : 0.0;
  };
  const double qkv_n = d.qkv_w / t;
  const OverlapPair fwd_pairs[] = {
      {k.ag_fwd, gemm_time(gc, T, qkv_n, h), false},       // all-gather -> QKV
      {k.rs_fwd, gemm_time(gc, T, h, d.out_w / t), true},  // projection -> reduce-scatter
      {k.ag_fwd, ffn_pair(gemm_time(gc, T, f_n, h), gemm_time(gc, T, gated * f_s / t, h)),
       false},  // all-gather -> FC1
      {k.rs_fwd, ffn_pair(gemm_time(gc, T, h, ffn / t), gemm_time(gc, T, h, f_s / t)), true}};
  // Backward: the output gradient all-gathered into the projection's and FC2's input-gradient
  // GEMMs; the input gradients of QKV and FC1 reduce-scattered behind their weight-gradient
  // GEMMs (independent of them: bulk overlap).
  const OverlapPair bwd_pairs[] = {
      {k.ag_bwd, gemm_time(gc, T, d.out_w / t, h), false},
      {k.ag_bwd, ffn_pair(gemm_time(gc, T, ffn / t, h), gemm_time(gc, T, f_s / t, h)), false},
      {k.rs_bwd, gemm_time(gc, h, qkv_n, T), true, true},
      {k.rs_bwd, ffn_pair(gemm_time(gc, h, f_n, T), gemm_time(gc, h, gated * f_s / t, T)), true,
       true}};
  // Per layer: each attention pair once, each FFN pair ffn_reps times (in the order above).
  const double pair_reps[] = {1.0, 1.0, ffn_reps, ffn_reps};
  const double bwd_reps[] = {1.0, ffn_reps, 1.0, ffn_reps};
  const double layers = st.layers;
  double exposed = 0, hidden = 0, contention = 0;
  auto add_pairs = [&](const auto& pairs, const double* each, double reps) {
    for (std::size_t i = 0; i < std::size(pairs); ++i) {
      const OverlapPair& pr = pairs[i];
      const OverlapTime o = overlap_time(pr, t, gc.sms);
      const double r = reps * each[i];
      exposed += r * o.exposed_s;
      hidden += r * (pr.comm_s - o.exposed_s);
      contention += r * o.contention_s;
    }
  };
  // With full recompute the backward runs the forward's collectives again (the schedule's
  // backward count is twice the forward's): the forward pairs count twice.
  add_pairs(fwd_pairs, pair_reps, k.sp_bwd_n / k.sp_fwd_n);
  add_pairs(bwd_pairs, bwd_reps, 1.0);
  // Per layer -> per stage per micro-batch; what the SP ops cost before is replaced.
  const double sp_total =
      (k.ag_fwd + k.rs_fwd) * k.sp_fwd_n / 2.0 + (k.ag_bwd + k.rs_bwd) * k.sp_bwd_n / 2.0;
  out.tp_mb_change = layers * exposed - sp_total;
  out.hidden_mb = layers * hidden;
  out.contention_mb = layers * contention;
  return out;
}

// Stage 4, the pipeline schedule (Narayanan et al. SC'21): m micro-batches through p stages of v
// chunks; the stage time per micro-batch includes its exposed TP/EP/PP communication. The last
// stage also runs the output layer; the slowest stage paces the steady state (ours): time =
// m t_max + (p-1)/v t_avg. With uneven stages the first carries ceil(L/p) layers, the last
// floor(L/p) plus the output layer; work that scales with layers is scaled from the first
// stage's (ours). Interleaved chunks of floor or ceil L/(p v) layers, dealt so that a stage holds
// floor or ceil L/p, keep these stage totals; the bubble stays (p - 1)/v of the average stage
// time (Narayanan et al. SC'21, Sec. 2.2.2).
struct PipelineTime {
  double pipe = 0;       // the whole schedule, its overhead included
  double overhead = 0;   // host steps and the fill's extra sends
  double pp_steady = 0;  // exposed PP time per micro-batch in the steady state
  double t_avg = 0;      // the average stage's time per micro-batch
  double avg_scale = 0;  // average stage's layers / first stage's
  double stall = 0;      // uneven model chunks' wait beyond the closed form (may be negative)
};

// The bubble in units of the average stage's time per micro-batch, from the stage's forward F,
// backward B (recompute included) and weight-gradient W per micro-batch:
//   1F1B, interleaved:  (p - 1) / v                    (Narayanan et al. SC'21, Sec. 2.2)
//   ZB-H1:              (p - 1) (F + B - 2W) / (F + B)  (Qi et al. ICLR 2024, Sec. 3; DeepSeek-V3
//                                                        report, Table 2, "ZB1P")
//   DualPipe:           (p/2 - 1) (F&B + B - 3W) / (F + B), F&B = F + B, the overlapped pair's
//                       computation (DeepSeek-V3 report, Table 2; ours: F&B's communication is
//                       charged in the stage time, not here).
//   ZB-V:               the idle time of PyTorch's ZB-V order for m micro-batches whose chunk
//                       passes take F/2, (B - W)/2 and W/2 (perf::zbv_idle), over F + B; (p - 1)
//                       F/2 when F = B - W = W (Qi et al. 2024, Sec. 6: zero bubble but the
//                       last stage's start; ours: timed by the order's dependencies).
double bubble_stages(const Strategy& s, const StageCompute& sc, double mb) {
  const double p = static_cast<double>(s.pp), v = static_cast<double>(s.interleave);
  const double f = sc.fwd, b = sc.bwd + sc.recompute, w = sc.wgrad;
  const double fb = std::max(1e-300, f + b);
  switch (s.schedule) {
    case PipelineSchedule::zb_h1:
      return (p - 1.0) * std::max(0.0, f + b - 2.0 * w) / fb;
    case PipelineSchedule::zb_v:
      return zbv_idle(s.pp, static_cast<std::int64_t>(mb), 0.5 * f, 0.5 * std::max(0.0, b - w),
                      0.5 * w) /
             fb;
    case PipelineSchedule::dualpipe:
      return (p / 2.0 - 1.0) * std::max(0.0, f + 2.0 * b - 3.0 * w) / fb;
    case PipelineSchedule::one_f_one_b:
    default:
      return (p - 1.0) / v;
  }
}

PipelineTime pipeline_time(const Strategy& s, const Training& tr, std::int64_t m_layers,
                           const detail::StageShape& st, const Dims& d, const StageCompute& sc,
                           double layer_part, double pp_part) {
  const double p = d.p, v = d.v, mb = d.mb;
  PipelineTime out;
  // A forward and a backward chunk step of the first stage (the layer work split in the ratio of
  // its forward and backward computation) and one of its 2 v sends per micro-batch.
  const double fwd_share = sc.fwd / std::max(1e-300, sc.fwd + sc.bwd + sc.recompute);
  const double f_chunk = layer_part * fwd_share / v, b_chunk = layer_part * (1.0 - fwd_share) / v;
  const double send = s.pp > 1 ? pp_part / (2.0 * v) : 0.0;
  // Sends of the 1F1B body overlapped (the stack's pp_comm_overlap, interleaved only): a stage
  // alternates forward and backward chunk steps, and each send runs while the next step, of the
  // other direction and independent of it, computes (NeMo documentation, "Communication
  // Overlap"); what stays exposed is the part longer than that step (ours). Fill and flush stay
  // exposed (the bubble term keeps the full sends).
  out.pp_steady = pp_part;
  if (tr.stack.knobs.pp_comm_overlap && s.pp > 1 && s.interleave > 1)
    out.pp_steady = v * (std::max(0.0, send - b_chunk) + std::max(0.0, send - f_chunk));
  // The last stage runs its layers and the MTP modules' (and, in sc.logits, their heads).
  out.avg_scale = (st.layers_avg + st.mtp_layers / p) / st.layers;
  const double last_scale = (st.layers_last + st.mtp_layers) / st.layers;
  const double t_first = layer_part + out.pp_steady;
  const double t_last = layer_part * last_scale + out.pp_steady + sc.logits;
  out.t_avg = layer_part * out.avg_scale + pp_part + sc.logits / p;
  double t_max = s.pp > 1 ? std::max(t_first, t_last) : t_last;
  // A GPU holding half of the first stage's layers and half of the last's (the MTP modules'
  // included) per micro-batch, and `heads` of the output layers (ours).
  const auto first_and_last = [&](double heads) {
    return layer_part * 0.5 * (st.layers_first + st.layers_last + st.mtp_layers) / st.layers +
           out.pp_steady + heads * sc.logits;
  };
  // ZB-V's first GPU holds the first and the last chunk of the V, each micro-batch passing both:
  // the output layers once per micro-batch.
  if (s.schedule == PipelineSchedule::zb_v) t_max = std::max(t_first, first_and_last(1.0));
  // DualPipe's GPU r holds stage r of one direction and stage p - 1 - r of the other, each
  // direction half the micro-batches (DeepSeek-V3 report, Sec. 3.2.1, Fig. 5: rank 0 holds the
  // first and the last stage): the output layers of half a micro-batch.
  if (s.schedule == PipelineSchedule::dualpipe && s.pp > 1)
    t_max = std::max(t_first, first_and_last(0.5));
  // The schedule's own cost (ours): every chunk of every micro-batch is a host step, forward and
  // backward (2 m v steps on each stage, in its steady state), and the fill and the drain cross
  // all p v - 1 chunk boundaries, p (v - 1) more than the (p - 1)/v t_avg term holds, each one
  // send (the per-micro-batch PP time holds 2 v of them).
  const double steps = s.pp > 1 ? 2.0 * v * kPipelineStepS : 0.0;  // per micro-batch
  const double fill_extra = 2.0 * p * (v - 1.0) * send;
  out.overhead = mb * steps + fill_extra;
  // Chunks of unequal size (p v not dividing the layers): what Megatron-Core's order waits
  // beyond the closed form, timed on the stage's layers (perf::uneven_chunk_stall, in units of a
  // layer's forward and backward; ours).
  if (s.schedule == PipelineSchedule::one_f_one_b)
    out.stall = uneven_chunk_stall(m_layers, s.pp, s.interleave, std::llround(mb), fwd_share,
                                   tr.stack.knobs.embedding_loss_chunks) *
                layer_part / st.layers;
  out.pipe = mb * t_max + bubble_stages(s, sc, mb) * out.t_avg + out.stall + out.overhead;
  return out;
}

// Stage 5, the exposed DP communication. With overlap, the first stage's gradients are reduced
// chunk by chunk as each model chunk finishes its last backward (Megatron-Core buckets the first
// chunk, the one that finishes last, and reduces every other chunk as one bucket; NeMo
// documentation, "Communication Overlap": the DP communication is chunked per virtual stage with
// pipelining). Chunk k (k = v-1 .. 1) is ready k rounds of min(m, p) backward steps before the
// end; the reductions run one after another; the first chunk's starts with its last backward and
// its last bucket (ours: one layer's share) waits for the end (dp_chunked_exposed). Without
// interleaving this is the reduction hidden behind the last backward but its last bucket. The
// parameter all-gathers mirror it in the next forward pass (ours).
double dp_exposed_time(const CommTotals& k, const detail::StageShape& st, const Dims& d,
                       const StageCompute& sc) {
  const double v = d.v;
  const double last_bwd = sc.bwd + sc.recompute;
  const double rounds = std::min(d.mb, d.p);
  auto exposed = [&](double time, bool overlap, double window, double chunks) {
    if (!overlap) return time;
    return dp_chunked_exposed(time, chunks, rounds * window / chunks, window / chunks,
                              time / std::max(1.0, st.layers));
  };
  // Reductions repeated per micro-batch (FSDP) hide each behind that micro-batch's pass (ours).
  // What runs once per iteration after the last backward (ZeRO-1's reduction, HSDP's replica
  // all-reduce) hides behind that backward chunk by chunk.
  return k.dp_bwd_n *
             exposed(k.dp_bwd / k.dp_bwd_n, k.dp_bwd_overlap, last_bwd, k.dp_bwd_n > 1 ? 1.0 : v) +
         exposed(k.dp_bwd_once, k.dp_bwd_overlap, last_bwd, v) +
         k.dp_fwd_n *
             exposed(k.dp_fwd / k.dp_fwd_n, k.dp_fwd_overlap, sc.fwd, k.dp_fwd_n > 1 ? 1.0 : v) +
         exposed(k.dp_opt, k.dp_opt_overlap, sc.fwd, 1.0);
}

// Stage 6, the Adam step: read fp32 gradient, read and write master weights, momentum, variance,
// write bf16 weights (30), plus the gradient-norm read (4), zeroing the gradient buffer (4) and
// the bf16 copy's read (4): 42 bytes per parameter it updates (ours, counted from Megatron-LM's
// step).
double optimizer_time(const Strategy& s, const detail::StageShape& st, double hbm) {
  const double opt_params =
      s.dist_opt ? st.dense_params / static_cast<double>(s.dp * s.cp) +
                       st.expert_params / static_cast<double>(s.degrees().expert_dp())
                 : st.dense_params + st.expert_params;
  return 42.0 * opt_params / hbm;
}

// Stage 7, FLOPs: model FLOPs are 3 x forward, every layer, every token, the output layer
// (Narayanan et al. SC'21 eq. (3) generalised; ours for GQA/MoE); hardware FLOPs add the
// recomputed forward work.
void count_flops(const Model& m, const Training& tr, const Strategy& s,
                 const detail::StageShape& st, const Dims& d, IterationTime& it) {
  const double h = d.h, seq = d.seq, V = d.V;
  const double ffn_mats = m.gated_ffn ? 3.0 : 2.0;
  const double tokens = static_cast<double>(tr.global_batch) * seq;
  const double moe_frac = st.moe_fraction;
  // Q K^T and A V per token over the full s x s: 4 s h for heads of h / a; a sliding-window layer
  // over its w keys instead of s (the same convention: the full square, here w wide).
  const double keys =
      seq - m.sliding_fraction() * std::max(0.0, seq - static_cast<double>(m.sliding_window));
  const double attn_score_flops =
      2.0 * keys * static_cast<double>(m.heads) * static_cast<double>(m.qk_dim() + m.v_dim());
  // Model FLOPs count the routed tokens, not the capacity slots.
  const double ffn = detail::ffn_units(m, moe_frac, 1.0);
  const double fwd_per_token_layer =
      2.0 * m.attention_matrix_params() + attn_score_flops + 2.0 * h * ffn * ffn_mats;
  const double fwd_total =
      tokens * (static_cast<double>(m.layers) * fwd_per_token_layer + 2.0 * h * V);
  it.model_flops = 3.0 * fwd_total;
  // The MTP modules' layer, projection and output head: work the GPUs run, not model FLOPs (the
  // model's FLOPs per token count its own layers and head, as MFU is quoted).
  const double mtp_fwd = tokens * static_cast<double>(m.mtp_layers) *
                         (fwd_per_token_layer + 2.0 * h * 2.0 * h + 2.0 * h * V);
  double extra = 0;
  if (s.recompute == Recompute::full)
    extra = fwd_total - tokens * 2.0 * h * V;
  else if (s.recompute == Recompute::layer)
    extra = 0.5 * (fwd_total - tokens * 2.0 * h * V);
  else if (s.recompute == Recompute::op)  // wk, wo and one FFN matrix (op_checkpoint_bytes)
    extra =
        tokens * static_cast<double>(m.layers) * 2.0 * h * (m.k_width() + m.attn_out_width() + ffn);
  else if (s.recompute == Recompute::qkv)  // all but the Q, K and V projections and FC2
    extra = fwd_total - tokens * 2.0 * h * V -
            tokens * static_cast<double>(m.layers) * 2.0 *
                (m.attention_matrix_params() - h * m.attn_out_width() + h * ffn);
  else if (s.recompute == Recompute::selective && !tr.flash_attention)
    extra = tokens * static_cast<double>(m.layers) * attn_score_flops;
  if (detail::cheap_recompute(tr, s) && tr.stack.recompute_up_projections && m.is_mla())
    extra += tokens * static_cast<double>(m.layers) * 2.0 *
             (static_cast<double>(m.q_lora_rank) * m.q_width() +
              static_cast<double>(m.kv_lora_rank) * mla_kv_up_width(m));
  it.hardware_flops = it.model_flops + 3.0 * mtp_fwd + extra;
}

// Context parallelism's exchanges on a stage's critical path, per micro-batch. All-gathered K and
// V wait for their collective before the attention. Ring attention (the stack's p2p exchange)
// computes the attention block by block, cp steps of 1/cp of it each, and passes the next block
// around the ring during each of the first cp - 1 steps: a transfer hides behind one step of
// attention, so what stays exposed is the exchanges' excess over (cp - 1)/cp of the attention
// cores, forward against the forward's, backward (K and V again, their gradients, a recomputed
// forward's) against the backward's and the recomputed ones (ours, after Liu et al. 2023,
// ring attention: the transfer of a block overlaps the computation of the block in hand).
double cp_exposed(const Training& tr, const Strategy& s, const CommTotals& k,
                  const StageCompute& sc) {
  if (!tr.stack.ring_cp || s.cp <= 1) return k.cp_mb;
  const double w = static_cast<double>(s.cp - 1) / static_cast<double>(s.cp);
  const double bwd = k.cp_mb - k.cp_fwd_mb;
  return std::max(0.0, k.cp_fwd_mb - w * sc.attn_fwd) +
         std::max(0.0, bwd - w * (sc.attn_bwd + sc.attn_recompute));
}

}  // namespace

double combined_1f1b_exposed(const Strategy& s, double micro_batches, double ep_s,
                             const CombinedPairCompute& c, double sms) {
  // Megatron-Core's combined 1F1B runs a micro-batch's forward chunk merged with another's
  // backward chunk, layer by layer, and each all-to-all of one under a block of the other
  // (Megatron-Core's TransformerLayerSchedulePlan: attention, dispatch, experts, combine): the
  // forward's dispatch under the backward's experts, its combine under the backward's attention
  // block, the backward's two under the forward's attention block and experts. Each of the four
  // is a quarter of the all-to-all time (dispatch and combine move the same bytes each way) and
  // stays exposed where it outlasts its block; the all-to-all kernels take kDualPipeCommSms of
  // the SMs all along (DeepSeek's figure; Megatron-Core's is not published). Only the steady
  // state pairs: the first stage's warm-up forwards (2 (p - 1) + (v - 1) p of its v m chunks,
  // Megatron-Core's interleaved schedule; one without a pipeline) and as many cool-down
  // backwards run alone, their all-to-all exposed (ours).
  const double p = static_cast<double>(s.pp), v = static_cast<double>(s.interleave);
  const double chunks = micro_batches * v;
  const double warmup =
      s.pp > 1 ? std::max(1.0, detail::interleaved_warmup_chunks(p, v, 0.0)) : 1.0;
  const double paired = chunks > 0 ? std::clamp(1.0 - warmup / chunks, 0.0, 1.0) : 0.0;
  const double q = 0.25 * ep_s;
  const double exposed = std::max(0.0, q - c.bwd_mlp) + std::max(0.0, q - c.bwd_attn) +
                         std::max(0.0, q - c.fwd_attn) + std::max(0.0, q - c.fwd_mlp);
  const double compute = c.fwd_attn + c.fwd_mlp + c.bwd_attn + c.bwd_mlp;
  const double contention =
      sm_share_slowdown(std::min(ep_s - exposed, compute), sms, kDualPipeCommSms);
  return paired * (exposed + contention) + (1.0 - paired) * ep_s;
}

namespace {

// Activation offload's copies on the critical path, per micro-batch (pp 1). Each offloaded
// layer's activations go to the host over the GPU's host link while the next layer computes its
// forward, and come back while the layer after it computes its backward: what stays exposed is
// the copy's excess over one layer's forward (backward) time (ours, after Transformer Engine's CPU
// offload, which copies on a side stream one layer ahead).
double offload_exposed(const EstimateContext& ctx, const Strategy& s, const detail::StageShape& st,
                       const StageCompute& sc) {
  if (s.offload_layers <= 0 || st.layers <= 0) return 0.0;
  const double copy =
      detail::layer_bytes(*ctx.model, ctx.training, s, st).kept / ctx.cluster->gpu.host_bw_Bps;
  const double fwd = sc.fwd / st.layers, bwd = sc.bwd / st.layers;
  return static_cast<double>(s.offload_layers) *
         (std::max(0.0, copy - fwd) + std::max(0.0, copy - bwd));
}

}  // namespace

IterationTime estimate(const EstimateContext& ctx, const Strategy& s, const Placement& pl,
                       const CommSchedule& cs) {
  const Model& m = *ctx.model;
  const Training& tr = ctx.training;
  const spec::Cluster& c = *ctx.cluster;
  const detail::StageShape st = detail::stage_shape(m, tr, s);
  const Dims d = dims_of(ctx, s, st);
  const double mb = d.mb;
  IterationTime it;

  const StageCompute sc = stage_compute(ctx, s, st, d);
  CommTotals k = comm_totals(cs, pl, ctx.net, mb);
  it.cross_rail = k.cross_rail;
  const TpOverlap ov = tp_overlap(ctx, s, st, d, pl, k);
  k.tp_mb += ov.tp_mb_change;

  // EP and PP time per micro-batch on the stage's critical path.
  double ep_mb = k.ep_mb, pp_part = k.pp_mb + k.fw_pp_mb, pp_dualpipe_hidden = 0;
  if (s.schedule == PipelineSchedule::dualpipe) {
    // DualPipe pairs one micro-batch's forward chunk with another's backward chunk and runs the
    // all-to-all dispatch and combine and the PP sends of each while the other computes; what
    // stays exposed is the communication longer than that computation, and the communication
    // kernels take 20 of the GPU's SMs from it all along (DeepSeek-V3 report, Sec. 3.2.1-3.2.2:
    // 20 of H800's 132 SMs; the slowdown min(C, G) x 20 / (S - 20) is ours, as for TP overlap).
    const double compute = sc.fwd + sc.bwd + sc.recompute;
    const double comm = k.ep_mb + pp_part;
    const double contention =
        sm_share_slowdown(std::min(comm, compute), ctx.gemm.sms, kDualPipeCommSms);
    ep_mb = std::max(0.0, comm - compute) + contention;
    pp_dualpipe_hidden = pp_part;
    pp_part = 0;
  } else if (tr.stack.defaults.ep_overlap && k.ep_mb > 0) {
    const CombinedPairCompute pair{.fwd_attn = sc.fwd - sc.moe_fwd,
                                   .fwd_mlp = sc.moe_fwd,
                                   .bwd_attn = sc.bwd + sc.recompute - sc.moe_bwd,
                                   .bwd_mlp = sc.moe_bwd};
    ep_mb = combined_1f1b_exposed(s, mb, k.ep_mb, pair, ctx.gemm.sms);
  }
  const double cp_mb = cp_exposed(tr, s, k, sc);
  const double offload_mb = offload_exposed(ctx, s, st, sc);
  const double layer_part = sc.fwd + sc.bwd + sc.recompute + k.tp_mb + ov.contention_mb + ep_mb +
                            cp_mb + offload_mb + k.fw_mb;  // the fullest stage
  const PipelineTime pt =
      pipeline_time(s, tr, detail::split_layers(m, s), st, d, sc, layer_part, pp_part);
  const double dp_exposed = dp_exposed_time(k, st, d, sc);
  const double optimizer = optimizer_time(s, st, d.hbm);

  it.iteration_time_s = pt.pipe + dp_exposed + optimizer;
  Breakdown& bd = it.breakdown;
  bd.pp_hidden_s = mb * (pp_part - pt.pp_steady + pp_dualpipe_hidden);
  const double avg_scale = pt.avg_scale;
  bd.compute_s = mb * ((sc.fwd + sc.bwd) * avg_scale + sc.logits / d.p);
  bd.recompute_s = mb * sc.recompute * avg_scale;
  bd.tp_comm_s = mb * k.tp_mb * avg_scale;
  bd.tp_overlap_s = mb * ov.contention_mb * avg_scale;
  bd.tp_hidden_s = mb * ov.hidden_mb * avg_scale;
  bd.ep_comm_s = mb * ep_mb * avg_scale;  // with DualPipe, the PP sends' exposed share too
  bd.cp_comm_s = mb * cp_mb * avg_scale;
  bd.cp_hidden_s = mb * (k.cp_mb - cp_mb) * avg_scale;
  bd.offload_s = mb * offload_mb * avg_scale;
  // The exposed share of the sends (all of them without pp_comm_overlap); the fill and flush's
  // sends are in the bubble.
  const double pp_exposed_share =
      pp_part > 0 ? pt.pp_steady / pp_part : (pp_dualpipe_hidden > 0 ? 0.0 : 1.0);
  bd.pp_comm_s = mb * k.pp_mb * pp_exposed_share;
  bd.rail_forwarding_s = mb * (k.fw_mb * avg_scale + k.fw_pp_mb * pp_exposed_share);
  bd.pipeline_overhead_s = pt.overhead;
  bd.bubble_s = pt.pipe - pt.overhead - mb * (pt.t_avg - pp_part + pt.pp_steady);
  const double dp_total = k.dp_fwd + k.dp_bwd + k.dp_bwd_once + k.dp_opt;
  const double fw_share = dp_total > 0 ? k.dp_fw / dp_total : 0.0;
  bd.rail_forwarding_s += dp_exposed * fw_share;
  bd.dp_comm_s = dp_exposed * (1.0 - fw_share);
  bd.optimizer_s = optimizer;

  it.memory = memory_use(m, tr, s);
  it.feasible = fits(it.memory, c.gpu);

  count_flops(m, tr, s, st, d, it);
  const double denom = it.iteration_time_s * static_cast<double>(c.gpus) * ctx.peak_flops;
  it.mfu = it.model_flops / denom;
  it.hfu = it.hardware_flops / denom;
  it.tokens_per_s = static_cast<double>(tr.global_batch) * d.seq / it.iteration_time_s;
  return it;
}

IterationTime estimate(const EstimateContext& ctx, const Strategy& s) {
  const Placement pl(*ctx.cluster, s.degrees(), ctx.placement);
  const CommSchedule cs = build_comm_schedule(*ctx.model, ctx.training, s, pl);
  return estimate(ctx, s, pl, cs);
}

IterationTime estimate(const Model& m, const Training& tr, const Strategy& s,
                       const spec::Cluster& c, const spec::NetworkDesign& d,
                       PlacementKind placement) {
  validate(m, tr, s, c);
  const EstimateContext ctx = make_context(m, tr, c, d, placement);
  return estimate(ctx, s);
}

double days_to_train(const IterationTime& it, double tokens) {
  check_number("--train-tokens", tokens, Range::positive(1e18));
  if (!(it.tokens_per_s > 0)) throw std::logic_error("days_to_train: no throughput");
  return tokens / it.tokens_per_s / 86'400.0;
}

}  // namespace railsim::perf
