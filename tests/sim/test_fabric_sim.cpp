// The simulator on topo/'s builders: oversubscription as the builder wires it, determinism
// whatever the thread count, and links named as the graph exports name them.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <sstream>
#include <string>

#include "../common/fabric_fixtures.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/sim/network.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/export.hpp"
#include "railsim/topo/failures.hpp"

using namespace railsim;

namespace {}  // namespace

// Meta-style 1:7 between pods (tier-2 uplinks of a 3-tier rail_optimized Clos): an all-to-all over
// all GPUs is NIC-bound without oversubscription, and bound by the cross-pod bytes over the
// spine-core capacity with it. Expected times computed from the fabric's own links.
TEST(FabricSim, OversubscribedSpineCoreTierSetsAllToAllTime) {
  const double S = 1e9;
  sim::CollectiveRequest req;
  req.op = perf::CollectiveOp::all_to_all;
  req.algorithm = perf::Algorithm::direct;
  req.bytes = S;
  sim::SimConfig cfg;
  cfg.aggregate = sim::Aggregation::on;
  const auto full = test::preset_fabric(8192, "rail_optimized", "QM9700", 1, 2);
  const auto over = test::preset_fabric(8192, "rail_optimized", "QM9700", 7, 2);
  ASSERT_EQ(over.tiers, 3);
  req.groups = sim::groups_all(full.cluster);
  const auto a = sim::simulate_collective(sim::make_sim_network(full), req, cfg);
  const auto b = sim::simulate_collective(sim::make_sim_network(over), req, cfg);
  const double n = 8192, k = 8;
  EXPECT_NEAR(a.completion_time_s / ((n - k) / n * S / full.cluster.nic_bw_Bps), 1.0, 0.02);
  double core_cap = 0;
  for (const auto& l : over.links)
    if (l.kind == topo::LinkKind::switch_switch && l.tier == 2) core_cap += l.capacity_Bps;
  double core_bytes = 0;
  for (const auto& t : b.tiers)
    if (t.name == "spine-core up") core_bytes = t.bytes;
  ASSERT_GT(core_bytes, 0);
  EXPECT_NEAR(b.completion_time_s / (core_bytes / core_cap), 1.0, 0.02);
  EXPECT_GT(b.completion_time_s / a.completion_time_s, 4.0);
}

TEST(FabricSim, ResultsDoNotDependOnThreadCount) {
  const auto f = test::preset_fabric(1024, "rail_only", "QM9700", 1, 1);
  const auto net = sim::make_sim_network(f);
  sim::CollectiveRequest req;
  req.op = perf::CollectiveOp::all_reduce;
  req.bytes = 1e8;
  req.groups = sim::groups_rails(f.cluster);  // 8 concurrent rings: parallel re-fills
  sim::SimConfig cfg;
  cfg.hop_latency_s = 0.5e-6;
  sim::CollectiveResult one, two;
  {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 1);
    one = sim::simulate_collective(net, req, cfg);
  }
  {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 2);
    two = sim::simulate_collective(net, req, cfg);
  }
  EXPECT_EQ(one.completion_time_s, two.completion_time_s);
  ASSERT_EQ(one.tiers.size(), two.tiers.size());
  for (std::size_t i = 0; i < one.tiers.size(); ++i) {
    EXPECT_EQ(one.tiers[i].bytes, two.tiers[i].bytes);
    EXPECT_EQ(one.tiers[i].peak_utilisation, two.tiers[i].peak_utilisation);
  }
}

// Several NICs per GPU: a transfer that leaves the HB domain is split over every NIC of the GPU
// (NCCL spreads its channels over them), so a rail ring on 2 NICs per GPU runs at twice one NIC's
// rate, as the analytic model's per-GPU NIC bandwidth (nic link x NICs) has it; a hashed choice of
// one NIC per transfer would leave the second idle. Spread routing, so that the few ring edges
// between a rail's two leaves meet no ECMP collision.
TEST(FabricSim, ARingUsesEveryNicOfAGpu) {
  spec::ClusterOptions co;
  co.gpus = 512;
  for (int nics : {1, 2}) {
    co.nics_per_gpu = nics;
    const spec::Cluster c = spec::make_cluster(co);
    const topo::Fabric f = topo::build_fabric(c, spec::make_network_design({}));
    sim::CollectiveRequest req;
    req.op = perf::CollectiveOp::all_gather;
    const double S = 1e9;
    req.bytes = S;
    req.groups = sim::groups_rails(c);
    sim::SimConfig cfg;
    cfg.routing = spec::Routing::spray;
    const auto r = sim::simulate_collective(sim::make_sim_network(f), req, cfg);
    const double n = static_cast<double>(c.domains());
    EXPECT_NEAR(r.completion_time_s / ((n - 1) / n * S / (nics * c.nic_bw_Bps)), 1.0, 1e-9)
        << nics << " NICs per GPU";
  }
}

// The simulator names a link's nodes as the graph exports do (topo::node_name), so that a busy
// link of `railsim sim` is found by name in the drawing of `design --export dot`.
TEST(FabricSim, LinksNameTheirNodesAsTheGraphExportDoes) {
  const topo::Fabric f = topo::build_fabric(
      test::h100_cluster(64, 8), test::radix_design(spec::DesignKind::rail_optimized, 16));
  const sim::SimNetwork net = sim::make_sim_network(f);
  std::ostringstream dot;
  topo::write_graph(f, topo::GraphFormat::dot, dot);
  for (std::size_t l = 0; l < f.links.size(); ++l) {
    const auto& link = f.links[l];
    const std::string a = topo::node_name(f, link.a), b = topo::node_name(f, link.b);
    const std::string tier = topo::link_tier_name(link.kind, link.tier);
    EXPECT_EQ(net.describe(static_cast<sim::ChannelId>(2 * l)), a + " -> " + b + " (" + tier + ")");
    EXPECT_EQ(net.describe(static_cast<sim::ChannelId>(2 * l + 1)),
              b + " -> " + a + " (" + tier + ")");
    for (const std::string& name : {a, b})
      EXPECT_NE(dot.str().find("    \"" + name + "\" [kind="), std::string::npos) << name;
  }
  // The spellings, pinned: a GPU, an HB switch, a rail's leaf, a spine.
  EXPECT_EQ(net.describe(0), "gpu0 -> hb0 (HB)");
  EXPECT_EQ(net.describe(2 * f.nic_link(11, 0)), "gpu11 -> leaf3.r3 (GPU-leaf)");
  EXPECT_EQ(net.describe(static_cast<sim::ChannelId>(2 * f.link_base[1] + 1)),
            "spine0 -> leaf0.r0 (leaf-spine)");
}
