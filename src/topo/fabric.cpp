#include "railsim/topo/fabric.hpp"

#include <fmt/format.h>

#include "route_hash.hpp"
#include "tier_word.hpp"

namespace railsim::topo {

namespace {

using detail::kMaxLevels;
using detail::mix;

}  // namespace

std::int32_t Fabric::leaf_of(std::int64_t gpu, int nic) const {
  if (layout.instances == 0) return -1;
  return static_cast<std::int32_t>(tier_node_base[1] +
                                   layout.instance(cluster, gpu, nic) * plan.tiers[0].switches() +
                                   layout.leaf(plan, cluster, gpu, nic));
}

namespace {

// Up-down route inside one Clos instance between two NIC ports. Deterministic ECMP: each hop's
// choice is a hash of the flow and the hop.
void clos_route(const Fabric& f, std::int64_t s, std::int64_t d, int nic, std::uint64_t h,
                Path& out) {
  const ClosPlan& p = f.plan;
  const std::int64_t inst = f.layout.instance(f.cluster, s, nic);
  out.push_back(2 * f.nic_link(s, nic));
  std::int64_t bs[kMaxLevels], bd[kMaxLevels];
  const int top = p.common_blocks(f.layout.leaf(p, f.cluster, s, nic),
                                  f.layout.leaf(p, f.cluster, d, nic), bs, bd);
  if (top == 1) {
    out.push_back(2 * f.nic_link(d, nic) + 1);
    return;
  }
  std::int64_t j = 0;  // switch index inside the current block (a leaf block has one)
  for (int t = 1; t < top; ++t) {
    const ClosTier& lo = p.tiers[t - 1];
    const ClosTier& hi = p.tiers[t];
    h = mix(h + static_cast<std::uint64_t>(t));
    const std::int64_t port = j * lo.up_ports + static_cast<std::int64_t>(h % lo.up_ports);
    out.push_back(static_cast<std::int32_t>(2 * f.uplink(t, inst, bs[t], port)));
    j = hi.switch_of(bs[t] % hi.group, port);
  }
  for (int t = top - 1; t >= 1; --t) {
    const ClosTier& lo = p.tiers[t - 1];
    const ClosTier& hi = p.tiers[t];
    h = mix(h + 0x100u + static_cast<std::uint64_t>(t));
    // One of the links between switch j and sub-block bd[t] (every switch has at least one).
    const std::int64_t i = bd[t] % hi.group;
    const auto n = static_cast<std::uint64_t>(hi.links_between(i, j));
    const std::int64_t port = hi.port_between(i, j, static_cast<std::int64_t>(h % n));
    out.push_back(static_cast<std::int32_t>(2 * f.uplink(t, inst, bd[t], port) + 1));
    j = port / lo.up_ports;
  }
  out.push_back(2 * f.nic_link(d, nic) + 1);
}

inline void hb_route(const Fabric& f, std::int64_t s, std::int64_t d, Path& out) {
  out.push_back(2 * f.hb_link(s));
  out.push_back(2 * f.hb_link(d) + 1);
}

}  // namespace

void Fabric::route(std::int64_t src, std::int64_t dst, std::uint64_t flow_hash, Forwarding fw,
                   Path& out, int nic_choice) const {
  if (src == dst) return;
  const spec::Cluster& c = cluster;
  if (c.domain_of(src) == c.domain_of(dst)) {
    hb_route(*this, src, dst, out);
    return;
  }
  const int nic =
      nic_choice >= 0 ? nic_choice
      : nics_per_gpu() > 1
          ? static_cast<int>(mix(flow_hash) % static_cast<std::uint64_t>(nics_per_gpu()))
          : 0;
  if (layout.per_rail && c.rail_of(src) != c.rail_of(dst)) {
    // rail_only: no switch path between rails; hop through the HB domain.
    const std::int64_t w = forwarding_peer(c, fw, src, dst);
    if (fw == Forwarding::hb_first) {
      hb_route(*this, src, w, out);
      clos_route(*this, w, dst, nic, flow_hash, out);
    } else {
      clos_route(*this, src, w, nic, flow_hash, out);
      hb_route(*this, w, dst, out);
    }
    return;
  }
  clos_route(*this, src, dst, nic, flow_hash, out);
}

namespace {

// The index of switch `id` in its tier (the first switch of the tier is 0), and whether the
// Fabric's plan knows the tier (a Fabric made by hand has no tier_node_base).
bool tier_index(const Fabric& f, std::int32_t id, std::int64_t& index) {
  const int t = f.nodes[static_cast<std::size_t>(id)].tier;
  if (t < 1 || static_cast<std::size_t>(t) >= f.tier_node_base.size() ||
      static_cast<std::size_t>(t) > f.plan.tiers.size()) {
    index = id;
    return false;
  }
  index = id - f.tier_node_base[static_cast<std::size_t>(t)];
  return true;
}

}  // namespace

std::int64_t node_domain(const Fabric& f, std::int32_t id) {
  switch (f.nodes[static_cast<std::size_t>(id)].kind) {
    case NodeKind::gpu:
      return f.cluster.domain_of(id);
    case NodeKind::hb_switch:
      return id - f.cluster.gpus;
    case NodeKind::network_switch:
      break;
  }
  return -1;
}

int node_plane(const Fabric& f, std::int32_t id) {
  const Node& n = f.nodes[static_cast<std::size_t>(id)];
  std::int64_t index = 0;
  if (n.kind != NodeKind::network_switch || f.layout.instances == 0 || !tier_index(f, id, index))
    return -1;
  // Switches are numbered instance by instance within a tier (builders.cpp); rail_only has one
  // instance per plane and rail.
  const std::int64_t inst = index / f.plan.tiers[static_cast<std::size_t>(n.tier - 1)].switches();
  return static_cast<int>(f.layout.per_rail ? inst / f.cluster.hb_domain : inst);
}

std::string node_name(const Fabric& f, std::int32_t id) {
  const Node& n = f.nodes[static_cast<std::size_t>(id)];
  switch (n.kind) {
    case NodeKind::gpu:
      return fmt::format("gpu{}", id);
    case NodeKind::hb_switch:
      return fmt::format("hb{}", id - f.cluster.gpus);
    case NodeKind::network_switch:
      break;
  }
  std::int64_t index = 0;
  tier_index(f, id, index);
  std::string name;
  if (const char* w = detail::tier_word(n.tier))
    name = fmt::format("{}{}", w, index);
  else
    name = fmt::format("t{}sw{}", static_cast<int>(n.tier), index);
  if (f.layout.planes > 1) {
    if (const int p = node_plane(f, id); p >= 0) name += fmt::format(".p{}", p);
  }
  if (n.rail >= 0) name += fmt::format(".r{}", n.rail);
  return name;
}

}  // namespace railsim::topo
