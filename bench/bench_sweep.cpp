// Speed of `railsim sweep`: 100,000 design+cost points (cost and power of the three designs,
// no plan search; target under 5 s on 2 cores) and 1,000 points with each design's best plan
// (GPT-1T on 32,768 GPUs over 1,000 global batches; target under 10 s on 2 cores), each with
// its tidy table, per thread count; and what sharing a sweep among processes adds: encoding and
// decoding the rows that rank 0 gathers (sweep/distributed.hpp).
#include <benchmark/benchmark.h>

#include "railsim/report/table.hpp"
#include "railsim/sweep/distributed.hpp"
#include "railsim/sweep/sweep.hpp"

using namespace railsim;

namespace {

// The sweep of `o` and its tidy table on state.range(0) threads; counts the rows.
void sweep_rows(benchmark::State& state, sweep::SweepOptions o) {
  o.threads = static_cast<int>(state.range(0));
  std::size_t rows = 0;
  for (auto _ : state) {
    const report::Table t = sweep::sweep_table(sweep::run_sweep(o));
    rows = t.rows.size();
    benchmark::DoNotOptimize(t);
  }
  state.counters["rows"] = static_cast<double>(rows);
}

// GPT-1T on 32,768 H100 with 1,000 global batches (1,024 to 1,024,000 sequences).
sweep::SweepOptions gpt1t_32k_batches() {
  sweep::SweepOptions o;
  o.axes.gpus = {32768};
  o.axes.batch = sweep::parse_integers("--batch", "1024:1024000:1024");
  return o;
}

// 100,000 cluster sizes (8 to 800,000 GPUs in steps of 8) on H100 (K = 8).
void BM_Sweep100kDesignPoints(benchmark::State& state) {
  sweep::SweepOptions o;
  o.axes.gpus = sweep::parse_integers("--gpus", "8:800000:8", 100'000);
  o.perf = false;
  o.max_points = 100'000;
  sweep_rows(state, o);
}
BENCHMARK(BM_Sweep100kDesignPoints)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The 1,000 global batches of GPT-1T on 32,768 H100: 3,000 searches.
void BM_Sweep1kPlanPointsGpt1t32k(benchmark::State& state) {
  sweep_rows(state, gpt1t_32k_batches());
}
BENCHMARK(BM_Sweep1kPlanPointsGpt1t32k)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

// The rows of the 1,000-point plan sweep above as the ranks send them to rank 0: encode every
// point's rows, decode them, and build the table (what run_distributed adds to the evaluation).
void BM_GatherRows1kPlanPoints(benchmark::State& state) {
  static const sweep::SweepResult r = sweep::run_sweep(gpt1t_32k_batches());
  sweep::Share share;
  for (const sweep::PointResult& p : r.points)
    share.points.push_back({p.invalid, sweep::point_rows(p, r.perf, r.alltoall)});
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string encoded = sweep::encode_share(share);
    sweep::Share back = sweep::decode_share(encoded);
    std::vector<std::vector<report::Cell>> rows;
    for (sweep::EncodedPoint& p : back.points)
      for (auto& row : p.rows) rows.push_back(std::move(row));
    const report::Table t = sweep::sweep_table(std::move(rows), r.perf, r.alltoall);
    bytes = encoded.size();
    benchmark::DoNotOptimize(t);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_GatherRows1kPlanPoints)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
