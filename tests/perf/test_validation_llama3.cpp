// Hold-out check against Meta's Llama 3 405B pre-training throughput (Dubey et al. 2024, Table 4;
// tests/data/llama3-405b-meta-2024.json): TP 8, PP 16, DP 64 / 128 on 8,192 / 16,384 H100,
// 8,192-token sequences, 2,048 sequences per batch, micro-batch 1, interleaved 1F1B over 126
// layers (uneven model chunks). The 8,192-GPU point is in the fit of the GEMM fraction
// (data/gpus/H100-SXM.json); the 16,384-GPU point is held out. Meta's fabric spreads load (16 flows
// per GPU pair and Enhanced-ECMP, Dubey et al. 2024 Sec. 3.3.1): adaptive routing. Knobs Meta does
// not publish are set to what its stack did or what Megatron does: selective recompute (flash
// attention keeps no s x s tensor, so nothing is recomputed), SP, sharded optimizer, DP overlap,
// flash attention.
//
// Meta's split counts the embedding and the loss as a layer each (one layer fewer on the first and
// the last stage, Dubey et al. 2024 Sec. 3.3.2), so 16 x 8 chunks hold the 126 layers. Meta does
// not publish the number of virtual stages v, so v is free within those limits (1..8), the fastest
// taken, as railsim validate does and as for Narayanan et al.'s runs; TP communication does not
// overlap the GEMMs (Meta's stack, meta-llama3-2024: the paper names no such overlap, and
// Transformer Engine's userbuffers are not in it). Where v does not divide a stage's layers the
// pipeline is timed by Megatron-Core's order (perf::uneven_chunk_stall). The 8,192-GPU point is in
// the fit of the GEMM fraction (+0.7%), the 16,384-GPU point is held out (+1.0%); each is asserted
// within the project's 10% and their mean within 5% (docs/validation.md).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../common/error_of.hpp"
#include "../common/scratch.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/perf/iteration.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
struct Point {
  double tflops_railsim = 0, tflops_meta = 0;
};

Point run(const Json& common, const Json& row, std::int64_t v) {
  const Model m = load_model(common["model"].get<std::string>());
  // Uneven interleaved stages, flash attention, SP, the distributed optimizer, DP overlap, Meta's
  // split, TP communication exposed: Meta's stack, meta-llama3-2024.
  const spec::Stack stack = load_stack("meta-llama3-2024");
  const Training tr = make_training(common["global_batch"].get<std::int64_t>(),
                                    common["seq_len"].get<std::int64_t>(), stack);
  EXPECT_TRUE(tr.flash_attention);
  const spec::Cluster c =
      test::cluster(common["gpu"].get<std::string>(), row["gpus"].get<std::int64_t>(),
                    common["gpus_per_node"].get<std::int64_t>(), common["nic_gbps"].get<double>());
  Strategy s = test::megatron_core_strategy(common["tp"].get<std::int64_t>(),
                                            common["pp"].get<std::int64_t>(),
                                            row["dp"].get<std::int64_t>(), v);
  s.micro_batch = common["micro_batch"].get<std::int64_t>();
  const IterationTime it =
      estimate(m, tr, s, c, test::design_spread(spec::DesignKind::rail_optimized));
  Point p;
  p.tflops_railsim = it.model_flops / it.iteration_time_s / static_cast<double>(c.gpus) / 1e12;
  p.tflops_meta = row["tflops_per_gpu"].get<double>();
  return p;
}

}  // namespace

TEST(ValidationLlama3, InterleavedThroughputWithinTolerance) {
  const Json d = test::read_test_data("llama3-405b-meta-2024.json");
  int n = 0;
  double sum = 0;
  std::vector<double> ratio;
  for (const Json& row : d["rows"]) {
    Point best;
    for (std::int64_t v = 1; v <= 8; ++v) {
      const Point p = run(d["common"], row, v);
      if (p.tflops_railsim > best.tflops_railsim) best = p;
    }
    const double e = best.tflops_railsim / best.tflops_meta - 1.0;
    EXPECT_LT(std::fabs(e), 0.10) << row["gpus"].get<std::int64_t>() << " GPUs: railsim "
                                  << best.tflops_railsim << " TFLOP/s vs Meta " << best.tflops_meta;
    ratio.push_back(best.tflops_railsim / best.tflops_meta);
    sum += std::fabs(e);
    ++n;
  }
  ASSERT_EQ(n, 2);
  EXPECT_LT(sum / n, 0.05);
  // The 8K -> 16K drop: Meta 400/430 = 0.930; railsim within 2 points of it.
  EXPECT_NEAR(ratio[1] / ratio[0] * 400.0 / 430.0, 400.0 / 430.0, 0.02);
}

