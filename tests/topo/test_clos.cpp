// Sizing of the upper tiers of a Clos (topo::plan_clos): even striping where it wastes no switch,
// otherwise as many switches as the uplinks that exist need, wired round-robin; and the built
// graph, route() and the plan agree on the uneven wiring.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "../common/error_of.hpp"
#include "../common/fabric_fixtures.hpp"
#include "railsim/core/error.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/builders.hpp"

using namespace railsim;
using spec::DesignKind;
using topo::Fabric;
using topo::Forwarding;
using topo::Path;

namespace {

std::vector<std::int64_t> per_tier(const topo::NetworkPlan& np) {
  std::vector<std::int64_t> v;
  for (int t = 1; t <= np.tiers(); ++t) v.push_back(np.switches_at(t));
  return v;
}

// The graph against its plan: every switch uses <= radix ports; every up port of every switch
// below the top is cabled exactly once, to a switch of the next tier in its parent block; every
// switch of a block has floor(P / X) or ceil(P / X) links to each of its sub-blocks (P up ports
// per sub-block, X switches per block) and at most its down ports in all.
void check_wiring(const Fabric& f) {
  const topo::ClosPlan& p = f.plan;
  const int L = p.tier_count();
  std::vector<std::int64_t> deg(f.nodes.size(), 0), up(f.nodes.size(), 0);
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> pair_links;  // (upper, sub-block)
  std::vector<std::int64_t> boundary(static_cast<std::size_t>(L), 0);
  for (const auto& l : f.links) {
    if (l.kind == topo::LinkKind::hb) continue;
    ++deg[static_cast<std::size_t>(l.b)];
    if (l.kind == topo::LinkKind::nic) continue;
    ++deg[static_cast<std::size_t>(l.a)];
    ++up[static_cast<std::size_t>(l.a)];
    const auto& a = f.nodes[static_cast<std::size_t>(l.a)];
    const auto& b = f.nodes[static_cast<std::size_t>(l.b)];
    ASSERT_EQ(a.tier, l.tier);
    ASSERT_EQ(b.tier, l.tier + 1);
    ++boundary[static_cast<std::size_t>(l.tier)];
    // Instance, sub-block of the lower end, block of the upper end.
    const int t = l.tier;
    const topo::ClosTier& lo = p.tiers[static_cast<std::size_t>(t - 1)];
    const topo::ClosTier& hi = p.tiers[static_cast<std::size_t>(t)];
    const std::int64_t la = l.a - f.tier_node_base[static_cast<std::size_t>(t)];
    const std::int64_t lb = l.b - f.tier_node_base[static_cast<std::size_t>(t + 1)];
    ASSERT_EQ(la / lo.switches(), lb / hi.switches()) << "link between Clos instances";
    const std::int64_t sub = la % lo.switches() / lo.switches_per_block;
    ASSERT_EQ(sub / hi.group, lb % hi.switches() / hi.switches_per_block) << "not the parent";
    ++pair_links[{l.b, la / lo.switches() * lo.blocks + sub}];
  }
  for (int t = 1; t < L; ++t)
    EXPECT_EQ(boundary[static_cast<std::size_t>(t)],
              f.layout.instances * p.tiers[static_cast<std::size_t>(t - 1)].uplinks());
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    const auto& n = f.nodes[i];
    if (n.kind != topo::NodeKind::network_switch) continue;
    ASSERT_LE(deg[i], f.design.sw.radix) << "switch " << i;
    const topo::ClosTier& ct = p.tiers[static_cast<std::size_t>(n.tier - 1)];
    ASSERT_EQ(up[i], n.tier < L ? ct.up_ports : 0) << "switch " << i;
    if (n.tier >= 2) {
      ASSERT_LE(deg[i] - up[i], n.tier < L ? ct.down_ports : f.design.sw.radix);
    }
  }
  for (int t = 2; t <= L; ++t) {
    const topo::ClosTier& hi = p.tiers[static_cast<std::size_t>(t - 1)];
    const std::int64_t P = hi.sub_ports, X = hi.switches_per_block;
    const std::int64_t lo_blocks = p.tiers[static_cast<std::size_t>(t - 2)].blocks;
    for (std::int64_t inst = 0; inst < f.layout.instances; ++inst)
      for (std::int64_t s = 0; s < lo_blocks; ++s)
        for (std::int64_t j = 0; j < X; ++j) {
          const std::int64_t node = f.tier_node_base[static_cast<std::size_t>(t)] +
                                    inst * hi.switches() + s / hi.group * X + j;
          const std::int64_t c = pair_links[{node, inst * lo_blocks + s}];
          ASSERT_GE(c, P / X) << "tier " << t << " switch " << j << " sub-block " << s;
          ASSERT_LE(c, (P + X - 1) / X) << "tier " << t << " switch " << j << " sub-block " << s;
        }
  }
}

