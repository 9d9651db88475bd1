#include "railsim/perf/comm_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "detail.hpp"
#include "railsim/core/enum.hpp"
#include "railsim/perf/expansion.hpp"
#include "railsim/perf/model.hpp"
#include "railsim/perf/strategy.hpp"

namespace railsim::perf {

namespace {
constexpr EnumNames<Parallelism, kParallelismCount> kParallelismNames{{{{Parallelism::tp, "tp"},
                                                                        {Parallelism::sp, "sp"},
                                                                        {Parallelism::pp, "pp"},
                                                                        {Parallelism::dp, "dp"},
                                                                        {Parallelism::ep, "ep"},
                                                                        {Parallelism::cp, "cp"}}}};
constexpr EnumNames<CollectiveOp, 5> kOpNames{{{{CollectiveOp::all_reduce, "all_reduce"},
                                                {CollectiveOp::all_gather, "all_gather"},
                                                {CollectiveOp::reduce_scatter, "reduce_scatter"},
                                                {CollectiveOp::all_to_all, "all_to_all"},
                                                {CollectiveOp::send_recv, "send_recv"}}}};
constexpr EnumNames<Algorithm, 5> kAlgorithmNames{
    {{{Algorithm::ring, "ring"},
      {Algorithm::hierarchical, "hierarchical"},
      {Algorithm::direct, "direct"},
      {Algorithm::p2p, "p2p"},
      {Algorithm::rail_then_domain, "rail_then_domain"}}}};
constexpr EnumNames<Phase, 3> kPhaseNames{{{{Phase::forward, "forward"},
                                            {Phase::backward, "backward"},
                                            {Phase::optimizer, "optimizer"}}}};
}  // namespace

std::string_view to_string(Parallelism p) {
  return kParallelismNames.name(p);
}

std::string_view to_string(CollectiveOp op) {
  return kOpNames.name(op);
}

CollectiveOp parse_collective_op(std::string_view s, const std::string& option) {
  static constexpr EnumNames<CollectiveOp, 5> kNcclNames{
      {{{CollectiveOp::all_reduce, "allreduce"},
        {CollectiveOp::all_gather, "allgather"},
        {CollectiveOp::reduce_scatter, "reducescatter"},
        {CollectiveOp::all_to_all, "alltoall"},
        {CollectiveOp::send_recv, "p2p"}}}};
  for (const auto& [op, name] : kNcclNames.entries)
    if (name == s) return op;
  return kOpNames.parse(s, option, "collective");
}

Algorithm parse_algorithm(std::string_view s, const std::string& option) {
  return kAlgorithmNames.parse(s, option, "algorithm");
}

std::string_view to_string(Algorithm a) {
  return kAlgorithmNames.name(a);
}

std::string_view to_string(Phase p) {
  return kPhaseNames.name(p);
}

namespace {
// C(a, k) / C(b, k) for a <= b: the chance that k draws without replacement from b items all miss
// the b - a marked ones.
double all_miss(double a, double b, std::int64_t k) {
  double r = 1.0;
  for (std::int64_t i = 0; i < k; ++i) {
    const double x = static_cast<double>(i);
    if (a - x <= 0) return 0.0;
    r *= (a - x) / (b - x);
  }
  return r;
}

double log_choose(double n, double k) {
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}
}  // namespace

double routed_domains(const ExpertRouting& r, std::int64_t q) {
  if (r.top_k <= 0 || r.experts <= 0) return 0.0;
  if (q <= 1) return 1.0;
  const double E = r.experts, Q = static_cast<double>(q), k_e = E / Q;  // experts per domain
  const std::int64_t k = r.top_k, G = std::max(r.groups, 1),
                     M = std::clamp<std::int32_t>(r.groups_per_token, 1, std::max(r.groups, 1));
  const double g = E / static_cast<double>(G);  // experts per group
  const double chosen = static_cast<double>(M) * g;
  double miss = all_miss(E - k_e, E, k);  // no group limit (or one that does not nest)
  if (M < G && G % q == 0) {
    // rg groups in each domain; j of the M chosen ones in domain d (hypergeometric).
    const std::int64_t rg = G / q;
    miss = 0;
    for (std::int64_t j = std::max<std::int64_t>(0, M - (G - rg)); j <= std::min(rg, M); ++j) {
      const double p =
          std::exp(log_choose(static_cast<double>(rg), static_cast<double>(j)) +
                   log_choose(static_cast<double>(G - rg), static_cast<double>(M - j)) -
                   log_choose(static_cast<double>(G), static_cast<double>(M)));
      miss += p * all_miss(chosen - static_cast<double>(j) * g, chosen, k);
    }
  } else if (M < G && q % G == 0) {
    // Each group spans q / G domains: domain d is reachable when its group is chosen.
    const double in = static_cast<double>(M) / static_cast<double>(G);
    miss = (1.0 - in) + in * all_miss(chosen - k_e, chosen, k);
  }
  return Q * (1.0 - miss);
}

void CommSchedule::add(const CommOp& op) {
  if (size >= kMaxOps) throw std::logic_error("CommSchedule: more than kMaxOps operations");
  ops[static_cast<std::size_t>(size++)] = op;
}

// ---- builder and wire bytes -------------------------------------------------------------------

Algorithm reduction_algorithm(const GroupShape& g) {
  return (g.domains > 1 && g.per_domain > 1 && g.rail_aligned) ? Algorithm::hierarchical
                                                               : Algorithm::ring;
}

CommSchedule build_comm_schedule(const Model& m, const Training& tr, const Strategy& s,
                                 const Placement& pl) {
  CommSchedule cs;
  const detail::StageShape st = detail::stage_shape(m, tr, s);
  const double mb = st.micro_batches;
  const double act = st.tokens_mb * static_cast<double>(m.hidden) * detail::kActBytes;  // b s h
  const double t = static_cast<double>(s.tp);
  // The share of the forward's collectives that recomputation runs again in the backward: all of
  // them under full recompute, half under layer checkpointing (every second layer). Per-op
  // checkpointing (TorchTitan's policy keeps the reduce-scatters' outputs) runs again the SP
  // all-gathers that feed the recomputed wk and w3, and without SP the all-reduce after wo (the
  // FFN's input depends on it); CP's K and V (inside the kept attention) and EP's all-to-alls
  // stay kept.
  // Keeping Q, K and V (Recompute::qkv, under XLA's dead-code elimination: iteration.cpp) runs
  // again the collectives between the projections and the FFN's down projection: of each layer's
  // two SP pairs the all-gather before FC1 and the reduce-scatter after the attention's output
  // projection (the all-reduce after it without SP), the dispatch of an MoE layer and not its
  // combine, and CP's K and V, gathered for the recomputed attention.
  const bool qkv = s.recompute == Recompute::qkv;
  const double rerun = s.recompute == Recompute::full           ? 1.0
                       : s.recompute == Recompute::layer || qkv ? 0.5
                                                                : 0.0;
  const bool op = s.recompute == Recompute::op;
  const double rerun_gather = op ? 1.0 : rerun;  // SP all-gathers
  const double rerun_reduce = op ? 0.5 : rerun;  // all-reduces without SP
  const double rerun_cp = qkv ? 1.0 : rerun;     // CP's K and V

  if (s.tp > 1) {
    const Algorithm alg = reduction_algorithm(pl.shape(Axis::tp));
    // Two reductions per layer (after attention and after the FFN) in each direction
    // (Shoeybi et al. 2019; with SP, Korthikanti et al. 2022: all-gather + reduce-scatter).
    if (!s.sp) {
      const double per_pass = 2.0 * st.layers * mb;
      cs.add({CollectiveOp::all_reduce, Parallelism::tp, Axis::tp, alg, Phase::forward, act,
              per_pass});
      cs.add({CollectiveOp::all_reduce, Parallelism::tp, Axis::tp, alg, Phase::backward, act,
              per_pass * (1.0 + rerun_reduce)});
    } else {
      // With SP the pairs sit on two groups: the TP group's (attention, dense FFN, shared
      // experts) gather the layer's b s h; the expert TP group's (routed experts) the routed
      // copies that the dispatch brought (detail::sp_pairs).
      const detail::SpPairs pairs = detail::sp_pairs(m, s, st);
      for (Phase ph : {Phase::forward, Phase::backward}) {
        const bool bwd = ph == Phase::backward;
        cs.add({CollectiveOp::all_gather, Parallelism::sp, Axis::tp, alg, ph, act,
                pairs.tp() * mb * (1.0 + (bwd ? rerun_gather : 0.0))});
        cs.add({CollectiveOp::reduce_scatter, Parallelism::sp, Axis::tp, alg, ph, act,
                pairs.tp() * mb * (1.0 + (bwd ? rerun : 0.0))});
      }
      if (pairs.routed > 0) {
        // Recomputation reruns them with the dispatch they follow (as the all-to-alls below).
        const Algorithm ealg = reduction_algorithm(pl.shape(Axis::etp));
        const double bytes = detail::etp_gather_bytes(m, s, st);
        for (Phase ph : {Phase::forward, Phase::backward}) {
          const double count = pairs.routed * mb * (1.0 + (ph == Phase::backward ? rerun : 0.0));
          cs.add({CollectiveOp::all_gather, Parallelism::sp, Axis::etp, ealg, ph, bytes, count});
          cs.add(
              {CollectiveOp::reduce_scatter, Parallelism::sp, Axis::etp, ealg, ph, bytes, count});
        }
      }
    }
  }
  if (s.cp > 1) {
    // All-gather-based context parallelism (Dubey et al. 2024, Sec. 3.3.2): before each layer's
    // attention the K and V of the whole sequence are all-gathered over the CP group (every rank
    // keeps its s / cp queries), and in the backward the gradients of K and V reduce-scattered.
    // Per GPU the gathered buffer is K and V of b s tokens: b s (k_width + v_width) / t x 2
    // bytes (2 b s kvd / t x 2 for grouped-query attention).
    const Algorithm alg = reduction_algorithm(pl.shape(Axis::cp));
    const double kv = st.tokens_mb * static_cast<double>(s.cp) * (m.k_width() + m.v_width()) / t *
                      detail::kActBytes;
    // Ring attention (the stack's p2p exchange, spec::Stack::ring_cp) moves the same blocks
    // around the same ring, step by step under the attention (iteration.cpp overlaps them), and
    // keeps no gathered K and V: its backward passes them around the ring once more beside their
    // gradients (Liu et al. 2023, ring attention; Transformer Engine's KV P2P).
    const double per_pass = st.layers * mb;
    const double regather = rerun_cp + (tr.stack.ring_cp ? 1.0 : 0.0);
    cs.add(
        {CollectiveOp::all_gather, Parallelism::cp, Axis::cp, alg, Phase::forward, kv, per_pass});
    if (regather > 0)  // the recomputed forward gathers K and V again; the ring's backward too
      cs.add({CollectiveOp::all_gather, Parallelism::cp, Axis::cp, alg, Phase::backward, kv,
              per_pass * regather});
    cs.add({CollectiveOp::reduce_scatter, Parallelism::cp, Axis::cp, alg, Phase::backward, kv,
            per_pass});
  }
  if (m.is_moe() && s.ep > 1) {
    // Dispatch and combine per MoE layer; tokens are the sequence shard of a TP rank.
    // With the stack's fp8 dispatch under fp8 training, one of each pass's two transfers is fp8
    // (1 byte) and the other bf16: 1.5 bytes per element (DeepSeek-V3 report, Sec. 3.3.3).
    const double elem_bytes =
        tr.stack.fp8_dispatch && spec::low_precision(tr.dtype) ? 1.5 : detail::kActBytes;
    const double bytes =
        detail::own_routed_copies(m, s, st) * static_cast<double>(m.hidden) * elem_bytes;
    const double per_pass = 2.0 * st.moe_layers * mb;
    // The stack's hierarchical dispatch sends one copy per HB domain along the rails and fans it
    // out inside the domain (DeepSeek-V3 report, Sec. 3.2.2).
    const Algorithm alg =
        tr.stack.hierarchical_ep_dispatch ? Algorithm::rail_then_domain : Algorithm::direct;
    CommOp a2a{CollectiveOp::all_to_all, Parallelism::ep, Axis::ep, alg,
               Phase::forward,           bytes,           per_pass};
    a2a.routing = {static_cast<std::int32_t>(m.experts), static_cast<std::int32_t>(m.top_k),
                   static_cast<std::int32_t>(m.expert_groups),
                   static_cast<std::int32_t>(m.expert_groups_per_token)};
    cs.add(a2a);
    a2a.phase = Phase::backward;
    a2a.count = per_pass * (1.0 + rerun);
    cs.add(a2a);
  }
  if (s.pp > 1) {
    const double v = static_cast<double>(s.interleave);
    // ZB-V's V crosses each pair of neighbouring stages twice per pass, once each way, and never
    // wraps from the last stage to the first (Qi et al. 2024, Sec. 6: twice 1F1B's PP volume);
    // both crossings are counted on the pair's one transfer (ours).
    const bool zb_v = s.schedule == PipelineSchedule::zb_v;
    CommOp op{CollectiveOp::send_recv, Parallelism::pp, Axis::pp,
              Algorithm::p2p,          Phase::forward,  act / t,
              mb * (zb_v ? 2.0 : v)};
    op.wrap_count = zb_v ? 0.0 : mb * (v - 1.0);
    op.overlappable = false;
    cs.add(op);
    op.phase = Phase::backward;
    cs.add(op);
  }
  // HSDP: the sharded collectives stay in the shard group, and the gradient shards are
  // all-reduced over the replica group once per iteration (PyTorch FSDP's HYBRID_SHARD; FSDP2
  // all-reduces after the last micro-batch's reduce-scatter).
  const bool hsdp = s.hsdp > 0 && s.hsdp < s.dp * s.cp;
  auto add_dp = [&](Axis axis, double params) {
    if (pl.axis_size(axis) <= 1 || params <= 0) return;
    const spec::Sharding sharding = detail::sharding_of(tr, s);
    const bool under_pp = detail::fsdp_under_pipeline(tr, s);
    // HSDP splits the group where the stack shards more than the optimizer state (ZeRO-2 and
    // FSDP, FSDP under pipelining too, though that shards the optimizer state alone).
    const spec::Sharding level = tr.stack.knobs.distributed_optimizer;
    const bool sharded =
        s.dist_opt && (level == spec::Sharding::full || level == spec::Sharding::gradients);
    const Axis shard_axis = hsdp && sharded && axis == Axis::dp ? Axis::dp_shard : axis;
    // One collective over `ax` of `bytes_per_param` per parameter, `count` times; hidden with DP
    // overlap. `add` puts it in the shard group (the whole DP group without HSDP).
    // FSDP under pipelining reduce-scatters after the stage's last backward, under no compute
    // of its own (detail::fsdp_under_pipeline).
    auto add_on = [&](Axis ax, CollectiveOp op, Phase ph, double bytes_per_param, double count) {
      CommOp o{op, Parallelism::dp,          ax,   reduction_algorithm(pl.shape(ax)),
               ph, params * bytes_per_param, count};
      o.overlappable = s.dp_overlap && !(under_pp && ph == Phase::backward);
      cs.add(o);
    };
    auto add = [&](CollectiveOp op, Phase ph, double bytes_per_param, double count) {
      add_on(shard_axis, op, ph, bytes_per_param, count);
    };
    if (sharding == spec::Sharding::full) {
      // ZeRO-3 / FSDP (Zhao et al. 2023, Sec. 3): for every micro-batch each layer's bf16 weights
      // are all-gathered before its forward and again before its backward, and its fp32
      // gradients reduce-scattered after the backward.
      for (Phase ph : {Phase::forward, Phase::backward})
        add(CollectiveOp::all_gather, ph, detail::kParamBytes, mb);
      add(CollectiveOp::reduce_scatter, Phase::backward, tr.stack.grad_bytes, mb);
    } else if (sharding == spec::Sharding::gradients) {
      // ZeRO-2 (Rajbhandari et al. 2020, stage 2): each micro-batch's gradients are
      // reduce-scattered after its backward and accumulated in the shard; the updated weights are
      // all-gathered once, after the optimizer step.
      add(CollectiveOp::reduce_scatter, Phase::backward, tr.stack.grad_bytes, mb);
      add(CollectiveOp::all_gather, Phase::optimizer, detail::kParamBytes, 1.0);
    } else if (!s.dist_opt) {
      add(CollectiveOp::all_reduce, Phase::backward, tr.stack.grad_bytes, 1.0);
    } else {
      add(CollectiveOp::reduce_scatter, Phase::backward, tr.stack.grad_bytes, 1.0);
      add(CollectiveOp::all_gather, Phase::optimizer, detail::kParamBytes, 1.0);
    }
    if (shard_axis == Axis::dp_shard)  // the fp32 gradient shard, 4 P / g bytes per GPU
      add_on(Axis::dp_replica, CollectiveOp::all_reduce, Phase::backward,
             4.0 / static_cast<double>(s.hsdp), 1.0);
  };
  add_dp(Axis::dp, st.dense_params);
  if (m.is_moe()) add_dp(Axis::edp, st.expert_params);
  return cs;
}

double op_wire_bytes(const CommOp& op, const Placement& pl) {
  const double n = static_cast<double>(pl.axis_size(op.axis));
  if (n <= 1) return 0.0;
  const double groups = static_cast<double>(pl.group_count(op.axis));
  if (op.algorithm == Algorithm::rail_then_domain) {
    // Every group runs the axis's plan (expand_group follows the axis's shape): each member sends
    // (m-1)/m of each phase's buffer.
    double per_member = 0;
    for (const CollectivePhase& ph : phase_plan(op, pl.shape(op.axis))) {
      const double m = static_cast<double>(ph.members);
      per_member += (m - 1.0) / m * ph.bytes;
    }
    return groups * op.count * n * per_member;
  }
  switch (op.op) {
    case CollectiveOp::all_reduce:
      return groups * op.count * 2.0 * (n - 1.0) * op.bytes;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_to_all:
      return groups * op.count * (n - 1.0) * op.bytes;
    case CollectiveOp::send_recv:
      return groups * op.bytes * (op.count * (n - 1.0) + op.wrap_count);
  }
  return 0.0;
}

double WireBytes::total() const {
  double t = 0;
  for (double b : by_parallelism) t += b;
  return t;
}

WireBytes wire_bytes(const CommSchedule& s, const Placement& pl) {
  WireBytes w;
  for (const CommOp& op : s)
    w.by_parallelism[static_cast<std::size_t>(op.parallelism)] += op_wire_bytes(op, pl);
  return w;
}

}  // namespace railsim::perf
