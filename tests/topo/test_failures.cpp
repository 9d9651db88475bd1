// Failures as operations on the Fabric: hand-counted cases on small fabrics, and properties of
// the live routing over random failure sets.
#include <gtest/gtest.h>

#include "../common/error_of.hpp"
#include "../common/fabric_fixtures.hpp"
#include "railsim/core/error.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/failures.hpp"

using namespace railsim;
using topo::DegradedFabric;
using topo::Fabric;
using topo::FailureSet;
using topo::Path;
using topo::RouteStatus;

namespace {

Fabric build(spec::DesignKind kind, std::int64_t n, std::int64_t k, int radix) {
  return topo::build_fabric(test::h100_cluster(n, k), test::radix_design(kind, radix));
}

FailureSet parse(const Fabric& f, std::initializer_list<const char*> specs) {
  FailureSet s;
  for (const char* x : specs) s.push_back(topo::parse_failure(x, f));
  return s;
}

// The error of parsing one failure on f, or "" when it parses.
std::string parse_error(const Fabric& f, const char* spec) {
  return test::error_of([&] { topo::parse_failure(spec, f); });
}

// Walks a path from src; returns the node reached, or -1 when a channel is dead or the chain
// is broken.
std::int64_t walk(const DegradedFabric& d, std::int64_t src, const Path& p) {
  const Fabric& f = d.fabric();
  std::int64_t at = src;
  for (std::int32_t ch : p) {
    const auto& l = f.links.at(static_cast<std::size_t>(ch / 2));
    const bool up = ch % 2 == 0;
    if (at != (up ? l.a : l.b) || !d.link_alive(ch / 2)) return -1;
    at = up ? l.b : l.a;
    if (!d.node_alive(at)) return -1;
  }
  return at;
}

std::int64_t cut_off(const DegradedFabric& d) {
  std::int64_t n = 0;
  for (std::int64_t g = 0; g < d.fabric().cluster.gpus; ++g) n += d.cut_off(g) ? 1 : 0;
  return n;
}

const topo::TierCapacity& tier(const std::vector<topo::TierCapacity>& t, const std::string& n) {
  for (const auto& x : t)
    if (x.name == n) return x;
  throw std::runtime_error("no tier " + n);
}

// rail_only, 128 GPUs in 16 domains of 8, 8-port switches: each rail is a two-tier Clos of 4
// leaves (4 down, 4 up) and 2 spines (8 down; 2 links to each leaf).
Fabric small_rail_only() {
  return build(spec::DesignKind::rail_only, 128, 8, 8);
}

}  // namespace

TEST(Failures, SmallRailOnlyIsWhatTheCommentSays) {
  const Fabric f = small_rail_only();
  ASSERT_EQ(f.tiers, 2);
  EXPECT_EQ(f.switches_per_tier[0], 32);
  EXPECT_EQ(f.switches_per_tier[1], 16);
  EXPECT_EQ(f.plan.tiers[1].links_between(0, 0), 2);
}

TEST(Failures, HealthyRoutesAreTheFabricsRoutes) {
  for (auto kind : {spec::DesignKind::rail_only, spec::DesignKind::rail_optimized}) {
    const Fabric f = build(kind, 128, 8, 8);
    const DegradedFabric d(f, {}, true);
    Path a, b;
    for (std::int64_t s = 0; s < 128; s += 3)
      for (std::int64_t t = 0; t < 128; t += 5) {
        if (s == t) continue;
        const std::uint64_t h = static_cast<std::uint64_t>(s * 131 + t);
        a.clear();
        b.clear();
        f.route(s, t, h, topo::Forwarding::hb_first, a);
        ASSERT_EQ(d.route(s, t, h, 0, b), RouteStatus::direct);
        ASSERT_EQ(a, b) << s << " -> " << t;
        EXPECT_EQ(d.peer_choices(s, t), 0);
      }
    EXPECT_EQ(cut_off(d), 0);
  }
}

