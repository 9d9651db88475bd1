// Kept apart from network.cpp so that code building its own routes links without topo's
// routing (static libraries pull in only the objects they need).
#include <fmt/format.h>

#include "railsim/core/error.hpp"
#include "railsim/sim/network.hpp"

namespace railsim::sim {

SimNetwork make_sim_network(const topo::Fabric& fabric) {
  const topo::Fabric* f = &fabric;
  return make_sim_network(
      fabric, [f](std::int64_t s, std::int64_t d, std::uint64_t h, int nic, topo::Path& out) {
        f->route(s, d, h, topo::Forwarding::hb_first, out, nic);
      });
}

namespace {

void live_route(const topo::DegradedFabric& d, std::int64_t s, std::int64_t t, std::uint64_t h,
                int part, topo::Path& out, int nic = -1) {
  if (d.route(s, t, h, part, out, nic) == topo::RouteStatus::none)
    throw InputError("--fail", fmt::format("no live path from GPU {} to GPU {}", s, t));
}

}  // namespace

SimNetwork make_sim_network(const topo::DegradedFabric& degraded) {
  const topo::DegradedFabric* d = &degraded;
  SimNetwork n = make_sim_network(
      degraded.fabric(),
      [d](std::int64_t s, std::int64_t t, std::uint64_t h, int nic, topo::Path& out) {
        // One peer route per flow, picked by the hash (pipelined and two-phase forwarding).
        live_route(*d, s, t, h, static_cast<int>(h >> 40), out, nic);
      });
  // A dead HB switch plane: the domain's HB links keep live planes / planes of their capacity.
  const topo::Fabric& f = degraded.fabric();
  for (std::int64_t g = 0; g < f.cluster.gpus; ++g) {
    const double k = degraded.hb_factor(f.cluster.domain_of(g));
    if (k >= 1.0) continue;
    const auto l = static_cast<std::size_t>(f.hb_link(g));
    n.capacity_Bps[2 * l] *= k;
    n.capacity_Bps[2 * l + 1] *= k;
  }
  // Spraying over live paths only: a dead link (or a link of a dead switch) leaves its bundle.
  for (std::size_t l = 0; l < f.links.size(); ++l)
    if (!degraded.link_alive(static_cast<std::int64_t>(l))) {
      n.bundle_of[2 * l] = -1;
      n.bundle_of[2 * l + 1] = -1;
    }
  n.spread = [d](std::int64_t s, std::int64_t t) { return d->peer_choices(s, t); };
  n.nic_alive = [d](std::int64_t g, int nic) { return d->edge_alive(g, nic); };
  n.route_part = [d](std::int64_t s, std::int64_t t, std::uint64_t h, int part, topo::Path& out) {
    live_route(*d, s, t, h, part, out);
  };
  return n;
}

}  // namespace railsim::sim
