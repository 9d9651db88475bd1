#include "railsim/perf/iteration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "detail.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/units.hpp"
#include "railsim/perf/expansion.hpp"

namespace railsim::perf {

using spec::DesignKind;

// ---- network ------------------------------------------------------------------------------------

NetworkModel make_network_model(const topo::NetworkView& v, const spec::GpuEfficiency& e) {
  NetworkModel n;
  n.kind = v.kind;
  n.hb_Bps = v.hb_Bps * e.hb;
  n.nic_Bps = v.nic_Bps() * e.nic;
  n.latency_s = e.collective_latency_s;
  n.view = v;
  return n;
}

NetworkModel make_network_model(const spec::Cluster& c, const spec::NetworkDesign& d) {
  return make_network_model(topo::make_network_view(c, d), c.gpu.eff);
}

namespace {

// One ring phase of the expansion (perf/expansion.hpp) on a group of shape g.
CollectiveTime ring_phase_time(const CollectivePhase& ph, const GroupShape& g,
                               const NetworkModel& net) {
  CollectiveTime r;
  const double n = static_cast<double>(ph.members);
  const double steps = static_cast<double>(ring_steps(ph));
  const double vol = ring_bytes_per_member(ph);
  const double a = net.latency_s;
  switch (ph.scope) {
    case Scope::in_domain:  // inside the domain at HB bandwidth
      r.time_s = vol / net.hb_Bps + steps * a;
      return r;
    case Scope::along_rail:  // every member's NIC works in parallel on its rail
      r.time_s = vol / net.nic_Bps + steps * a;
      return r;
    case Scope::group:
      break;
  }
  if (net.kind == DesignKind::ideal || g.domains == 1) {
    r.time_s = vol / net.hb_Bps + steps * a;
    return r;
  }
  // Flat ring: its slowest edge crosses HB domains through a NIC.
  (void)n;
  const bool cross = !g.rail_aligned;
  r.cross_rail = cross;
  if (!cross) {
    r.time_s = vol / net.nic_Bps + steps * a;
  } else if (net.kind == DesignKind::rail_only) {
    r.forwarding_s = vol / net.hb_Bps;
    r.time_s = vol / net.nic_Bps + r.forwarding_s + steps * a;
  } else {
    r.time_s = vol * net.view.cross_rail_oversubscription(g.domains) / net.nic_Bps + steps * a;
  }
  return r;
}

}  // namespace

CollectiveTime collective_time(const CommOp& op, const GroupShape& shape, const NetworkModel& net) {
  // ideal: one HB domain over every GPU, whatever the cluster's K.
  const GroupShape g =
      net.kind == DesignKind::ideal ? GroupShape{shape.size, shape.size, 1, true} : shape;
  CollectiveTime r;
  const double n = static_cast<double>(g.size);
  if (g.size <= 1 || op.bytes <= 0) return r;
  const double B = op.bytes;
  const double p = static_cast<double>(g.per_domain), q = static_cast<double>(g.domains);
  const bool ideal = net.kind == DesignKind::ideal;
  const bool rail_only = net.kind == DesignKind::rail_only;
  const double a = net.latency_s;

  if (op.op == CollectiveOp::send_recv) {
    // One transfer per step between neighbouring stages; the slowest pair sets the pace.
    if (ideal || g.domains == 1) {
      r.time_s = B / net.hb_Bps + a;
    } else if (g.rail_aligned && g.per_domain == 1) {
      r.time_s = B / net.nic_Bps + a;
    } else {
      // Several stages per domain (or scattered GPUs): the pair that crosses a domain boundary
      // joins the last local rank used in one domain to the first in the next: another rail.
      r.cross_rail = true;
      if (rail_only) {
        r.forwarding_s = B / net.hb_Bps;
        r.time_s = B / net.nic_Bps + r.forwarding_s + a;
      } else {
        r.time_s = B * net.view.cross_rail_oversubscription(2) / net.nic_Bps + a;
      }
    }
    return r;
  }

  if (op.op == CollectiveOp::all_to_all) {
    // Each member sends B/n to every member (ours; the two-phase forwarding model follows the
    // paper's all-to-all analysis: the NVLink shuffle does not overlap the rail phase).
    if (ideal || g.domains == 1) {
      r.time_s = (n - 1.0) / n * B / net.hb_Bps + a;
      return r;
    }
    const double intra = (p - 1.0) / n * B;
    const double same_rail = g.rail_aligned ? (q - 1.0) / n * B : 0.0;
    const double inter = (n - p) / n * B;
    const double cross = inter - same_rail;
    r.cross_rail = cross > 0;
    // Traffic that leaves a leaf crosses the tiers above it, oversubscribed or not.
    const double o_rail = net.view.same_rail_oversubscription(g.domains);
    double nic_time;
    if (rail_only)
      nic_time = inter * o_rail / net.nic_Bps;
    else
      nic_time = (same_rail * o_rail + cross * net.view.cross_rail_oversubscription(g.domains)) /
                 net.nic_Bps;
    r.time_s = std::max(intra / net.hb_Bps, nic_time) + a;
    if (rail_only && cross > 0) {
      r.forwarding_s = cross / net.hb_Bps;
      r.time_s += r.forwarding_s;
    }
    return r;
  }

  // Reductions and gathers: the phases of the algorithm, one after another.
  for (const CollectivePhase& ph : phase_plan(op, g)) {
    const CollectiveTime t = ring_phase_time(ph, g, net);
    r.time_s += t.time_s;
    r.forwarding_s += t.forwarding_s;
    r.cross_rail = r.cross_rail || t.cross_rail;
  }
  return r;
}

// ---- context ------------------------------------------------------------------------------------

EstimateContext make_context(const Model& m, const Training& tr, const spec::Cluster& c,
                             const spec::NetworkDesign& d, PlacementKind placement) {
  EstimateContext ctx;
  ctx.model = &m;
  ctx.training = tr;
  ctx.cluster = &c;
  ctx.net = make_network_model(c, d);
  ctx.placement = placement;
  if (tr.dtype == Dtype::fp8) {
    if (c.gpu.peak_fp8_flops <= 0)
      throw InputError(
          "--dtype", fmt::format("fp8 needs fp8 tensor cores; {} has none (use bf16)", c.gpu.name));
    ctx.peak_flops = c.gpu.peak_fp8_flops;
  } else {
    ctx.peak_flops = c.gpu.peak_bf16_flops;
  }
  return ctx;
}

// ---- memory -------------------------------------------------------------------------------------

namespace {
constexpr double kReservedBytes = 2.0 * units::kGiB;  // ours: CUDA context, NCCL, allocator slack

// Korthikanti et al. 2022, Sec. 4, generalised to GQA, any FFN width, gated FFNs and MoE (ours):
// bytes stored per layer per micro-batch. `shared` is the part that tensor parallelism alone does
// not split (LayerNorm inputs, the inputs of the QKV and FC1 GEMMs, the dropout masks: 10 s b h
// for a GPT layer), `split` the part it splits, `attn` the attention-core part (5 a s^2 b).
struct LayerActivations {
  double shared = 0, split = 0, attn = 0;
};

LayerActivations layer_activations(const Model& m, double tokens, double seq, double moe_fraction) {
  const double h = static_cast<double>(m.hidden);
  const double kvd = static_cast<double>(m.kv_heads * m.head_dim());
  const double a = static_cast<double>(m.heads);
  const double dense_ffn = (m.gated_ffn ? 6.0 : 4.0) * tokens * static_cast<double>(m.ffn_hidden);
  const double moe_ffn = (m.gated_ffn ? 6.0 : 4.0) * tokens * static_cast<double>(m.top_k) *
                         m.capacity_factor * static_cast<double>(m.expert_ffn_hidden);
  const double ffn = moe_fraction * moe_ffn + (1.0 - moe_fraction) * dense_ffn;
  LayerActivations la;
  // The two hidden dropout masks (s b h bytes each) are part of the 10; without dropout, 8.
  la.shared = (m.dropout ? 10.0 : 8.0) * tokens * h;
  // Q (2sbh), K and V (4 s b kvd) for Q K^T and A V, the projection input (2sbh), the FFN's
  // intermediate tensors, the FC1 output side (sbh bias-dropout): 24 s b h for a GPT layer.
  la.split = 4.0 * tokens * h + 4.0 * tokens * kvd + ffn;
  // QK^T and softmax outputs (2 + 2 bytes per score) and the attention-dropout mask (1).
  la.attn = (m.dropout ? 5.0 : 4.0) * a * seq * tokens;
  return la;
}
}  // namespace

MemoryUse memory_use(const Model& m, const Training& tr, const Strategy& s) {
  const detail::StageShape st = detail::stage_shape(m, tr, s);
  const double t = static_cast<double>(s.tp), p = static_cast<double>(s.pp);
  const double v = static_cast<double>(s.interleave);
  const double dp = static_cast<double>(s.dp);
  const double edp = static_cast<double>(s.dp / s.ep);
  MemoryUse mem;
  // Mixed-precision Adam: bf16 weights (2), fp32 gradients (4), fp32 master weights, momentum
  // and variance (12) = 18 bytes per parameter (Korthikanti et al. 2022, Fig. 1); the distributed
  // optimizer shards the 12 optimizer bytes over the data-parallel group (Megatron-LM docs).
  const double params = st.dense_params + st.expert_params;
  mem.weights_bytes = 2.0 * params;
  mem.gradients_bytes = 4.0 * params;
  mem.optimizer_bytes =
      s.dist_opt ? 12.0 * (st.dense_params / dp + st.expert_params / edp) : 12.0 * params;
  if (s.dist_opt && tr.stack.knobs.distributed_optimizer == spec::Sharding::full) {
    // ZeRO-3 / FSDP: weights and gradients sharded too (Rajbhandari et al. 2020, stage 3), plus
    // the unit in use and the one prefetched, gathered: bf16 weights and fp32 gradients of two
    // units, a unit being one layer or the embedding (ours, after Zhao et al. 2023's one-unit
    // prefetch).
    const double sharded = st.dense_params / dp + st.expert_params / edp;
    const double layer = st.layers > 0 ? (params - st.embedding_params) / st.layers : 0.0;
    const double unit = std::max(layer, st.embedding_params);
    mem.weights_bytes = 2.0 * sharded + 2.0 * 2.0 * unit;
    mem.gradients_bytes = 4.0 * sharded + 2.0 * 4.0 * unit;
  }

  const double moe_fraction =
      m.layers > 0 ? static_cast<double>(m.moe_layers()) / static_cast<double>(m.layers) : 0.0;
  LayerActivations la =
      layer_activations(m, st.tokens_mb, static_cast<double>(tr.seq_len), moe_fraction);
  if (tr.flash_attention) la.attn = 0;  // fused attention stores no s x s tensor
  const double full_layer = (s.sp ? la.shared / t : la.shared) + la.split / t + la.attn / t;
  double per_layer;
  switch (s.recompute) {
    case Recompute::none:
      per_layer = full_layer;
      break;
    case Recompute::selective:
      per_layer = full_layer - la.attn / t;
      break;
    case Recompute::full:
    default:
      per_layer = 2.0 * st.tokens_mb * static_cast<double>(m.hidden) / (s.sp ? t : 1.0);
      break;
  }
  // Layers whose activations the first stage holds at the peak of 1F1B: p micro-batches of L/p
  // layers; interleaved: p v + p - 1 chunk-micro-batches in flight (Megatron's warm-up of
  // 2 (p - 1) + (v - 1) p plus one), i.e. L (1 + (p - 1) / (p v)) (Korthikanti et al. 2022,
  // Sec. 4.2.3), never more micro-batches than there are. With uneven stages the first stage's
  // chunks hold ceil(L/p) / v layers on average (ours; = L / (p v) when p v divides L).
  const double mb = st.micro_batches;
  double layers_held;
  if (s.interleave <= 1)
    layers_held = st.layers * std::min(p, mb);
  else
    layers_held = st.layers / v * std::min(p * v + p - 1.0, mb * v);
  double act = per_layer * layers_held;
  // Full recompute rebuilds one layer's activations at a time during the backward pass.
  if (s.recompute == Recompute::full) act += full_layer;
  if (s.pp == 1) {
    // The single stage also holds the fp32 logits of one micro-batch (4 s b V / t, Korthikanti
    // et al. 2022, Sec. 4.3).
    act += 4.0 * st.tokens_mb * static_cast<double>(m.vocab) / t;
  }
  mem.activations_bytes = act;
  mem.reserved_bytes = kReservedBytes;
  return mem;
}

// ---- time ---------------------------------------------------------------------------------------

namespace {
double gemm_time(double flops, double peak, const spec::GpuEfficiency& e) {
  // Size-dependent efficiency: e_max F / (F + F_half) (ours; small GEMMs cannot fill the GPU).
  const double eff = e.gemm_max * flops / (flops + e.gemm_half_flops);
  return flops / (peak * eff);
}
}  // namespace

IterationTime estimate(const EstimateContext& ctx, const Strategy& s, const Placement& pl,
                       const CommSchedule& cs) {
  const Model& m = *ctx.model;
  const Training& tr = ctx.training;
  const spec::Cluster& c = *ctx.cluster;
  const spec::GpuEfficiency& e = c.gpu.eff;
  const detail::StageShape st = detail::stage_shape(m, tr, s);
  IterationTime it;

  const double t = static_cast<double>(s.tp), p = static_cast<double>(s.pp);
  const double v = static_cast<double>(s.interleave);
  const double mb = st.micro_batches;
  const double T = st.tokens_mb;  // tokens per micro-batch
  const double seq = static_cast<double>(tr.seq_len);
  const double b = static_cast<double>(s.micro_batch);
  const double h = static_cast<double>(m.hidden);
  const double kvd = static_cast<double>(m.kv_heads * m.head_dim());
  const double a = static_cast<double>(m.heads);
  const double V = static_cast<double>(m.vocab);
  const double peak = ctx.peak_flops;
  const double hbm = c.gpu.hbm_bw_Bps * e.hbm;
  const double ffn_mats = m.gated_ffn ? 3.0 : 2.0;

  // Forward FLOPs per GPU per layer per micro-batch (2 per multiply-add).
  const double f_qkv = 2.0 * T * h * (h + 2.0 * kvd) / t;
  const double f_proj = 2.0 * T * h * h / t;
  const double f_dense_ffn = 2.0 * T * h * static_cast<double>(m.ffn_hidden) * ffn_mats / t;
  const double moe_tokens = T * static_cast<double>(m.top_k) * m.capacity_factor;
  const double f_moe_ffn =
      m.is_moe() ? 2.0 * moe_tokens * h * static_cast<double>(m.expert_ffn_hidden) * ffn_mats / t
                 : 0.0;
  const double f_attn = 4.0 * T * seq * h / t;  // Q K^T and A V over the full s x s (Megatron)
  const double f_logits = 2.0 * T * h * V / t;

  // GEMM times (the backward runs two GEMMs of the same shape per forward GEMM).
  const double g_qkv = gemm_time(f_qkv, peak, e), g_proj = gemm_time(f_proj, peak, e);
  const double g_dense = m.gated_ffn ? 3.0 * gemm_time(f_dense_ffn / 3.0, peak, e)
                                     : 2.0 * gemm_time(f_dense_ffn / 2.0, peak, e);
  double g_moe = 0;
  if (m.is_moe()) {
    // Each local expert runs its share of the routed tokens.
    const double local_experts = static_cast<double>(m.experts) / static_cast<double>(s.ep);
    const double per_gemm = f_moe_ffn / ffn_mats / local_experts;
    g_moe = ffn_mats * local_experts * gemm_time(per_gemm, peak, e);
  }
  // Attention core: a batched GEMM over s x s scores per head, bounded by the tensor cores or by
  // HBM traffic of the score matrix (roofline; ours).
  const double S = b * (a / t) * seq * seq * detail::kActBytes;  // one score tensor, bytes
  // With a fused (flash) attention kernel nothing of size s x s touches HBM, causal masking
  // skips half the work, and the kernel runs near GEMM efficiency (Dao 2023, FlashAttention-2;
  // ours: gemm_max of the preset).
  const bool flash = tr.flash_attention;
  const double attn_core_fwd =
      flash ? 0.5 * f_attn / (peak * e.gemm_max)
            : std::max(f_attn / (peak * e.attention), 2.0 * S / hbm);  // write scores, read probs
  // Element-wise kernels (LayerNorm, softmax, dropout, bias-GeLU, bias-dropout-add), bytes moved
  // in the forward pass (ours, counted from Megatron-LM kernels): 11 hidden-sized tensors (split
  // by t with SP), 2 (3 gated) FFN-sized, 4.5 score-sized.
  const double Xs = T * h * detail::kActBytes / (s.sp ? t : 1.0);
  const double dense_F = T * static_cast<double>(m.ffn_hidden) * detail::kActBytes / t;
  const double moe_F =
      moe_tokens * static_cast<double>(m.expert_ffn_hidden) * detail::kActBytes / t;
  const double ew_common = 11.0 * Xs;
  const double ew_attn = flash ? 0.0 : 4.5 * S;
  const double ew_dense = (m.gated_ffn ? 3.0 : 2.0) * dense_F;
  const double ew_moe = (m.gated_ffn ? 3.0 : 2.0) * moe_F;

  const double L_dense = st.dense_layers, L_moe = st.moe_layers;
  const double fwd_gemm = st.layers * (g_qkv + g_proj) + L_dense * g_dense + L_moe * g_moe;
  const double fwd_attn = st.layers * attn_core_fwd;
  const double fwd_ew =
      (st.layers * (ew_common + ew_attn) + L_dense * ew_dense + L_moe * ew_moe) / hbm;
  const double fwd = fwd_gemm + fwd_attn + fwd_ew;  // per micro-batch per stage
  // Backward: two GEMMs per forward GEMM (weight and input gradients), the same for the attention
  // core; element-wise backward kernels read the saved tensor and the incoming gradient and write
  // one gradient: 1.25 x the forward traffic (ours).
  // FlashAttention's backward recomputes the scores: 2.5 x its forward (Dao 2023).
  const double bwd = 2.0 * fwd_gemm + (flash ? 2.5 : 2.0) * fwd_attn + 1.25 * fwd_ew;
  double recompute = 0;
  if (s.recompute == Recompute::selective && !flash)  // flash keeps no s x s tensor to recompute
    recompute = st.layers * (attn_core_fwd + ew_attn / hbm);
  else if (s.recompute == Recompute::full)
    recompute = fwd;
  // Output layer and cross entropy on the last stage (fp32 logits read and written ~3 times).
  const double logits = 3.0 * gemm_time(f_logits, peak, e) + 3.0 * 12.0 * T * V / t / hbm;

  // Communication, per micro-batch per stage (TP, EP, PP) or per iteration (DP).
  double tp_mb = 0, ep_mb = 0, pp_mb = 0, fw_mb = 0, fw_pp_mb = 0;
  double dp_fwd = 0, dp_bwd = 0, dp_opt = 0, dp_fw = 0;
  double dp_fwd_n = 1, dp_bwd_n = 1;  // instances (FSDP: one per micro-batch)
  bool dp_fwd_overlap = false, dp_bwd_overlap = false, dp_opt_overlap = false;
  for (const CommOp& op : cs) {
    const GroupShape g = pl.shape(op.axis);
    const CollectiveTime ct = collective_time(op, g, ctx.net);
    it.cross_rail = it.cross_rail || ct.cross_rail;
    switch (op.parallelism) {
      case Parallelism::tp:
      case Parallelism::sp:
        tp_mb += (ct.time_s - ct.forwarding_s) * op.count / mb;
        fw_mb += ct.forwarding_s * op.count / mb;
        break;
      case Parallelism::ep:
        ep_mb += (ct.time_s - ct.forwarding_s) * op.count / mb;
        fw_mb += ct.forwarding_s * op.count / mb;
        break;
      case Parallelism::pp:
        pp_mb += (ct.time_s - ct.forwarding_s) * op.count / mb;
        fw_pp_mb += ct.forwarding_s * op.count / mb;
        break;
      case Parallelism::dp:
        if (op.phase == Phase::optimizer) {
          dp_opt += ct.time_s * op.count;
          dp_opt_overlap = op.overlappable;
        } else if (op.phase == Phase::forward) {
          dp_fwd += ct.time_s * op.count;
          dp_fwd_n = std::max(1.0, op.count);
          dp_fwd_overlap = op.overlappable;
        } else {
          dp_bwd += ct.time_s * op.count;
          dp_bwd_n = std::max(1.0, op.count);
          dp_bwd_overlap = op.overlappable;
        }
        dp_fw += ct.forwarding_s * op.count;
        break;
    }
  }

  // Pipeline (Narayanan et al. SC'21): m micro-batches through p stages of v chunks; the stage
  // time per micro-batch includes its exposed TP/EP/PP communication. The last stage also runs the
  // output layer; the slowest stage paces the steady state (ours): time = m t_max + (p-1)/v t_avg.
  // With uneven stages the first carries ceil(L/p) layers, the last floor(L/p) plus the output
  // layer; work that scales with layers is scaled from the first stage's (ours). Interleaved
  // chunks of floor or ceil L/(p v) layers, dealt so that a stage holds floor or ceil L/p, keep
  // these stage totals; the bubble stays (p - 1)/v of the average stage time (Narayanan et al.
  // SC'21, Sec. 2.2.2).
  const double layer_part = fwd + bwd + recompute + tp_mb + ep_mb + fw_mb;  // first stage
  const double pp_part = pp_mb + fw_pp_mb;
  const double avg_scale = st.layers_avg / st.layers, last_scale = st.layers_last / st.layers;
  const double t_first = layer_part + pp_part;
  const double t_last = layer_part * last_scale + pp_part + logits;
  const double t_avg = layer_part * avg_scale + pp_part + logits / p;
  const double t_max = s.pp > 1 ? std::max(t_first, t_last) : t_last;
  const double pipe = mb * t_max + (p - 1.0) / v * t_avg;

  // DP: the reduction starts when the first stage's last backward ends; with overlap it hides
  // behind that backward except for the last bucket (ours: one layer's share).
  const double last_bwd = bwd + recompute;
  auto exposed = [&](double time, bool overlap, double window) {
    if (!overlap) return time;
    return std::max(time - window, time / std::max(1.0, st.layers));
  };
  // Reductions repeated per micro-batch (FSDP) hide each behind that micro-batch's pass (ours).
  const double dp_exposed = dp_bwd_n * exposed(dp_bwd / dp_bwd_n, dp_bwd_overlap, last_bwd) +
                            dp_fwd_n * exposed(dp_fwd / dp_fwd_n, dp_fwd_overlap, fwd) +
                            exposed(dp_opt, dp_opt_overlap, fwd);
  // Adam step: read fp32 gradient, read and write master weights, momentum, variance, write bf16
  // weights (30), plus the gradient-norm read (4), zeroing the gradient buffer (4) and the bf16
  // copy's read (4): 42 bytes per parameter it updates (ours, counted from Megatron-LM's step).
  const double opt_params = s.dist_opt ? st.dense_params / static_cast<double>(s.dp) +
                                             st.expert_params / static_cast<double>(s.dp / s.ep)
                                       : st.dense_params + st.expert_params;
  const double optimizer = 42.0 * opt_params / hbm;

  it.iteration_time_s = pipe + dp_exposed + optimizer;
  Breakdown& bd = it.breakdown;
  bd.compute_s = mb * ((fwd + bwd) * avg_scale + logits / p);
  bd.recompute_s = mb * recompute * avg_scale;
  bd.tp_comm_s = mb * tp_mb * avg_scale;
  bd.ep_comm_s = mb * ep_mb * avg_scale;
  bd.pp_comm_s = mb * pp_mb;
  bd.rail_forwarding_s = mb * (fw_mb * avg_scale + fw_pp_mb);
  bd.bubble_s = pipe - mb * t_avg;
  const double dp_total = dp_fwd + dp_bwd + dp_opt;
  const double fw_share = dp_total > 0 ? dp_fw / dp_total : 0.0;
  bd.rail_forwarding_s += dp_exposed * fw_share;
  bd.dp_comm_s = dp_exposed * (1.0 - fw_share);
  bd.optimizer_s = optimizer;

  it.memory = memory_use(m, tr, s);
  it.feasible = it.memory.total() <= c.gpu.hbm_bytes;

  // Model FLOPs: 3 x forward, every layer, every token, the output layer (Narayanan et al. SC'21
  // eq. (3) generalised; ours for GQA/MoE). Hardware FLOPs add the recomputed forward work.
  const double tokens = static_cast<double>(tr.global_batch) * seq;
  const double moe_frac =
      m.layers > 0 ? static_cast<double>(m.moe_layers()) / static_cast<double>(m.layers) : 0.0;
  const double fwd_per_token_layer =
      2.0 * h * (h + 2.0 * kvd) + 2.0 * h * h + 4.0 * seq * h +
      (1.0 - moe_frac) * 2.0 * h * static_cast<double>(m.ffn_hidden) * ffn_mats +
      moe_frac * 2.0 * static_cast<double>(m.top_k) * h * static_cast<double>(m.expert_ffn_hidden) *
          ffn_mats;
  const double fwd_total =
      tokens * (static_cast<double>(m.layers) * fwd_per_token_layer + 2.0 * h * V);
  it.model_flops = 3.0 * fwd_total;
  double extra = 0;
  if (s.recompute == Recompute::full)
    extra = fwd_total - tokens * 2.0 * h * V;
  else if (s.recompute == Recompute::selective && !tr.flash_attention)
    extra = tokens * static_cast<double>(m.layers) * 4.0 * seq * h;
  it.hardware_flops = it.model_flops + extra;
  const double denom = it.iteration_time_s * static_cast<double>(c.gpus) * peak;
  it.mfu = it.model_flops / denom;
  it.hfu = it.hardware_flops / denom;
  it.tokens_per_s = tokens / it.iteration_time_s;
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

}  // namespace railsim::perf
