// Model features beyond the validation runs: fused attention, fp8 GEMMs, the pipeline bubble.
#include <gtest/gtest.h>

#include <algorithm>

#include "../common/error_of.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/spec/preset.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

TEST(Features, FlashAttentionRemovesTheScoreTraffic) {
  const Model m = load_model("Llama-3-8B");
  const spec::Cluster c = test::cluster("H100-SXM", 1024, 8);
  const auto d = test::design(spec::DesignKind::rail_optimized);
  Training tr{1024, 8192, Dtype::bf16};
  // Llama 3 8B: TP 2, DP 512, Megatron-Core's knobs.
  Strategy s = test::megatron_core_strategy(2, 1, 512, 1);
  const IterationTime unfused = estimate(m, tr, s, c, d);
  tr.flash_attention = true;
  const IterationTime fused = estimate(m, tr, s, c, d);
  // At s = 8192 the s x s scores dominate an 8B layer: fused attention is much faster.
  EXPECT_LT(fused.iteration_time_s, 0.6 * unfused.iteration_time_s);
  EXPECT_EQ(fused.breakdown.recompute_s, 0.0);  // nothing of size s x s to recompute
  // Same model FLOPs, so MFU scales with the speed-up.
  EXPECT_DOUBLE_EQ(fused.model_flops, unfused.model_flops);
  // Without recompute the unfused run stores 4 a s^2 b / t bytes per layer (Llama 3 has no
  // attention-dropout mask, so 4 rather than Korthikanti's 5); fused stores none.
  s.recompute = Recompute::none;
  const double with = memory_use(m, Training{1024, 8192, Dtype::bf16}, s).activations_bytes;
  const double without = memory_use(m, tr, s).activations_bytes;
  const double attn = 4.0 * 32 * 8192.0 * 8192.0 / 2 * 32;  // 4 a s (b s) / t x L layers
  EXPECT_NEAR(with - without, attn, 1e-6 * attn);
}

TEST(Features, Fp8UsesTheFp8PeakForGemms) {
  const Model m = load_model("GPT-3-175B");
  const spec::Cluster c = test::cluster("H100-SXM", 1024, 8);
  const auto d = test::design(spec::DesignKind::rail_optimized);
  Strategy s{
      .tp = 8, .pp = 8, .dp = 16, .interleave = 2, .recompute = Recompute::selective, .sp = true};
  const IterationTime bf16 = estimate(m, Training{1024, 2048, Dtype::bf16}, s, c, d);
  const IterationTime fp8 = estimate(m, Training{1024, 2048, Dtype::fp8}, s, c, d);
  // GEMMs at twice the peak at their own fitted fraction (H100: 0.50 of the bf16 peak, 0.51 of the
  // fp8 one) and paying the casts; communication and element-wise work unchanged. The TP
  // communication is the same; with TP overlap (the default stack) faster GEMMs hide less of it.
  EXPECT_LT(fp8.iteration_time_s, 0.9 * bf16.iteration_time_s);
  EXPECT_GT(fp8.iteration_time_s, 0.5 * bf16.iteration_time_s);
  EXPECT_NEAR(fp8.breakdown.tp_comm_s + fp8.breakdown.tp_hidden_s,
              bf16.breakdown.tp_comm_s + bf16.breakdown.tp_hidden_s,
              1e-9 * bf16.breakdown.tp_hidden_s);
  EXPECT_GT(fp8.breakdown.tp_comm_s, bf16.breakdown.tp_comm_s);
}

TEST(Features, BubbleFollowsOneFOneBAndInterleaving) {
  // Narayanan et al. SC'21: bubble fraction (p-1)/m, interleaved (p-1)/(v m), relative to the
  // ideal time; with a vocabulary of 1 the output layer's imbalance between stages (which the
  // bubble entry also carries: its 1-wide logits GEMM still pays a whole output tile per wave)
  // is about 0.2% of the busy time.
  Model m = load_model("GPT-3-175B");
  m.vocab = 1;
  const spec::Cluster c = test::cluster("A100-SXM-80GB", 64, 8, 200);
  const auto d = test::design(spec::DesignKind::rail_optimized);
  const Training tr{64, 2048, Dtype::bf16};
  Strategy s{.tp = 8, .pp = 8, .dp = 1, .recompute = Recompute::selective, .sp = true};
  for (std::int64_t v : {1, 2, 3, 4}) {
    s.interleave = v;
    const IterationTime it = estimate(m, tr, s, c, d);
    const Breakdown& b = it.breakdown;
    // The busy time of the stage holds every send: with pp_comm_overlap (v > 1) those of the
    // 1F1B body are hidden but the fill and drain's stay in the bubble, (p-1)/v of a stage time.
    const double busy =
        b.compute_s + b.recompute_s + b.tp_comm_s + b.tp_overlap_s + b.pp_comm_s + b.pp_hidden_s;
    EXPECT_EQ(b.pp_hidden_s > 0, v > 1) << v;
    EXPECT_NEAR(b.bubble_s / busy, 7.0 / (64.0 * static_cast<double>(v)), 2.5e-3) << v;
  }
}

