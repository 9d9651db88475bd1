// Context parallelism (cp): rank order, the K/V all-gathers of the CommSchedule, compute and
// memory divided by cp, the checks that name --cp, and the search on a long sequence.
#include <gtest/gtest.h>

#include "../common/small_network.hpp"
#include "railsim/core/error.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/spec/preset.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
Strategy cp_strategy(std::int64_t tp, std::int64_t cp, std::int64_t pp, std::int64_t dp) {
  Strategy s;
  s.tp = tp;
  s.cp = cp;
  s.pp = pp;
  s.dp = dp;
  return s;
}

// The option an InputError names, or "" when `f` does not throw one.
template <class F>
std::string error_field(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.field();
  }
  return "";
}

const CommOp* find_cp(const CommSchedule& cs, CollectiveOp op, Phase ph) {
  for (const CommOp& o : cs)
    if (o.parallelism == Parallelism::cp && o.op == op && o.phase == ph) return &o;
  return nullptr;
}
}  // namespace

TEST(ContextParallel, RankOrderIsTpCpDpPpAndGradientsReduceOverDpTimesCp) {
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  const Placement pl(c, Degrees{.tp = 2, .pp = 2, .dp = 8, .ep = 2, .cp = 2});
  EXPECT_EQ(pl.axis_size(Axis::cp), 2);
  EXPECT_EQ(pl.axis_stride(Axis::cp), 2);  // right after tp
  EXPECT_EQ(pl.axis_size(Axis::dp), 16);   // the dp x cp group of the dense gradients
  EXPECT_EQ(pl.axis_stride(Axis::dp), 2);
  EXPECT_EQ(pl.axis_stride(Axis::pp), 32);  // outermost: tp x cp x dp
  EXPECT_EQ(pl.axis_size(Axis::ep), 2);
  EXPECT_EQ(pl.axis_size(Axis::edp), 8);  // dp x cp / ep
  EXPECT_EQ(pl.rank_in_group(Axis::cp, 0, 1), 2);
  EXPECT_EQ(pl.rank_in_group(Axis::cp, 1, 1), 3);
  EXPECT_EQ(pl.rank_in_group(Axis::cp, 2, 0), 4);
  const GroupShape g = pl.shape(Axis::cp);  // ranks {0, 2}: one HB domain of 8
  EXPECT_EQ(g.domains, 1);
  EXPECT_EQ(g.per_domain, 2);
  // With cp = 1 the axes are Megatron-LM's tp-ep-dp-pp, as before.
  const Placement one(c, Degrees{.tp = 2, .pp = 2, .dp = 16, .ep = 2});
  EXPECT_EQ(one.axis_size(Axis::dp), 16);
  EXPECT_EQ(one.axis_stride(Axis::pp), 32);
  EXPECT_EQ(one.axis_size(Axis::cp), 1);
}

