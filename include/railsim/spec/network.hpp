#pragma once
// A network design: which topology is built over the cluster's NICs, from which switch.
#include <cstdint>
#include <string>
#include <string_view>

#include "railsim/spec/cluster.hpp"
#include "railsim/spec/switch.hpp"

namespace railsim::spec {

enum class DesignKind { rail_optimized, rail_only, ideal };

std::string_view to_string(DesignKind k);
// Throws InputError(option, ...) listing the valid names.
DesignKind parse_design_kind(std::string_view s, const std::string& option = "--design");

// How flows choose among equal-cost paths above the leaf: ecmp (a hash per flow: flows may
// collide on one uplink), adaptive (per flow, the least-loaded path) or spray (per packet, every
// path). One default everywhere: ecmp.
enum class Routing { ecmp, adaptive, spray };
std::string_view to_string(Routing r);
// Throws InputError(option, ...) listing the valid names.
Routing parse_routing(std::string_view s, const std::string& option = "--routing");
inline constexpr std::int64_t kMaxRoutingSeed = std::int64_t{1} << 62;

struct NetworkDesign {
  DesignKind kind = DesignKind::rail_optimized;
  Routing routing = Routing::ecmp;
  std::uint64_t ecmp_seed = 0;  // salt of the ECMP hash (sim); the analytic model takes the
                                // expectation over hashes
  SwitchSpec sw;
  // Leaf downlink:uplink ratio (1 = non-blocking; 7 = 1:7 as between Meta's pods). Applies to the
  // tier given by oversubscribed_tier (1 = leaf uplinks, 2 = spine uplinks, ...).
  double oversubscription = 1.0;
  int oversubscribed_tier = 1;
  bool copper_gpu_leaf = false;  // passive DAC for in-rack GPU-leaf links instead of optics
  // Leaf ports cabled to non-GPU endpoints (the UFM fabric manager: 4 links in the DGX H100
  // SuperPOD RA). They occupy free leaf ports and count as GPU-leaf links in the bill of
  // materials; they carry no training traffic and are not nodes of the Fabric graph.
  int management_links = 0;
};

// What a user asked for on the command line (or in a sweep); resolved by make_network_design.
struct NetworkOptions {
  std::string design = "rail_optimized";  // rail_optimized | rail_only | ideal
  std::string sw = "ETH-51.2T-128x400G";  // switch preset or JSON file (docs/design.md: why)
  double oversubscription = 1.0;          // down:up ratio at oversubscribed_tier, >= 1
  int oversubscribed_tier = 1;            // 1 = leaf uplinks, 2 = spine uplinks, ...
  bool copper_gpu_leaf = false;
  int management_links = 0;
  std::string routing = "ecmp";  // ecmp | adaptive | spray
  std::int64_t seed = 0;         // ECMP hash salt, 0 .. 2^62
};

// Validates and resolves the options (loads the switch preset or file). Errors name the CLI
// option: --design, --switch, --oversubscription, --oversubscribed-tier, --management-links,
// --routing, --seed.
NetworkDesign make_network_design(const NetworkOptions& opt);
// Same, with an already loaded switch.
NetworkDesign make_network_design(DesignKind kind, const SwitchSpec& sw,
                                  double oversubscription = 1.0, int oversubscribed_tier = 1,
                                  bool copper_gpu_leaf = false, int management_links = 0);

// The design as built for this cluster: the switch in the port mode that serves its NICs
// (spec::fit_to_nics). Every consumer of a design over a cluster (topo's sizing and graph, the
// bill of materials and its price, perf's network view, sim) goes through this, so an 800G NIC
// is priced, sized, simulated and timed on the same 800G ports. Idempotent.
NetworkDesign fit_to_cluster(const Cluster& cluster, const NetworkDesign& design);

}  // namespace railsim::spec
