#include <gtest/gtest.h>

#include <set>

#include "../common/fabric_fixtures.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/units.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/topo/builders.hpp"

using namespace railsim;
using topo::Fabric;
using topo::Forwarding;
using topo::Path;

namespace {

// Every switch uses at most `radix` ports.
void check_degrees(const Fabric& f) {
  std::vector<int> deg(f.nodes.size(), 0);
  for (const auto& l : f.links) {
    ++deg[static_cast<std::size_t>(l.a)];
    ++deg[static_cast<std::size_t>(l.b)];
  }
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if (f.nodes[i].kind == topo::NodeKind::network_switch) {
      ASSERT_LE(deg[i], f.design.sw.radix) << i;
    }
  }
}

}  // namespace

TEST(Fabric, SmallRailOptimizedTwoTierCountsAndRoutes) {
  // 512 GPUs, K = 8, 64-port: 64 GPUs per rail = 2 leaves per rail, 16 leaves, 8 spines.
  const Fabric f = topo::build_fabric(test::h100_cluster(512, 8),
                                      test::radix_design(spec::DesignKind::rail_optimized, 64));
  ASSERT_EQ(f.tiers, 2);
  EXPECT_EQ(f.switches_per_tier, (std::vector<std::int64_t>{16, 8}));
  EXPECT_EQ(f.nodes.size(), 512u + 64u + 24u);
  EXPECT_EQ(f.links.size(), 512u + 512u + 512u);  // HB + NIC + leaf-spine
  check_degrees(f);
  Path p;
  p.reserve(static_cast<std::size_t>(f.max_path_channels()));
  for (std::int64_t s : {0, 1, 7, 8, 100, 511}) {
    for (std::int64_t d : {0, 3, 8, 16, 263, 264, 510}) {
      if (s == d) continue;
      p.clear();
      f.route(s, d, static_cast<std::uint64_t>(s * 1000 + d), Forwarding::hb_first, p);
      EXPECT_EQ(test::walk_path(f, s, p), d) << s << "->" << d;
      const bool same_domain = s / 8 == d / 8;
      const bool same_leaf = !same_domain && s % 8 == d % 8 && (s / 8) / 32 == (d / 8) / 32;
      EXPECT_EQ(p.size(), same_domain ? 2u : same_leaf ? 2u : 4u) << s << "->" << d;
    }
  }
}

TEST(Fabric, EcmpSpreadsOverEveryUplinkDeterministically) {
  const Fabric f = topo::build_fabric(test::h100_cluster(4096, 8),
                                      test::radix_design(spec::DesignKind::rail_optimized, 64));
  ASSERT_EQ(f.tiers, 3);
  std::set<std::int32_t> first_hop_up;
  Path p, q;
  for (std::uint64_t h = 0; h < 2000; ++h) {
    p.clear();
    q.clear();
    f.route(0, 4095, h, Forwarding::hb_first, p);
    f.route(0, 4095, h, Forwarding::hb_first, q);
    ASSERT_EQ(p, q);          // same hash, same path
    ASSERT_EQ(p.size(), 6u);  // NIC, leaf-spine, spine-core, core-spine, spine-leaf, NIC
    EXPECT_EQ(test::walk_path(f, 0, p), 4095);
    first_hop_up.insert(p[1]);
  }
  EXPECT_EQ(first_hop_up.size(), 32u);  // all 32 leaf uplinks used
}

TEST(Fabric, RailOnlyForwardsCrossRailThroughTheHbDomain) {
  const auto c = test::h100_cluster(1024, 8);
  const Fabric f = topo::build_fabric(c, test::radix_design(spec::DesignKind::rail_only, 64));
  // Each rail: 128 GPUs = 4 leaves + 2 spines; 8 rails.
  ASSERT_EQ(f.tiers, 2);
  EXPECT_EQ(f.switches_per_tier, (std::vector<std::int64_t>{32, 16}));
  check_degrees(f);
  for (const auto& l : f.links) {
    if (l.kind == topo::LinkKind::switch_switch) {
      ASSERT_EQ(f.nodes[static_cast<std::size_t>(l.a)].rail,
                f.nodes[static_cast<std::size_t>(l.b)].rail);
    }
  }
  Path p;
  const std::int64_t s = 8 * 3 + 1;    // domain 3, rail 1
  const std::int64_t d = 8 * 100 + 6;  // domain 100, rail 6
  f.route(s, d, 42, Forwarding::hb_first, p);
  EXPECT_EQ(test::walk_path(f, s, p), d);
  ASSERT_GE(p.size(), 4u);
  EXPECT_EQ(p[0], 2 * f.hb_link(s));
  EXPECT_EQ(p[1], 2 * f.hb_link(8 * 3 + 6) + 1);  // to rank 6 of the source's domain
  for (std::size_t i = 2; i < p.size(); ++i) {
    const auto& l = f.links[static_cast<std::size_t>(p[i] / 2)];
    EXPECT_NE(l.kind, topo::LinkKind::hb);
    EXPECT_EQ(f.nodes[static_cast<std::size_t>(l.b)].rail, 6);
  }
  p.clear();
  f.route(s, d, 42, Forwarding::rail_first, p);
  EXPECT_EQ(test::walk_path(f, s, p), d);
  EXPECT_EQ(p[p.size() - 2], 2 * f.hb_link(8 * 100 + 1));  // rank 1 of the destination domain
  EXPECT_EQ(p.back(), 2 * f.hb_link(d) + 1);
  // Same rail: no HB hop, leaf-spine-leaf.
  p.clear();
  f.route(1, 8 * 127 + 1, 7, Forwarding::hb_first, p);
  EXPECT_EQ(p.size(), 4u);
  EXPECT_EQ(test::walk_path(f, 1, p), 8 * 127 + 1);
}