// Routes every pair (src, dst) of the sample, checking each path; returns the tier-`top` switches
// that the paths between GPUs 0 and `far` go through over `hashes` flow hashes.
std::set<std::int32_t> check_routes(const Fabric& f, std::int64_t step, std::int64_t far = -1,
                                    int top = 0, int hashes = 0) {
  Path p;
  p.reserve(static_cast<std::size_t>(f.max_path_channels()));
  const std::int64_t n = f.gpu_count();
  for (std::int64_t s = 0; s < n; s += step) {
    for (std::int64_t d = (s * 7 + 3) % step; d < n; d += step) {
      if (s == d) continue;
      p.clear();
      f.route(s, d, static_cast<std::uint64_t>(s * 1315423911u + d), Forwarding::hb_first, p);
      EXPECT_LE(p.size(), static_cast<std::size_t>(f.max_path_channels()));
      EXPECT_EQ(test::walk_path(f, s, p), d) << s << "->" << d;
      if (::testing::Test::HasFailure()) return {};
    }
  }
  std::set<std::int32_t> tops;
  for (int h = 0; h < hashes; ++h) {
    p.clear();
    f.route(0, far, static_cast<std::uint64_t>(h), Forwarding::hb_first, p);
    EXPECT_EQ(test::walk_path(f, 0, p), far);
    for (std::int32_t ch : p) {
      const auto& l = f.links[static_cast<std::size_t>(ch / 2)];
      if (f.nodes[static_cast<std::size_t>(l.b)].tier == top) tops.insert(l.b);
    }
  }
  return tops;
}

}  // namespace

TEST(ClosSizing, SmallHandDrawnCaseDealsUplinksRoundRobin) {
  // One rail of 15 GPUs on 8-port switches at 5:3 (5 down, 3 up per leaf): 3 leaves, 9 uplinks.
  // Even striping can only give each spine 1 link of each leaf (3 is odd, 2 links x 3 leaves fit)
  // and needs 3 spines with 3 of 8 ports cabled; the uplinks need ceil(9 / 8) = 2 spines. Uplink
  // g = 3 leaf + port goes to spine g mod 2: spine 0 takes leaf 0's ports 0 and 2, leaf 1's port 1
  // and leaf 2's ports 0 and 2 (5 links); spine 1 takes the other 4.
  const auto c = test::h100_cluster(15, 1);
  const auto np =
      topo::plan_network(c, test::radix_design(DesignKind::rail_optimized, 8, 5.0 / 3.0));
  ASSERT_EQ(np.tiers(), 2);
  EXPECT_EQ(per_tier(np), (std::vector<std::int64_t>{3, 2}));
  const topo::ClosTier& spine = np.plan.tiers[1];
  EXPECT_FALSE(spine.even());
  EXPECT_EQ(spine.down_links(3, 0), 5);
  EXPECT_EQ(spine.down_links(3, 1), 4);
  EXPECT_EQ(spine.links_between(0, 0), 2);
  EXPECT_EQ(spine.links_between(1, 0), 1);
  EXPECT_EQ(spine.port_between(1, 0, 0), 1);
  EXPECT_EQ(spine.port_between(2, 0, 1), 2);
  EXPECT_EQ(spine.switch_of(1, 0), 1);
  // Without oversubscription: 4 leaves of 4 down / 4 up, 16 uplinks, 2 spines taking 2 links of
  // every leaf (even striping, both spines full).
  const auto full = topo::plan_network(c, test::radix_design(DesignKind::rail_optimized, 8));
  EXPECT_EQ(per_tier(full), (std::vector<std::int64_t>{4, 2}));
  EXPECT_TRUE(full.plan.tiers[1].even());

  const Fabric f =
      topo::build_fabric(c, test::radix_design(DesignKind::rail_optimized, 8, 5.0 / 3.0));
  check_wiring(f);
  const auto spines = check_routes(f, 1, 14, 2, 200);
  EXPECT_EQ(spines.size(), 2u);
  // The graph's spine degrees: 5 and 4 down links.
  std::map<std::int32_t, int> down;
  for (const auto& l : f.links)
    if (l.kind == topo::LinkKind::switch_switch) ++down[l.b];
  ASSERT_EQ(down.size(), 2u);
  EXPECT_EQ(down.begin()->second, 5);
  EXPECT_EQ(down.rbegin()->second, 4);
}

