// topo::resolve_network: the one place a design is fitted to its cluster and planned. What the
// consumers read from it (the fitted switch, the plan, the view, the Fabric) equals what they
// computed from the cluster and the unfitted design.
#include <gtest/gtest.h>

#include "../common/fabric_fixtures.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/network_view.hpp"

namespace railsim::topo {
namespace {

TEST(ResolveNetwork, FitsTheSwitchToTheNicsOnceAndPlansIt) {
  // 800G NICs on the 51.2T switch: its 64 x 800G mode serves them (128 x 400G as shipped).
  const spec::Cluster c = test::h100_cluster(4096, 8, 800);
  const spec::NetworkDesign d = spec::make_network_design(spec::DesignKind::rail_only,
                                                          spec::load_switch("ETH-51.2T-128x400G"));
  ASSERT_EQ(d.sw.radix, 128);
  const Network n = resolve_network(c, d);
  EXPECT_EQ(n.design.sw.radix, 64);
  EXPECT_DOUBLE_EQ(n.design.sw.port_gbps, 800);
  EXPECT_EQ(n.design.kind, spec::DesignKind::rail_only);
  EXPECT_EQ(n.cluster.gpus, 4096);
  const NetworkPlan p = plan_network(c, d);
  EXPECT_EQ(n.plan.instances(), 8);
  EXPECT_EQ(n.plan.instances(), p.instances());
  EXPECT_EQ(n.plan.tiers(), p.tiers());
  EXPECT_EQ(n.plan.plan.endpoints(), p.plan.endpoints());
  // 512 NIC ports per rail on 64-port leaves: 16 leaves of 32 down, one spine tier above.
  EXPECT_EQ(n.plan.tiers(), 2);
}

TEST(ResolveNetwork, TheViewAndTheFabricReadTheSameNetwork) {
  const spec::Cluster c = test::h100_cluster(1024, 8);
  const spec::NetworkDesign d = test::radix_design(spec::DesignKind::rail_optimized, 32, 2.0);
  const Network n = resolve_network(c, d);
  const NetworkView from_network = make_network_view(n);
  const NetworkView from_inputs = make_network_view(c, d);
  EXPECT_EQ(from_network.tiers, from_inputs.tiers);
  EXPECT_DOUBLE_EQ(from_network.port_Bps, from_inputs.port_Bps);
  EXPECT_EQ(from_network.rail_join_tier, from_inputs.rail_join_tier);
  const Fabric f = build_fabric(c, d);
  EXPECT_EQ(f.layout.instances, n.plan.instances());
  EXPECT_EQ(f.plan.tier_count(), n.plan.plan.tier_count());
  EXPECT_EQ(f.design.sw.radix, n.design.sw.radix);
}

}  // namespace
}  // namespace railsim::topo
