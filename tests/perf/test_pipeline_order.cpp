// The pipeline model's closed forms against Megatron-Core's own orders timed pass by pass
// (pipeline_order.hpp): the 1F1B and interleaved bubble, (p - 1)(f + b) for chunk passes of f
// and b, i.e. (p - 1)/v of a stage's time per micro-batch (Narayanan et al. SC'21, Sec. 2.2), and
// the chunks each stage holds at its peak, which memory_use counts. The time model's bubble term
// is (p - 1)/v of the average stage (docs/model.md section 6); these tests check that this is
// what the order does for every cost mix, depth and interleaving railsim accepts (m a multiple
// of p when interleaved), and that Megatron-Core's group size cannot lower the peak.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "pipeline_order.hpp"
#include "railsim/perf/memory.hpp"
#include "railsim/perf/pipeline_order.hpp"
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
// Per-layer forward f and backward b over railsim's layout of `layers` on p stages of v chunks
// (perf::chunk_layers), as the reference takes them: per layer block c p + r.
struct UnevenLayout {
  std::vector<double> f, b;
  double stage_max = 0;  // layers on the fullest stage
};
UnevenLayout uneven_layout(std::int64_t layers, std::int64_t p, std::int64_t v, double f = 1.0,
                           double b = 2.0, bool embedding_chunk = false) {
  UnevenLayout out;
  out.f.assign(static_cast<std::size_t>(p * v), 0.0);
  out.b = out.f;
  for (std::int64_t r = 0; r < p; ++r) {
    out.stage_max =
        std::max(out.stage_max, static_cast<double>(railsim::perf::stage_layers(layers, p, r)));
    for (std::int64_t c = 0; c < v; ++c) {
      const auto n =
          static_cast<double>(railsim::perf::chunk_layers(layers, p, v, r, c, embedding_chunk));
      out.f[static_cast<std::size_t>(c * p + r)] = n * f;
      out.b[static_cast<std::size_t>(c * p + r)] = n * b;
    }
  }
  return out;
}

// The closed form m n_max (f + b) + (p - 1)/v (L / p)(f + b).
double uneven_closed_form(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t m,
                          const UnevenLayout& lay, double unit = 3.0) {
  return static_cast<double>(m) * unit * lay.stage_max +
         static_cast<double>(p - 1) / static_cast<double>(v) * unit * static_cast<double>(layers) /
             static_cast<double>(p);
}
}  // namespace

// railsim's layout (the time and memory models' stage totals, detail::stage_shape): floor or ceil
// L / p, the spare layers on the middle stages, then the first, never the last; chunks of floor or
// ceil of a stage's / v, the larger first.
TEST(PipelineOrder, ChunkLayoutKeepsTheStageTotalsTheModelCounts) {
  using namespace railsim;
  for (const std::int64_t layers : {24, 61, 96, 126})
    for (const std::int64_t p : {2, 3, 4, 7, 16}) {
      std::int64_t total = 0, fullest = 0;
      for (std::int64_t r = 0; r < p; ++r) {
        const std::int64_t n = perf::stage_layers(layers, p, r);
        EXPECT_TRUE(n == layers / p || n == layers / p + 1) << layers << " " << p << " " << r;
        fullest = std::max(fullest, n);
        total += n;
        for (const std::int64_t v : {1, 2, 3, 5}) {
          std::int64_t in_stage = 0;
          for (std::int64_t c = 0; c < v; ++c) in_stage += perf::chunk_layers(layers, p, v, r, c);
          EXPECT_EQ(in_stage, n);
          EXPECT_GE(perf::chunk_layers(layers, p, v, r, 0),
                    perf::chunk_layers(layers, p, v, r, v - 1));
        }
      }
      EXPECT_EQ(total, layers);
      EXPECT_EQ(perf::stage_layers(layers, p, p - 1), layers / p);  // the last never has more
      EXPECT_EQ(fullest, (layers + p - 1) / p);
    }
  // Llama 3 405B on 16 stages: 7, 8 x 14, 7 (Dubey et al. 2024, Sec. 3.3.2).
  EXPECT_EQ(perf::stage_layers(126, 16, 0), 7);
  EXPECT_EQ(perf::stage_layers(126, 16, 1), 8);
  EXPECT_EQ(perf::stage_layers(126, 16, 14), 8);
  EXPECT_EQ(perf::stage_layers(126, 16, 15), 7);
}

