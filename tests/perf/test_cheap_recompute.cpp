// A stack's recomputation of cheap tensors and its bf16 optimizer moments (spec::Stack:
// recompute_norms, recompute_up_projections, moe_swiglu_recompute, optimizer_moment_dtype; the
// DeepSeek-V3 report, Sec. 3.2.3 and 3.3.3): what each stops keeping, what each runs again
// (docs/model.md sections 3 and 4).
#include <gtest/gtest.h>

#include "railsim/perf/iteration.hpp"
#include "railsim/spec/preset.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
// DeepSeek-V3 (61 layers, 58 of them MoE; h 7,168; MLA) in fp8 on 64 GPUs, one stage, one
// sequence of 4,096 tokens per micro-batch, so one micro-batch's activations are in flight. Its
// multi-token-prediction module aside (test_mtp.cpp), so that the stage holds the 61 layers.
struct DeepSeek {
  Model m = [] {
    Model x = spec::load_model("DeepSeek-V3");
    x.mtp_layers = 0;
    return x;
  }();
  spec::Stack base = [] {
    spec::Stack st = spec::load_stack("deepseek-v3-2024");
    st.moment_bytes = 4.0;
    st.recompute_norms = st.recompute_up_projections = st.moe_swiglu_recompute = false;
    return st;
  }();
  Strategy s = [] {
    Strategy x{.tp = 1, .pp = 1, .dp = 64, .ep = 64, .recompute = Recompute::selective};
    x.dist_opt = true;
    x.dp_overlap = true;
    return x;
  }();
  Training with(const spec::Stack& st) const { return make_training(64, 4096, st, Dtype::fp8); }
  MemoryUse memory(const spec::Stack& st) const { return memory_use(m, with(st), s); }
  MemoryUse memory(const spec::Stack& st, Recompute r) const {
    Strategy x = s;
    x.recompute = r;
    return memory_use(m, with(st), x);
  }
  IterationTime time(const spec::Stack& st) const {
    return estimate(m, with(st), s, test::cluster("H800", 64, 8),
                    test::design(spec::DesignKind::rail_optimized));
  }
};
constexpr double kTokens = 4096, kH = 7168, kLayers = 61, kMoeLayers = 58;
}  // namespace

TEST(CheapRecompute, EachKnobDropsWhatItRecomputes) {
  const DeepSeek d;
  const MemoryUse base = d.memory(d.base);
  spec::Stack norms = d.base, up = d.base, swiglu = d.base;
  norms.recompute_norms = true;
  up.recompute_up_projections = true;
  swiglu.moe_swiglu_recompute = true;
  // The norms' outputs, the inputs of the down-projections and of the FFN, kept as their fp8
  // casts: 2 h bytes per token per layer.
  EXPECT_NEAR(base.activations_bytes - d.memory(norms).activations_bytes,
              kLayers * 2.0 * kTokens * kH, 1.0);
  // Q (128 heads x 192), K (128 x 192) and V (128 x 128) in bf16.
  EXPECT_NEAR(base.activations_bytes - d.memory(up).activations_bytes,
              kLayers * 2.0 * kTokens * (24576 + 24576 + 16384), 1.0);
  // An MoE layer keeps FC1's output in fp8 (2 units x 1 byte) instead of that output in bf16 and
  // FC2's fp8 input (4 + 1 bytes): 3 bytes per unit, 8 routed experts and one shared of 2,048.
  EXPECT_NEAR(base.activations_bytes - d.memory(swiglu).activations_bytes,
              kMoeLayers * 3.0 * kTokens * (8 * 2048 + 2048), 1.0);
  // None of them touches the weights, gradients or optimizer state.
  for (const spec::Stack* st : {&norms, &up, &swiglu}) {
    const MemoryUse m = d.memory(*st);
    EXPECT_DOUBLE_EQ(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes,
                     base.weights_bytes + base.gradients_bytes + base.optimizer_bytes);
  }
}

TEST(CheapRecompute, Bf16MomentsShrinkTheOptimizerByAThird) {
  const DeepSeek d;
  spec::Stack bf16 = d.base;
  bf16.moment_bytes = 2.0;
  // fp32 master weights and two moments: 4 + 8 bytes per parameter become 4 + 4.
  EXPECT_NEAR(d.memory(bf16).optimizer_bytes / d.memory(d.base).optimizer_bytes, 8.0 / 12.0, 1e-12);
  EXPECT_DOUBLE_EQ(d.memory(bf16).gradients_bytes, d.memory(d.base).gradients_bytes);
}

TEST(CheapRecompute, RecomputedWorkIsCharged) {
  const DeepSeek d;
  const spec::Stack all = spec::load_stack("deepseek-v3-2024");
  ASSERT_TRUE(all.recompute_norms && all.recompute_up_projections && all.moe_swiglu_recompute);
  EXPECT_DOUBLE_EQ(all.moment_bytes, 2.0);
  const IterationTime base = d.time(d.base), cheap = d.time(all);
  // Selective recompute with fused attention recomputes nothing; the stack's cheap tensors are
  // work again, a few percent of the forward pass.
  EXPECT_DOUBLE_EQ(base.breakdown.recompute_s, 0.0);
  EXPECT_GT(cheap.breakdown.recompute_s, 0.0);
  EXPECT_LT(cheap.breakdown.recompute_s, 0.1 * cheap.breakdown.compute_s);
  // Hardware FLOPs: the up-projections once more, 2 (1,536 x 24,576 + 512 x 128 x 256) per token
  // per layer; the norms and the SwiGLU are element-wise and count none.
  const double tokens = 64 * kTokens;
  EXPECT_DOUBLE_EQ(cheap.model_flops, base.model_flops);
  EXPECT_NEAR(cheap.hardware_flops - base.hardware_flops,
              tokens * kLayers * 2.0 * (1536.0 * 24576 + 512.0 * 128 * 256),
              1e-9 * cheap.hardware_flops);
}

TEST(CheapRecompute, FullAndPerOpRecomputeKeepTheirOwnPolicy) {
  const DeepSeek d;
  const spec::Stack all = spec::load_stack("deepseek-v3-2024");
  spec::Stack fp32_moments = all;
  fp32_moments.moment_bytes = 4.0;
  // Full recompute keeps each layer's input whatever the stack recomputes besides.
  EXPECT_DOUBLE_EQ(d.memory(fp32_moments, Recompute::full).activations_bytes,
                   d.memory(d.base, Recompute::full).activations_bytes);
  // Under selective recompute all three apply: with no recompute of its cheap tensors the
  // DeepSeek-V3 stage keeps over twice as much.
  EXPECT_GT(d.memory(d.base).activations_bytes, 2.0 * d.memory(all).activations_bytes);
}
