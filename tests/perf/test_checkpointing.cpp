// Per-op and per-layer activation checkpointing (Recompute::op, Recompute::layer; TorchTitan's
// "selective op" and "selective layer" policies): what each keeps, what each recomputes, which
// collectives run again, and which stacks have them (docs/model.md sections 3, 4, 7 and 9).
#include <gtest/gtest.h>

#include "../common/error_of.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/spec/preset.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;
using test::field_of;

namespace {
// Llama 3 8B on 64 A100 under TorchTitan: FSDP over all 64, one sequence of 8,192 tokens each.
struct Titan {
  Model m = spec::load_model("Llama-3-8B");
  spec::Cluster c = test::cluster("A100-SXM-80GB", 64, 8);
  Training tr = make_training(64, 8192, spec::load_stack("torchtitan-2024"));
  Strategy with(Recompute r, std::int64_t tp = 1) const {
    Strategy s{.tp = tp, .dp = 64 / tp, .recompute = r};
    s.sp = tp > 1;
    s.dist_opt = true;
    s.dp_overlap = true;
    return s;
  }
  IterationTime time(Recompute r) const {
    return estimate(m, tr, with(r), c, test::design(spec::DesignKind::rail_optimized));
  }
};
}  // namespace

TEST(Checkpointing, OpKeepsTheInputAndEveryOtherMatmulsOutput) {
  const Titan t;
  const double T = 8192, h = 4096, kvd = 1024, f = 14336, L = 32;
  // Kept per layer (tp 1): the input and w2's output (h each), wq's (h) and wv's (kvd) outputs,
  // the attention output (h) and w1's output (f), 2 bytes each: 4 h + kvd + f per token.
  const double op_layer = 2.0 * T * (4 * h + kvd + f);
  // Everything a layer keeps with nothing recomputed (Korthikanti et al.'s count for this block,
  // no dropout, flash attention): LayerNorm and GEMM inputs 8 h, Q K V and the attention output
  // 2 (2 h + 2 kvd), FC1's two outputs and FC2's input 2 x 3 f.
  const double none_layer = T * (8 * h + 2 * (2 * h + 2 * kvd) + 6 * f);
  const MemoryUse none = memory_use(t.m, t.tr, t.with(Recompute::none));
  const MemoryUse op = memory_use(t.m, t.tr, t.with(Recompute::op));
  const MemoryUse layer = memory_use(t.m, t.tr, t.with(Recompute::layer));
  const MemoryUse full = memory_use(t.m, t.tr, t.with(Recompute::full));
  // The single stage also holds one micro-batch's fp32 logits (4 bytes x 128,256 words).
  const double logits = 4.0 * T * 128256;
  EXPECT_NEAR(none.activations_bytes, L * none_layer + logits, 1.0);
  // One micro-batch in flight; while a layer is recomputed, what op dropped of it exists again.
  EXPECT_NEAR(op.activations_bytes, L * op_layer + (none_layer - op_layer) + logits, 1.0);
  // Every second layer keeps only its input (2 h per token) and one is rebuilt at a time.
  EXPECT_NEAR(layer.activations_bytes, L * 0.5 * (none_layer + 2 * T * h) + none_layer + logits,
              1.0);
  EXPECT_NEAR(full.activations_bytes, L * 2 * T * h + none_layer + logits, 1.0);
  // Nothing else changes.
  EXPECT_DOUBLE_EQ(op.weights_bytes + op.gradients_bytes + op.optimizer_bytes,
                   none.weights_bytes + none.gradients_bytes + none.optimizer_bytes);
  EXPECT_LT(full.total(), op.total());
  EXPECT_LT(op.total(), layer.total());
  EXPECT_LT(layer.total(), none.total());
}