TEST(ClosSizing, RailOnly32kTwoToOneSizesSpinesToTheUplinks) {
  // 32,768 H100 (K = 8), rail-only, 128-port switches, 2:1 at the leaf. By hand: down =
  // round(128 x 2/3) = 85, up = 43. A rail of 4,096 GPUs takes ceil(4096 / 85) = 49 leaves (392 in
  // all) with 49 x 43 = 2,107 uplinks; ceil(2107 / 128) = 17 spines per rail, 136 in all (16 of
  // them with 124 links, one with 123). Even striping would give each spine one link of each leaf
  // (43 is prime and 2 x 49 links fit a spine, 43 x 49 do not): 43 spines per rail, 344 in all,
  // each using 49 of 128 ports: more than the 256 spines of the non-blocking design.
  const auto c = test::h100_cluster(32768, 8);
  const auto d = test::radix_design(DesignKind::rail_only, 128, 2.0);
  const auto np = topo::plan_network(c, d);
  EXPECT_EQ(per_tier(np), (std::vector<std::int64_t>{392, 136}));
  const topo::ClosTier& spine = np.plan.tiers[1];
  EXPECT_EQ(spine.switches_per_block, 17);
  EXPECT_FALSE(spine.even());
  EXPECT_EQ(spine.down_links(49, 0), 124);
  EXPECT_EQ(spine.down_links(49, 15), 124);
  EXPECT_EQ(spine.down_links(49, 16), 123);
  EXPECT_EQ(per_tier(topo::plan_network(c, test::radix_design(DesignKind::rail_only, 128))),
            (std::vector<std::int64_t>{512, 256}));

  const Fabric f = topo::build_fabric(c, d);
  check_wiring(f);
  // Each leaf's 43 uplinks: 3 links to 9 spines, 2 to the other 8.
  std::map<std::pair<std::int32_t, std::int32_t>, int> pairs;
  for (const auto& l : f.links)
    if (l.kind == topo::LinkKind::switch_switch) ++pairs[{l.a, l.b}];
  std::map<std::int32_t, std::map<int, int>> per_leaf;  // leaf -> links per spine -> spines
  for (const auto& [ab, n] : pairs) ++per_leaf[ab.first][n];
  ASSERT_EQ(per_leaf.size(), 392u);
  for (const auto& [leaf, hist] : per_leaf)
    ASSERT_EQ(hist, (std::map<int, int>{{2, 8}, {3, 9}})) << "leaf " << leaf;
  // GPU 0 (rail 0, leaf 0) to the last GPU of rail 0 (leaf 48): every spine of the rail is used.
  const auto spines = check_routes(f, 331, 32768 - 8, 2, 2000);
  EXPECT_EQ(spines.size(), 17u);
}

