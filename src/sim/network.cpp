#include "railsim/sim/network.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>
#include <utility>

#include "railsim/topo/failures.hpp"

namespace railsim::sim {

std::string tier_name(topo::LinkKind kind, int tier) {
  return topo::link_tier_name(kind, tier);
}

void scale_capacities(SimNetwork& net, double hb, double network) {
  for (std::size_t c = 0; c < net.capacity_Bps.size(); ++c) {
    const auto& name = net.class_names[static_cast<std::size_t>(net.channel_class[c])];
    net.capacity_Bps[c] *= name.rfind("HB", 0) == 0 ? hb : network;
  }
}

std::vector<double> bundle_capacities(const SimNetwork& net) {
  std::vector<double> cap(static_cast<std::size_t>(net.bundle_count), 0.0);
  for (std::size_t c = 0; c < net.bundle_of.size(); ++c)
    if (net.bundle_of[c] >= 0)
      cap[static_cast<std::size_t>(net.bundle_of[c])] += net.capacity_Bps[c];
  return cap;
}

namespace {

// The bundles of a fabric's switch-switch links (SimNetwork::bundle_of). With the Clos plan of
// topo/'s builders, link l of boundary t belongs to level-t block (l - link_base[t]) / P_t (the
// block's uplinks are numbered consecutively, instance by instance); spraying up from anywhere in
// the block reaches every one of them, and down into the block every one of them. Without a plan
// (hand-made fabrics) the block is the link's lower switch.
void add_bundles(const topo::Fabric& f, SimNetwork& n) {
  const bool clos = f.layout.instances > 0 && !f.link_base.empty();
  n.bundle_of.assign(2 * f.links.size(), -1);
  std::map<std::tuple<int, std::int64_t, int>, std::int32_t> ids;
  for (std::size_t l = 0; l < f.links.size(); ++l) {
    const auto& link = f.links[l];
    if (link.kind != topo::LinkKind::switch_switch) continue;
    const int t = link.tier;
    std::int64_t block = -1 - static_cast<std::int64_t>(link.a);
    if (clos && t >= 1 && static_cast<std::size_t>(t) < f.link_base.size() &&
        static_cast<std::size_t>(t) <= f.plan.tiers.size()) {
      const std::int64_t P = f.plan.tiers[static_cast<std::size_t>(t - 1)].up_ports_per_block();
      if (P > 0)
        block = (static_cast<std::int64_t>(l) - f.link_base[static_cast<std::size_t>(t)]) / P;
    }
    for (int d = 0; d < 2; ++d) {
      auto [it, fresh] = ids.try_emplace({t, block, d}, n.bundle_count);
      if (fresh) ++n.bundle_count;
      n.bundle_of[2 * l + static_cast<std::size_t>(d)] = it->second;
    }
  }
}

}  // namespace

SimNetwork make_sim_network(const topo::Fabric& fabric, RouteFn route) {
  SimNetwork n;
  n.cluster = spec::port_view(fabric.cluster, fabric.design);  // a NIC per NIC port
  n.rail_only = fabric.design.kind == spec::DesignKind::rail_only;
  const auto L = fabric.links.size();
  n.capacity_Bps.resize(2 * L);
  n.channel_class.resize(2 * L);
  // Classes in order of first appearance of (tier name, direction): deterministic.
  std::map<std::pair<std::string, int>, std::int16_t> ids;
  for (std::size_t l = 0; l < L; ++l) {
    const auto& link = fabric.links[l];
    const std::string t = tier_name(link.kind, link.tier);
    for (int d = 0; d < 2; ++d) {
      auto [it, fresh] = ids.try_emplace({t, d}, static_cast<std::int16_t>(n.class_names.size()));
      if (fresh) n.class_names.push_back(t + (d == 0 ? " up" : " down"));
      n.capacity_Bps[2 * l + static_cast<std::size_t>(d)] = link.capacity_Bps;
      n.channel_class[2 * l + static_cast<std::size_t>(d)] = it->second;
    }
  }
  add_bundles(fabric, n);
  n.route = std::move(route);
  const topo::Fabric* f = &fabric;
  n.describe = [f](ChannelId c) {
    const auto& link = f->links[static_cast<std::size_t>(c / 2)];
    const bool up = c % 2 == 0;
    return fmt::format("{} -> {} ({})", topo::node_name(*f, up ? link.a : link.b),
                       topo::node_name(*f, up ? link.b : link.a), tier_name(link.kind, link.tier));
  };
  return n;
}

}  // namespace railsim::sim