TEST(Failures, DeadNicIsForwardedThroughEveryPeerOnRailOnly) {
  const Fabric f = small_rail_only();
  const DegradedFabric d(f, parse(f, {"nic:3"}), true);
  EXPECT_FALSE(d.edge_alive(3, 0));
  EXPECT_FALSE(d.cut_off(3));
  EXPECT_EQ(cut_off(d), 0);
  // GPU 3 (domain 0, rail 3) to GPU 83 (domain 10, rail 3): over each of the 7 other rails.
  EXPECT_EQ(d.peer_choices(3, 83), 7);
  for (int c = 0; c < 7; ++c) {
    Path p;
    ASSERT_EQ(d.route(3, 83, 99, c, p), RouteStatus::forwarded);
    EXPECT_EQ(walk(d, 3, p), 83);
    // GPU -> HB switch -> peer on rail c' (c' != 3) -> its rail ... -> peer -> HB -> GPU 83.
    EXPECT_EQ(p.front(), 2 * f.hb_link(3));
    EXPECT_EQ(p.back(), 2 * f.hb_link(83) + 1);
    const std::int64_t peer = f.links[static_cast<std::size_t>(p[1] / 2)].a;
    EXPECT_EQ(f.cluster.domain_of(peer), 0);
    EXPECT_EQ(f.cluster.rail_of(peer), c < 3 ? c : c + 1);
  }
  // The other direction, and pairs that do not involve GPU 3, are not forwarded.
  EXPECT_EQ(d.peer_choices(83, 3), 7);
  EXPECT_EQ(d.peer_choices(4, 84), 0);
  // Capacity: one NIC link of 128.
  const auto cap = topo::capacity_by_tier(d);
  EXPECT_EQ(tier(cap, "GPU-leaf").links, 128);
  EXPECT_EQ(tier(cap, "GPU-leaf").links_lost, 1);
  EXPECT_EQ(tier(cap, "leaf-spine").links_lost, 0);
  // Without PXN the GPU is cut off and its pairs have no path.
  const DegradedFabric no(f, parse(f, {"nic:3"}), false);
  EXPECT_TRUE(no.cut_off(3));
  Path p;
  EXPECT_EQ(no.route(3, 83, 1, 0, p), RouteStatus::none);
}

TEST(Failures, DeadLeafOnRailOnlyForwardsItsFourGpus) {
  const Fabric f = small_rail_only();
  // Leaf 0 of rail 0 serves rail 0 of domains 0-3 (GPUs 0, 8, 16, 24).
  const DegradedFabric d(f, parse(f, {"leaf:0"}), true);
  for (std::int64_t g : {0, 8, 16, 24}) EXPECT_FALSE(d.edge_alive(g, 0)) << g;
  EXPECT_TRUE(d.edge_alive(32, 0));
  EXPECT_EQ(cut_off(d), 0);
  const auto cap = topo::capacity_by_tier(d);
  EXPECT_EQ(tier(cap, "GPU-leaf").links_lost, 4);
  EXPECT_EQ(tier(cap, "leaf-spine").links, 8 * 16);
  EXPECT_EQ(tier(cap, "leaf-spine").links_lost, 4);
  EXPECT_EQ(d.peer_choices(0, 40), 7);
  EXPECT_EQ(d.peer_choices(0, 8), 7);  // both ends on the dead leaf
  EXPECT_EQ(d.peer_choices(32, 40), 0);
  // The dead leaf's block is skipped; the other leaves keep their uplinks.
  EXPECT_EQ(topo::degraded_uplink_ratio(d, {1.0, 1.0, 1.0})[1], 1.0);
  const DegradedFabric no(f, parse(f, {"leaf:0"}), false);
  EXPECT_EQ(cut_off(no), 4);
}

TEST(Failures, DeadSpineHalvesTheLeafUplinksOfItsRail) {
  const Fabric f = small_rail_only();
  const DegradedFabric d(f, parse(f, {"spine:0"}), true);
  const auto cap = topo::capacity_by_tier(d);
  EXPECT_EQ(tier(cap, "leaf-spine").links_lost, 8);  // 2 links to each of 4 leaves
  EXPECT_EQ(tier(cap, "GPU-leaf").links_lost, 0);
  EXPECT_EQ(cut_off(d), 0);
  EXPECT_DOUBLE_EQ(topo::degraded_uplink_ratio(d, {1.0, 1.0, 1.0})[1], 2.0);
  // Every pair of rail 0 across leaves still has a direct route, over spine 1 only.
  const std::int64_t spine1 = f.tier_node_base[2] + 1;
  for (std::int64_t s = 0; s < 128; s += 8)
    for (std::int64_t t = 0; t < 128; t += 8) {
      if (f.cluster.domain_of(s) / 4 == f.cluster.domain_of(t) / 4) continue;
      Path p;
      ASSERT_EQ(d.route(s, t, static_cast<std::uint64_t>(s ^ (t << 7)), 0, p), RouteStatus::direct);
      ASSERT_EQ(walk(d, s, p), t);
      EXPECT_EQ(f.links[static_cast<std::size_t>(p[1] / 2)].b, spine1);
    }
}

