// Scale of the flow simulator: all-to-all flow by flow among 1,024 GPUs (about one million
// flows; also on 64-port switches, thousands of events), 3,072 GPUs (9.4M flows; a cluster size
// that is not a power of two gives uneven ECMP loads and thousands of distinct finishing times),
// 4,000 GPUs (16.0M flows, uneven) and 4,096 GPUs (16.7M flows, rail-only and rail-optimized with
// its hash collisions), 4,096 and 8,192 GPUs (67.1M flows) with a batch tolerance, a skewed MoE
// all-to-all (Zipf 1.2, every pair its own size), ring all-reduce over 32,768 GPUs, and the
// link-class aggregated all-to-all over 32,768 GPUs. One iteration each (a long simulation);
// measure peak memory with /usr/bin/time -v and --benchmark_filter (docs/sim.md).
#include <benchmark/benchmark.h>

#include "railsim/sim/collective.hpp"
#include "railsim/sim/moe.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/topo/builders.hpp"

using namespace railsim;

namespace {

spec::Cluster cluster(std::int64_t n) {
  spec::ClusterOptions o;
  o.gpus = n;
  return spec::make_cluster(o);
}

spec::NetworkDesign design(spec::DesignKind k, const std::string& sw = "") {
  spec::NetworkOptions o;
  o.design = std::string(spec::to_string(k));
  if (!sw.empty()) o.sw = sw;
  return spec::make_network_design(o);
}

// Simulator settings of every case: 0.5 us per hop, flow by flow whatever the size (up to 64 GiB).
sim::SimConfig sim_config(sim::Aggregation agg, spec::Routing routing, double batch_tolerance) {
  sim::SimConfig cfg;
  cfg.hop_latency_s = 0.5e-6;
  cfg.aggregate = agg;
  cfg.routing = routing;
  cfg.max_flows = 200'000'000;  // flow by flow whatever the size
  cfg.max_memory_bytes = 64.0 * (1ull << 30);
  cfg.batch_tolerance = batch_tolerance;
  return cfg;
}

// One collective of 1 GB per member over all GPUs: all-to-all (direct) or all-reduce (ring).
struct Collective {
  const char* name;
  std::int64_t n;
  spec::DesignKind k;
  perf::CollectiveOp op = perf::CollectiveOp::all_to_all;
  sim::Aggregation agg = sim::Aggregation::off;
  spec::Routing routing = spec::Routing::ecmp;
  const char* sw = "";
  double batch_tolerance = 1e-9;
};

void run(benchmark::State& state, const Collective& c) {
  const topo::Fabric f = topo::build_fabric(cluster(c.n), design(c.k, c.sw));
  const sim::SimNetwork net = sim::make_sim_network(f);
  sim::CollectiveRequest req;
  req.op = c.op;
  req.algorithm =
      c.op == perf::CollectiveOp::all_to_all ? perf::Algorithm::direct : perf::Algorithm::ring;
  req.bytes = 1e9;
  req.groups = sim::groups_all(f.cluster);
  const sim::SimConfig cfg = sim_config(c.agg, c.routing, c.batch_tolerance);
  double t = 0, flows = 0, events = 0;
  for (auto _ : state) {
    auto r = sim::simulate_collective(net, req, cfg);
    t = r.completion_time_s;
    flows = r.flows_represented;
    events = 0;
    for (auto& p : r.phases) events += static_cast<double>(p.events);
  }
  state.counters["completion_s"] = t;
  state.counters["flows"] = flows;
  state.counters["events"] = events;
}

constexpr auto kRailOnly = spec::DesignKind::rail_only;
constexpr auto kRailOptimized = spec::DesignKind::rail_optimized;
constexpr auto kAllToAll = perf::CollectiveOp::all_to_all;
constexpr auto kAllReduce = perf::CollectiveOp::all_reduce;
constexpr auto kOff = sim::Aggregation::off;
constexpr auto kEcmp = spec::Routing::ecmp;
const Collective kCollectives[] = {
    {"BM_AllToAll1024_RailOptimized", 1024, kRailOptimized},
    // Packet spraying: the same flows over bundles of parallel uplinks (no collisions, 3 events).
    {"BM_AllToAll1024_RailOptimized_Spray", 1024, kRailOptimized, kAllToAll, kOff,
     spec::Routing::spray},
    {"BM_AllToAll1024_RailOnly", 1024, kRailOnly},
    // On 64-port switches (TH4-64x400G: 4 leaves and 2 spines per rail) hash collisions give the
    // direct transfers distinct rates: 5,330 events, most of them repairs whose rounds re-fill
    // from the lowest level they change, some giving up (then events re-fill whole for a while).
    {"BM_AllToAll1024_RailOnly_TH4", 1024, kRailOnly, kAllToAll, kOff, kEcmp, "TH4-64x400G"},
    {"BM_AllToAll3072_RailOnly", 3072, kRailOnly},
    {"BM_AllToAll4000_RailOnly", 4000, kRailOnly},
    {"BM_AllToAll4096_RailOnly", 4096, kRailOnly},
    // With --batch-tolerance: flows ending within 1e-4 (1e-3) of an event end in it (docs/sim.md,
    // Scale, for what it costs in accuracy: 1.1e-5 of the exact completion at 4,096 GPUs).
    {"BM_AllToAll4096_RailOnly_Tol1e4", 4096, kRailOnly, kAllToAll, kOff, kEcmp, "", 1e-4},
    // 67.1M flows, about 14 GB: run it on a machine with the memory.
    {"BM_AllToAll8192_RailOnly_Tol1e3", 8192, kRailOnly, kAllToAll, kOff, kEcmp, "", 1e-3},
    {"BM_AllToAll4096_RailOptimized", 4096, kRailOptimized},
    {"BM_RingAllReduce32768_RailOptimized", 32768, kRailOptimized, kAllReduce},
    {"BM_RingAllReduce32768_RailOptimized_Spray", 32768, kRailOptimized, kAllReduce, kOff,
     spec::Routing::spray},
    {"BM_RingAllReduce32768_RailOnly", 32768, kRailOnly, kAllReduce},
    // 1,024 members x 2,046 steps = 2.1M dependent flows, step by step (under --max-flows).
    {"BM_RingAllReduce1024_StepByStep_RailOptimized", 1024, kRailOptimized, kAllReduce},
    {"BM_AllToAll32768_Aggregated_RailOnly", 32768, kRailOnly, kAllToAll, sim::Aggregation::on},
};

// Token routing alone: 1,024 GPUs x 4,096 tokens x top-8 of 1,024 experts, Zipf 1.2, at most 4
// HB domains per token (33.5M expert picks).
void BM_MoeRouting1024_Zipf(benchmark::State& s) {
  spec::Cluster c;
  c.gpus = 1024;
  c.hb_domain = 8;
  c.hb_bw_Bps = 450e9;
  c.nic_bw_Bps = 50e9;
  sim::MoeRouting r;
  r.popularity = sim::Popularity::zipf;
  r.zipf_s = 1.2;
  r.experts = 1024;
  r.max_domains = 4;
  const auto g = sim::groups_all(c)[0];
  for (auto _ : s) benchmark::DoNotOptimize(sim::moe_dispatch_bytes(r, g, c, 7168.0));
  s.counters["picks"] = 1024.0 * 4096 * 8;
}

// Skewed MoE all-to-all flow by flow, rail_only (as `railsim sim --collective alltoall --skew
// zipf:1.2 --design rail_only --gpus N --experts N [--moe-phase P] [--batch-tolerance T]`):
// every pair its own size, so without a batch tolerance nearly every flow ends in an event of
// its own.
struct Moe {
  const char* name;
  std::int64_t gpus;
  sim::MoePhase phase;
  double tolerance;
  double zipf_s = 1.2;
};

void moe(benchmark::State& s, const Moe& c) {
  const topo::Fabric f = topo::build_fabric(cluster(c.gpus), design(kRailOnly));
  const sim::SimNetwork net = sim::make_sim_network(f);
  sim::MoeRequest req;
  req.routing.popularity = sim::Popularity::zipf;
  req.routing.zipf_s = c.zipf_s;
  req.routing.experts = c.gpus;
  req.bytes_per_token = 1e9 / (4096.0 * 8);
  req.groups = sim::groups_all(f.cluster);
  req.phase = c.phase;
  const sim::SimConfig cfg = sim_config(kOff, kEcmp, c.tolerance);
  double t = 0, events = 0, flows = 0;
  for (auto _ : s) {
    const auto r = sim::simulate_moe(net, req, cfg);
    t = r.sim.completion_time_s;
    events = flows = 0;
    for (auto& p : r.sim.phases) {
      events += static_cast<double>(p.events);
      flows += static_cast<double>(p.flows_simulated);
    }
  }
  s.counters["completion_s"] = t;
  s.counters["events"] = events;
  s.counters["flows"] = flows;
}

const Moe kMoe[] = {
    {"BM_MoeAllToAll256_Zipf_RailOnly", 256, sim::MoePhase::both, 1e-9},
    {"BM_MoeAllToAll1024_Zipf_RailOnly_Tol1e4", 1024, sim::MoePhase::both, 1e-4},
    // The dispatch alone: 11.9M flows, about 3 GB.
    {"BM_MoeDispatch4096_Zipf_RailOnly_Tol1e4", 4096, sim::MoePhase::dispatch, 1e-4},
    // Both phases: 23.0M flows, about 2.9 GB.
    {"BM_MoeAllToAll4096_Zipf_RailOnly_Tol1e3", 4096, sim::MoePhase::both, 1e-3},
    // Nearly balanced uneven traffic (uniform popularity: every pair its own size, ends spread on
    // every NIC), the case whose events re-fill most of each rail.
    {"BM_MoeDispatch1024_Uniform_RailOnly_Tol1e3", 1024, sim::MoePhase::dispatch, 1e-3, 0.0},
};

// Every case runs once (a long simulation), timed in seconds: the routing, the MoE cases, then
// the collectives.
const bool kRegistered = [] {
  auto once = [](benchmark::internal::Benchmark* b) { b->Unit(benchmark::kSecond)->Iterations(1); };
  once(benchmark::RegisterBenchmark("BM_MoeRouting1024_Zipf", BM_MoeRouting1024_Zipf));
  for (const Moe& c : kMoe)
    once(benchmark::RegisterBenchmark(c.name, [&c](benchmark::State& s) { moe(s, c); }));
  for (const Collective& c : kCollectives)
    once(benchmark::RegisterBenchmark(c.name, [&c](benchmark::State& s) { run(s, c); }));
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
