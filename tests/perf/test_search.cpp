// The exhaustive search: deterministic whatever the thread count, pins respected, infeasible
// strategies dropped, top-k ordered.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "../common/error_of.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/json.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/tables.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

TEST(Search, IdenticalForOneAndTwoThreads) {
  const test::Setting g("GPT-1T", 4096, "H100-SXM", 32768, 8, spec::DesignKind::rail_only);
  const EstimateContext& ctx = g.ctx;
  PlanOptions po;
  po.top = 20;
  po.threads = 1;
  const PlanResult a = plan(ctx, po);
  po.threads = 2;
  const PlanResult b = plan(ctx, po);
  ASSERT_EQ(a.plans.size(), 20u);
  ASSERT_EQ(a.plans.size(), b.plans.size());
  EXPECT_EQ(a.evaluated, b.evaluated);
  EXPECT_EQ(a.feasible, b.feasible);
  for (std::size_t i = 0; i < a.plans.size(); ++i) {
    EXPECT_EQ(to_json(a.plans[i].strategy, a.plans[i].time).dump(),
              to_json(b.plans[i].strategy, b.plans[i].time).dump());
    if (i > 0) {
      EXPECT_TRUE(plan_before(a.plans[i - 1], a.plans[i]));
    }
    EXPECT_TRUE(a.plans[i].time.feasible);
  }
  EXPECT_EQ(count_strategies(ctx, {}), a.evaluated);
}

TEST(Search, PinsAreRespectedAndBestIsTheMinimum) {
  const test::Setting g("Megatron-175B", 256, "A100-SXM-80GB", 256, 8,
                        spec::DesignKind::rail_optimized);
  const EstimateContext& ctx = g.ctx;
  PlanOptions po;
  po.top = 1000000;
  po.pins.tp = 8;
  po.pins.recompute = Recompute::selective;
  po.pins.sp = true;
  const PlanResult r = plan(ctx, po);
  ASSERT_FALSE(r.plans.empty());
  EXPECT_EQ(static_cast<std::int64_t>(r.plans.size()), r.feasible);
  for (const Plan& p : r.plans) {
    EXPECT_EQ(p.strategy.tp, 8);
    EXPECT_EQ(p.strategy.recompute, Recompute::selective);
    EXPECT_TRUE(p.strategy.sp);
    // Each plan re-estimated alone gives the same time (search and estimate agree).
    EXPECT_DOUBLE_EQ(estimate(ctx, p.strategy).iteration_time_s, p.time.iteration_time_s);
  }
}

TEST(Search, NothingFitsReportsTheSmallestNeed) {
  // GPT-1T on 8 A100: 1T parameters x 6+ bytes cannot fit in 8 x 80 GiB.
  const test::Setting g("GPT-1T", 8, "A100-SXM-80GB", 8, 8, spec::DesignKind::rail_optimized);
  const PlanResult r = plan(g.ctx, PlanOptions{});
  EXPECT_TRUE(r.plans.empty());
  EXPECT_GT(r.evaluated, 0);
  // At least the bf16 weights and fp32 grads of 1/8 of the model (6 bytes x 126e9).
  EXPECT_GT(r.min_memory_bytes, 6.0 * 1.0e12 / 8);
}

TEST(Search, WithFlashAttentionSelectiveRecomputeIsVisitedOnceAsNone) {
  // Fused attention keeps no s x s tensor, so selective recomputation has nothing to recompute:
  // the same time and memory as none. The search visits it once (as none) so that the top plans
  // and the runner-up of --explain are different strategies; pinned, it is still searched.
  const Model m = load_model("GPT-3-175B");
  const spec::Cluster c = test::cluster("H100-SXM", 256, 8);
  const auto design = test::design(spec::DesignKind::rail_optimized);
  Training flash = make_training(256, 2048, load_stack("megatron-core-2024"));
  ASSERT_TRUE(flash.flash_attention);
  Training unfused = flash;
  unfused.flash_attention = false;
  PlanOptions po;
  po.top = 50;
  const PlanResult f = plan(make_context(m, flash, c, design), po);
  const PlanResult u = plan(make_context(m, unfused, c, design), po);
  ASSERT_EQ(f.plans.size(), 50u);
  for (const Plan& p : f.plans) EXPECT_NE(p.strategy.recompute, Recompute::selective);
  // Without fused attention the three recompute modes differ and are all searched.
  EXPECT_GT(u.evaluated, f.evaluated);
  EXPECT_EQ(count_strategies(make_context(m, flash, c, design), {}), f.evaluated);
  // The strategies dropped are exactly the selective ones, each as fast as its none twin.
  Strategy s = f.plans[0].strategy;
  const IterationTime none = estimate(make_context(m, flash, c, design), s);
  s.recompute = Recompute::selective;
  const IterationTime sel = estimate(make_context(m, flash, c, design), s);
  EXPECT_DOUBLE_EQ(sel.iteration_time_s, none.iteration_time_s);
  EXPECT_DOUBLE_EQ(sel.memory.total(), none.memory.total());
  po.pins.recompute = Recompute::selective;
  const PlanResult pinned = plan(make_context(m, flash, c, design), po);
  ASSERT_FALSE(pinned.plans.empty());
  EXPECT_EQ(pinned.plans[0].strategy.recompute, Recompute::selective);
}