TEST(ContextParallel, AllGatherBytesEqualKAndVOfTheWholeSequence) {
  const Model m = spec::load_model("Llama-3-8B");  // 32 layers, 8 KV heads of 128
  Training tr{64, 16384, Dtype::bf16};
  tr.stack.ring_cp = false;  // K and V all-gathered (Llama 3's)
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  Strategy s = cp_strategy(4, 4, 1, 4);
  s.micro_batch = 2;
  validate(m, tr, s, c);
  const Placement pl(c, s.degrees());
  const CommSchedule cs = build_comm_schedule(m, tr, s, pl);
  // 2 (K and V) x s x b x kv_heads x head_dim x 2 bytes / tp (Dubey et al. 2024, Sec. 3.3.2).
  const double bytes = 2.0 * 16384 * 2 * 8 * 128 * 2 / 4;
  const double mb = 64.0 / (4 * 2);  // micro-batches per pipeline
  const CommOp* ag = find_cp(cs, CollectiveOp::all_gather, Phase::forward);
  const CommOp* rs = find_cp(cs, CollectiveOp::reduce_scatter, Phase::backward);
  ASSERT_NE(ag, nullptr);
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(ag->axis, Axis::cp);
  EXPECT_DOUBLE_EQ(ag->bytes, bytes);
  EXPECT_DOUBLE_EQ(ag->count, 32 * mb);  // per layer per micro-batch
  EXPECT_DOUBLE_EQ(rs->bytes, bytes);
  EXPECT_DOUBLE_EQ(rs->count, 32 * mb);
  EXPECT_FALSE(ag->overlappable);
  EXPECT_EQ(find_cp(cs, CollectiveOp::all_gather, Phase::backward), nullptr);
  // Wire bytes: G c (n - 1) B for each, G = 64 / 4 groups of n = 4.
  EXPECT_DOUBLE_EQ(wire_bytes(cs, pl).of(Parallelism::cp), 2.0 * 16 * 32 * mb * 3 * bytes);
  // Ring attention moves the same blocks around the same ring, and once more in the backward
  // beside their gradients: the all-gather's ops and bytes, and a backward all-gather as well.
  Training ring = tr;
  ring.stack.ring_cp = true;
  const CommSchedule rc = build_comm_schedule(m, ring, s, pl);
  const CommOp* again = find_cp(rc, CollectiveOp::all_gather, Phase::backward);
  ASSERT_NE(again, nullptr);
  EXPECT_DOUBLE_EQ(again->bytes, bytes);
  EXPECT_DOUBLE_EQ(again->count, 32 * mb);
  EXPECT_DOUBLE_EQ(wire_bytes(rc, pl).of(Parallelism::cp), 2.0 * 16 * 32 * mb * 3 * bytes * 1.5);
  // Full recompute gathers K and V again in the backward (the ring, a second time).
  s.recompute = Recompute::full;
  const CommSchedule full = build_comm_schedule(m, tr, s, pl);
  ASSERT_NE(find_cp(full, CollectiveOp::all_gather, Phase::backward), nullptr);
  EXPECT_DOUBLE_EQ(find_cp(full, CollectiveOp::all_gather, Phase::backward)->count, 32 * mb);
  EXPECT_DOUBLE_EQ(
      find_cp(build_comm_schedule(m, ring, s, pl), CollectiveOp::all_gather, Phase::backward)
          ->count,
      2 * 32 * mb);
  // cp = 1: no CP op, and the DP group is dp alone.
  const Strategy one = cp_strategy(4, 1, 1, 16);
  const Placement pl1(c, one.degrees());
  const CommSchedule cs1 = build_comm_schedule(m, tr, one, pl1);
  for (const CommOp& o : cs1) EXPECT_NE(o.parallelism, Parallelism::cp);
  EXPECT_EQ(wire_bytes(cs1, pl1).of(Parallelism::cp), 0.0);
}

// Ring attention passes each K/V block during one of the cp steps of the attention: where the
// attention outlasts the transfers nothing is exposed; where the transfers outlast it (short
// sequences, CP across HB domains), what is exposed is their excess over (cp - 1)/cp of the
// attention, more than the all-gathered form leaves since the ring sends K and V twice.
TEST(ContextParallel, RingAttentionHidesTheExchangeBehindTheAttention) {
  const Model m = spec::load_model("Llama-3-8B");
  const auto d = test::design(spec::DesignKind::rail_optimized);
  auto run = [&](std::int64_t seq, std::int64_t tp, std::int64_t cp, bool ring) {
    Training tr{static_cast<std::int64_t>(64 / (tp * cp)), seq, Dtype::bf16};
    tr.stack.ring_cp = ring;
    const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
    return estimate(m, tr, cp_strategy(tp, cp, 1, 64 / (tp * cp)), c, d);
  };
  // 32K tokens, cp 2 inside the HB domain: the attention outlasts the ring.
  const IterationTime ag = run(32768, 4, 2, false), ring = run(32768, 4, 2, true);
  EXPECT_GT(ag.breakdown.cp_comm_s, 0.0);
  EXPECT_EQ(ag.breakdown.cp_hidden_s, 0.0);
  EXPECT_EQ(ring.breakdown.cp_comm_s, 0.0);
  // All of the ring's exchanges hidden: the all-gather's (forward all-gather, backward
  // reduce-scatter) and a second all-gather of the same bytes.
  EXPECT_NEAR(ring.breakdown.cp_hidden_s, 1.5 * ag.breakdown.cp_comm_s,
              1e-9 * ag.breakdown.cp_comm_s);
  EXPECT_NEAR(ring.iteration_time_s, ag.iteration_time_s - ag.breakdown.cp_comm_s,
              1e-9 * ag.iteration_time_s);
  // 2K tokens, tp 1 and cp 8 (one HB domain): the transfers, even on NVLink, outlast the
  // attention of a 256-token block.
  const IterationTime ag8 = run(2048, 1, 8, false), ring8 = run(2048, 1, 8, true);
  const double all = ring8.breakdown.cp_comm_s + ring8.breakdown.cp_hidden_s;
  EXPECT_NEAR(all, 1.5 * ag8.breakdown.cp_comm_s, 1e-9 * all);
  EXPECT_GT(ring8.breakdown.cp_hidden_s, 0.0);
  EXPECT_LT(ring8.breakdown.cp_hidden_s, 0.5 * ring8.breakdown.cp_comm_s);
  EXPECT_GT(ring8.breakdown.cp_comm_s, ag8.breakdown.cp_comm_s);
  EXPECT_GT(ring8.iteration_time_s, ag8.iteration_time_s);
}