// The library's timer (perf::megatron_span, event-ordered) is the reference order of this file,
// pass for pass: the same span on every layout, depth, interleaving and cost mix.
TEST(PipelineOrder, LibraryTimerIsTheReferenceOrder) {
  int cases = 0;
  for (const std::int64_t layers : {24, 40, 61, 96, 126})
    for (const std::int64_t p : {1, 2, 3, 4, 8, 16})
      for (std::int64_t v = 1; v <= 9 && v * p <= layers + 2; v += 2)
        for (const std::int64_t m : {p, 2 * p, 3 * p, p + 1})
          for (const ChunkCosts& c : kChunkCosts) {
            if (v > 1 && m % p != 0) continue;
            const UnevenLayout lay = uneven_layout(layers, p, v, c.f, c.b);
            const auto t = time_megatron_order(p, m, v, p, lay.f, lay.b);
            ASSERT_FALSE(t.deadlock);
            EXPECT_NEAR(railsim::perf::megatron_span(layers, p, v, m, c.f, c.b), t.span,
                        1e-9 * t.span)
                << "L " << layers << " p " << p << " v " << v << " m " << m;
            ++cases;
          }
  EXPECT_GT(cases, 1500);
}

// Where p v does not divide the layers, chunks of one size and the next make stages wait in every
// round of the steady state, which the closed form m t_max + (p - 1)/v t_avg does not count. On
// Llama 3 405B's 126 layers over 16 stages at v = 7 (chunks of 1 and 2 layers) and 32
// micro-batches, Megatron-Core's order takes 862 layer-forward units against the closed form's
// 818.6 (+5.3%), and the gap grows with the micro-batches; at v = 4 the closed form is within 1%.
// The time model adds perf::uneven_chunk_stall, so that it is the order's span.
TEST(PipelineOrder, UnevenChunksWaitWhatTheModelAdds) {
  using railsim::perf::uneven_chunk_stall;
  const UnevenLayout v7 = uneven_layout(126, 16, 7);
  const auto t32 = time_megatron_order(16, 32, 7, 16, v7.f, v7.b);
  ASSERT_FALSE(t32.deadlock);
  EXPECT_DOUBLE_EQ(t32.span, 862.0);
  EXPECT_NEAR(t32.span / uneven_closed_form(126, 16, 7, 32, v7), 862.0 / 818.625, 1e-12);
  EXPECT_DOUBLE_EQ(t32.idle, 94.0);
  // The model's stall, in units of a layer's f + b (3 here), closes the gap at 32 and 64: both
  // are up to 8 p micro-batches and 1/3 is on the share grid, so the order is timed as it is.
  for (const std::int64_t m : {32, 64}) {
    const auto t = time_megatron_order(16, m, 7, 16, v7.f, v7.b);
    EXPECT_NEAR(
        uneven_closed_form(126, 16, 7, m, v7) + 3.0 * uneven_chunk_stall(126, 16, 7, m, 1.0 / 3.0),
        t.span, 1e-9 * t.span)
        << m;
  }
  EXPECT_DOUBLE_EQ(time_megatron_order(16, 64, 7, 16, v7.f, v7.b).idle, 136.0);
  const UnevenLayout v4 = uneven_layout(126, 16, 4);
  const auto t4 = time_megatron_order(16, 32, 4, 16, v4.f, v4.b);
  EXPECT_NEAR(t4.span / uneven_closed_form(126, 16, 4, 32, v4), 1.0, 0.01);
  // Even chunks add nothing: the closed form is the order (OneFOneBAndInterleavedBubble...).
  EXPECT_EQ(uneven_chunk_stall(128, 16, 8, 32, 0.3), 0.0);
  EXPECT_EQ(uneven_chunk_stall(96, 8, 3, 64, 0.3), 0.0);
}