TEST(Search, StopsWhenCancelled) {
  const test::Setting g("GPT-1T", 4096, "H100-SXM", 32768, 8, spec::DesignKind::rail_only);
  request_cancel();
  EXPECT_THROW((void)plan(g.ctx, PlanOptions{}), Cancelled);
  reset_cancel();
  EXPECT_FALSE(plan(g.ctx, PlanOptions{}).plans.empty());
}

namespace {
// Megatron's 175B model on 256 A100 (batch 256), on a rail-optimized network.
test::Setting megatron_175b_on_256() {
  return test::Setting("Megatron-175B", 256, "A100-SXM-80GB", 256, 8,
                       spec::DesignKind::rail_optimized);
}

// The plain search's whole list: every strategy that fits, best first.
PlanResult every_fitting_plan(const EstimateContext& ctx) {
  PlanOptions all;
  all.top = 1000000;
  return plan(ctx, all);
}
}  // namespace

// distinct_shapes keeps the best plan of each shape (tp, cp, pp, dp, ep): the same winner as the
// plain search, then, in order, the first plan of each new shape in the plain search's full list,
// whatever the thread count.
TEST(Search, DistinctShapesKeepTheBestOfEachShape) {
  const test::Setting g = megatron_175b_on_256();
  const PlanResult full = every_fitting_plan(g.ctx);
  std::vector<Plan> expected;
  auto same = [](const Strategy& a, const Strategy& b) {
    return a.tp == b.tp && a.cp == b.cp && a.pp == b.pp && a.dp == b.dp && a.ep == b.ep;
  };
  for (const Plan& p : full.plans) {
    const bool seen = std::any_of(expected.begin(), expected.end(),
                                  [&](const Plan& q) { return same(q.strategy, p.strategy); });
    if (!seen && expected.size() < 5) expected.push_back(p);
  }
  ASSERT_EQ(expected.size(), 5u);
  for (int threads : {1, 2}) {
    PlanOptions po;
    po.top = 5;
    po.threads = threads;
    po.distinct_shapes = true;
    const PlanResult r = plan(g.ctx, po);
    ASSERT_EQ(r.plans.size(), 5u);
    EXPECT_EQ(r.evaluated, full.evaluated);
    for (std::size_t i = 0; i < 5; ++i)
      EXPECT_EQ(describe(r.plans[i].strategy), describe(expected[i].strategy)) << i;
  }
}

// fastest_of_shape: of the plain search's full list, the first plan that splits the GPUs as the
// given strategy does (every plan in the list fits); none where no plan of that shape fits.
TEST(Search, FastestOfShapeIsTheFirstFittingPlanOfThatShape) {
  const test::Setting g = megatron_175b_on_256();
  const PlanResult full = every_fitting_plan(g.ctx);
  ASSERT_GT(full.plans.size(), 10u);
  // A shape that is not the winner's, taken from deep in the list (a later plan of a shape seen
  // earlier is not the first of it).
  const Strategy& shape = full.plans[full.plans.size() / 2].strategy;
  const auto first = std::find_if(full.plans.begin(), full.plans.end(),
                                  [&](const Plan& p) { return same_shape(p.strategy, shape); });
  ASSERT_NE(first, full.plans.end());
  const std::optional<Plan> f = fastest_of_shape(g.ctx, PlanOptions{}, shape);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(same_shape(f->strategy, shape));
  EXPECT_TRUE(f->time.feasible);
  EXPECT_EQ(describe(f->strategy), describe(first->strategy));
  EXPECT_EQ(f->time.iteration_time_s, first->time.iteration_time_s);
  // The other pins stay: recomputation pinned to full finds that shape's best with full.
  PlanOptions pinned;
  pinned.pins.recompute = Recompute::full;
  const std::optional<Plan> ff = fastest_of_shape(g.ctx, pinned, shape);
  ASSERT_TRUE(ff.has_value());
  EXPECT_EQ(ff->strategy.recompute, Recompute::full);
  EXPECT_GE(ff->time.iteration_time_s, f->time.iteration_time_s);
  // The whole 175B model on every GPU (tp 1, pp 1): its weights and optimizer state alone are
  // over the HBM whatever the knobs.
  Strategy whole = shape;
  whole.tp = 1;
  whole.pp = 1;
  whole.cp = 1;
  whole.dp = 256;
  whole.interleave = 1;
  EXPECT_FALSE(fastest_of_shape(g.ctx, PlanOptions{}, whole).has_value());
  // ...a shape the search does visit (valid strategies, none within the HBM), not one it refuses.
  PlanOptions as_whole;
  as_whole.pins.tp = 1;
  as_whole.pins.pp = 1;
  as_whole.pins.cp = 1;
  as_whole.pins.dp = 256;
  const PlanResult none_fit = plan(g.ctx, as_whole);
  EXPECT_GT(none_fit.evaluated, 0);
  EXPECT_EQ(none_fit.feasible, 0);
}