TEST(ContextParallel, ActivationsScaleAsOneOverCpAndStatesStay) {
  const Model m = spec::load_model("Llama-3-8B");
  Training tr{64, 16384, Dtype::bf16};
  tr.flash_attention = false;  // the s x s term must scale too
  for (bool dist_opt : {false, true}) {
    // The same dp x cp = 16 and pp = 1: every term of the activations is linear in the tokens.
    Strategy a = cp_strategy(4, 1, 1, 16), b = cp_strategy(4, 2, 1, 8), d = cp_strategy(4, 4, 1, 4);
    a.dist_opt = b.dist_opt = d.dist_opt = dist_opt;
    const MemoryUse ma = memory_use(m, tr, a), mb = memory_use(m, tr, b), md = memory_use(m, tr, d);
    EXPECT_NEAR(mb.activations_bytes, ma.activations_bytes / 2, 1e-9 * ma.activations_bytes);
    EXPECT_NEAR(md.activations_bytes, ma.activations_bytes / 4, 1e-9 * ma.activations_bytes);
    EXPECT_DOUBLE_EQ(mb.weights_bytes, ma.weights_bytes);
    EXPECT_DOUBLE_EQ(mb.gradients_bytes, ma.gradients_bytes);
    // The distributed optimizer shards over the dp x cp group (16 in each).
    EXPECT_DOUBLE_EQ(mb.optimizer_bytes, ma.optimizer_bytes);
  }
  // The optimizer state is sharded over dp x cp, not dp alone.
  Strategy x = cp_strategy(4, 4, 1, 4), y = cp_strategy(4, 1, 1, 4);
  x.dist_opt = y.dist_opt = true;
  EXPECT_NEAR(memory_use(m, tr, x).optimizer_bytes * 4, memory_use(m, tr, y).optimizer_bytes,
              1e-6 * memory_use(m, tr, y).optimizer_bytes);
}

TEST(ContextParallel, ComputePerMicroBatchFallsByCp) {
  const Model m = spec::load_model("Llama-3-8B");
  const Training tr{64, 16384, Dtype::bf16};
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  const auto d = test::design(spec::DesignKind::rail_optimized);
  double per_mb[3] = {};
  int i = 0;
  for (std::int64_t cp : {1, 2, 4}) {
    const Strategy s = cp_strategy(8, cp, 1, 8 / cp);
    const IterationTime it = estimate(m, tr, s, c, d);
    per_mb[i++] = it.breakdown.compute_s / static_cast<double>(s.micro_batches(tr));
    if (cp > 1) {  // ring attention (the default stack's) hides it on NVLink at 16K tokens
      EXPECT_GT(it.breakdown.cp_comm_s + it.breakdown.cp_hidden_s, 0.0);
    }
    // Model FLOPs count the whole iteration, whatever the split.
    EXPECT_NEAR(it.model_flops, estimate(m, tr, cp_strategy(8, 1, 1, 8), c, d).model_flops,
                1e-9 * it.model_flops);
  }
  // GEMM m, element-wise work and attention all divided by cp; kernel gaps are not (ours).
  EXPECT_NEAR(per_mb[0] / per_mb[1], 2.0, 0.15);
  EXPECT_NEAR(per_mb[0] / per_mb[2], 4.0, 0.4);
}

TEST(ContextParallel, BadDegreesNameTheCpOption) {
  const Model m = spec::load_model("Llama-3-8B");
  const Training tr{64, 8192, Dtype::bf16};
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  EXPECT_EQ(error_field([&] { validate(m, tr, cp_strategy(8, 0, 1, 8), c); }), "--cp");
  // tp x cp x pp x dp != N
  EXPECT_EQ(error_field([&] { validate(m, tr, cp_strategy(8, 2, 1, 8), c); }), "--cp");
  // The sequence must split into 2 cp chunks.
  const Training odd{64, 8190, Dtype::bf16};
  EXPECT_EQ(error_field([&] { validate(m, odd, cp_strategy(8, 2, 1, 4), c); }), "--cp");
  EXPECT_EQ(error_field([&] { validate(m, odd, cp_strategy(8, 1, 1, 8), c); }), "");
  // A stack without context parallelism.
  Training old = tr;
  old.stack = spec::load_stack("megatron-lm-2022");
  old.flash_attention = false;
  EXPECT_EQ(error_field([&] { validate(m, old, cp_strategy(8, 2, 1, 4), c); }), "--cp");
  EXPECT_EQ(error_field([&] { validate(m, tr, cp_strategy(8, 2, 1, 4), c); }), "");
  EXPECT_FALSE(is_valid(m, old, cp_strategy(8, 2, 1, 4), c));
  // Pins: non-positive, and tp x cp x pp not dividing N.
  StrategyPins p;
  p.cp = 0;
  EXPECT_EQ(error_field([&] { check_pins(m, tr, p); }), "--cp");
  p.cp = 3;
  EXPECT_EQ(error_field([&] { (void)default_strategy(m, tr, p, c); }), "--cp");
  p.cp = 2;
  const Strategy s = default_strategy(m, tr, p, c);
  EXPECT_EQ(s.cp, 2);
  EXPECT_EQ(s.tp * s.cp * s.pp * s.dp, 64);
  EXPECT_NE(describe(s).find(" cp 2 "), std::string::npos);
  EXPECT_EQ(describe(cp_strategy(8, 1, 1, 8)).find("cp"), std::string::npos);
}