TEST(Failures, DeadUplinkAndDeadDomain) {
  const Fabric f = small_rail_only();
  const DegradedFabric d(f, parse(f, {"uplink:1:0", "domain:2"}), true);
  const auto cap = topo::capacity_by_tier(d);
  EXPECT_EQ(tier(cap, "leaf-spine").links_lost, 1);
  EXPECT_EQ(tier(cap, "HB").links_lost, 8);
  EXPECT_EQ(tier(cap, "GPU-leaf").links_lost, 8);
  EXPECT_EQ(cut_off(d), 8);
  for (std::int64_t g = 16; g < 24; ++g) EXPECT_TRUE(d.cut_off(g));
  EXPECT_DOUBLE_EQ(topo::degraded_uplink_ratio(d, {1.0, 1.0, 1.0})[1], 4.0 / 3.0);
  Path p;
  EXPECT_EQ(d.route(0, 16, 1, 0, p), RouteStatus::none);
}

TEST(Failures, OneTierRailWhoseSwitchDies) {
  // 16 domains of 8 on 32-port switches: each rail is one switch.
  const Fabric f = build(spec::DesignKind::rail_only, 128, 8, 32);
  ASSERT_EQ(f.tiers, 1);
  const DegradedFabric d(f, parse(f, {"leaf:5"}), true);
  for (std::int64_t dom = 0; dom < 16; ++dom) EXPECT_FALSE(d.edge_alive(dom * 8 + 5, 0));
  EXPECT_EQ(cut_off(d), 0);
  EXPECT_EQ(d.peer_choices(5, 13), 7);
  EXPECT_EQ(cut_off(DegradedFabric(f, parse(f, {"leaf:5"}), false)), 16);
}

TEST(Failures, RailOptimizedDeadLeaf) {
  const Fabric f = build(spec::DesignKind::rail_optimized, 128, 8, 8);
  const DegradedFabric no(f, parse(f, {"leaf:0"}), false);
  EXPECT_EQ(cut_off(no), 4);
  const DegradedFabric d(f, parse(f, {"leaf:0"}), true);
  EXPECT_EQ(cut_off(d), 0);
  // GPU 0 leaves through a peer of its domain and enters GPU 40 directly (any rail reaches any
  // rail): 7 peers.
  EXPECT_EQ(d.peer_choices(0, 40), 7);
  Path p;
  ASSERT_EQ(d.route(0, 40, 3, 2, p), RouteStatus::forwarded);
  EXPECT_EQ(walk(d, 0, p), 40);
  EXPECT_EQ(p.back(), 2 * f.nic_link(40, 0) + 1);
}

TEST(Failures, LiveRoutesNeverCrossDeadComponents) {
  for (auto kind : {spec::DesignKind::rail_only, spec::DesignKind::rail_optimized}) {
    const Fabric f = build(kind, 128, 8, 8);
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      const DegradedFabric d(f, topo::random_failures(f, 6, seed), true);
      std::int64_t routed = 0;
      for (std::int64_t s = 0; s < 128; ++s)
        for (std::int64_t t = 0; t < 128; t += 7) {
          if (s == t) continue;
          Path p;
          const int n = std::max(1, d.peer_choices(s, t));
          for (int c = 0; c < n; ++c) {
            p.clear();
            const RouteStatus st = d.route(s, t, static_cast<std::uint64_t>(s * 7 + t), c, p);
            if (st == RouteStatus::none) {
              // Only when an end is cut off, or the fabric is split above the leaves.
              continue;
            }
            ++routed;
            ASSERT_EQ(walk(d, s, p), t)
                << topo::to_string(d.failures()[0]) << " " << s << "->" << t;
          }
          if (!d.cut_off(s) && !d.cut_off(t) && kind == spec::DesignKind::rail_optimized &&
              f.cluster.rail_of(s) == f.cluster.rail_of(t)) {
            p.clear();
            EXPECT_NE(d.route(s, t, 1, 0, p), RouteStatus::none) << s << "->" << t;
          }
        }
      EXPECT_GT(routed, 1500);
    }
  }
}