// perf::uneven_chunk_stall times the order only up to 8 p micro-batches (p for 1F1B) and extends
// it beyond by the growth of the last rounds; the forward share is interpolated on a grid of 1/48.
// Against the whole order up to 40 rounds, over layer counts, depths, interleavings and forward
// shares on and off the grid, it stays within 0.1% of the span (0.03% at worst here: off the
// grid, where the growth per round changes slope between two grid points).
TEST(PipelineOrder, StallShortcutsHoldAgainstTheWholeOrder) {
  double worst = 0;
  int cases = 0;
  for (const std::int64_t layers : {30, 61, 126, 161})
    for (const std::int64_t p : {2, 3, 4, 8, 16})
      for (std::int64_t v = 1; v <= 12 && v * p <= layers + 2; ++v) {
        if (layers % (p * v) == 0) continue;
        for (const double share : {0.25, 0.29, 0.32, 1.0 / 3.0}) {
          const UnevenLayout lay = uneven_layout(layers, p, v, share, 1.0 - share);
          for (const std::int64_t rounds : {1, 9, 17, 40}) {
            const std::int64_t m = rounds * p + (v == 1 ? 1 : 0);
            const auto t = time_megatron_order(p, m, v, p, lay.f, lay.b);
            const double model = uneven_closed_form(layers, p, v, m, lay, 1.0) +
                                 railsim::perf::uneven_chunk_stall(layers, p, v, m, share);
            worst = std::max(worst, std::abs(model - t.span) / t.span);
            ++cases;
          }
        }
      }
  EXPECT_GT(cases, 1000);
  EXPECT_LT(worst, 1e-3);
}

// The layer-micro-batches a stage holds at its peak (perf::peak_layers_in_flight, counted over
// the stage's own sequence) are what the order holds when timed: equal chunks the chunks in
// flight times layers / v; uneven chunks more, the larger ones running first (Llama 3 405B at
// v = 7: 157 on the second stage against 8/7 x 125 = 142.9).
TEST(PipelineOrder, PeakLayersInFlightAreWhatTheOrderHolds) {
  using railsim::perf::peak_layers_in_flight;
  int cases = 0;
  for (const std::int64_t layers : {24, 61, 96, 126})
    for (const std::int64_t p : {1, 2, 3, 4, 8, 16})
      for (std::int64_t v = 1; v <= 9 && v * p <= layers + 2; v += 2)
        for (const std::int64_t m : {p, 2 * p, 3 * p, p + 1}) {
          if (v > 1 && m % p != 0) continue;
          const UnevenLayout lay = uneven_layout(layers, p, v);
          const auto t = time_megatron_order(p, m, v, p, lay.f, lay.b);
          for (std::int64_t r = 0; r < p; ++r)
            EXPECT_DOUBLE_EQ(peak_layers_in_flight(layers, p, v, m, r),
                             t.peak_held_forward[static_cast<std::size_t>(r)])
                << "L " << layers << " p " << p << " v " << v << " m " << m << " stage " << r;
          ++cases;
        }
  EXPECT_GT(cases, 200);
  EXPECT_DOUBLE_EQ(peak_layers_in_flight(126, 16, 7, 32, 1), 157.0);
  EXPECT_DOUBLE_EQ(peak_layers_in_flight(96, 8, 4, 16, 0), 3.0 * (2 * 7 + 3 * 8 + 1));
}

