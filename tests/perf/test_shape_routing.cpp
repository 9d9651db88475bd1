// The shape-aware GEMM model, the pipeline schedule's costs and the routing modes of the analytic
// model (docs/model.md sections 3, 5 and 6).
#include <gtest/gtest.h>

#include <cmath>

#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/search.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {

GemmCaps caps(const std::string& gpu, Dtype d = Dtype::bf16) {
  return make_gemm_caps(spec::load_gpu(gpu), d);
}

// Achieved fraction of the precision's peak.
double efficiency(const GemmCaps& g, const spec::GpuSpec& gpu, Dtype d, double m, double n,
                  double k) {
  const double peak = d == Dtype::fp8 ? gpu.peak_fp8_flops : gpu.peak_bf16_flops;
  return 2 * m * n * k / gemm_time(g, m, n, k) / peak;
}

}  // namespace

TEST(GemmModel, OneTileMoreThanAWaveCostsASecondWave) {
  const GemmCaps g = caps("H100-SXM");
  // 132 SMs of 128 x 256 tiles: 132 tiles fill one wave; one more tile needs a second wave.
  const double k = 8192;
  const double one_wave = gemm_time(g, 128 * 132, 256, k);
  const double two_waves = gemm_time(g, 128 * 133, 256, k);
  EXPECT_NEAR(two_waves / one_wave, 2.0, 1e-9);
  // A partial tile costs a whole one: n = 257 columns run as two tile columns (264 tiles, two
  // waves).
  EXPECT_NEAR(gemm_time(g, 128 * 132, 257, k) / gemm_time(g, 128 * 132, 256, k), 2.0, 1e-9);
}

TEST(GemmModel, SmallDimensionsAreLessEfficientThanLargeOnes) {
  const spec::GpuSpec gpu = spec::load_gpu("H100-SXM");
  const GemmCaps g = make_gemm_caps(gpu, Dtype::bf16);
  const double big = efficiency(g, gpu, Dtype::bf16, 8192, 8192, 8192);
  // The large GEMM reaches nearly gemm_max.
  EXPECT_GT(big, 0.95 * gpu.eff.gemm_max);
  EXPECT_LE(big, gpu.eff.gemm_max + 1e-12);
  // A narrow output (hidden 2,048's QKV split 8 ways: n = 768) leaves SMs idle in its last wave:
  // 64 x 3 = 192 tiles on 132 SMs take two waves, 73% full; hidden 8,192's (n = 3,072) fills.
  const double narrow = efficiency(g, gpu, Dtype::bf16, 8192, 768, 2048);
  const double wide = efficiency(g, gpu, Dtype::bf16, 8192, 3072, 8192);
  EXPECT_NEAR(narrow / gpu.eff.gemm_max, 192.0 / 264.0, 1e-9);
  EXPECT_LT(narrow, 0.8 * wide);
  // A GEMM with a short reduction (k = 128) is bound by its operands' HBM traffic (roofline).
  const double m = 16384, n = 128, kk = 128;
  const double hbm_bound = 2.0 * (m * kk + kk * n + m * n) / (gpu.hbm_bw_Bps * gpu.eff.hbm);
  EXPECT_NEAR(gemm_time(g, m, n, kk), hbm_bound, 1e-12 * hbm_bound);
}

TEST(GemmModel, Fp8RunsAtTheFp8PeakAndItsOwnFraction) {
  const spec::GpuSpec gpu = spec::load_gpu("H100-SXM");
  ASSERT_GT(gpu.eff.gemm_max_fp8, 0);
  const GemmCaps b = make_gemm_caps(gpu, Dtype::bf16), f = make_gemm_caps(gpu, Dtype::fp8);
  EXPECT_DOUBLE_EQ(b.peak_flops, gpu.peak_bf16_flops * gpu.eff.gemm_max);
  EXPECT_DOUBLE_EQ(f.peak_flops, gpu.peak_fp8_flops * gpu.eff.gemm_max_fp8);
  EXPECT_EQ(f.in_bytes, 1.0);
  const double speedup = gemm_time(b, 8192, 8192, 8192) / gemm_time(f, 8192, 8192, 8192);
  EXPECT_NEAR(speedup,
              gpu.peak_fp8_flops * gpu.eff.gemm_max_fp8 / (gpu.peak_bf16_flops * gpu.eff.gemm_max),
              1e-9);
  // Degenerate shapes take no time rather than NaN.
  EXPECT_EQ(gemm_time(b, 0, 8192, 8192), 0.0);
}