TEST(Failures, ParseAndRandom) {
  const Fabric f = small_rail_only();
  EXPECT_EQ(topo::to_string(topo::parse_failure("spine:15", f)), "spine:15");
  EXPECT_EQ(topo::to_string(topo::parse_failure("switch:2:3", f)), "spine:3");
  EXPECT_EQ(topo::to_string(topo::parse_failure("link:7", f)), "link:7");
  EXPECT_EQ(topo::to_string(topo::parse_failure("uplink:1:127", f)), "uplink:1:127");
  auto err = [&](const char* s) { return parse_error(f, s); };
  EXPECT_NE(err("leaf:32").find("out of range (0 to 31)"), std::string::npos) << err("leaf:32");
  EXPECT_NE(err("core:0").find("tier 3 is out of range (1 to 2)"), std::string::npos)
      << err("core:0");
  EXPECT_NE(err("fan:1").find("unknown component 'fan'"), std::string::npos);
  EXPECT_NE(err("gpu:-1").find("not a non-negative integer"), std::string::npos);
  EXPECT_NE(err("gpu").find("KIND:INDEX"), std::string::npos);
  EXPECT_NE(err("nic:3.1").find("NIC"), std::string::npos);
  EXPECT_NE(err("uplink:2:0").find("out of range (1 to 1)"), std::string::npos)
      << err("uplink:2:0");
  EXPECT_NE(err("domain:16").find("out of range (0 to 15)"), std::string::npos);

  const FailureSet a = topo::random_failures(f, 40, 7), b = topo::random_failures(f, 40, 7);
  ASSERT_EQ(a.size(), 40u);
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(topo::to_string(a[i]), topo::to_string(b[i]));
  EXPECT_NE(topo::to_string(topo::random_failures(f, 1, 8)[0]) +
                topo::to_string(topo::random_failures(f, 2, 9)[1]),
            topo::to_string(a[0]) + topo::to_string(a[1]));
  // 128 GPUs + 128 NICs + 128 links + 48 switches + 128 switch-switch links + 16 domains x 4
  // NVSwitch planes (H100).
  EXPECT_EQ(topo::random_failures(f, 624, 1).size(), 624u);
  EXPECT_THROW(topo::random_failures(f, 625, 1), InputError);
}

TEST(Failures, DeadNvSwitchPlanes) {
  const Fabric f = small_rail_only();  // H100: 4 NVSwitch planes per domain
  ASSERT_EQ(f.cluster.gpu.hb_planes, 4);
  EXPECT_EQ(topo::to_string(topo::parse_failure("nvswitch:2.3", f)), "nvswitch:2.3");
  const DegradedFabric one(f, parse(f, {"nvswitch:2"}), true);
  EXPECT_DOUBLE_EQ(one.hb_factor(2), 0.75);
  EXPECT_DOUBLE_EQ(one.hb_factor(1), 1.0);
  EXPECT_EQ(cut_off(one), 0);
  const auto cap = topo::capacity_by_tier(one);
  EXPECT_EQ(tier(cap, "HB").links_lost, 0);
  EXPECT_NEAR(tier(cap, "HB").lost_Bps / tier(cap, "HB").capacity_Bps, 0.25 / 16, 1e-12);
  // The same plane twice is one plane; all four: the domain's HB switch is dead, but its GPUs
  // still reach the network through their own NICs.
  EXPECT_DOUBLE_EQ(DegradedFabric(f, parse(f, {"nvswitch:2", "nvswitch:2.0"}), true).hb_factor(2),
                   0.75);
  const DegradedFabric all(
      f, parse(f, {"nvswitch:2", "nvswitch:2.1", "nvswitch:2.2", "nvswitch:2.3"}), true);
  EXPECT_FALSE(all.hb_alive(16));
  EXPECT_FALSE(all.cut_off(16));
  Path p;
  EXPECT_EQ(all.route(16, 17, 1, 0, p), RouteStatus::none);  // no HB path inside the domain
  auto err = [&](const char* s) { return parse_error(f, s); };
  EXPECT_NE(err("nvswitch:2.4").find("out of range (0 to 3)"), std::string::npos);
  const Fabric gh =
      topo::build_fabric(spec::make_cluster(spec::load_gpu("GH200"), 512, 256, 400, 450, 1),
                         spec::make_network_design(spec::DesignKind::rail_only,
                                                   spec::load_switch("ETH-51.2T-128x400G")));
  EXPECT_NE(parse_error(gh, "nvswitch:0").find("does not give hb_planes"), std::string::npos)
      << parse_error(gh, "nvswitch:0");
}