// memory_use counts those layer-micro-batches: GPT-3 175B's 96 layers on 8 stages of 12, 16
// micro-batches. At v = 5 the chunks are 3, 3, 2, 2, 2 layers and the first stage holds 112.8
// layer-micro-batches by the average chunk (12/5 x 47 chunks) but 126 by the order (+11.7%).
TEST(PipelineOrder, MemoryHoldsTheOrdersLayersOnUnevenChunks) {
  using namespace railsim;
  const perf::Model m = spec::load_model("GPT-3-175B");
  const perf::Training tr = spec::make_training(16, 2048, spec::load_stack("megatron-core-2024"));
  auto activations = [&](std::int64_t v) {
    perf::Strategy s{
        .tp = 8, .pp = 8, .dp = 1, .recompute = perf::Recompute::selective, .sp = true};
    s.interleave = v;
    return perf::memory_use(m, tr, s).activations_bytes;
  };
  const double plain = activations(1);  // 12 layers x 8 micro-batches
  for (const std::int64_t v : {3, 5, 7}) {
    const UnevenLayout lay = uneven_layout(96, 8, v);
    const auto t = time_megatron_order(8, 16, v, 8, lay.f, lay.b);
    EXPECT_NEAR(activations(v) / plain, t.peak_held_forward[0] / (12.0 * 8.0), 1e-9) << "v " << v;
  }
  EXPECT_DOUBLE_EQ(railsim::perf::peak_layers_in_flight(96, 8, 5, 16, 0), 126.0);
}

// Where the split counts the embedding and the loss as a layer each (Megatron-Core's
// account_for_embedding/loss_in_pipeline_split; Llama 3's layout), the first stage's first chunk
// holds the embedding in a layer's room: its chunks run smaller first. At v = 8 over 126 layers
// that is 16 x 8 chunks of one layer but the first stage's first and the last stage's last. The
// timer, the stall and the peak of layers in flight take that layout as the reference does.
TEST(PipelineOrder, EmbeddingChunkComesFirstOnTheFirstStage) {
  using namespace railsim::perf;
  for (std::int64_t c = 0; c < 8; ++c) {
    EXPECT_EQ(chunk_layers(126, 16, 8, 0, c, true), c == 0 ? 0 : 1);
    EXPECT_EQ(chunk_layers(126, 16, 8, 0, c, false), c == 7 ? 0 : 1);
    EXPECT_EQ(chunk_layers(126, 16, 8, 15, c, true), c == 7 ? 0 : 1);  // the loss's chunk last
    EXPECT_EQ(chunk_layers(126, 16, 8, 5, c, true), 1);
  }
  EXPECT_EQ(chunk_layers(126, 16, 4, 0, 0, true), 1);  // the embedding and one layer
  for (const std::int64_t v : {2, 4, 7, 8}) {
    for (const std::int64_t m : {16, 32}) {
      const UnevenLayout lay = uneven_layout(126, 16, v, 1.0, 2.0, true);
      const auto t = time_megatron_order(16, m, v, 16, lay.f, lay.b);
      EXPECT_NEAR(megatron_span(126, 16, v, m, 1.0, 2.0, true), t.span, 1e-9 * t.span) << v;
      EXPECT_NEAR(uneven_closed_form(126, 16, v, m, lay) +
                      3.0 * uneven_chunk_stall(126, 16, v, m, 1.0 / 3.0, true),
                  t.span, 1e-9 * t.span)
          << v << " " << m;
      for (std::int64_t r = 0; r < 16; ++r)
        EXPECT_DOUBLE_EQ(peak_layers_in_flight(126, 16, v, m, r, true),
                         t.peak_held_forward[static_cast<std::size_t>(r)])
            << v << " " << m << " " << r;
    }
  }
  // The first stage's peak at v = 8, m = 32: 112 layer-micro-batches with the embedding's chunk
  // first, 143 with an empty chunk last (whose backward frees nothing while forwards go on).
  EXPECT_DOUBLE_EQ(peak_layers_in_flight(126, 16, 8, 32, 0, true), 112.0);
  EXPECT_DOUBLE_EQ(peak_layers_in_flight(126, 16, 8, 32, 0, false), 143.0);
}