TEST(GemmModel, SmallHiddenSizesComputeLessEfficientlyAtTheSameTp) {
  // Same cluster and strategy (TP 8, one stage): the compute time per model FLOP is larger for a
  // GPT of hidden 2,048 than for one of hidden 8,192: its GEMMs are narrower (the shape model,
  // not a per-case constant).
  const spec::Cluster c = test::cluster("H100-SXM", 8, 8);
  const auto d = test::design(spec::DesignKind::rail_optimized);
  const Training tr{8, 4096, Dtype::bf16};
  auto seconds_per_flop = [&](std::int64_t h) {
    Model m = load_model("GPT-3-175B");
    m.hidden = h;
    m.heads = h / 128;
    m.kv_heads = m.heads;
    m.ffn_hidden = 4 * h;
    m.layers = 8;
    const Strategy s{.tp = 8, .micro_batch = 1, .recompute = Recompute::none, .sp = true};
    const IterationTime it = estimate(m, tr, s, c, d);
    return it.breakdown.compute_s / it.model_flops;
  };
  EXPECT_GT(seconds_per_flop(2048), 1.2 * seconds_per_flop(8192));
}

TEST(GpuSpec, NewEfficiencyFieldsAreRangeChecked) {
  auto field_of = [](const std::string& eff) {
    const Json j = parse_json(
        R"({"name": "x", "peak_bf16_tflops": 100, "hbm_gib": 80, "hbm_gbytes_per_s": 2000,
            "hb_gbytes_per_s_per_direction": 300, "default_hb_domain": 8, "nic_gbps": 400,
            "efficiency": )" +
            eff + "}",
        "gpu");
    try {
      spec::gpu_from_json(j, "gpu");
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  EXPECT_EQ(field_of(R"({"sm_count": 0})"), "gpu.efficiency.sm_count");
  EXPECT_EQ(field_of(R"({"tile_n": -1})"), "gpu.efficiency.tile_n");
  EXPECT_EQ(field_of(R"({"gemm_max_fp8": 1.5})"), "gpu.efficiency.gemm_max_fp8");
  EXPECT_EQ(field_of(R"({"flash_attention": 0.001})"), "gpu.efficiency.flash_attention");
  EXPECT_EQ(field_of(R"({"gemm_k_overhead": -5})"), "gpu.efficiency.gemm_k_overhead");
  EXPECT_EQ(field_of(R"({"kernel_gap_s": "fast"})"), "gpu.efficiency.kernel_gap_s");
  EXPECT_EQ(field_of(R"({"gemm_half_flops": 2e10})"), "gpu.efficiency.gemm_half_flops");
  EXPECT_EQ(field_of(R"({"sm_count": 132, "gemm_max_fp8": 0.6})"), "none");
}

// ---- pipeline schedule
// ---------------------------------------------------------------------------

TEST(PipelineCosts, InterleavingIsChargedAndShownInTheBreakdown) {
  const Model m = load_model("Llama-3-405B");
  const Training tr = make_training(2048, 8192, load_stack("megatron-core-2024"));
  const spec::Cluster c = test::cluster("H100-SXM", 16384, 8);
  const auto d = test::design(spec::DesignKind::rail_optimized);
  const EstimateContext ctx = make_context(m, tr, c, d);
  Strategy s = test::megatron_core_strategy(8, 16, 128, 1);
  double last_overhead = -1;
  for (std::int64_t v : {1, 2, 4, 7}) {
    s.interleave = v;
    validate(m, tr, s, c);
    const IterationTime it = estimate(ctx, s);
    const Breakdown& b = it.breakdown;
    // The host steps alone: 2 m v chunk steps of 30 us on each stage; the fill crosses more
    // chunk boundaries as v grows.
    EXPECT_GE(b.pipeline_overhead_s, 2.0 * 16 * static_cast<double>(v) * 30e-6) << v;
    EXPECT_GT(b.pipeline_overhead_s, last_overhead) << v;
    last_overhead = b.pipeline_overhead_s;
    EXPECT_NEAR(b.total(), it.iteration_time_s, 1e-9 * it.iteration_time_s);
  }
  // Without a pipeline there is no schedule to pay for.
  const Model small = load_model("Llama-3-8B");
  s.pp = 1;
  s.dp = 2048;
  s.interleave = 1;
  validate(small, tr, s, c);
  EXPECT_EQ(estimate(make_context(small, tr, c, d), s).breakdown.pipeline_overhead_s, 0.0);
}

// ---- routing
// -------------------------------------------------------------------------------------

TEST(Routing, ExpectedMaxLoadOfBallsIntoBins) {
  EXPECT_DOUBLE_EQ(expected_max_load(1, 32), 1.0);  // one flow, no collision
  EXPECT_DOUBLE_EQ(expected_max_load(7, 1), 7.0);   // one path carries them all
  // Two flows on u paths collide with probability 1/u: E[max] = 1 + 1/u (exact table).
  EXPECT_NEAR(expected_max_load(2, 32), 1.0 + 1.0 / 32, 1e-9);
  EXPECT_NEAR(expected_max_load(2, 4), 1.25, 1e-9);
  // Three flows on two paths: max is 2 unless all three meet, P = 2/8: E = 2.25.
  EXPECT_NEAR(expected_max_load(3, 2), 2.25, 1e-9);
  EXPECT_NEAR(max_load_cdf(3, 2, 2), 0.75, 1e-12);
  EXPECT_EQ(max_load_cdf(3, 2, 1), 0.0);  // three balls in two bins: some bin holds two
  // u flows on u paths: the classic ln u / ln ln u growth, well above 1 and below u.
  const double m32 = expected_max_load(32, 32);
  EXPECT_GT(m32, 3.0);
  EXPECT_LT(m32, 4.5);
  // Heavy load: the maximum approaches the mean (lambda + O(sqrt(lambda ln u))); the Poisson
  // form beyond 64 balls continues the exact table within 2%.
  const double heavy = expected_max_load(100000, 32);
  EXPECT_GT(heavy / (100000.0 / 32), 1.0);
  EXPECT_LT(heavy / (100000.0 / 32), 1.06);
  EXPECT_NEAR(expected_max_load(65, 32) / expected_max_load(64, 32), 1.0, 0.02);
  EXPECT_NEAR(expected_max_load(65, 64) / expected_max_load(64, 64), 1.0, 0.02);
  // More flows never lower the expected maximum.
  double last = 0;
  for (std::int64_t f = 1; f < 300; ++f) {
    const double e = expected_max_load(f, 16);
    EXPECT_GE(e + 1e-9, last) << f;
    last = e;
  }
}

TEST(Routing, EcmpSlowsCrossLeafCollectivesAdaptiveAndSprayDoNot) {
  // MoE all-to-all over 64 GPUs on rail-optimized H100 with leaves of 32 uplinks: many flows leave
  // each leaf, and hashing them unevenly slows the busiest uplink.
  const spec::Cluster c = test::cluster("H100-SXM", 4096, 8);
  spec::NetworkDesign d = test::design(spec::DesignKind::rail_optimized);
  auto net = [&](spec::Routing r) {
    d.routing = r;
    return make_network_model(c, d);
  };
  const NetworkModel ecmp = net(spec::Routing::ecmp), adaptive = net(spec::Routing::adaptive),
                     spray = net(spec::Routing::spray);
  ASSERT_GT(ecmp.view.leaf_uplinks, 1);
  CommOp a2a;
  a2a.op = CollectiveOp::all_to_all;
  a2a.algorithm = Algorithm::direct;
  a2a.axis = Axis::ep;
  a2a.bytes = 1e9;
  // 64 members, 8 per domain on 8 domains (tp 1, ep 64), rail-aligned.
  const Placement pl(c, Degrees{1, 1, 4096, 64});
  ASSERT_EQ(pl.shape(Axis::ep).domains, 8);
  EXPECT_GT(collective_time(a2a, pl, ecmp).time_s, collective_time(a2a, pl, adaptive).time_s);
  EXPECT_DOUBLE_EQ(collective_time(a2a, pl, adaptive).time_s,
                   collective_time(a2a, pl, spray).time_s);
  // A ring along a rail inside one leaf never climbs: the same time under every routing.
  CommOp ar;
  ar.op = CollectiveOp::all_reduce;
  ar.axis = Axis::dp;
  ar.bytes = 1e9;
  const Placement rail(c, Degrees{8, 64, 8, 1});
  EXPECT_DOUBLE_EQ(collective_time(ar, rail, ecmp).time_s,
                   collective_time(ar, rail, adaptive).time_s);
}

TEST(Routing, ParsedWithItsOptionNamed) {
  EXPECT_EQ(spec::parse_routing("spray"), spec::Routing::spray);
  EXPECT_EQ(spec::to_string(spec::Routing::adaptive), "adaptive");
  try {
    spec::parse_routing("random", "--routing");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--routing");
    EXPECT_NE(std::string(e.what()).find("ecmp, adaptive, spray"), std::string::npos) << e.what();
  }
  spec::NetworkOptions o;
  o.seed = -1;
  try {
    spec::make_network_design(o);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--seed");
  }
  o.seed = 12345;
  o.routing = "adaptive";
  const spec::NetworkDesign d = spec::make_network_design(o);
  EXPECT_EQ(d.routing, spec::Routing::adaptive);
  EXPECT_EQ(d.ecmp_seed, 12345u);
}
