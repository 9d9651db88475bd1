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
// A job fully sharded over all its GPUs (tp 1 unless given, with SP where the stack has it).
struct Job {
  Model m;
  spec::Cluster c;
  Training tr;
  std::int64_t micro_batch = 1;
  Strategy with(Recompute r, std::int64_t tp = 1) const {
    Strategy s{.tp = tp, .dp = c.gpus / tp, .micro_batch = micro_batch, .recompute = r};
    s.sp = tp > 1 && tr.stack.knobs.sequence_parallel;
    s.dist_opt = true;
    s.dp_overlap = true;
    return s;
  }
  IterationTime time(Recompute r) const {
    return estimate(m, tr, with(r), c, test::design(spec::DesignKind::rail_optimized));
  }
};

// Llama 3 8B on 64 A100 under TorchTitan: FSDP over all 64, one sequence of 8,192 tokens each.
Job titan() {
  return {spec::load_model("Llama-3-8B"), test::cluster("A100-SXM-80GB", 64, 8),
          make_training(64, 8192, spec::load_stack("torchtitan-2024"))};
}

// Llama 2 70B on 64 H100 under MaxText: FSDP over all 64, two sequences of 4,096 tokens each (the
// DGX Cloud recipe's layout).
Job maxtext() {
  return {spec::load_model("Llama-2-70B"), test::cluster("H100-SXM", 64, 8),
          make_training(128, 4096, spec::load_stack("maxtext-2024")), 2};
}
}  // namespace

TEST(Checkpointing, OpKeepsTheInputAndEveryOtherMatmulsOutput) {
  const Job t = titan();
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
  const Job t = titan();
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
  const Job t = titan();
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
  const Job t = titan();
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

TEST(Checkpointing, QkvKeepsTheInputAndTheProjections) {
  const Job x = maxtext();
  const double T = 2 * 4096, h = 8192, kvd = 1024, L = 80;
  // Kept per layer: the input (h) and the Q, K and V projections (h + 2 kvd), 2 bytes each; while
  // a layer is recomputed, what it dropped exists again. Full recomputation keeps the input and
  // rebuilds the whole layer, so the difference is (L - 1) layers' projections less one input.
  const double qkv_out = 2.0 * T * (h + 2 * kvd), input = 2.0 * T * h;
  const MemoryUse full = memory_use(x.m, x.tr, x.with(Recompute::full));
  const MemoryUse qkv = memory_use(x.m, x.tr, x.with(Recompute::qkv));
  const MemoryUse none = memory_use(x.m, x.tr, x.with(Recompute::none));
  EXPECT_NEAR(qkv.activations_bytes - full.activations_bytes, (L - 1) * qkv_out - input, 1.0);
  EXPECT_LT(full.total(), qkv.total());
  EXPECT_LT(qkv.total(), none.total());
  // The recipe's layout fits with it, not with everything kept.
  EXPECT_LT(qkv.total(), x.c.gpu.hbm_bytes);
  EXPECT_GT(none.total(), x.c.gpu.hbm_bytes);
}

TEST(Checkpointing, QkvRecomputesTheForwardButItsProjectionsAndFc2) {
  const Job x = maxtext();
  const IterationTime full = x.time(Recompute::full), qkv = x.time(Recompute::qkv),
                      none = x.time(Recompute::none);
  // XLA drops from the recomputation what no gradient needs: the kept projections and the FFN's
  // down projection. Hardware FLOPs: full's extra less 2 h (q + k + v + f) per token and layer.
  const double tokens = 128.0 * 4096, h = 8192, f = 28672, L = 80;
  EXPECT_NEAR((full.hardware_flops - full.model_flops) - (qkv.hardware_flops - qkv.model_flops),
              tokens * L * 2 * h * (h + 2 * 1024 + f), 1e-9 * full.model_flops);
  EXPECT_GT(qkv.breakdown.recompute_s, 0.0);
  EXPECT_LT(qkv.breakdown.recompute_s, full.breakdown.recompute_s);
  EXPECT_LT(none.iteration_time_s, qkv.iteration_time_s);
  EXPECT_LT(qkv.iteration_time_s, full.iteration_time_s);
}

TEST(Checkpointing, QkvRunsTheCollectivesBetweenTheProjectionsAndFc2Again) {
  const Job x = maxtext();
  auto counts = [&](Recompute r) {
    const Strategy s = x.with(r, 8);
    const CommSchedule cs =
        build_comm_schedule(x.m, x.tr, s, Placement(x.c, s.degrees(), PlacementKind::rail_aligned));
    std::array<double, 2> n{};  // TP all-reduces forward, backward
    for (const CommOp& op : cs)
      if (op.parallelism == Parallelism::tp) n[op.phase == Phase::backward] += op.count;
    return n;
  };
  const auto none = counts(Recompute::none), qkv = counts(Recompute::qkv);
  ASSERT_GT(none[0], 0);
  EXPECT_DOUBLE_EQ(none[1], none[0]);
  // Of a layer's two all-reduces (after the attention's projection and after FC2) the first runs
  // again: the FFN's input depends on it.
  EXPECT_DOUBLE_EQ(qkv[0], none[0]);
  EXPECT_DOUBLE_EQ(qkv[1], 1.5 * none[0]);
}

TEST(Checkpointing, QkvRunsOnTheStacksThatHaveItAndThePlannerUsesIt) {
  const Job x = maxtext();
  const Training core = make_training(128, 4096, spec::Stack{});
  EXPECT_EQ(field_of([&] { validate(x.m, x.tr, x.with(Recompute::qkv), x.c); }), "(no error)");
  EXPECT_EQ(field_of([&] { validate(x.m, core, x.with(Recompute::qkv), x.c); }), "--recompute");
  EXPECT_EQ(spec::parse_recompute("qkv"), Recompute::qkv);
  EXPECT_EQ(spec::to_string(Recompute::qkv), "qkv");
  // The recipe's layout left to the planner: nothing kept does not fit, keeping Q, K and V does
  // and recomputes less than full, so the planner takes it.
  StrategyPins pins;
  pins.tp = 1;
  pins.micro_batch = 2;
  const PlanResult r =
      plan(make_context(x.m, x.tr, x.c, test::design(spec::DesignKind::rail_optimized)),
           PlanOptions{pins, 5, 1});
  ASSERT_FALSE(r.plans.empty());
  EXPECT_EQ(r.plans.front().strategy.recompute, Recompute::qkv);
}
