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
//   switches; each of them takes c_t up ports of every sub-block (even striping: port p of a
//   sub-block goes to switch p / c_t), so every tier-t switch of a block reaches every endpoint
//   below the block. A sub-block's up ports p belong to its tier-(t-1) switch p / u_{t-1}.
// - Intermediate tiers have n_t * c_t <= d_t down ports (d_t = k/2 non-blocking) and u_t up;
//   the top tier is one block whose switches use up to all k ports down.
// - c_t is the largest divisor of the sub-block's up-port count P_{t-1} that fits, which gives
//   NVIDIA's spine rule: the spine count S is the smallest >= ceil(up ports / k) such that each
//   leaf's uplinks stripe evenly over the spines.
// - The fewest tiers whose top block can hold all level-(t-1) blocks (<= k of them).
#include <cstdint>
#include <string>
#include <vector>

namespace railsim::topo {

struct ClosTier {
  int down_ports = 0;                   // d_t: ports per switch that may face down
  int up_ports = 0;                     // u_t: ports per switch facing up (0 on the top tier)
  std::int64_t group = 1;               // n_t: sub-blocks per block (t >= 2); unused for t = 1
  std::int64_t links_per_pair = 1;      // c_t: links between one tier-t switch and one sub-block
  std::int64_t switches_per_block = 1;  // X_t
  std::int64_t blocks = 0;              // B_t: level-t blocks (B_1 = leaves)
  std::int64_t last_block_group = 1;    // sub-blocks in the last block (<= group)

  std::int64_t switches() const { return blocks * switches_per_block; }
  std::int64_t up_ports_per_block() const { return switches_per_block * up_ports; }  // P_t
  // Links from the level-t blocks to tier t+1 (every up port is cabled).
  std::int64_t uplinks() const { return blocks * up_ports_per_block(); }
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
  // The rail every endpoint of leaf `leaf` belongs to, or -1 when the leaf serves several.
  std::int64_t rail_of_leaf(std::int64_t leaf) const {
    if (rails_per_leaf == 1) return leaf / leaves_per_group;
    return rails == 1 ? 0 : -1;
  }
};

// Plans a Clos over `rails` x `endpoints_per_rail` NIC ports of switches with `radix` ports.
// `oversubscription` (down:up >= 1) applies at tier `oversubscribed_tier`. `what` names the
// input for errors (e.g. "--switch"). Throws InputError when no Clos of <= 8 tiers fits.
ClosPlan plan_clos(std::int64_t rails, std::int64_t endpoints_per_rail, int radix,
                   double oversubscription = 1.0, int oversubscribed_tier = 1,
                   const std::string& what = "--switch");

}  // namespace railsim::topo
