#include "railsim/topo/clos.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "railsim/core/error.hpp"

namespace railsim::topo {

namespace {

constexpr int kMaxTiers = kMaxClosTiers;

// Down/up split of a switch at a tier: non-blocking halves, or down:up = r:1 when oversubscribed.
void split_ports(int radix, double r, int& down, int& up) {
  if (r <= 1.0) {
    down = radix / 2;
    up = radix - down;
    return;
  }
  down = static_cast<int>(std::lround(radix * r / (r + 1.0)));
  down = std::clamp(down, 1, radix - 1);
  up = radix - down;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Largest divisor c of p with n * c <= cap (>= 1 because n <= cap is checked by the caller).
std::int64_t largest_fitting_divisor(std::int64_t p, std::int64_t n, std::int64_t cap) {
  const std::int64_t limit = std::min(p, cap / n);
  for (std::int64_t c = limit; c > 1; --c)
    if (p % c == 0) return c;
  return 1;
}

// Switches of one block over n sub-blocks of p up ports each, each switch taking at most cap
// down links (n <= cap), and their wiring (clos.hpp). Even striping, NVIDIA's rule, unless it
// wastes switches: through divisibility (43 uplinks per leaf, a prime, give one link per spine and
// 43 spines), or through switches left more than a quarter empty; then the fewest switches that
// terminate the n p uplinks, dealt round-robin.
void size_block(ClosTier& t, std::int64_t p, std::int64_t n, std::int64_t cap) {
  const std::int64_t c = largest_fitting_divisor(p, n, cap);
  const std::int64_t even = p / c;
  const std::int64_t equal_links = ceil_div(p, cap / n);  // at most cap / n links per pair
  const std::int64_t fewest = ceil_div(n * p, cap);       // <= p since n <= cap
  t.sub_ports = p;
  if (even == equal_links && 3 * even <= 4 * fewest) {
    t.links_per_pair = c;
    t.switches_per_block = even;
  } else {
    t.links_per_pair = 1;
    t.switches_per_block = fewest;
  }
}

}  // namespace

std::int64_t ClosPlan::switches() const {
  std::int64_t s = 0;
  for (const auto& t : tiers) s += t.switches();
  return s;
}

ClosPlan plan_clos(std::int64_t rails, std::int64_t endpoints_per_rail, int radix,
                   double oversubscription, int oversubscribed_tier, const std::string& what,
                   std::int64_t max_rails_per_leaf, int split_down, int split_up) {
  if (split_down > 0 && split_down + split_up > radix)
    throw InputError("--port-split",
                     fmt::format("{} + {} = {} ports; D + U is at most the switch's {} ports in "
                                 "its port mode",
                                 split_down, split_up, split_down + split_up, radix));
  if (radix < 2 || radix % 2 != 0)
    throw InputError(
        what, fmt::format("switch radix {} is invalid; expected an even number >= 2", radix));
  if (rails < 1 || endpoints_per_rail < 1)
    throw InputError("--gpus",
                     fmt::format("a Clos needs at least one NIC port per rail, got {} x {}", rails,
                                 endpoints_per_rail));
  ClosPlan p;
  p.radix = radix;
  p.rails = rails;
  p.endpoints_per_rail = endpoints_per_rail;
  const std::int64_t e = rails * endpoints_per_rail;

  if (e <= radix && max_rails_per_leaf <= 0) {  // one switch serves every port: one tier
    ClosTier t;
    t.down_ports = radix;
    t.up_ports = 0;
    t.blocks = 1;
    p.tiers.push_back(t);
    p.rails_per_leaf = rails;
    p.leaves_per_group = 1;
    return p;
  }

  auto ratio_at = [&](int tier) { return tier == oversubscribed_tier ? oversubscription : 1.0; };
  // A tier's down and up ports: the oversubscribed tier's as given, when they are.
  auto split_at = [&](int tier, int& down, int& up) {
    if (tier == oversubscribed_tier && split_down > 0) {
      down = split_down;
      up = split_up;
    } else {
      split_ports(radix, ratio_at(tier), down, up);
    }
  };
  ClosTier leaf;
  split_at(1, leaf.down_ports, leaf.up_ports);
  // Small rails share leaves, whole rails per leaf; large rails get their own leaves.
  p.rails_per_leaf = std::max<std::int64_t>(1, leaf.down_ports / endpoints_per_rail);
  if (max_rails_per_leaf > 0) p.rails_per_leaf = std::min(p.rails_per_leaf, max_rails_per_leaf);
  p.leaves_per_group =
      (p.rails_per_leaf * endpoints_per_rail + leaf.down_ports - 1) / leaf.down_ports;
  leaf.blocks = p.groups() * p.leaves_per_group;
  p.tiers.push_back(leaf);

  while (true) {
    const ClosTier& below = p.tiers.back();
    const std::int64_t sub = below.blocks;
    const std::int64_t ports = below.up_ports_per_block();
    const int tier = p.tier_count() + 1;
    if (tier > kMaxTiers)
      throw InputError(what,
                       fmt::format("{} NIC ports need more than {} tiers of {}-port switches; "
                                   "use a switch with a larger radix",
                                   e, kMaxTiers, radix));
    ClosTier t;
    if (sub <= radix) {  // top tier: one block over every sub-block, all ports down
      t.down_ports = radix;
      t.up_ports = 0;
      t.group = sub;
      t.blocks = 1;
      t.last_block_group = sub;
      size_block(t, ports, sub, radix);
      p.tiers.push_back(t);
      return p;
    }
    split_at(tier, t.down_ports, t.up_ports);
    if (t.down_ports < 2 || t.up_ports < 1)
      throw InputError(what, fmt::format("{}-port switches cannot grow a Clos beyond {} NIC ports "
                                         "(each tier needs >= 2 down and >= 1 up port); use a "
                                         "larger radix",
                                         radix, radix));
    // Balanced blocks: as few as fit, the sub-blocks spread evenly over them.
    t.blocks = (sub + t.down_ports - 1) / t.down_ports;
    t.group = (sub + t.blocks - 1) / t.blocks;
    t.last_block_group = sub - (t.blocks - 1) * t.group;
    size_block(t, ports, t.group, t.down_ports);
    p.tiers.push_back(t);
  }
}

}  // namespace railsim::topo
