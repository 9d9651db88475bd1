// Kept apart from network.cpp so that code building its own routes links without topo's
// routing (static libraries pull in only the objects they need).
#include <fmt/format.h>

#include "railsim/core/error.hpp"
#include "railsim/sim/network.hpp"

namespace railsim::sim {

SimNetwork make_sim_network(const topo::Fabric& fabric) {
  const topo::Fabric* f = &fabric;
  return make_sim_network(fabric,
                          [f](std::int64_t s, std::int64_t d, std::uint64_t h, topo::Path& out) {
                            f->route(s, d, h, topo::Forwarding::hb_first, out);
                          });
}

namespace {

void live_route(const topo::DegradedFabric& d, std::int64_t s, std::int64_t t, std::uint64_t h,
                int part, topo::Path& out) {
  if (d.route(s, t, h, part, out) == topo::RouteStatus::none)
    throw InputError("--fail", fmt::format("no live path from GPU {} to GPU {}", s, t));
}

}  // namespace

SimNetwork make_sim_network(const topo::DegradedFabric& degraded) {
  const topo::DegradedFabric* d = &degraded;
  SimNetwork n = make_sim_network(
      degraded.fabric(), [d](std::int64_t s, std::int64_t t, std::uint64_t h, topo::Path& out) {
        // One peer route per flow, picked by the hash (pipelined and two-phase forwarding).
        live_route(*d, s, t, h, static_cast<int>(h >> 40), out);
      });
  n.spread = [d](std::int64_t s, std::int64_t t) { return d->peer_choices(s, t); };
  n.route_part = [d](std::int64_t s, std::int64_t t, std::uint64_t h, int part, topo::Path& out) {
    live_route(*d, s, t, h, part, out);
  };
  return n;
}

}  // namespace railsim::sim
