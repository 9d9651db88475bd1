// Fabric and bill-of-materials build time at 131,072 GPUs (the target: well under a
// second, memory linear in N), and the cost of one route() call.
#include <benchmark/benchmark.h>

#include "railsim/cost/cost.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/topo/builders.hpp"

using namespace railsim;

namespace {

spec::Cluster cluster(std::int64_t n, std::int64_t k) {
  return spec::make_cluster(spec::load_gpu("H100-SXM"), n, k, 400, 450, 1);
}

spec::NetworkDesign design(spec::DesignKind kind, const char* sw) {
  return spec::make_network_design(kind, spec::load_switch(sw));
}

// The graph and the priced bill of materials of one network, timed; counters: the graph's size.
void build_and_price(benchmark::State& st, const spec::Cluster& c, const spec::NetworkDesign& d,
                     const char* catalog) {
  const auto cat = cost::load_catalog(catalog);
  std::size_t bytes = 0, links = 0;
  for (auto _ : st) {
    topo::Fabric f = topo::build_fabric(c, d);
    cost::DesignReport r = cost::evaluate(c, d, cat);
    benchmark::DoNotOptimize(r.cost.cost_usd());
    bytes = f.nodes.capacity() * sizeof(topo::Node) + f.links.capacity() * sizeof(topo::Link);
    links = f.links.size();
    benchmark::DoNotOptimize(f.links.data());
  }
  st.counters["graph_MB"] = double(bytes) / 1e6;
  st.counters["bytes_per_gpu"] = double(bytes) / double(c.gpus);
  st.counters["links"] = double(links);
}

// args: GPUs, K, design (0 rail_optimized, 1 rail_only, 2 ideal), radix (64 or 128)
void BM_FabricAndBom(benchmark::State& st) {
  build_and_price(st, cluster(st.range(0), st.range(1)),
                  design(static_cast<spec::DesignKind>(st.range(2)),
                         st.range(3) == 64 ? "QM9700" : "ETH-51.2T-128x400G"),
                  "ib-ndr-thirdparty-2024");
}
BENCHMARK(BM_FabricAndBom)
    ->ArgsProduct({{131072}, {8}, {0, 1}, {64, 128}})
    ->Args({131072, 256, 1, 128})
    ->Args({131072, 8, 2, 128})
    ->Args({16384, 8, 0, 64})
    ->Unit(benchmark::kMillisecond);

// 131,072 B300 with two 800G NICs each split into 4 x 200G, 8 planes of the 102.4T switch in its
// 512 x 200G mode (each plane a two-tier Clos over 131,072 ports): graph and price. args: design
// (0 rail_optimized, 1 rail_only).
void BM_EightPlanes(benchmark::State& st) {
  const spec::GpuSpec g = spec::load_gpu("B300");
  const auto c = spec::make_cluster(g, 131072, 8, 800, g.hb_bw_Bps / 1e9, 2);
  auto d = design(static_cast<spec::DesignKind>(st.range(0)), "ETH-102.4T-128x800G");
  d.planes = 8;
  d.nic_ports = 4;
  build_and_price(st, c, d, "eth-800g-pluggable-2026");
}
BENCHMARK(BM_EightPlanes)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The bill of materials alone (no graph): O(tiers).
void BM_BomOnly(benchmark::State& st) {
  const auto c = cluster(st.range(0), 8);
  const auto d = design(spec::DesignKind::rail_optimized, "QM9700");
  const auto cat = cost::load_catalog("ib-ndr-thirdparty-2024");
  for (auto _ : st) benchmark::DoNotOptimize(cost::evaluate(c, d, cat).cost.cost_usd());
}
BENCHMARK(BM_BomOnly)->Arg(131072)->Arg(16777216);

void BM_Route(benchmark::State& st) {
  const auto c = cluster(131072, 8);
  const auto f =
      topo::build_fabric(c, design(static_cast<spec::DesignKind>(st.range(0)), "QM9700"));
  topo::Path p;
  p.reserve(static_cast<std::size_t>(f.max_path_channels()));
  std::uint64_t h = 1;
  for (auto _ : st) {
    p.clear();
    h = h * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto s = static_cast<std::int64_t>((h >> 20) % 131072);
    const auto d = static_cast<std::int64_t>((h >> 40) % 131072);
    f.route(s, d == s ? (s + 9) % 131072 : d, h, topo::Forwarding::hb_first, p);
    benchmark::DoNotOptimize(p.data());
  }
}
BENCHMARK(BM_Route)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