TEST(ClosSizing, RailOnly32kOneAndAHalfAndThreeToOne) {
  const auto c = test::h100_cluster(32768, 8);
  // 1.5:1: down = round(128 x 1.5/2.5) = 77, up = 51; ceil(4096 / 77) = 54 leaves per rail (432);
  // 54 x 51 = 2,754 uplinks, ceil(2754 / 128) = 22 spines per rail (176). Even striping: 51 is odd,
  // so one link per pair, 51 spines per rail (408 in all).
  EXPECT_EQ(per_tier(topo::plan_network(c, test::radix_design(DesignKind::rail_only, 128, 1.5))),
            (std::vector<std::int64_t>{432, 176}));
  // 3:1: down 96, up 32; ceil(4096 / 96) = 43 leaves per rail (344); 43 x 32 = 1,376 uplinks,
  // ceil(1376 / 128) = 11 spines per rail (88). Even striping: 2 links per pair, 16 spines with
  // 86 of 128 ports cabled (128 in all): 16 > 4/3 x 11, so the uplinks set the count.
  EXPECT_EQ(per_tier(topo::plan_network(c, test::radix_design(DesignKind::rail_only, 128, 3.0))),
            (std::vector<std::int64_t>{344, 88}));
  const Fabric f = topo::build_fabric(c, test::radix_design(DesignKind::rail_only, 128, 3.0));
  check_wiring(f);
  EXPECT_EQ(check_routes(f, 257, 32768 - 8, 2, 1000).size(), 11u);
}

TEST(ClosSizing, ThreeTierCoreOfNonPowerOfTwoPodsIsSizedToItsUplinks) {
  // 18,432 GB200-class GPUs, 72 per HB domain, 800G NICs on 64 x 800G switches, rail-optimized:
  // 72 rails of 256 ports, 8 leaves each (576); 18 pods of 32 leaves with 32 spines each (576
  // spines, every spine full); each pod has 32 x 32 = 1,024 uplinks, 18,432 in all. Cores:
  // ceil(18432 / 64) = 288, each with 64 links (3 or 4 to each pod). Even striping takes 2 links
  // of each pod per core (3 does not divide 1,024): 512 cores with 36 of 64 ports cabled.
  const auto c = test::h100_cluster(18432, 72, 800);
  const auto d = test::radix_design(DesignKind::rail_optimized, 64, 1.0, 1, 800);
  const auto np = topo::plan_network(c, d);
  EXPECT_EQ(per_tier(np), (std::vector<std::int64_t>{576, 576, 288}));
  const topo::ClosTier& core = np.plan.tiers[2];
  EXPECT_FALSE(core.even());
  EXPECT_EQ(core.down_links(18, 0), 64);
  EXPECT_EQ(core.down_links(18, 287), 64);
  EXPECT_TRUE(np.plan.tiers[1].even());  // the pods' spines stay evenly striped

  const Fabric f = topo::build_fabric(c, d);
  check_wiring(f);
  // GPU 0 (pod 0) to the last GPU (rail 71, pod 17): through the cores, every core used.
  const auto cores = check_routes(f, 613, 18431, 3, 20000);
  EXPECT_EQ(cores.size(), 288u);
}

TEST(ClosSizing, EvenStripingKeptWhereItWastesNoSwitch) {
  // NVIDIA's spine rule survives where it costs at most a third more than the minimum and nothing
  // for divisibility: 24 leaves x 32 uplinks on 64-port spines (DGX H100 SuperPOD, 3 SUs) give 16
  // spines with 2 links per leaf, not the 12 the uplinks need (tests/topo/test_superpod.cpp has
  // every published row).
  const auto np = topo::plan_network(test::h100_cluster(768, 8),
                                     test::radix_design(DesignKind::rail_optimized, 64, 1.0, 1));
  EXPECT_EQ(per_tier(np), (std::vector<std::int64_t>{24, 16}));
  EXPECT_TRUE(np.plan.tiers[1].even());
  EXPECT_EQ(np.plan.tiers[1].links_per_pair, 2);
  // 40 leaves (5 SUs): 32 spines with one link per leaf would leave 24 of 64 ports empty;
  // ceil(40 x 32 / 64) = 20 spines, 1 or 2 links per leaf.
  EXPECT_EQ(per_tier(topo::plan_network(test::h100_cluster(1280, 8),
                                        test::radix_design(DesignKind::rail_optimized, 64))),
            (std::vector<std::int64_t>{40, 20}));
}

