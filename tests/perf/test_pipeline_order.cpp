// The pipeline model's closed forms against Megatron-Core's own orders timed pass by pass
// (pipeline_order.hpp): the 1F1B and interleaved bubble, (p - 1)(f + b) for chunk passes of f
// and b, i.e. (p - 1)/v of a stage's time per micro-batch (Narayanan et al. SC'21, Sec. 2.2), and
// the chunks each stage holds at its peak, which memory_use counts. The time model's bubble term
// is (p - 1)/v of the average stage (docs/model.md section 6); these tests check that this is
// what the order does for every cost mix, depth and interleaving railsim accepts (m a multiple
// of p when interleaved), and that Megatron-Core's group size cannot lower the peak.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "pipeline_order.hpp"
#include "railsim/perf/memory.hpp"
#include "railsim/spec/stack.hpp"

using railsim::test::time_megatron_order;

namespace {
struct ChunkCosts {
  double f, b;
};
// Backward twice the forward (GEMM-bound), three times (full recompute), and uneven mixes.
constexpr std::array<ChunkCosts, 4> kChunkCosts{{{1.0, 2.0}, {1.0, 3.0}, {1.0, 1.5}, {0.7, 2.2}}};

// Chunks stage i holds at its peak as memory_use counts them: 1F1B p - i micro-batches, interleaved
// Megatron's warm-up 2 (p - 1 - i) + (v - 1) p chunks and the one in flight, never more than the
// m v there are (docs/model.md section 7).
std::int64_t model_in_flight(std::int64_t p, std::int64_t m, std::int64_t v, std::int64_t i) {
  if (v == 1) return std::min(p - i, m);
  return std::min(2 * (p - 1 - i) + (v - 1) * p + 1, m * v);
}
}  // namespace

TEST(PipelineOrder, OneFOneBAndInterleavedBubbleIsTheClosedForm) {
  int cases = 0;
  for (const std::int64_t p : {2, 4, 8, 16})
    for (const std::int64_t v : {1, 2, 3, 4, 7})
      for (const std::int64_t per : {1, 2, 4})
        for (const ChunkCosts& c : kChunkCosts) {
          const std::int64_t m = per * p;
          const auto t = time_megatron_order(p, m, v, p, c.f, c.b);
          ASSERT_FALSE(t.deadlock) << "p " << p << " m " << m << " v " << v;
          EXPECT_NEAR(t.idle, static_cast<double>(p - 1) * (c.f + c.b), 1e-9 * t.span)
              << "p " << p << " m " << m << " v " << v << " f " << c.f << " b " << c.b;
          for (std::int64_t i = 0; i < p; ++i)
            EXPECT_EQ(t.peak_in_flight[static_cast<std::size_t>(i)], model_in_flight(p, m, v, i))
                << "stage " << i << " of p " << p << " m " << m << " v " << v;
          ++cases;
        }
  EXPECT_EQ(cases, 240);
}

// memory_use holds the order's peak: GPT-3 175B's 96 layers on 8 stages, chunks of 12 / v layers,
// 8 and 16 micro-batches. The first stage's activations are its per-chunk bytes times the chunks
// it holds, so against plain 1F1B (p chunks of the whole stage) they scale by in-flight / (v p).
TEST(PipelineOrder, MemoryHoldsTheChunksTheOrderKeepsInFlight) {
  using namespace railsim;
  const perf::Model m = spec::load_model("GPT-3-175B");
  for (const std::int64_t mb : {8, 16}) {
    const perf::Training tr = spec::make_training(mb, 2048, spec::load_stack("megatron-core-2024"));
    auto activations = [&](std::int64_t v) {
      perf::Strategy s{
          .tp = 8, .pp = 8, .dp = 1, .recompute = perf::Recompute::selective, .sp = true};
      s.interleave = v;
      return perf::memory_use(m, tr, s).activations_bytes;
    };
    const double plain = activations(1);
    for (const std::int64_t v : {2, 3, 4, 6, 12}) {
      const auto t = time_megatron_order(8, mb, v, 8, 1.0, 2.0);
      const double chunks = static_cast<double>(t.peak_in_flight[0]);
      EXPECT_NEAR(activations(v) / plain, chunks / (static_cast<double>(v) * 8.0), 1e-9)
          << "v " << v << " m " << mb;
    }
  }
}

