#pragma once
// What must be bought for one design over one cluster: switches per tier, ports, links per tier,
// transceivers, cables and NICs. Computed from the sizing (topo::plan_network) in O(tiers), so it
// works for any N without building the graph; tests check it against the built Fabric.
#include <cstdint>
#include <vector>

#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/builders.hpp"

namespace railsim::cost {

struct BillOfMaterials {
  spec::DesignKind design = spec::DesignKind::rail_optimized;
  std::int64_t gpus = 0;
  std::int64_t hb_domain = 0;  // K (N for ideal)
  int tiers = 0;
  int radix = 0;
  double port_gbps = 0;
  double nic_gbps = 0;             // one NIC port's link (the NIC's speed / nic_ports)
  std::int64_t clos_networks = 0;  // planes (rail_optimized), planes x K (rail_only), 0 (ideal)
  int planes = 1;
  int nic_ports = 1;  // ports per NIC, each its own GPU-leaf link
  bool dual_tor = false;
  // The oversubscribed tier's down:up ratio (1: non-blocking) and, when given as port counts
  // (--port-split), its down and up ports per switch (0, 0 otherwise).
  double oversubscription = 1.0;
  int oversubscribed_tier = 1;
  int split_down = 0, split_up = 0;

  std::vector<std::int64_t> switches_per_tier;    // leaf first
  std::vector<std::int64_t> ports_used_per_tier;  // cabled ports on that tier's switches
  std::int64_t switches = 0;
  std::int64_t switch_ports = 0;       // switches * radix (whole-switch counting)
  std::int64_t switch_ports_used = 0;  // cabled ports (port counting)

  std::vector<std::int64_t> links_per_tier;  // [0] GPU-leaf (NICs + management), [t] tier t-(t+1)
  std::int64_t links = 0;
  std::int64_t optical_links = 0;
  std::int64_t copper_links = 0;  // passive DAC (GPU-leaf with copper_gpu_leaf)
  std::int64_t management_links = 0;

  // Transceivers: two ends per optical link. Modules: one single-port module per optical
  // GPU-leaf link on the NIC side; on the switch side, one module per `switch_ports_per_module`
  // optical ports of each switch (a twin-port 800G OSFP serves two 400G ports), rounded up per
  // switch.
  int switch_ports_per_module = 2;
  std::int64_t transceiver_ends = 0;
  std::int64_t nic_side_transceivers = 0;
  std::int64_t switch_side_transceivers = 0;
  std::int64_t transceivers() const { return nic_side_transceivers + switch_side_transceivers; }

  std::int64_t nics = 0;       // NIC cards
  std::int64_t nic_links = 0;  // NIC ports cabled (nics x nic_ports)

  // Whole switches implied by counting ports only (rails sharing partitioned switches).
  double switch_equivalents() const { return radix > 0 ? double(switch_ports_used) / radix : 0.0; }
};

// `switch_ports_per_module`: switch ports served by one switch-side transceiver module (2 for
// twin-port OSFP cages, 1 for single-port modules).
BillOfMaterials bill_of_materials(const spec::Cluster& cluster, const spec::NetworkDesign& design,
                                  int switch_ports_per_module = 2);
// The same of a resolved network (topo::resolve_network: the design fitted, its plan made).
BillOfMaterials bill_of_materials(const topo::Network& network, int switch_ports_per_module = 2);

}  // namespace railsim::cost