TEST(ClosSizing, OversubscribingNeverAddsSwitchesAtAnyTier) {
  // Same cluster, same switch: an oversubscribed tier has fewer uplinks above it, so no tier may
  // need more switches than without oversubscription.
  const std::int64_t sizes[] = {1024,  2048,  3072,  4096,  6144,  8192,  10368, 12288,
                                16384, 18432, 24576, 32768, 49152, 65536, 98304, 131072};
  int checked = 0;
  for (const int radix : {64, 128, 144})
    for (const std::int64_t k : {8, 72, 256})
      for (const std::int64_t n0 : sizes) {
        const std::int64_t n = n0 / k * k;
        const auto c = test::h100_cluster(n, k);
        for (const auto kind : {DesignKind::rail_optimized, DesignKind::rail_only}) {
          topo::NetworkPlan base;
          try {
            base = topo::plan_network(c, test::radix_design(kind, radix));
          } catch (const InputError&) {
            continue;  // more than 8 tiers
          }
          for (const double r : {1.5, 2.0, 3.0, 4.0, 5.0, 7.0})
            for (const int tier : {1, 2}) {
              SCOPED_TRACE(std::to_string(n) + " GPUs, K=" + std::to_string(k) + ", radix " +
                           std::to_string(radix) + ", " + std::string(spec::to_string(kind)) +
                           ", " + std::to_string(r) + ":1 at tier " + std::to_string(tier));
              const auto over = topo::plan_network(c, test::radix_design(kind, radix, r, tier));
              ASSERT_LE(over.tiers(), base.tiers());
              for (int t = 1; t <= over.tiers(); ++t)
                ASSERT_LE(over.switches_at(t), base.switches_at(t));
              ++checked;
            }
        }
      }
  EXPECT_GT(checked, 2000);
}

// A tier's ports given as counts (--port-split): Alibaba HPN's ToR, 128 x 200G down and 60 x 400G
// up, as 128 down and 120 up lanes of a 256 x 200G switch (8 unused). One plane of HPN's pod (8
// rails of 1,920 ports): 15 ToRs per rail, and the 120 ToRs' 120 uplinks stripe two per
// aggregation switch over 60, HPN's count (Qian et al., SIGCOMM 2024); the ratio alone (1.067)
// would split the radix 132:124 and stripe over 62.
TEST(Clos, PortSplitGivesTheTierItsPortCounts) {
  const topo::ClosPlan p = topo::plan_clos(8, 1920, 256, 1.0, 1, "--switch", 0, 128, 120);
  ASSERT_EQ(p.tier_count(), 2);
  EXPECT_EQ(p.tiers[0].down_ports, 128);
  EXPECT_EQ(p.tiers[0].up_ports, 120);
  EXPECT_EQ(p.tiers[0].switches(), 120);
  EXPECT_EQ(p.tiers[1].switches(), 60);
  EXPECT_TRUE(p.tiers[1].even());
  EXPECT_EQ(p.tiers[1].links_per_pair, 2);
  const topo::ClosPlan by_ratio = topo::plan_clos(8, 1920, 256, 128.0 / 120.0, 1);
  EXPECT_EQ(by_ratio.tiers[0].down_ports, 132);
  EXPECT_NE(by_ratio.tiers[1].switches(), 60);
  EXPECT_EQ(test::field_of([] { topo::plan_clos(8, 1920, 256, 1.0, 1, "--switch", 0, 200, 120); }),
            "--port-split");
}
