// Node names: one spelling of a node in every output.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "../common/fabric_fixtures.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/failures.hpp"

using namespace railsim;
using spec::DesignKind;
using topo::Fabric;

namespace {

// The paper's small example: 64 H100 in HB domains of 8, rail-optimized on 16-port switches
// (8 leaves, one per rail, and 4 spines, each leaf with 2 links to each spine).
Fabric export_fabric64(DesignKind kind = DesignKind::rail_optimized) {
  return topo::build_fabric(test::h100_cluster(64, 8), test::radix_design(kind, 16));
}

// Fabrics of every shape the builders make: several NIC ports on one leaf, planes, rail-only,
// four tiers, a tier wired round-robin (parallel links that are not side by side).
std::vector<Fabric> export_fabrics() {
  std::vector<Fabric> fs;
  fs.push_back(export_fabric64());
  fs.push_back(export_fabric64(DesignKind::rail_only));
  fs.push_back(topo::build_fabric(test::h100_cluster(8 * 37, 8, 400, 2),
                                  test::radix_design(DesignKind::rail_only, 8)));
  fs.push_back(topo::build_fabric(test::h100_cluster(8 * 9, 8),
                                  test::radix_design(DesignKind::rail_optimized, 4)));
  fs.push_back(topo::build_fabric(test::h100_cluster(15, 1),
                                  test::radix_design(DesignKind::rail_optimized, 8, 5.0 / 3.0)));
  fs.push_back(
      topo::build_fabric(test::h100_cluster(64, 8), test::radix_design(DesignKind::ideal, 16)));
  auto planes = test::radix_design(DesignKind::rail_optimized, 16, 1.0, 1, 200);
  planes.planes = 2;
  planes.nic_ports = 2;
  fs.push_back(topo::build_fabric(test::h100_cluster(64, 8, 400), planes));
  return fs;
}

}  // namespace

TEST(NodeNames, SayWhatANodeIsAndWhereItSits) {
  const Fabric f = export_fabric64();
  EXPECT_EQ(topo::node_name(f, 0), "gpu0");
  EXPECT_EQ(topo::node_name(f, 63), "gpu63");
  EXPECT_EQ(topo::node_name(f, 64), "hb0");
  EXPECT_EQ(topo::node_name(f, 71), "hb7");
  const auto leaf = static_cast<std::int32_t>(f.tier_node_base[1]);
  const auto spine = static_cast<std::int32_t>(f.tier_node_base[2]);
  EXPECT_EQ(topo::node_name(f, leaf + 3), "leaf3.r3");  // one leaf per rail
  EXPECT_EQ(topo::node_name(f, spine), "spine0");       // every rail
  EXPECT_EQ(topo::node_domain(f, 63), 7);
  EXPECT_EQ(topo::node_domain(f, 71), 7);
  EXPECT_EQ(topo::node_domain(f, leaf), -1);
  EXPECT_EQ(topo::node_plane(f, leaf), 0);
  EXPECT_EQ(topo::node_plane(f, 0), -1);

  // The index in a switch's name is the one --fail takes: leaf:3 and spine:1 kill the switches
  // named leaf3 and spine1, and no other node.
  const topo::DegradedFabric d(
      f, {topo::parse_failure("leaf:3", f), topo::parse_failure("spine:1", f)}, false);
  std::set<std::string> dead;
  for (std::size_t i = 0; i < f.nodes.size(); ++i)
    if (!d.node_alive(static_cast<std::int64_t>(i)))
      dead.insert(topo::node_name(f, static_cast<std::int32_t>(i)));
  EXPECT_EQ(dead, (std::set<std::string>{"leaf3.r3", "spine1"}));
}

TEST(NodeNames, AreUniqueAndNamePlanesRailsAndHighTiers) {
  for (const Fabric& f : export_fabrics()) {
    std::set<std::string> names;
    for (std::size_t i = 0; i < f.nodes.size(); ++i)
      names.insert(topo::node_name(f, static_cast<std::int32_t>(i)));
    EXPECT_EQ(names.size(), f.nodes.size()) << spec::to_string(f.design.kind);
  }
  const std::vector<Fabric> fs = export_fabrics();
  // Rail-only: every switch is a rail's.
  const Fabric& ro = fs[1];
  EXPECT_EQ(topo::node_name(ro, static_cast<std::int32_t>(ro.tier_node_base[1] + 5)), "leaf5.r5");
  // 72 GPUs on 4-port switches: tiers above the core are named by number.
  const Fabric& deep = fs[3];
  ASSERT_GE(deep.tiers, 4);
  EXPECT_EQ(topo::node_name(deep, static_cast<std::int32_t>(deep.tier_node_base[4])), "t4sw0");
  // Two planes: the second plane's first leaf.
  const Fabric& two = fs.back();
  ASSERT_EQ(two.layout.planes, 2);
  const std::int64_t leaves = two.switches_per_tier[0];
  const auto second = static_cast<std::int32_t>(two.tier_node_base[1] + leaves / 2);
  EXPECT_EQ(topo::node_plane(two, second), 1);
  EXPECT_EQ(topo::node_name(two, second), "leaf" + std::to_string(leaves / 2) + ".p1.r0");
}
