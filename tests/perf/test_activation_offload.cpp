// Activation offload (--offload-layers, Megatron-Core's cpu_offloading): memory falls by one
// layer's activations per offloaded layer but the one in transit, the copies cost only what the
// host link cannot hide behind a layer's forward and backward, and Megatron-Core's conditions
// (no pipelining, no recomputation, fewer layers than the model's, a known host link) name
// --offload-layers.
#include <gtest/gtest.h>

#include "railsim/core/error.hpp"
#include "railsim/core/units.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/spec/preset.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
// Llama 3 70B (80 layers), tp 8, pp 1, dp 8 on 64 GPUs of `gpu`, bf16, 128 sequences of 8,192.
struct OffloadRun {
  Model m = spec::load_model("Llama-3-70B");
  Training tr = spec::make_training(128, 8192, spec::Stack{});  // flash attention on
  spec::Cluster c;
  spec::NetworkDesign d = test::design(spec::DesignKind::rail_optimized);
  explicit OffloadRun(const spec::GpuSpec& g) : c(spec::make_cluster(g, 64, 8, 400, 450, 1)) {}
  Strategy strategy(std::int64_t offload) const {
    Strategy s{.tp = 8, .pp = 1, .dp = 8};
    s.recompute = Recompute::none;
    s.sp = s.dist_opt = s.dp_overlap = true;
    s.offload_layers = offload;
    return s;
  }
  IterationTime at(std::int64_t offload) const { return estimate(m, tr, strategy(offload), c, d); }
  // The best plans at tp 8 with these pins besides.
  std::vector<Plan> search(StrategyPins pins, int top) const {
    PlanOptions opt;
    opt.top = top;
    opt.pins = pins;
    opt.pins.tp = 8;
    return plan(make_context(m, tr, c, d), opt).plans;
  }
};

StrategyPins offload_pin(std::int64_t layers) {
  StrategyPins p;
  p.offload_layers = layers;
  return p;
}

std::string offload_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.field();
  }
  return "(no error)";
}
}  // namespace

TEST(ActivationOffload, MemoryFallsByALayerPerOffloadedLayerButTheOneInTransit) {
  const OffloadRun r(spec::load_gpu("H100-SXM"));
  const double m0 = r.at(0).memory.activations_bytes;
  const double m1 = r.at(1).memory.activations_bytes;
  const double m2 = r.at(2).memory.activations_bytes;
  const double m41 = r.at(41).memory.activations_bytes;
  const double layer = m1 - m2;  // one layer's activations (pp 1: one micro-batch in flight)
  ASSERT_GT(layer, 0.0);
  EXPECT_DOUBLE_EQ(m1, m0);  // one layer offloaded is the one in transit
  EXPECT_NEAR(m41, m0 - 40 * layer, 1e-9 * m0);
  // 70B at 8,192 tokens: 85 GiB without offload, which 40 offloaded layers bring under 80.
  EXPECT_GT(r.at(0).memory.total(), r.c.gpu.hbm_bytes);
  EXPECT_LT(r.at(41).memory.total(), r.c.gpu.hbm_bytes);
  // Weights, gradients and optimizer state stay where they were.
  EXPECT_DOUBLE_EQ(r.at(41).memory.weights_bytes, r.at(0).memory.weights_bytes);
  EXPECT_DOUBLE_EQ(r.at(41).memory.optimizer_bytes, r.at(0).memory.optimizer_bytes);
}

TEST(ActivationOffload, CopiesCostWhatTheHostLinkCannotHide) {
  // NVLink-C2C to Grace (450 GB/s a direction): a layer's copy hides behind its neighbour's work.
  spec::GpuSpec fast = spec::load_gpu("H100-SXM");
  fast.host_bw_Bps = 450e9;
  const OffloadRun f(fast);
  EXPECT_EQ(f.at(40).breakdown.offload_s, 0.0);
  EXPECT_NEAR(f.at(40).iteration_time_s, f.at(0).iteration_time_s, 1e-12);
  // A host link of 1 GB/s: every copy outlasts a layer; the exposed time is two copies per
  // offloaded layer and micro-batch, less at most the layers' own compute.
  spec::GpuSpec slow = fast;
  slow.host_bw_Bps = 1e9;
  const OffloadRun s(slow);
  const double layer = s.at(1).memory.activations_bytes - s.at(2).memory.activations_bytes;
  const double copy = layer / slow.host_bw_Bps;
  const double mb = 128.0 / 8;  // micro-batches
  const IterationTime t10 = s.at(10), t20 = s.at(20);
  const double compute_per_layer = t10.breakdown.compute_s / 80.0;  // all micro-batches
  EXPECT_LE(t10.breakdown.offload_s, 10 * mb * 2 * copy);
  EXPECT_GE(t10.breakdown.offload_s, 10 * mb * 2 * copy - 10 * compute_per_layer);
  EXPECT_NEAR(t20.breakdown.offload_s, 2 * t10.breakdown.offload_s, 1e-9 * t20.iteration_time_s);
  EXPECT_NEAR(t10.iteration_time_s - s.at(0).iteration_time_s, t10.breakdown.offload_s,
              1e-9 * t10.iteration_time_s);
  // H100's PCIe Gen5 (64 GB/s) lies between: some of it shows.
  const OffloadRun h(spec::load_gpu("H100-SXM"));
  EXPECT_GT(h.at(40).breakdown.offload_s, 0.0);
  EXPECT_LT(h.at(40).breakdown.offload_s, 0.05 * h.at(40).iteration_time_s);
}

