#pragma once
// Sizing of one folded Clos (fat tree) over a set of NIC ports, tier by tier.
//
// The construction (docs/design.md has the derivation and the NVIDIA tables it reproduces):
// - Tier 1 (leaves): leaves are grouped by rail (a leaf serves NIC ports of one rail only);
//   when a rail is smaller than a leaf, whole rails share a leaf (as many as fit: a rail group),
//   which keeps each rail's traffic on one leaf; each leaf has d1 down ports and u1 = k - d1 up
//   ports (d1 = k/2 unless oversubscribed), and every up port is provisioned even when the leaf is
//   not full (NVIDIA sizes SUs whole).
// - A level-t block (t >= 2) groups n_t consecutive level-(t-1) blocks and owns X_t tier-t
//   switches, each of which has at least one link to every sub-block, so every tier-t switch of a
//   block reaches every endpoint below the block. A sub-block's up ports p belong to its
//   tier-(t-1) switch p / u_{t-1}.
// - Intermediate tiers take at most d_t down links per switch (d_t = k/2 non-blocking) and have
//   u_t up ports; the top tier is one block whose switches use up to all k ports down.
// - X_t and the wiring (ClosTier::switch_of), with P = P_{t-1} up ports per sub-block, n = n_t
//   and cap = d_t (k at the top):
//   * even striping: c_t = the largest divisor of P with n c_t <= cap, X_even = P / c_t, every
//     switch takes c_t links of every sub-block (NVIDIA's spine rule: the spine count is the
//     smallest >= ceil(up ports / k) over which each leaf's uplinks stripe evenly);
//   * sized to the uplinks: X_min = ceil(n P / cap), the fewest switches that can terminate the
//     block's uplinks, dealt round-robin (each switch-sub-block pair gets floor(P / X_min) or one
//     more link, each switch floor(n P / X_min) or one more in all).
//   Even striping is kept when it costs no switch for divisibility (X_even = ceil(P / floor(cap /
//   n)), the fewest any equal-links-per-pair wiring allows) and at most a third more than the
//   minimum (3 X_even <= 4 X_min: its switches are on average at least 3/4 cabled, the bound of
//   NVIDIA's 3-SU H100 spine layer); otherwise the tier has X_min switches.
// - The fewest tiers whose top block can hold all level-(t-1) blocks (<= k of them).
#include <cstdint>
#include <string>
#include <vector>

namespace railsim::topo {

// The deepest Clos plan_clos builds (tiers of switches).
inline constexpr int kMaxClosTiers = 8;

struct ClosTier {
  int down_ports = 0;                   // d_t: ports per switch that may face down
  int up_ports = 0;                     // u_t: ports per switch facing up (0 on the top tier)
  std::int64_t group = 1;               // n_t: sub-blocks per block (t >= 2); unused for t = 1
  std::int64_t sub_ports = 0;           // P_{t-1}: up ports of one sub-block (t >= 2)
  std::int64_t links_per_pair = 1;      // c_t: links of each sub-block per switch (1: round-robin)
  std::int64_t switches_per_block = 1;  // X_t
  std::int64_t blocks = 0;              // B_t: level-t blocks (B_1 = leaves)
  std::int64_t last_block_group = 1;    // sub-blocks in the last block (<= group)

  std::int64_t switches() const { return blocks * switches_per_block; }
  std::int64_t up_ports_per_block() const { return switches_per_block * up_ports; }  // P_t
  // Links from the level-t blocks to tier t+1 (every up port is cabled).
  std::int64_t uplinks() const { return blocks * up_ports_per_block(); }

  // Wiring of a block (t >= 2), P = sub_ports, X = switches_per_block, c = links_per_pair:
  // - even striping (c divides P, X = P / c): switch j takes ports [j c, j c + c) of every
  //   sub-block;
  // - round-robin (c = 1): the block's uplinks in order (port q of its sub-block i, i < group, is
  //   uplink i P + q) are dealt to the switches in turn, uplink g to switch g mod X, so that each
  //   switch-sub-block pair has floor(P / X) or ceil(P / X) links (>= 1 since X <= P).
  bool even() const { return switches_per_block * links_per_pair == sub_ports; }
  // The switch (of the block) that port q of sub-block i is cabled to.
  std::int64_t switch_of(std::int64_t i, std::int64_t q) const {
    return even() ? q / links_per_pair : (i * sub_ports + q) % switches_per_block;
  }
  // Links between switch j and sub-block i (>= 1), and the sub-block port of the m-th of them.
  std::int64_t links_between(std::int64_t i, std::int64_t j) const {
    return even() ? links_per_pair : (sub_ports - 1 - first_port(i, j)) / switches_per_block + 1;
  }
  std::int64_t port_between(std::int64_t i, std::int64_t j, std::int64_t m) const {
    return even() ? j * links_per_pair + m : first_port(i, j) + m * switches_per_block;
  }
  // Down links of switch j of a block of g sub-blocks (the first g P mod X switches of a
  // round-robin block take one more).
  std::int64_t down_links(std::int64_t g, std::int64_t j) const {
    if (even()) return g * links_per_pair;
    const std::int64_t n = g * sub_ports;
    return n / switches_per_block + (j < n % switches_per_block ? 1 : 0);
  }