TEST(ContextParallel, SearchOfALongSequencePicksCpAndFitsWhereCpOneDoesNot) {
  // Llama 3 405B at 131,072 tokens on 16,384 H100 with tp 8 and pp 16 pinned (Dubey et al.
  // 2024, Sec. 3.3.2, trained with cp 16 at this length): without CP nothing fits.
  const Model m = spec::load_model("Llama-3-405B");
  const Training tr = make_training(2048, 131072, spec::load_stack("megatron-core-2024"));
  const spec::Cluster c = test::cluster("H100-SXM", 16384, 8);
  const EstimateContext ctx =
      make_context(m, tr, c, test::design(spec::DesignKind::rail_optimized));
  PlanOptions po;
  po.top = 3;
  po.pins.tp = 8;
  po.pins.pp = 16;
  po.pins.cp = 1;
  const PlanResult one = plan(ctx, po);
  EXPECT_TRUE(one.plans.empty());
  EXPECT_GT(one.min_memory_bytes, c.gpu.hbm_bytes);
  po.pins.cp.reset();
  const PlanResult r = plan(ctx, po);
  ASSERT_FALSE(r.plans.empty());
  EXPECT_GT(r.plans[0].strategy.cp, 1);
  EXPECT_TRUE(r.plans[0].time.feasible);
  EXPECT_EQ(count_strategies(ctx, po.pins), r.evaluated);
  EXPECT_GE(estimate_candidates(ctx, po.pins), r.evaluated);
}

TEST(ContextParallel, SearchKeepsShortSequencesAndStacksWithoutCpAsTheyWere) {
  // 2 cp chunks of at least kMinCpChunk tokens: a 2,048-token sequence is searched without CP.
  const test::Setting g("GPT-3-175B", 64, "H100-SXM", 64, 8, spec::DesignKind::rail_optimized);
  PlanOptions po;
  po.top = 1;
  const PlanResult r = plan(g.ctx, po);
  po.pins.cp = 1;
  EXPECT_EQ(plan(g.ctx, po).evaluated, r.evaluated);
  // A stack without the knob never gets cp > 1, whatever the sequence.
  const Model m = spec::load_model("Llama-3-8B");
  spec::Stack st = spec::load_stack("megatron-core-2024");
  st.knobs.context_parallel = false;
  const Training tr = make_training(64, 65536, st);
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  const EstimateContext ctx =
      make_context(m, tr, c, test::design(spec::DesignKind::rail_optimized));
  PlanOptions all;
  all.top = 50;
  for (const Plan& p : plan(ctx, all).plans) EXPECT_EQ(p.strategy.cp, 1);
}

TEST(Strategy, DescribedForPeopleNamesTheKnobsOnAndLeavesTheRestOut) {
  Strategy s;
  s.tp = 8;
  s.pp = 16;
  s.dp = 256;
  s.interleave = 8;
  s.recompute = Recompute::selective;
  s.sp = true;
  s.dist_opt = true;
  s.dp_overlap = true;
  EXPECT_EQ(describe_for_people(s),
            "tp8 pp16 dp256; micro-batch 1, 8 virtual stages, selective recompute, sequence "
            "parallel, distributed optimizer, DP overlapped");
  Strategy plain;  // one GPU: nothing on, nothing named
  plain.micro_batch = 4;
  plain.sp = true;  // without tp > 1 it does nothing, so it is not said
  EXPECT_EQ(describe_for_people(plain), "tp1 pp1 dp1; micro-batch 4");
  Strategy moe = s;
  moe.cp = 2;
  moe.ep = 64;
  moe.interleave = 1;
  moe.recompute = Recompute::none;
  moe.schedule = PipelineSchedule::zb_h1;
  EXPECT_EQ(describe_for_people(moe),
            "tp8 cp2 pp16 dp256 ep64; micro-batch 1, zb-h1 schedule, sequence parallel, "
            "distributed optimizer, DP overlapped");
}