// A plan as railsim prints it reads back into the same knobs; what it leaves out stays unpinned.
TEST(Search, PlanTextReadsBackAsPrinted) {
  const StrategyPins p =
      parse_plan_text("tp8 cp2 pp16 dp64 ep4 mb2 v4 selective sp dopt ovl", "--x");
  EXPECT_EQ(p.tp, 8);
  EXPECT_EQ(p.cp, 2);
  EXPECT_EQ(p.pp, 16);
  EXPECT_EQ(p.dp, 64);
  EXPECT_EQ(p.ep, 4);
  EXPECT_EQ(p.micro_batch, 2);
  EXPECT_EQ(p.interleave, 4);
  EXPECT_EQ(p.recompute, Recompute::selective);
  EXPECT_EQ(p.sp, true);
  EXPECT_EQ(p.dist_opt, true);
  EXPECT_EQ(p.dp_overlap, true);
  const StrategyPins q = parse_plan_text(" tp8,pp16  dp64,no-ovl zb-h1 ", "--x");
  EXPECT_EQ(q.tp, 8);
  EXPECT_EQ(q.dp_overlap, false);
  EXPECT_EQ(q.schedule, PipelineSchedule::zb_h1);
  EXPECT_FALSE(q.micro_batch.has_value());
  EXPECT_FALSE(q.recompute.has_value());
  EXPECT_FALSE(q.sp.has_value());
  EXPECT_EQ(parse_plan_text("tp8 pp8 zb-v", "--x").schedule, PipelineSchedule::zb_v);
  for (const char* bad :
       {"", "mb2 v4", "tp8 tp4", "tp8 xx3", "tp0", "tp8 fast", "tp99999999999", "tp8 zb-v zb-h1"})
    EXPECT_EQ(test::field_of([&] { (void)parse_plan_text(bad, "--against"); }), "--against") << bad;
}

// What decides between two plans: memory first (the part that grew), else the time parts.
TEST(Search, ExplainVersusNamesTheMemoryOrTheParts) {
  const test::Setting g("Megatron-175B", 256, "A100-SXM-80GB", 256, 8,
                        spec::DesignKind::rail_optimized);
  PlanOptions po;
  po.top = 2;
  po.distinct_shapes = true;
  const PlanResult r = plan(g.ctx, po);
  ASSERT_EQ(r.plans.size(), 2u);
  const std::string line = explain_versus(r.plans[0], r.plans[1], r.hbm_bytes);
  EXPECT_EQ(line.rfind(fmt::format("{:.1f}% slower (", 100 * (r.plans[1].time.iteration_time_s /
                                                                  r.plans[0].time.iteration_time_s -
                                                              1)),
                       0),
            0u)
      << line;
  EXPECT_NE(line.find(" +"), std::string::npos) << line;  // a part that costs time
  Plan full = r.plans[1];
  full.time.memory.activations_bytes += r.hbm_bytes;  // now it cannot fit
  const std::string oom = explain_versus(r.plans[0], full, r.hbm_bytes);
  EXPECT_EQ(oom.rfind("it does not fit: it needs ", 0), 0u) << oom;
  EXPECT_NE(oom.find("GiB over the 80.0 GiB of HBM (activations "), std::string::npos) << oom;
}