 private:
  // Round-robin: the first port of sub-block i cabled to switch j.
  std::int64_t first_port(std::int64_t i, std::int64_t j) const {
    const std::int64_t x = switches_per_block;
    return ((j - i * sub_ports) % x + x) % x;
  }
};

struct ClosPlan {
  int radix = 0;
  std::int64_t rails = 1;               // rail groups of leaves
  std::int64_t endpoints_per_rail = 0;  // NIC ports per rail
  std::int64_t rails_per_leaf = 1;      // rails in one rail group (> 1 only for small rails)
  std::int64_t leaves_per_group = 1;    // leaves serving one rail group
  std::vector<ClosTier> tiers;          // [0] = tier 1 (leaves)

  int tier_count() const { return static_cast<int>(tiers.size()); }
  std::int64_t endpoints() const { return rails * endpoints_per_rail; }
  std::int64_t groups() const { return (rails + rails_per_leaf - 1) / rails_per_leaf; }
  std::int64_t rails_in_group(std::int64_t g) const {
    return rails - g * rails_per_leaf < rails_per_leaf ? rails - g * rails_per_leaf
                                                       : rails_per_leaf;
  }
  std::int64_t switches() const;
  // Leaf (tier-1 index) of endpoint `pos` of rail `rail`: rail groups in order, the group's
  // endpoints filling its leaves rail by rail.
  std::int64_t leaf_of(std::int64_t rail, std::int64_t pos) const {
    return (rail / rails_per_leaf) * leaves_per_group +
           ((rail % rails_per_leaf) * endpoints_per_rail + pos) / tiers[0].down_ports;
  }
  // The block walk of a route between two leaves (indices in one instance): bs[t] and bd[t], the
  // level-t blocks holding each (t = 1 .. top; bs[1], bd[1] the leaves), up to the lowest tier
  // `top` whose block holds both (1 when the leaves are one). Fabric::route, the live routing of a
  // DegradedFabric and perf's link-load census walk a route this way; the arrays need room for
  // tier_count() + 1 entries.
  int common_blocks(std::int64_t leaf_s, std::int64_t leaf_d, std::int64_t* bs,
                    std::int64_t* bd) const {
    bs[1] = leaf_s;
    bd[1] = leaf_d;
    if (leaf_s == leaf_d) return 1;
    for (int t = 2; t <= tier_count(); ++t) {
      bs[t] = bs[t - 1] / tiers[static_cast<std::size_t>(t - 1)].group;
      bd[t] = bd[t - 1] / tiers[static_cast<std::size_t>(t - 1)].group;
      if (bs[t] == bd[t]) return t;
    }
    return tier_count();
  }
  // The rail every endpoint of leaf `leaf` belongs to, or -1 when the leaf serves several.
  std::int64_t rail_of_leaf(std::int64_t leaf) const {
    if (rails_per_leaf == 1) return leaf / leaves_per_group;
    return rails == 1 ? 0 : -1;
  }
};

// Plans a Clos over `rails` x `endpoints_per_rail` NIC ports of switches with `radix` ports.
// `oversubscription` (down:up >= 1) applies at tier `oversubscribed_tier`. `what` names the
// input for errors (e.g. "--switch"). `max_rails_per_leaf` (> 0) caps the rails that share a
// leaf (dual ToR: the ports of one GPU, planned as rails of their own, never share one). Throws
// InputError when no Clos of <= 8 tiers fits.
// `split_down` and `split_up` (> 0) give the oversubscribed tier's ports as counts instead of a
// ratio (the rest of the radix unused; InputError("--port-split") when they exceed it).
ClosPlan plan_clos(std::int64_t rails, std::int64_t endpoints_per_rail, int radix,
                   double oversubscription = 1.0, int oversubscribed_tier = 1,
                   const std::string& what = "--switch", std::int64_t max_rails_per_leaf = 0,
                   int split_down = 0, int split_up = 0);

}  // namespace railsim::topo
