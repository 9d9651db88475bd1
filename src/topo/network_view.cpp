#include "railsim/topo/network_view.hpp"

#include <algorithm>

#include "railsim/core/units.hpp"
#include "railsim/topo/builders.hpp"

namespace railsim::topo {

int NetworkView::tier_spanning(std::int64_t q) const {
  if (q <= 1 || tiers <= 1) return tiers > 0 ? 1 : 0;
  for (int t = 1; t <= tiers; ++t)
    if (rail_domains_under[static_cast<std::size_t>(t)] >= q) return t;
  return tiers;
}

double NetworkView::oversubscription_to(int top) const {
  double o = 1.0;
  for (int t = 1; t < top && t < tiers; ++t)
    o = std::max(o, uplink_ratio[static_cast<std::size_t>(t)]);
  return o;
}

double NetworkView::cross_rail_oversubscription(std::int64_t q) const {
  return oversubscription_to(std::max(rail_join_tier, tier_spanning(q)));
}

NetworkView make_network_view(const spec::Cluster& c, const spec::NetworkDesign& design) {
  return make_network_view(resolve_network(c, design));
}

NetworkView make_network_view(const Network& n) {
  const spec::Cluster& c = n.cluster;
  const spec::NetworkDesign& d = n.design;
  NetworkView v;
  v.kind = d.kind;
  v.gpus = c.gpus;
  v.hb_Bps = c.hb_bw_Bps;
  v.nics_per_gpu = n.plan.layout.ports;  // NIC ports
  if (d.kind == spec::DesignKind::ideal) {
    v.hb_domain = c.gpus;
    return v;
  }
  v.hb_domain = c.hb_domain;
  v.port_Bps = units::gbps_to_Bps(d.sw.port_gbps);
  // The NIC link runs at the slower end (Fabric's NIC links have this capacity).
  v.nic_link_Bps = std::min(spec::nic_port_Bps(c, d), v.port_Bps);
  const NetworkPlan& np = n.plan;
  const ClosPlan& p = np.plan;
  v.tiers = np.tiers();
  // A domain's NIC ports of one rail in one instance (one on a leaf with dual ToR).
  const std::int64_t D = c.domains(),
                     M = np.layout.dual_tor ? 1 : std::max(1, np.layout.ports_per_plane());
  const ClosTier& leaf = p.tiers[0];
  // NIC ports on the fullest leaf, and the domains of one rail it holds.
  const std::int64_t leaf_ports =
      std::min<std::int64_t>(leaf.down_ports, p.rails_per_leaf * p.endpoints_per_rail);
  std::int64_t under =
      p.rails_per_leaf > 1 || p.leaves_per_group == 1
          ? D
          : std::max<std::int64_t>(1, std::min<std::int64_t>(D, leaf.down_ports / M));
  v.rail_domains_under[1] = under;
  v.leaf_nic_ports = leaf_ports;
  v.leaf_uplinks = v.tiers > 1 ? leaf.up_ports : 0;
  if (v.tiers > 1)
    v.uplink_ratio[1] = std::max(1.0, static_cast<double>(leaf_ports) * v.nic_link_Bps /
                                          (static_cast<double>(leaf.up_ports) * v.port_Bps));
  std::int64_t span = 1;  // leaves under one block
  for (int t = 2; t <= v.tiers && t <= NetworkView::kMaxTiers; ++t) {
    const ClosTier& lo = p.tiers[static_cast<std::size_t>(t - 2)];
    const ClosTier& ct = p.tiers[static_cast<std::size_t>(t - 1)];
    span *= ct.group;
    under = t == v.tiers ? D : std::min(D, under * ct.group);
    v.rail_domains_under[static_cast<std::size_t>(t)] = under;
    if (t < v.tiers) {
      const double down =
          static_cast<double>(ct.group) * static_cast<double>(lo.up_ports_per_block());
      const double up = static_cast<double>(ct.up_ports_per_block());
      v.uplink_ratio[static_cast<std::size_t>(t)] = up > 0 ? std::max(1.0, down / up) : 1.0;
    }
    if (d.kind == spec::DesignKind::rail_optimized && v.rail_join_tier == 0 &&
        (span > p.leaves_per_group || t == v.tiers))
      v.rail_join_tier = t;
  }
  if (d.kind == spec::DesignKind::rail_optimized && p.rails_per_leaf > 1) v.rail_join_tier = 1;
  if (d.kind == spec::DesignKind::rail_optimized && v.rail_join_tier == 0)
    v.rail_join_tier = std::max(1, v.tiers);
  return v;
}

NetworkView make_network_view(const Fabric& f) {
  // The Fabric's cluster is already the port view: no second split.
  return make_network_view(
      Network{f.cluster, f.design, NetworkPlan{f.design.kind, f.layout, f.plan}});
}

}  // namespace railsim::topo
