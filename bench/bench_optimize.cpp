// Speed of `railsim optimize`: the full frontier for GPT-1T on 32,768 GH200 over HB domains of
// 8 to 256, NICs of 200/400/800G, every switch preset, both designs, leaf oversubscription 1:1 to
// 3:1 and the three catalogs (more than 500 candidate networks). Target: under 10 s on 2 cores.
#include <benchmark/benchmark.h>

#include "railsim/optimize/optimize.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/stack.hpp"

using namespace railsim;

namespace {

void BM_OptimizeGpt1t32kGpus(benchmark::State& state) {
  const spec::GpuSpec gpu = spec::load_gpu("GH200");
  const perf::Model m = spec::load_model("GPT-1T");
  const std::vector<optimize::ModelSpec> models = {
      {m, spec::make_training(4096, m.seq_len, spec::Stack{}, std::nullopt, std::nullopt), {}}};
  optimize::Space s;
  s.hb_domain = {8, 16, 32, 64, 128, 256};
  s.nic_gbps = {200, 400, 800};
  s.catalogs = {"ib-ndr-thirdparty-2024", "ib-ndr-nvidia-2024", "paper-ratio"};
  optimize::Target t;
  t.within = 0.01;
  t.within_of = spec::DesignKind::rail_optimized;
  std::size_t candidates = 0;
  std::int64_t plans = 0;
  for (auto _ : state) {
    const optimize::Result r = optimize::optimize(gpu, 32768, models, s, t, {});
    candidates = r.candidates.size();
    plans = r.plans_computed;
    benchmark::DoNotOptimize(r);
  }
  state.counters["candidates"] = static_cast<double>(candidates);
  state.counters["plan_searches"] = static_cast<double>(plans);
}
BENCHMARK(BM_OptimizeGpt1t32kGpus)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
