#pragma once
// NetworkView: what a parallelism group sees of the network, derived from the same sizing the
// Fabric is built from (plan_network, with the switch fitted to the NICs), so that the analytic
// model never keeps a second picture of the network. Built once per cluster and design in
// O(tiers); the queries are O(tiers) and allocation-free, for the strategy search's hot path.
//
// Bandwidths are line rates; the achievable fraction (a GPU preset's efficiency) is applied by
// its user.
#include <array>
#include <cstdint>

#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/fabric.hpp"

namespace railsim::topo {

struct NetworkView {
  static constexpr int kMaxTiers = 8;

  spec::DesignKind kind = spec::DesignKind::rail_optimized;
  std::int64_t gpus = 0;
  std::int64_t hb_domain = 1;  // K (N for ideal)
  double hb_Bps = 0;           // per GPU per direction
  double nic_link_Bps = 0;     // one NIC link: the slower of the NIC and the switch port
  int nics_per_gpu = 1;
  double port_Bps = 0;  // switch-switch links
  int tiers = 0;        // switch tiers of one Clos instance (0 for ideal)
  // [t], t = 1..tiers: HB domains whose GPUs of one rail sit under one tier-t block (the leaf for
  // t = 1, all D domains at the top tier).
  std::array<std::int64_t, kMaxTiers + 1> rail_domains_under{};
  // [t], t = 1..tiers-1: down:up capacity of a tier-t block (cabled down ports over up ports, at
  // their link speeds), at least 1: the slowdown of uniform traffic that climbs past tier t.
  std::array<double, kMaxTiers + 1> uplink_ratio{};
  // rail_optimized: the lowest tier whose blocks join different rails (cross-rail traffic climbs
  // at least this high); 0 for rail_only and ideal, where no switch joins rails.
  int rail_join_tier = 0;
  // The fullest leaf: its NIC ports and its uplinks (the equal-cost paths a flow leaving it is
  // hashed onto; 0 for a one-tier network or ideal).
  std::int64_t leaf_nic_ports = 0;
  std::int64_t leaf_uplinks = 0;

  double nic_Bps() const { return nic_link_Bps * nics_per_gpu; }  // per GPU
  // Lowest tier whose block holds q consecutive HB domains of one rail (1 when q <= 1).
  int tier_spanning(std::int64_t q) const;
  // Oversubscription met by uniform traffic that climbs to tier `top`: the largest uplink ratio
  // of the tiers below it (1 for top <= 1).
  double oversubscription_to(int top) const;
  // Oversubscription of traffic among q domains of one rail, and of cross-rail traffic among q
  // domains (rail_optimized only: it climbs at least to rail_join_tier).
  double same_rail_oversubscription(std::int64_t q) const {
    return oversubscription_to(tier_spanning(q));
  }
  double cross_rail_oversubscription(std::int64_t q) const;
};

// From the cluster and design (any N: the graph is not built).
NetworkView make_network_view(const spec::Cluster& cluster, const spec::NetworkDesign& design);
// From a resolved network (the design fitted, its plan made once).
NetworkView make_network_view(const Network& network);
// From a built Fabric: the same figures as from its cluster and design.
NetworkView make_network_view(const Fabric& fabric);

}  // namespace railsim::topo