TEST(ValidationLlama3, WithoutInterleavingTheBubbleDominates) {
  // 16 micro-batches through 16 stages: the plain 1F1B bubble (p-1)/m is ~48% of the iteration.
  const Json d = test::read_test_data("llama3-405b-meta-2024.json");
  for (const Json& row : d["rows"]) {
    if (row["gpus"].get<std::int64_t>() != 16384) continue;
    const Point plain = run(d["common"], row, 1), inter = run(d["common"], row, 2);
    EXPECT_LT(plain.tflops_railsim / plain.tflops_meta, 0.75);
    EXPECT_GT(inter.tflops_railsim, 1.2 * plain.tflops_railsim);
  }
}

TEST(ValidationLlama3, UnevenChunksAreValidAndInterleavingIsNotFree) {
  // 126 layers over 16 x v chunks: v = 2..7 all valid (chunks of floor/ceil 126 / (16 v) layers);
  // v = 8 needs 128 chunks, which Meta's split has (the embedding and the loss a layer each) and
  // megatron-core-2024's does not. More chunks shrink the bubble (p-1)/(v m), but every chunk
  // adds host steps and the fill crosses p (v - 1) more chunk boundaries (docs/model.md section
  // 6): over the splits whose chunks are all alike (v = 1, 2, 4, 8 of Meta's 128 units) each
  // doubling gains less. Where chunks differ (v = 5, 6, 7) Megatron-Core's order waits in every
  // round, and they come out slower than v = 4.
  const Json d = test::read_test_data("llama3-405b-meta-2024.json");
  const Json& row = d["rows"][1];
  std::vector<double> t(9, 0.0);
  for (std::int64_t v = 1; v <= 8; ++v)
    t[static_cast<std::size_t>(v)] = run(d["common"], row, v).tflops_railsim;
  EXPECT_GT(t[2] - t[1], t[4] - t[2]);
  EXPECT_GT(t[4] - t[2], t[8] - t[4]);
  EXPECT_GT(t[8] - t[4], 0.0);
  for (const std::size_t v : {5, 6, 7}) EXPECT_LT(t[v], t[4]) << v;
  const Model m = load_model("Llama-3-405B");
  const Training tr = make_training(2048, 8192, load_stack("megatron-core-2024"));
  const spec::Cluster c = test::cluster("H100-SXM", 16384, 8, 400);
  Strategy s{.tp = 8, .pp = 16, .dp = 128, .interleave = 8};
  EXPECT_FALSE(is_valid(m, tr, s, c));
  const std::string e = test::error_of([&] { validate(m, tr, s, c); });  // v = 8 is refused
  EXPECT_NE(e.find("--interleave"), std::string::npos) << e;
  EXPECT_NE(e.find("128"), std::string::npos) << e;
  s.interleave = 7;
  EXPECT_TRUE(is_valid(m, tr, s, c));
}

// At v = 7 the 126 layers make chunks of 1 and 2 layers and Megatron-Core's order waits in every
// round (perf::uneven_chunk_stall): 12.90 s against 12.13 s for Meta's 16 x 8 one-layer chunks on
// 8,192 GPUs. The closed form alone put v = 7 within 1% of v = 8 (12.27 s) and chose it.
TEST(ValidationLlama3, UnevenChunksCostWhatTheOrderWaits) {
  const Json d = test::read_test_data("llama3-405b-meta-2024.json");
  const Json& row = d["rows"][0];
  ASSERT_EQ(row["gpus"].get<std::int64_t>(), 8192);
  const Point v7 = run(d["common"], row, 7), v8 = run(d["common"], row, 8);
  EXPECT_NEAR(v8.tflops_railsim / v7.tflops_railsim, 12.90 / 12.13, 0.005);
}