TEST(Checkpointing, RecomputedWorkIsWhatThePolicyDrops) {
  const Titan t;
  const IterationTime none = t.time(Recompute::none), op = t.time(Recompute::op),
                      layer = t.time(Recompute::layer), full = t.time(Recompute::full);
  EXPECT_DOUBLE_EQ(none.breakdown.recompute_s, 0.0);
  // Layer recomputes half of what full does, exactly.
  EXPECT_NEAR(layer.breakdown.recompute_s, 0.5 * full.breakdown.recompute_s,
              1e-12 * full.breakdown.recompute_s);
  // Op recomputes three of seven matmuls (wk, wo, w3: 1,024 + 4,096 + 14,336 of the layer's
  // 6,144 + 4,096 + 43,008 output columns over h) and the element-wise kernels: more than a
  // third of the forward, less than half.
  EXPECT_GT(op.breakdown.recompute_s, 0.3 * full.breakdown.recompute_s);
  EXPECT_LT(op.breakdown.recompute_s, layer.breakdown.recompute_s);
  // Its hardware FLOPs: model FLOPs plus 2 h (kvd + h + f) per token per layer.
  const double tokens = 64.0 * 8192, h = 4096;
  EXPECT_NEAR(op.hardware_flops - op.model_flops, tokens * 32 * 2 * h * (1024 + 4096 + 14336),
              1e-9 * op.model_flops);
  EXPECT_NEAR(layer.hardware_flops - layer.model_flops,
              0.5 * (full.hardware_flops - full.model_flops), 1e-9 * full.model_flops);
  EXPECT_LT(none.iteration_time_s, op.iteration_time_s);
  EXPECT_LT(op.iteration_time_s, layer.iteration_time_s);
  EXPECT_LT(layer.iteration_time_s, full.iteration_time_s);
}

TEST(Checkpointing, RecomputationRunsTheCollectivesItNeedsAgain) {
  const Titan t;
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  auto counts = [&](Recompute r) {
    const Strategy s = t.with(r, 8);
    const CommSchedule cs =
        build_comm_schedule(t.m, t.tr, s, Placement(c, s.degrees(), PlacementKind::rail_aligned));
    std::array<double, 4> n{};  // all-gather fwd, bwd; reduce-scatter fwd, bwd
    for (const CommOp& op : cs)
      if (op.parallelism == Parallelism::sp)
        n[(op.op == CollectiveOp::reduce_scatter ? 2 : 0) + (op.phase == Phase::backward)] +=
            op.count;
    return n;
  };
  const auto none = counts(Recompute::none), op = counts(Recompute::op),
             layer = counts(Recompute::layer), full = counts(Recompute::full);
  ASSERT_GT(none[0], 0);
  EXPECT_DOUBLE_EQ(none[1], none[0]);
  EXPECT_DOUBLE_EQ(full[1], 2 * none[0]);
  EXPECT_DOUBLE_EQ(full[3], 2 * none[2]);
  EXPECT_DOUBLE_EQ(layer[1], 1.5 * none[0]);
  EXPECT_DOUBLE_EQ(layer[3], 1.5 * none[2]);
  // Op: the all-gathers feeding wk and w3 run again; the reduce-scatters' outputs are kept.
  EXPECT_DOUBLE_EQ(op[1], 2 * none[0]);
  EXPECT_DOUBLE_EQ(op[3], none[2]);
}

TEST(Checkpointing, OnlyStacksThatHaveThemRunThemAndThePlannerUsesThem) {
  const Titan t;
  const Training core = make_training(64, 8192, spec::Stack{});
  for (Recompute r : {Recompute::op, Recompute::layer}) {
    EXPECT_EQ(field_of([&] { validate(t.m, t.tr, t.with(r), t.c); }), "(no error)");
    EXPECT_EQ(field_of([&] { validate(t.m, core, t.with(r), t.c); }), "--recompute");
  }
  EXPECT_EQ(spec::parse_recompute("op"), Recompute::op);
  EXPECT_EQ(spec::parse_recompute("layer"), Recompute::layer);
  EXPECT_EQ(field_of([] { (void)spec::parse_recompute("ops"); }), "--recompute");
  // Llama 2 70B on 64 A100 at batch 1 per GPU: with nothing recomputed it does not fit; per-op
  // checkpointing fits and is faster than recomputing every layer, so the planner takes it.
  const Model m70 = spec::load_model("Llama-2-70B");
  const Training tr = make_training(64, 4096, spec::load_stack("torchtitan-2024"));
  StrategyPins pins;
  pins.tp = 1;
  pins.pp = 1;
  pins.micro_batch = 1;
  const PlanResult r =
      plan(make_context(m70, tr, t.c, test::design(spec::DesignKind::rail_optimized)),
           PlanOptions{pins, 5, 1});
  ASSERT_FALSE(r.plans.empty());
  EXPECT_EQ(r.plans.front().strategy.recompute, Recompute::op);
  Strategy s = r.plans.front().strategy;
  s.recompute = Recompute::none;
  EXPECT_GT(memory_use(m70, tr, s).total(), t.c.gpu.hbm_bytes);
}
