// Speed of the iteration-time model and of the exhaustive strategy search:
// one GPT-1T strategy in <= 2 us on one core; every strategy of GPT-1T on 32,768 GPUs in < 5 s
// on 2 cores.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <string>

#include "../tests/perf/test_perf_common.hpp"
#include "railsim/perf/pipeline_order.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/zero_bubble.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/switch.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
struct Setup {
  Model model;
  Training tr{4096, 2048, Dtype::bf16};
  spec::Cluster cluster;
  spec::NetworkDesign design;
  EstimateContext ctx;
  explicit Setup(const char* gpu = "H100-SXM", std::int64_t k = 8, const char* m = "GPT-1T")
      : model(load_model(m)) {
    const spec::GpuSpec g = spec::load_gpu(gpu);
    cluster = spec::make_cluster(g, 32768, k, 400, g.hb_bw_Bps / 1e9, 1);
    design = spec::make_network_design(spec::DesignKind::rail_only, spec::load_switch("QM9700"));
    ctx = make_context(model, tr, cluster, design);
  }
};

void BM_EstimateOneStrategyGpt1T(benchmark::State& state) {
  Setup su;
  const Strategy s = test::megatron_core_strategy(8, 32, 128, 4);
  validate(su.model, su.tr, s, su.cluster);
  for (auto _ : state) {
    // Placement, CommSchedule and timing: everything the search does per strategy.
    IterationTime it = estimate(su.ctx, s);
    benchmark::DoNotOptimize(it);
  }
}
BENCHMARK(BM_EstimateOneStrategyGpt1T);

// The ZB-V bubble of one strategy (perf::zbv_idle, its order timed pass by pass) at pp =
// state.range(0) with 4 pp micro-batches: what a ZB-V strategy adds to its estimate.
void BM_ZeroBubbleVIdle(benchmark::State& state) {
  const std::int64_t p = state.range(0);
  double f = 1.0;
  for (auto _ : state) {
    double idle = zbv_idle(p, 4 * p, f, 1.3, 0.9);
    benchmark::DoNotOptimize(idle);
    f = f == 1.0 ? 1.0 + 1e-9 : 1.0;  // no value the optimizer could carry between iterations
  }
}
BENCHMARK(BM_ZeroBubbleVIdle)->Arg(4)->Arg(8)->Arg(16)->Arg(64);