TEST(Features, UnevenPipelineStages) {
  // 10 layers on 4 stages: 2, 3, 3, 2 (the spare layers go to the middle stages). The fullest
  // stage sets the counts of the schedule; the iteration lies between 8 and 12 layers'.
  Model m = load_model("GPT-3-175B");
  const spec::Cluster c = test::cluster("A100-SXM-80GB", 32, 8, 200);
  const auto d = test::design(spec::DesignKind::rail_optimized);
  const Training tr{32, 2048, Dtype::bf16};
  Strategy s{.tp = 8, .pp = 4, .dp = 1, .recompute = Recompute::full};
  auto time = [&](std::int64_t layers) {
    m.layers = layers;
    return estimate(m, tr, s, c, d).iteration_time_s;
  };
  const double t8 = time(8), t10 = time(10), t12 = time(12);
  EXPECT_LT(t8, t10);
  EXPECT_LT(t10, t12);
  m.layers = 10;
  validate(m, tr, s, c);
  const Placement pl(c, s.degrees());
  const CommSchedule cs = build_comm_schedule(m, tr, s, pl);
  ASSERT_GT(cs.size, 0);
  EXPECT_EQ(cs.ops[0].axis, Axis::tp);
  EXPECT_DOUBLE_EQ(cs.ops[0].count, 2.0 * 3 * 32);  // 3 layers x 32 micro-batches, 2 per layer
  s.interleave = 2;  // 8 chunks of 1 or 2 layers: uneven chunks are allowed
  EXPECT_TRUE(is_valid(m, tr, s, c));
  s.interleave = 3;  // 12 chunks cannot each get one of the 10 layers
  EXPECT_FALSE(is_valid(m, tr, s, c));
  s.interleave = 1;
  // More stages than layers, on a shape that fills the 32 GPUs (tp x pp x dp = 8 x 4 x 1): the
  // stage count is what is refused.
  m.layers = 3;
  EXPECT_EQ(test::field_of([&] { validate(m, tr, s, c); }), "--pp");
  m.layers = 4;
  EXPECT_TRUE(is_valid(m, tr, s, c));
}

// Llama 3 405B's 126 layers over 16 stages: 7 on the first and the last, 8 on the others (Dubey
// et al. 2024, Sec. 3.3.2). The peak memory is the larger of the first stage's (7 layers, the
// embedding, 16 micro-batches in flight under 1F1B) and the second's (8 layers, 15 in flight):
// the second, 120 layer-micro-batches against the 128 a 128-layer model's first stage holds.
// Interleaved (v = 7, 32 micro-batches), Megatron's warm-up leaves 16 v + 16 - 1 - 2 i chunks in
// flight on stage i, of 2 and 1 layers, the 2-layer chunks first: 157 layer-micro-batches on the
// second stage against 159 on the 128-layer model's first (perf::peak_layers_in_flight; by the
// average chunk it would be 8/7 x 125 against 8/7 x 127).
TEST(Features, FewerLayersOnTheFirstStageAndTheFullestStageSetsMemory) {
  Model m = load_model("Llama-3-405B");
  const Training tr{2048, 8192, Dtype::bf16};
  Strategy s{.tp = 8, .pp = 16, .dp = 64, .micro_batch = 1};
  s.recompute = Recompute::selective;
  s.sp = true;
  s.dist_opt = true;
  for (const std::int64_t v : {1, 7}) {
    s.interleave = v;
    m.layers = 126;
    const MemoryUse uneven = memory_use(m, tr, s);
    m.layers = 128;
    const MemoryUse even = memory_use(m, tr, s);
    const double ratio = v == 1 ? 120.0 / 128.0 : 157.0 / 159.0;
    EXPECT_NEAR(uneven.activations_bytes, ratio * even.activations_bytes,
                1e-9 * even.activations_bytes)
        << v;
    // The second stage holds no embedding: 8 layers' weights, the 128-layer first stage's less
    // its embedding (V h / t parameters, 2 bytes each).
    const double emb = 2.0 * static_cast<double>(m.vocab * m.hidden) / 8.0;
    EXPECT_NEAR(uneven.weights_bytes, even.weights_bytes - emb, 1e-9 * even.weights_bytes) << v;
  }
}