TEST(Fabric, SmallRailsShareLeavesWholeRailsAtATime) {
  // 1,024 GPUs with K = 256: rails of 4 GPUs; a 64-port leaf (32 down) takes 8 whole rails, so
  // 32 leaves (not 256 one-rail leaves, which would need a third tier) and 16 spines.
  const auto c = test::h100_cluster(1024, 256);
  const Fabric f = topo::build_fabric(c, test::radix_design(spec::DesignKind::rail_optimized, 64));
  ASSERT_EQ(f.tiers, 2);
  EXPECT_EQ(f.switches_per_tier, (std::vector<std::int64_t>{32, 16}));
  // Same rail, different domains: one leaf hop.
  Path p;
  f.route(5, 256 * 3 + 5, 1, Forwarding::hb_first, p);
  EXPECT_EQ(p.size(), 2u);
  EXPECT_EQ(f.leaf_of(5, 0), f.leaf_of(256 * 3 + 5, 0));
  EXPECT_EQ(f.leaf_of(5, 0), f.leaf_of(7, 0));  // rails 5 and 7 share leaf 0 (rails 0-7)
  EXPECT_NE(f.leaf_of(5, 0), f.leaf_of(8, 0));
  EXPECT_EQ(f.nodes[static_cast<std::size_t>(f.leaf_of(5, 0))].rail, -1);
}

TEST(Fabric, IdealIsOneHbDomain) {
  const Fabric f = topo::build_fabric(test::h100_cluster(64, 8),
                                      test::radix_design(spec::DesignKind::ideal, 64));
  EXPECT_EQ(f.tiers, 0);
  EXPECT_EQ(f.cluster.hb_domain, 64);
  EXPECT_EQ(f.nodes.size(), 65u);
  EXPECT_EQ(f.links.size(), 64u);
  Path p;
  f.route(0, 63, 1, Forwarding::hb_first, p);
  EXPECT_EQ(p, (Path{0, 2 * 63 + 1}));
}

TEST(Fabric, EveryPairRoutesOnOddSizesSeveralNicsAndFourTiers) {
  struct Case {
    std::int64_t n, k;
    int nics, radix;
    spec::DesignKind kind;
    double oversub;
  };
  const Case cases[] = {
      {8 * 37, 8, 1, 8, spec::DesignKind::rail_optimized, 1.0},      // partial leaves and pods
      {8 * 37, 8, 2, 8, spec::DesignKind::rail_only, 1.0},           // 2 NICs per GPU
      {8 * 9, 8, 1, 4, spec::DesignKind::rail_optimized, 1.0},       // many tiers
      {8 * 50, 8, 1, 8, spec::DesignKind::rail_optimized, 3.0},      // oversubscribed leaf
      {256 * 4, 256, 1, 64, spec::DesignKind::rail_only, 1.0},       // rails smaller than a switch
      {48, 8, 1, 64, spec::DesignKind::rail_optimized, 1.0},         // one switch for every rail
      {256 * 4, 256, 1, 64, spec::DesignKind::rail_optimized, 1.0},  // 8 small rails per leaf
      {72 * 14, 72, 1, 64, spec::DesignKind::rail_optimized, 1.0},   // 4 rails per leaf, 18 leaves
  };
  for (const auto& cs : cases) {
    const auto c = test::h100_cluster(cs.n, cs.k, 400, cs.nics);
    const Fabric f = topo::build_fabric(c, test::radix_design(cs.kind, cs.radix, cs.oversub));
    check_degrees(f);
    // Graph counts agree with the plan.
    const auto np = topo::plan_network(c, f.design);
    for (int t = 1; t <= f.tiers; ++t) EXPECT_EQ(f.switches_per_tier[t - 1], np.switches_at(t));
    Path p;
    p.reserve(static_cast<std::size_t>(f.max_path_channels()));
    for (std::int64_t s = 0; s < cs.n; s += 7) {
      for (std::int64_t d = 0; d < cs.n; d += 5) {
        if (s == d) continue;
        p.clear();
        f.route(s, d, static_cast<std::uint64_t>(s ^ (d << 20)), Forwarding::hb_first, p);
        ASSERT_EQ(test::walk_path(f, s, p), d) << cs.n << " " << s << "->" << d;
        ASSERT_LE(p.size(), static_cast<std::size_t>(f.max_path_channels()));
      }
    }
  }
}

TEST(Fabric, OneHundredThirtyOneThousandGpusBuildWithLinearMemory) {
  const auto c = test::h100_cluster(131072, 8);
  const Fabric f = topo::build_fabric(c, test::radix_design(spec::DesignKind::rail_optimized, 64));
  EXPECT_EQ(f.tiers, 4);  // 64-port switches: 3 tiers hold 65,536 endpoints
  // HB + NIC links + (L-1) N switch links: linear in N.
  EXPECT_EQ(f.links.size(), static_cast<std::size_t>(131072 * 5));
  Path p;
  f.route(0, 131071, 9, Forwarding::hb_first, p);
  EXPECT_EQ(p.size(), 8u);
  EXPECT_EQ(test::walk_path(f, 0, p), 131071);
}

TEST(Fabric, BuildingStopsWhenCancelled) {
  request_cancel();
  EXPECT_THROW((void)topo::build_fabric(test::h100_cluster(4096, 8),
                                        test::radix_design(spec::DesignKind::rail_only, 64)),
               Cancelled);
  reset_cancel();
  EXPECT_NO_THROW((void)topo::build_fabric(test::h100_cluster(4096, 8),
                                           test::radix_design(spec::DesignKind::rail_only, 64)));
}
