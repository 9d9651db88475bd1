#include "railsim/sim/network.hpp"

#include <fmt/format.h>

#include <map>
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

SimNetwork make_sim_network(const topo::Fabric& fabric, RouteFn route) {
  SimNetwork n;
  n.cluster = fabric.cluster;
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
  n.route = std::move(route);
  const topo::Fabric* f = &fabric;
  n.describe = [f](ChannelId c) {
    const auto& link = f->links[static_cast<std::size_t>(c / 2)];
    const bool up = c % 2 == 0;
    auto node = [f](std::int32_t id) {
      const auto& nd = f->nodes[static_cast<std::size_t>(id)];
      switch (nd.kind) {
        case topo::NodeKind::gpu:
          return fmt::format("gpu{}", id);
        case topo::NodeKind::hb_switch:
          return fmt::format("hb{}", id - f->cluster.gpus);
        default:
          return fmt::format("sw{}(t{})", id, static_cast<int>(nd.tier));
      }
    };
    return fmt::format("{} -> {} ({})", node(up ? link.a : link.b), node(up ? link.b : link.a),
                       tier_name(link.kind, link.tier));
  };
  return n;
}

}  // namespace railsim::sim
