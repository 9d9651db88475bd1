// Scale of the traffic matrix: build time and memory per non-zero entry for whole iterations of
// GPT-1T (dense) and MoE-1.2T on clusters up to 32,768 GPUs.
//
//   ./build/bench_traffic --benchmark_counter_tabular=true
//
// Counters: entries = non-zero (src, dst, parallelism) entries; pairs = GPU pairs with traffic;
// bytes_per_entry = heap bytes of the finished matrix / entries (16 = two 8-byte words);
// scratch_per_entry = expansion records held during the build (16 bytes each) / entries.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/model.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/traffic/summary.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

using namespace railsim;

namespace {

struct Case {
  const char* model;
  const char* gpu;
  std::int64_t k;
  perf::Strategy s;
};

// Representative strategies (TP inside the HB domain, PP and DP across domains; the MoE case
// with EP = 64 spanning 8 HB domains of 8). Sizes: N = tp x pp x dp.
Case make_case(int which, std::int64_t n) {
  perf::Strategy s{.micro_batch = 1, .sp = true, .dist_opt = true};
  switch (which) {
    case 0:  // GPT-1T on H100, K = 8
      s.tp = 8;
      s.pp = 16;
      s.dp = n / 128;
      s.interleave = 2;
      return {"GPT-1T", "H100-SXM", 8, s};
    case 1:  // GPT-1T on GH200, K = 256
      s.tp = 8;
      s.pp = 8;
      s.dp = n / 64;
      return {"GPT-1T", "GH200", 256, s};
    default:  // MoE-1.2T on H100, EP = 64 across 8 domains
      s.tp = 8;
      s.pp = 4;
      s.dp = n / 32;
      s.ep = 64;
      return {"MoE-1.2T", "H100-SXM", 8, s};
  }
}

void BM_TrafficMatrix(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  const std::int64_t n = state.range(1);
  const Case cs = make_case(which, n);
  const perf::Model m = perf::load_model(cs.model);
  const auto gpu = spec::load_gpu(cs.gpu);
  const spec::Cluster c = spec::make_cluster(gpu, n, cs.k, 400, gpu.hb_bw_Bps / 1e9, 1);
  perf::Training tr;
  tr.global_batch = 2 * cs.s.dp;
  tr.seq_len = m.seq_len;
  const perf::Placement pl(c, cs.s.degrees());
  const perf::CommSchedule sched = perf::build_comm_schedule(m, tr, cs.s, pl);
  traffic::TrafficMatrix tm;
  for (auto _ : state) {
    tm = traffic::TrafficMatrix::build(sched, pl, c);
    benchmark::DoNotOptimize(tm.size());
  }
  const auto sum = traffic::summarize(tm, c, spec::DesignKind::rail_only);
  state.SetLabel(std::string(cs.model) + " K=" + std::to_string(cs.k));
  state.counters["gpus"] = static_cast<double>(n);
  state.counters["entries"] = static_cast<double>(tm.size());
  state.counters["pairs"] = static_cast<double>(sum.pairs_with_traffic);
  state.counters["pair_frac"] = sum.pair_fraction_with_traffic;
  state.counters["bytes_per_entry"] =
      static_cast<double>(tm.memory_bytes()) / static_cast<double>(tm.size());
  state.counters["scratch_per_entry"] =
      16.0 * static_cast<double>(tm.build_records()) / static_cast<double>(tm.size());
  state.counters["MB"] = static_cast<double>(tm.memory_bytes()) / 1e6;
}

void BM_TrafficSummary(benchmark::State& state) {
  const Case cs = make_case(2, 32768);
  const perf::Model m = perf::load_model(cs.model);
  const spec::Cluster c = spec::make_cluster(spec::load_gpu(cs.gpu), 32768, cs.k, 400, 450, 1);
  perf::Training tr;
  tr.global_batch = 2 * cs.s.dp;
  tr.seq_len = m.seq_len;
  const perf::Placement pl(c, cs.s.degrees());
  const auto tm = traffic::TrafficMatrix::build(perf::build_comm_schedule(m, tr, cs.s, pl), pl, c);
  for (auto _ : state) {
    auto s = traffic::summarize(tm, c, spec::DesignKind::rail_only);
    benchmark::DoNotOptimize(s.total_bytes);
  }
  state.counters["entries"] = static_cast<double>(tm.size());
}

// The same build with glibc told to keep freed memory (no munmap between iterations): what a
// second build in one process costs once the pages are mapped. On the development VM a fresh
// page costs about 13 us to fault in, which dominates the first build of a large matrix.
void BM_TrafficMatrixWarm(benchmark::State& state) {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  BM_TrafficMatrix(state);
}

}  // namespace

BENCHMARK(BM_TrafficMatrix)
    ->ArgsProduct({{0, 1, 2}, {4096, 32768}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_TrafficMatrix)
    ->ArgsProduct({{2}, {8192, 16384}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_TrafficSummary)->Unit(benchmark::kMillisecond)->UseRealTime();
// Last: mallopt changes the allocator for the rest of the process.
BENCHMARK(BM_TrafficMatrixWarm)
    ->ArgsProduct({{0, 1, 2}, {32768}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);

BENCHMARK_MAIN();
