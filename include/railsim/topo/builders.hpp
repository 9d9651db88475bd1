#pragma once
// Builders: the Fabric of each design over a cluster.
//
// - rail_optimized: one Clos over all N*M NIC ports, leaves grouped per rail (a leaf serves the
//   NICs of one local rank only), as many tiers as the radix requires.
// - rail_only: K independent Clos networks, one per rail over its D*M NIC ports, each with the
//   fewest tiers that fit; no switch link between rails. Cross-rail traffic is forwarded through
//   the HB domain (Fabric::route with Forwarding).
// - planes (spec::NetworkDesign::planes): each design built once per plane over its share of the
//   NIC ports (PlaneLayout); dual_tor puts a GPU's ports of one plane on different leaves.
// - ideal: one HB domain over all GPUs (the Fabric's cluster gets hb_domain = N), no scale-out
//   network; the performance reference.
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/clos.hpp"
#include "railsim/topo/fabric.hpp"

namespace railsim::topo {

// The sizing of a design, without the graph: O(tiers) time and memory, for any N.
struct NetworkPlan {
  spec::DesignKind kind = spec::DesignKind::rail_optimized;
  // Clos networks: planes (rail_optimized), planes x K (rail_only), 0 (ideal); and where each
  // NIC port is cabled.
  PlaneLayout layout;
  ClosPlan plan;  // of one instance (empty for ideal)

  std::int64_t instances() const { return layout.instances; }
  int tiers() const { return layout.instances > 0 ? plan.tier_count() : 0; }
  std::int64_t switches_at(int tier) const {  // tier 1 = leaf
    return layout.instances * plan.tiers[static_cast<std::size_t>(tier - 1)].switches();
  }
  std::int64_t switches() const { return layout.instances * plan.switches(); }
};

NetworkPlan plan_network(const spec::Cluster& cluster, const spec::NetworkDesign& design);

// One resolved network: the cluster, the design fitted to it (the switch in the port mode that
// serves its NICs: spec::fit_to_cluster) and the Clos plan of that design, built once and read by
// cost (the bill of materials), perf's view of the network and the Fabric builders.
struct Network {
  spec::Cluster cluster;
  spec::NetworkDesign design;  // fitted to `cluster`
  NetworkPlan plan;
};
// Fits the design and plans it (the errors of plan_network).
Network resolve_network(const spec::Cluster& cluster, const spec::NetworkDesign& design);

// Largest graph build_fabric accepts (links); beyond it the counts (plan_network, the bill of
// materials) still work but the graph would take gigabytes.
inline constexpr std::int64_t kMaxFabricLinks = std::int64_t{1} << 25;

Fabric build_fabric(const spec::Cluster& cluster, const spec::NetworkDesign& design);
Fabric build_rail_optimized(const spec::Cluster& cluster, const spec::NetworkDesign& design);
Fabric build_rail_only(const spec::Cluster& cluster, const spec::NetworkDesign& design);
Fabric build_ideal(const spec::Cluster& cluster, const spec::NetworkDesign& design = {});

}  // namespace railsim::topo