TEST(ActivationOffload, MegatronCoresConditionsNameTheOption) {
  const OffloadRun r(spec::load_gpu("H100-SXM"));
  auto check = [&](const Training& tr, Strategy s, const spec::Cluster& c) {
    return offload_error([&] { validate(r.m, tr, s, c); });
  };
  EXPECT_EQ(check(r.tr, r.strategy(40), r.c), "(no error)");
  EXPECT_EQ(check(r.tr, r.strategy(79), r.c), "(no error)");
  EXPECT_EQ(check(r.tr, r.strategy(80), r.c), "--offload-layers");  // all 80 layers
  EXPECT_EQ(check(r.tr, r.strategy(-1), r.c), "--offload-layers");
  Strategy piped = r.strategy(8);
  piped.pp = 2;
  piped.dp = 4;
  EXPECT_EQ(check(r.tr, piped, r.c), "--offload-layers");
  Strategy recomputed = r.strategy(8);
  recomputed.recompute = Recompute::selective;
  EXPECT_EQ(check(r.tr, recomputed, r.c), "--offload-layers");
  Training titan = r.tr;
  titan.stack = spec::load_stack("torchtitan-2024");
  EXPECT_EQ(check(titan, r.strategy(8), r.c), "--offload-layers");
  spec::GpuSpec unknown = spec::load_gpu("H100-SXM");
  unknown.host_bw_Bps = 0;
  EXPECT_EQ(check(r.tr, r.strategy(8), spec::make_cluster(unknown, 64, 8, 400, 450, 1)),
            "--offload-layers");
}

TEST(ActivationOffload, APinRestrictsTheSearchToWhatCanRunIt) {
  const OffloadRun r(spec::load_gpu("H100-SXM"));
  const std::vector<Plan> pinned = r.search(offload_pin(40), 50);
  ASSERT_FALSE(pinned.empty());
  for (const Plan& p : pinned) {
    EXPECT_EQ(p.strategy.offload_layers, 40);
    EXPECT_EQ(p.strategy.pp, 1);
    EXPECT_EQ(p.strategy.recompute, Recompute::none);
  }
  // Pinned to 0, or not asked for, no plan offloads.
  for (const Plan& p : r.search(offload_pin(0), 50)) EXPECT_EQ(p.strategy.offload_layers, 0);
  for (const Plan& p : r.search({}, 50)) EXPECT_EQ(p.strategy.offload_layers, 0);
}

// Asked to (--offload-layers auto), a strategy that fits only by offloading offloads the fewest
// layers that make it fit, in HBM and in the host memory its GPU has.
TEST(ActivationOffload, TheSearchOffloadsTheFewestLayersThatFit) {
  const OffloadRun r(spec::load_gpu("H100-SXM"));
  StrategyPins pins;
  pins.pp = 1;
  pins.recompute = Recompute::none;
  pins.offload_auto = true;
  const std::vector<Plan> plans = r.search(pins, 20);
  ASSERT_FALSE(plans.empty());
  int offloading = 0;
  for (const Plan& p : plans) {
    EXPECT_TRUE(fits(p.time.memory, r.c.gpu));
    if (p.strategy.offload_layers == 0) continue;
    ++offloading;
    Strategy fewer = p.strategy;
    --fewer.offload_layers;
    EXPECT_GT(memory_use(r.m, r.tr, fewer).total(), r.c.gpu.hbm_bytes) << describe(p.strategy);
    if (fewer.offload_layers == 0) continue;
    EXPECT_LE(p.time.memory.host_bytes, r.c.gpu.host_memory_bytes);
  }
  EXPECT_GT(offloading, 0);  // 70B at pp 1 without recompute fits only so
  // A GPU without room on its host: the same search offloads nothing.
  spec::GpuSpec small = r.c.gpu;
  small.host_memory_bytes = 1.0 * units::kGiB;
  const OffloadRun tight(small);
  for (const Plan& p : tight.search(pins, 20)) EXPECT_EQ(p.strategy.offload_layers, 0);
  // Pinned beyond the host's room, a strategy is infeasible and says why.
  Strategy big = r.strategy(79);
  big.micro_batch = 16;
  const IterationTime it = estimate(r.m, r.tr, big, r.c, r.d);
  EXPECT_LE(it.memory.total(), r.c.gpu.hbm_bytes);
  EXPECT_GT(it.memory.host_bytes, r.c.gpu.host_memory_bytes);
  EXPECT_FALSE(it.feasible);
  EXPECT_NEAR(it.memory.host_bytes,
              79 * (r.at(1).memory.activations_bytes - r.at(2).memory.activations_bytes) * 16,
              1e-6 * it.memory.host_bytes);
}
