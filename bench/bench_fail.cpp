// Speed of the goodput Monte Carlo: 10,000 trials of a 90-day run on 32,768 GPUs with Meta's
// Llama 3 failure rates (about 1,400 interruptions a trial), per design and thread count; target
// under 10 s on 2 cores. One trial alone, to see the cost per event.
#include <benchmark/benchmark.h>

#include "railsim/fail/monte_carlo.hpp"
#include "railsim/fail/whatif.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/switch.hpp"

using namespace railsim;

namespace {

fail::FailureModel model(spec::DesignKind kind, const char* gpu, std::int64_t k) {
  const spec::GpuSpec g = spec::load_gpu(gpu);
  const spec::Cluster c =
      spec::make_cluster(g, 32768, k, g.nic_bw_Bps * 8 / 1e9, g.hb_bw_Bps / 1e9, 1);
  const spec::NetworkDesign d =
      spec::make_network_design(kind, spec::load_switch("ETH-51.2T-128x400G"));
  fail::RunParams p;
  p.days = 90;
  return fail::make_failure_model(c, d, spec::load_failure_rates("llama3-meta-2024"), p);
}

// Args: threads, design (0 rail_optimized, 1 rail_only), K.
void BM_Goodput10kTrials90Days32kGpus(benchmark::State& state) {
  const auto kind =
      state.range(1) == 0 ? spec::DesignKind::rail_optimized : spec::DesignKind::rail_only;
  const fail::FailureModel m =
      model(kind, state.range(2) == 8 ? "H100-SXM" : "GH200", state.range(2));
  fail::MonteCarloOptions o;
  o.trials = 10000;
  o.threads = static_cast<int>(state.range(0));
  double ettr = 0, interruptions = 0;
  for (auto _ : state) {
    const fail::GoodputResult g = fail::run_goodput(m, o);
    ettr = g.ettr.mean;
    interruptions = g.interruptions.mean;
    benchmark::DoNotOptimize(g);
  }
  state.counters["ettr"] = ettr;
  state.counters["interruptions"] = interruptions;
  state.counters["trials_per_s"] = benchmark::Counter(10000.0, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Goodput10kTrials90Days32kGpus)
    ->Args({1, 0, 8})
    ->Args({2, 0, 8})
    ->Args({2, 1, 8})
    ->Args({2, 1, 256})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_OneTrial90Days32kGpus(benchmark::State& state) {
  const fail::FailureModel m = model(spec::DesignKind::rail_only, "H100-SXM", 8);
  fail::TrialWorkspace ws(m);
  std::uint64_t trial = 0;
  std::int64_t events = 0;
  for (auto _ : state) {
    const fail::TrialResult r = fail::simulate_trial(m, 1, trial++, ws);
    events += r.interruptions + r.degradations;
    benchmark::DoNotOptimize(r);
  }
  state.counters["failures_per_trial"] =
      static_cast<double>(events) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_OneTrial90Days32kGpus)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();

// The failure what-if on the paper's H100 cluster: 100 components failed at random on 32,768
// GPUs (K = 8), GPT-1T's plan searched, every communicating pair of it routed on the degraded
// Fabric, the analytic iteration time and the re-plan options; no flow simulation. Target: under
// 1 s. Arg: design (0 rail_optimized, 1 rail_only).
void BM_WhatIf100Failures32kGpus(benchmark::State& state) {
  const spec::GpuSpec g = spec::load_gpu("H100-SXM");
  const spec::Cluster c =
      spec::make_cluster(g, 32768, 8, g.nic_bw_Bps * 8 / 1e9, g.hb_bw_Bps / 1e9, 1);
  const spec::NetworkDesign d = spec::make_network_design(
      state.range(0) == 0 ? spec::DesignKind::rail_optimized : spec::DesignKind::rail_only,
      spec::load_switch("ETH-51.2T-128x400G"));
  const perf::Model m = spec::load_model("GPT-1T");
  const perf::Training tr{4096, 2048};
  fail::WhatIfOptions o;
  o.random = 100;
  o.seed = 7;
  o.sim = fail::SimMode::off;
  o.plan.top = 1;
  std::int64_t pairs = 0;
  for (auto _ : state) {
    const fail::DesignWhatIf r = fail::what_if_design(c, d, m, tr, o);
    pairs = r.pairs;
    benchmark::DoNotOptimize(r);
  }
  state.counters["pairs_routed"] = static_cast<double>(pairs);
}
BENCHMARK(BM_WhatIf100Failures32kGpus)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