// One timing of Megatron-Core's interleaved order over uneven chunks (perf::megatron_span) at
// 8 p micro-batches, the most perf::uneven_chunk_stall times before it extrapolates: Llama 3
// 405B's 126 layers on p = state.range(0) stages of v = state.range(1) chunks. What the first
// strategy of a (p, v, m, forward share) pays in a cold search; later ones hit the cache.
void BM_MegatronOrderSpan(benchmark::State& state) {
  const std::int64_t p = state.range(0), v = state.range(1);
  double f = 1.0;
  for (auto _ : state) {
    double span = megatron_span(126, p, v, 8 * p, f, 2.0);
    benchmark::DoNotOptimize(span);
    f = f == 1.0 ? 1.0 + 1e-9 : 1.0;
  }
  state.counters["passes_per_s"] = benchmark::Counter(
      static_cast<double>(2 * 8 * p * v * p), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MegatronOrderSpan)->Args({16, 7})->Args({8, 15})->Args({32, 3})->Args({4, 31});

// The top 10 plans of su's context on state.range(0) threads (the knobs `pins` fixes pinned),
// the strategies searched and their rate.
void plan_warm(benchmark::State& state, const Setup& su, const StrategyPins& pins = {}) {
  PlanOptions po;
  po.top = 10;
  po.pins = pins;
  po.threads = static_cast<int>(state.range(0));
  std::int64_t n = 0;
  for (auto _ : state) {
    PlanResult r = plan(su.ctx, po);
    n = r.evaluated;
    benchmark::DoNotOptimize(r);
  }
  state.counters["strategies"] = static_cast<double>(n);
  state.counters["strategies_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_PlanGpt1T32kGpus(benchmark::State& state) {
  plan_warm(state, Setup(state.range(1) == 8 ? "H100-SXM" : "GH200", state.range(1)));
}
BENCHMARK(BM_PlanGpt1T32kGpus)
    ->Args({1, 8})
    ->Args({2, 8})
    ->Args({1, 256})
    ->Args({2, 256})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// A larger space: the trillion-parameter MoE adds expert parallelism (every ep dividing dp and
// the 64 experts) to every other knob.
void BM_PlanMoE12T32kGpus(benchmark::State& state) {
  plan_warm(state, Setup("H100-SXM", 8, "MoE-1.2T"));
}
BENCHMARK(BM_PlanMoE12T32kGpus)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same MoE search under nemo-perf-2025, whose expert folding (--etp 1) adds a folded layout of
// every MoE shape with tp > 1 (the EP group then carved from tp x dp): state.range(0) threads,
// state.range(1) = 0 with the stack's folding turned off, 1 as shipped.
void BM_PlanMoE12T32kGpusFolding(benchmark::State& state) {
  Setup su("H100-SXM", 8, "MoE-1.2T");
  su.tr.stack = spec::load_stack("nemo-perf-2025");
  su.tr.stack.knobs.expert_folding = state.range(1) == 1;
  su.ctx = make_context(su.model, su.tr, su.cluster, su.design);
  state.SetLabel(state.range(1) == 1 ? "folding" : "no folding");
  plan_warm(state, su);
}
BENCHMARK(BM_PlanMoE12T32kGpusFolding)
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same search with tp 8 and an expert tensor-parallel size pinned (state.range(1): 1, 2 or
// 4; a size between 1 and tp is visited only where --etp pins it): the unfolded layout and the
// one folded to that size, every pp, ep, micro-batch, interleave and knob.
void BM_PlanMoE12T32kGpusEtp(benchmark::State& state) {
  Setup su("H100-SXM", 8, "MoE-1.2T");
  su.tr.stack = spec::load_stack("nemo-perf-2025");
  su.ctx = make_context(su.model, su.tr, su.cluster, su.design);
  StrategyPins pins;
  pins.tp = 8;
  pins.etp = state.range(1);
  plan_warm(state, su, pins);
}
BENCHMARK(BM_PlanMoE12T32kGpusEtp)
    ->Args({1, 1})
    ->Args({1, 2})
    ->Args({1, 4})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The search as a command runs it once: a fresh context each time (the network model and its
// link-load census built, every op signature's census counted on first use), on one thread;
// the strategies searched, and `label`.
void plan_cold(benchmark::State& state, const Setup& su, const std::string& label) {
  PlanOptions po;
  po.top = 10;
  po.threads = 1;
  std::int64_t n = 0;
  for (auto _ : state) {
    const EstimateContext ctx = make_context(su.model, su.tr, su.cluster, su.design);
    PlanResult r = plan(ctx, po);
    n = r.evaluated;
    benchmark::DoNotOptimize(r);
  }
  state.SetLabel(label);
  state.counters["strategies"] = static_cast<double>(n);
}

// GPT-1T and MoE-1.2T on 32,768 H100 in domains of 8.
void BM_PlanCold32kGpus(benchmark::State& state) {
  const char* m = state.range(0) == 1 ? "MoE-1.2T" : "GPT-1T";
  plan_cold(state, Setup("H100-SXM", 8, m), m);
}
BENCHMARK(BM_PlanCold32kGpus)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same cold search under ecmp, Ethernet's default (every census takes the expectation over
// the hashes), on a rail-optimized Clos of ETH-51.2T switches: non-blocking (range(1) = 1), or
// with 3:1 leaves (3), whose 3-tier plan wires a tier round-robin, so that every census also
// records its down bundles' shares per top switch.
void BM_PlanColdEcmp32kGpus(benchmark::State& state) {
  const char* m = state.range(0) == 1 ? "MoE-1.2T" : "GPT-1T";
  Setup su("H100-SXM", 8, m);
  su.design = spec::make_network_design(spec::DesignKind::rail_optimized,
                                        spec::load_switch("ETH-51.2T-128x400G"),
                                        static_cast<double>(state.range(1)));
  su.design.routing = spec::Routing::ecmp;
  plan_cold(state, su, fmt::format("{} {}:1", m, state.range(1)));
}
BENCHMARK(BM_PlanColdEcmp32kGpus)
    ->Args({0, 1})
    ->Args({0, 3})
    ->Args({1, 1})
    ->Args({1, 3})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
}  // namespace

BENCHMARK_MAIN();