// Under fp8 training the output layer stays bf16 (Megatron-Core's fp8 autocast covers the
// transformer block only): what the vocabulary adds to the compute is the same in fp8 and bf16.
TEST(Features, Fp8LeavesTheOutputLayerInBf16) {
  Model m = load_model("Llama-3-8B");
  const spec::Cluster c = test::cluster("H100-SXM", 8, 8);
  const auto d = test::design(spec::DesignKind::rail_optimized);
  Strategy s{.tp = 1, .pp = 1, .dp = 8, .micro_batch = 1};
  s.recompute = Recompute::selective;
  auto vocab_cost = [&](Dtype dt) {
    const Training tr{64, 8192, dt};
    m.vocab = 128256;
    const double with = estimate(m, tr, s, c, d).breakdown.compute_s;
    m.vocab = 1;
    return with - estimate(m, tr, s, c, d).breakdown.compute_s;
  };
  const double bf16 = vocab_cost(Dtype::bf16), fp8 = vocab_cost(Dtype::fp8);
  ASSERT_GT(bf16, 0.0);
  EXPECT_NEAR(fp8, bf16, 1e-9 * bf16);
}

// fp8 GEMMs keep fp8 casts of their inputs for the backward (Transformer Engine): per token per
// layer, the QKV and FC1 inputs lose h bytes each, FC2's input one byte per FFN element, and the
// projection keeps an fp8 copy of its input (+ one byte per element): with TP t and SP, Llama 3
// 70B's layer (h 8,192, FFN 28,672, attention output 8,192) stores (2 h + f - h) / t fewer
// bytes per token.
TEST(Features, Fp8KeepsTheCastsOfTheGemmInputs) {
  const Model m = load_model("Llama-3-70B");
  Strategy s{.tp = 4, .pp = 1, .dp = 16, .micro_batch = 1};
  s.recompute = Recompute::selective;
  s.sp = true;
  const Training bf16{64, 8192, Dtype::bf16}, fp8{64, 8192, Dtype::fp8};
  const double saved =
      memory_use(m, bf16, s).activations_bytes - memory_use(m, fp8, s).activations_bytes;
  const double h = 8192, f = 28672, tokens = 8192;
  // 80 layers held (1 stage, 1 micro-batch in flight); the fp32 logits are the same in both.
  EXPECT_NEAR(saved, 80.0 * tokens * (2.0 * h + f - h) / 4.0, 1e-6 * saved);
}

// Megatron-Core's split that counts the embedding and the loss as a layer each (the stack's
// embedding_loss_chunks): Llama 3 405B's 126 layers and those two fill pp 16 x v 8 = 128 chunks
// of one, as Megatron-Bridge's GB200 recipe and Meta's layout run it; a stack without it stops at
// 126 chunks, and neither goes past its units.
TEST(Features, EmbeddingAndLossChunksLetTheSplitReachLayersPlusTwo) {
  const Model m = load_model("Llama-3-405B");
  const spec::Cluster c = test::cluster("GB200", 256, 64, 400);
  Strategy s{.tp = 4, .pp = 16, .dp = 4, .micro_batch = 1, .interleave = 8};
  s.recompute = Recompute::selective;
  s.sp = true;
  s.dist_opt = true;
  const Training nemo = make_training(1536, 8192, load_stack("nemo-perf-2025"), Dtype::fp8);
  const Training core = make_training(1536, 8192, load_stack("megatron-core-2024"), Dtype::fp8);
  EXPECT_TRUE(nemo.stack.knobs.embedding_loss_chunks);
  EXPECT_FALSE(core.stack.knobs.embedding_loss_chunks);
  EXPECT_TRUE(is_valid(m, nemo, s, c));
  EXPECT_EQ(test::field_of([&] { validate(m, core, s, c); }), "--interleave");
  s.interleave = 9;  // 144 chunks
  EXPECT_EQ(test::field_of([&] { validate(m, nemo, s, c); }), "--interleave");
  // The search visits v = 8 at pp 16 where the stack has the split, not where it has not.
  StrategyPins pins;
  pins.tp = 4;
  pins.pp = 16;
  pins.cp = 1;
  pins.micro_batch = 1;
  auto max_v = [&](const Training& tr) {
    const PlanResult r =
        plan(make_context(m, tr, c, test::design_spread(spec::DesignKind::rail_optimized)),
             PlanOptions{.pins = pins, .top = 1000});
    std::int64_t v = 0;
    for (const Plan& p : r.plans) v = std::max(v, p.strategy.interleave);
    return v;
  };
  EXPECT_EQ(max_v(nemo), 8);
  EXPECT_EQ(max_v(core), 7);
}
