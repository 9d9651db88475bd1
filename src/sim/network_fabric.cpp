// Kept apart from network.cpp so that code building its own routes links without topo's
// routing (static libraries pull in only the objects they need).
#include "railsim/sim/network.hpp"

namespace railsim::sim {

SimNetwork make_sim_network(const topo::Fabric& fabric) {
  const topo::Fabric* f = &fabric;
  return make_sim_network(fabric,
                          [f](std::int64_t s, std::int64_t d, std::uint64_t h, topo::Path& out) {
                            f->route(s, d, h, topo::Forwarding::hb_first, out);
                          });
}

}  // namespace railsim::sim