// Megatron-Core's microbatch_group_size_per_vp_stage (the micro-batches each model chunk takes in
// turn) must be at least p. Below p its order waits on itself: stage 0's next chunk needs a
// forward that stage p - 1 runs only after a backward that waits on stage 0. Above p it adds
// chunks in flight and idle time. So the group size is no way to hold fewer chunks than the
// warm-up railsim counts (Llama 3 405B: docs/validation.md).
TEST(PipelineOrder, GroupsOtherThanPNeitherSaveMemoryNorTime) {
  const std::int64_t p = 16, m = 32, v = 8;
  const auto base = time_megatron_order(p, m, v, p, 1.0, 2.0);
  ASSERT_FALSE(base.deadlock);
  EXPECT_EQ(base.peak_in_flight[1], 141);  // Llama 3 405B's second stage at v = 8
  for (std::int64_t g = 1; g < p; ++g)
    EXPECT_TRUE(time_megatron_order(p, m, v, g, 1.0, 2.0).deadlock) << "group " << g;
  double last_idle = base.idle;
  for (std::int64_t g = p + 1; g < m; ++g) {
    const auto t = time_megatron_order(p, m, v, g, 1.0, 2.0);
    ASSERT_FALSE(t.deadlock) << "group " << g;
    EXPECT_GT(t.idle, last_idle) << "group " << g;
    EXPECT_EQ(t.peak_in_flight[1], base.peak_in_flight[1] + (v - 1) * (g - p)) << "group " << g;
    last_idle = t.idle;
  }
}

namespace {
// Per-layer forward 1 and backward 2 over a railsim layout of `layers` on p stages of v chunks:
// stage totals as perf::detail::stage_shape lays them (the spare layers to the middle stages,
// then the first), each stage's chunks of floor or ceil(n / v) layers, the larger ones first.
struct UnevenLayout {
  std::vector<double> f, b;
  double stage_max = 0;  // layers on the fullest stage
};
UnevenLayout uneven_layout(std::int64_t layers, std::int64_t p, std::int64_t v) {
  std::vector<std::int64_t> n(static_cast<std::size_t>(p), layers / p);
  for (std::int64_t i = 0; i < layers % p; ++i)
    ++n[static_cast<std::size_t>(i < p - 2 ? i + 1 : 0)];
  UnevenLayout out;
  out.f.assign(static_cast<std::size_t>(p * v), 0.0);
  out.b = out.f;
  for (std::int64_t r = 0; r < p; ++r) {
    const std::int64_t nr = n[static_cast<std::size_t>(r)];
    out.stage_max = std::max(out.stage_max, static_cast<double>(nr));
    for (std::int64_t c = 0; c < v; ++c) {
      const double chunk = static_cast<double>(nr / v + (c < nr % v ? 1 : 0));
      out.f[static_cast<std::size_t>(c * p + r)] = chunk;
      out.b[static_cast<std::size_t>(c * p + r)] = 2.0 * chunk;
    }
  }
  return out;
}
}  // namespace

// Where p v does not divide the layers, railsim gives stages chunks of one size or the next and
// keeps the closed form m t_max + (p - 1)/v t_avg (docs/model.md section 6). Megatron-Core's
// order on such chunks waits longer: on Llama 3 405B's 126 layers over 16 stages at v = 7 (chunks
// of 1 and 2 layers) and 32 micro-batches, 862 layer-forward units against the closed form's
// 818.6 (+5.3%), the bubble 94 against 50.6, and the gap grows with the micro-batches (a stall
// in every round of the steady state). At v = 4 (chunks of 2, and of 1 and 2 on the short
// stages) the closed form is within 1%. A known disagreement of the time model with the order it
// models, stated in docs/model.md and docs/not-modelled.md.
TEST(PipelineOrder, UnevenChunksWaitLongerThanTheClosedFormCounts) {
  auto closed_form = [](std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t m,
                        const UnevenLayout& lay) {
    const double t_max = 3.0 * lay.stage_max;
    const double t_avg = 3.0 * static_cast<double>(layers) / static_cast<double>(p);
    return static_cast<double>(m) * t_max +
           static_cast<double>(p - 1) / static_cast<double>(v) * t_avg;
  };
  const UnevenLayout v7 = uneven_layout(126, 16, 7);
  const auto t32 = time_megatron_order(16, 32, 7, 16, v7.f, v7.b);
  ASSERT_FALSE(t32.deadlock);
  EXPECT_DOUBLE_EQ(t32.span, 862.0);
  // The closed form's 818.6, 5.3% short of the order.
  EXPECT_NEAR(t32.span / closed_form(126, 16, 7, 32, v7), 862.0 / 818.625, 1e-12);
  EXPECT_DOUBLE_EQ(t32.idle, 94.0);
  const auto t64 = time_megatron_order(16, 64, 7, 16, v7.f, v7.b);
  // The closed form's bubble does not depend on m; the order's grows by 21 units per 16
  // micro-batches, a stall in each round of the steady state.
  EXPECT_DOUBLE_EQ(t64.idle, 136.0);
  const UnevenLayout v4 = uneven_layout(126, 16, 4);
  const auto t4 = time_megatron_order(16, 32, 4, 16, v4.f, v4.b);
  EXPECT_NEAR(t4.span / closed_form(126, 16, 4, 32, v4), 1.0, 0.01);
}
