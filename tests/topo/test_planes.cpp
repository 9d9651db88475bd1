// Planes, split NICs and dual ToR (spec::NetworkDesign::planes, nic_ports, dual_tor): the sizing,
// the graph, routing inside one plane, failures of a plane and of one ToR of a pair, and the
// one-line errors of impossible combinations.
#include <gtest/gtest.h>

#include <set>

#include "../common/fabric_fixtures.hpp"
#include "railsim/core/error.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/failures.hpp"
#include "railsim/topo/network_view.hpp"

namespace railsim::topo {
namespace {

spec::Cluster b300(std::int64_t n) {
  const spec::GpuSpec g = spec::load_gpu("B300");
  return spec::make_cluster(g, n, 8, 800, g.hb_bw_Bps / 1e9, 1);
}

spec::NetworkDesign planed(spec::DesignKind kind, const char* sw, int planes, int ports,
                           bool dual_tor = false) {
  spec::NetworkDesign d = spec::make_network_design(kind, spec::load_switch(sw));
  d.planes = planes;
  d.nic_ports = ports;
  d.dual_tor = dual_tor;
  return d;
}

std::string error_option(const spec::Cluster& c, const spec::NetworkDesign& d) {
  try {
    (void)plan_network(c, d);
  } catch (const InputError& e) {
    return e.field();
  }
  return "";
}

// The instance (Clos copy) a switch node belongs to.
std::int64_t instance_of_node(const Fabric& f, std::int64_t node) {
  int t = f.tiers;
  while (t > 1 && node < f.tier_node_base[static_cast<std::size_t>(t)]) --t;
  const std::int64_t per = f.plan.tiers[static_cast<std::size_t>(t - 1)].switches();
  return (node - f.tier_node_base[static_cast<std::size_t>(t)]) / per;
}

}  // namespace

// 32,768 B300 (800G NICs, K = 8): one 800G plane of 102.4T switches (128 x 800G) needs three
// tiers (a two-tier Clos of 128 ports holds 8,192 ports); the same NICs as 4 x 200G in 4 planes
// run the switch as 512 x 200G, whose two tiers hold 131,072 ports: each plane is a two-tier
// rail-optimized Clos over 32,768 ports (128 leaves of 256 down, 64 spines). By hand.
TEST(Planes, FourPlanesOf200gKeepTwoTiersWhereOne800gPlaneNeedsThree) {
  const spec::Cluster c = b300(32768);
  const NetworkPlan one =
      plan_network(c, planed(spec::DesignKind::rail_optimized, "ETH-102.4T-128x800G", 1, 1));
  EXPECT_EQ(one.tiers(), 3);
  const NetworkPlan four =
      plan_network(c, planed(spec::DesignKind::rail_optimized, "ETH-102.4T-128x800G", 4, 4));
  EXPECT_EQ(four.tiers(), 2);
  EXPECT_EQ(four.instances(), 4);
  EXPECT_EQ(four.plan.endpoints(), 32768);
  EXPECT_EQ(four.plan.radix, 512);
  EXPECT_EQ(four.switches_at(1), 4 * 128);
  EXPECT_EQ(four.switches_at(2), 4 * 64);
  // rail_only: one instance per plane and rail, each over 4,096 ports (16 leaves, 8 spines).
  const NetworkPlan ro =
      plan_network(c, planed(spec::DesignKind::rail_only, "ETH-102.4T-128x800G", 4, 4));
  EXPECT_EQ(ro.instances(), 4 * 8);
  EXPECT_EQ(ro.plan.endpoints(), 4096);
  EXPECT_EQ(ro.switches(), 32 * (16 + 8));
  // Four ports of one NIC in one plane (no planes): the same 200G ports, a single Clos of them.
  const NetworkPlan flat =
      plan_network(c, planed(spec::DesignKind::rail_optimized, "ETH-102.4T-128x800G", 1, 4));
  EXPECT_EQ(flat.instances(), 1);
  EXPECT_EQ(flat.plan.endpoints(), 4 * 32768);
}

// Every NIC port e of every GPU is cabled to a leaf of plane e mod P, and a route between two
// GPUs on port e stays inside that plane's instance.
TEST(Planes, EachPortIsCabledAndRoutedInItsPlane) {
  const spec::Cluster c = b300(512);
  for (auto kind : {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only}) {
    const Fabric f = build_fabric(c, planed(kind, "ETH-51.2T-128x400G", 2, 2));
    ASSERT_EQ(f.nics_per_gpu(), 2);
    EXPECT_DOUBLE_EQ(f.nic_link_Bps(), 50e9);  // 400G per port
    const std::int64_t per_plane = f.layout.instances / 2;
    for (std::int64_t g = 0; g < c.gpus; g += 37)
      for (int e = 0; e < 2; ++e)
        EXPECT_EQ(instance_of_node(f, f.leaf_of(g, e)) / per_plane, e) << g;
    Path p;
    for (int e = 0; e < 2; ++e) {
      p.clear();
      f.route(0, 8 * 40, 12345, Forwarding::hb_first, p, e);  // rail 0, another domain
      for (const auto ch : p) {
        const Link& l = f.links[static_cast<std::size_t>(ch / 2)];
        if (l.kind != LinkKind::switch_switch) continue;
        EXPECT_EQ(instance_of_node(f, l.a) / per_plane, e);
        EXPECT_EQ(instance_of_node(f, l.b) / per_plane, e);
      }
    }
  }
}

// Dual ToR: the two ports of a NIC on different leaves (without it, 64 GPUs' ports share leaves);
// the leaves double and so does each rail's leaf count, the spines follow the uplinks.
TEST(Planes, DualTorPutsTheTwoPortsOfANicOnDifferentLeaves) {
  const spec::Cluster c = b300(512);  // 64 domains: 128 ports of 400G per rail
  const Fabric pair =
      build_fabric(c, planed(spec::DesignKind::rail_optimized, "ETH-51.2T-128x400G", 1, 2, true));
  const Fabric same =
      build_fabric(c, planed(spec::DesignKind::rail_optimized, "ETH-51.2T-128x400G", 1, 2));
  std::int64_t apart = 0, together = 0;
  for (std::int64_t g = 0; g < c.gpus; ++g) {
    apart += pair.leaf_of(g, 0) != pair.leaf_of(g, 1);
    together += same.leaf_of(g, 0) == same.leaf_of(g, 1);
  }
  EXPECT_EQ(apart, c.gpus);
  EXPECT_EQ(together, c.gpus);
  // 1,024 ports of 64 down per leaf: 16 leaves either way; rail-pure (one GPU rail per leaf).
  EXPECT_EQ(pair.switches_per_tier[0], 16);
  for (std::int64_t g = 0; g < c.gpus; g += 9)
    EXPECT_EQ(pair.nodes[static_cast<std::size_t>(pair.leaf_of(g, 1))].rail, c.rail_of(g));
  // A rail of one domain's worth of ports per leaf still gets a leaf per port (never shared).
  const spec::Cluster small = b300(16);
  const Fabric tiny =
      build_fabric(small, planed(spec::DesignKind::rail_only, "ETH-51.2T-128x400G", 1, 2, true));
  for (std::int64_t g = 0; g < small.gpus; ++g) EXPECT_NE(tiny.leaf_of(g, 0), tiny.leaf_of(g, 1));
}

// A lost plane takes its switches, its NIC ports and its switch links: capacity, never
// connectivity (every GPU keeps the other planes). A lost ToR of a dual-ToR pair: its GPUs keep
// the other port. A leaf of a one-port design: its GPUs are forwarded through HB peers.
TEST(Planes, APlaneOrAToRLostCostsCapacityNotConnectivity) {
  const spec::Cluster c = b300(512);
  const Fabric f =
      build_fabric(c, planed(spec::DesignKind::rail_optimized, "ETH-51.2T-128x400G", 2, 2));
  const DegradedFabric d(f, {parse_failure("plane:1", f)}, true);
  std::int64_t edges = 0;
  for (std::int64_t g = 0; g < c.gpus; ++g) {
    EXPECT_FALSE(d.cut_off(g));
    EXPECT_TRUE(d.edge_alive(g, 0));
    EXPECT_FALSE(d.edge_alive(g, 1));
    edges += d.edge_alive(g, 0) + d.edge_alive(g, 1);
  }
  EXPECT_EQ(edges, c.gpus);
  for (const TierCapacity& t : capacity_by_tier(d)) {
    if (t.name != "HB") {
      EXPECT_EQ(2 * t.links_lost, t.links) << t.name;
    }
  }
  Path p;
  p.reserve(static_cast<std::size_t>(d.max_path_channels()));
  EXPECT_EQ(d.route(0, 8 * 40, 7, 0, p), RouteStatus::direct);
  EXPECT_THROW((void)parse_failure("plane:2", f), InputError);

  const Fabric pair =
      build_fabric(c, planed(spec::DesignKind::rail_optimized, "ETH-51.2T-128x400G", 1, 2, true));
  const DegradedFabric tor(pair, {parse_failure("leaf:0", pair)}, false);
  std::int64_t one_port = 0;
  for (std::int64_t g = 0; g < c.gpus; ++g) {
    EXPECT_FALSE(tor.cut_off(g));
    one_port += tor.edge_alive(g, 0) != tor.edge_alive(g, 1);
  }
  EXPECT_EQ(one_port, 64);  // the leaf's 64 down ports: one port of 64 GPUs
}

// Bad combinations: one line naming the option.
TEST(Planes, ImpossibleCombinationsNameTheirOption) {
  const spec::Cluster c = b300(512);
  const char* sw = "ETH-51.2T-128x400G";
  // 3 planes over 2 ports; 2 planes over one unsplit NIC.
  EXPECT_EQ(error_option(c, planed(spec::DesignKind::rail_only, sw, 3, 2)), "--planes");
  EXPECT_EQ(error_option(c, planed(spec::DesignKind::rail_only, sw, 2, 1)), "--planes");
  // 800G as 3 ports of 266.7G: no such port mode.
  EXPECT_EQ(error_option(c, planed(spec::DesignKind::rail_only, sw, 1, 3)), "--nic-ports");
  // 800G as 8 x 100G on a switch whose smallest port is 200G.
  EXPECT_EQ(error_option(c, planed(spec::DesignKind::rail_only, sw, 1, 8)), "--nic-ports");
  // Dual ToR on one-port NICs.
  EXPECT_EQ(error_option(c, planed(spec::DesignKind::rail_only, sw, 1, 1, true)), "--dual-tor");
  // Out of range.
  spec::NetworkOptions o;
  o.planes = 0;
  EXPECT_THROW((void)spec::make_network_design(o), InputError);
  o.planes = 1;
  o.nic_ports = 1LL << 40;
  EXPECT_THROW((void)spec::make_network_design(o), InputError);
}

// The view the analytic model takes of a multi-plane network: per-port links, every port's
// plane alike, the same tiers as the Fabric.
TEST(Planes, TheViewSeesPortsAndTiersOfOnePlane) {
  const spec::Cluster c = b300(32768);
  const spec::NetworkDesign d =
      planed(spec::DesignKind::rail_optimized, "ETH-102.4T-128x800G", 4, 4);
  const NetworkView v = make_network_view(c, d);
  EXPECT_EQ(v.nics_per_gpu, 4);
  EXPECT_DOUBLE_EQ(v.nic_link_Bps, 25e9);
  EXPECT_DOUBLE_EQ(v.nic_Bps(), 100e9);
  EXPECT_EQ(v.tiers, 2);
}

}  // namespace railsim::topo
