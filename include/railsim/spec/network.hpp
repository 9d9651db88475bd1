#pragma once
// A network design: which topology is built over the cluster's NICs, from which switch.
#include <cstdint>
#include <string>
#include <string_view>

#include "railsim/core/json_fwd.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/switch.hpp"

namespace railsim::spec {

enum class DesignKind { rail_optimized, rail_only, ideal };

std::string_view to_string(DesignKind k);
// Throws InputError(option, ...) listing the valid names.
DesignKind parse_design_kind(std::string_view s, const std::string& option = "--design");

// How flows choose among equal-cost paths above the leaf (docs/model.md section 5): ecmp (a hash
// per flow at every hop: flows may collide on one uplink), adaptive (per-packet adaptive routing:
// InfiniBand AR, Spectrum-X) or spray (per-packet spraying); adaptive and spray spread a flow
// evenly over every equal-cost uplink.
enum class Routing { ecmp, adaptive, spray };
std::string_view to_string(Routing r);
// Throws InputError(option, ...) listing the valid names.
Routing parse_routing(std::string_view s, const std::string& option = "--routing");
// The routing a fabric of this switch runs unless configured otherwise: InfiniBand (family
// "infiniband") adaptive, since the subnet manager enables adaptive routing by default (opensm's
// ar_updn engine; NVIDIA, "InfiniBand Cluster Bring-up Procedure", Adaptive Routing) and NCCL
// uses it on InfiniBand links (NCCL's net_ib transport: adaptive routing on by default when the
// link layer is InfiniBand); Ethernet (any other family) ecmp, the per-flow hashing Ethernet
// switches do unless adaptive routing is configured (e.g. Cumulus Linux, `router
// adaptive-routing`, disabled by default; Spectrum-X turns it on).
Routing default_routing(const SwitchSpec& sw);
// `choice` is "auto" (default_routing(sw)) or a routing name; throws InputError(option, ...)
// listing auto, ecmp, adaptive, spray.
Routing resolve_routing(std::string_view choice, const SwitchSpec& sw,
                        const std::string& option = "--routing");
inline constexpr std::int64_t kMaxRoutingSeed = std::int64_t{1} << 62;

// How rail-only carries a transfer between GPUs on different rails in different HB domains: over
// one HB-domain peer (docs/model.md section 5). `ForwardVia` says which peer: hb_first, the GPU of
// the destination's rail in the source's domain (NVLink first, then that rail: NCCL's PXN);
// rail_first, the source's rail to the GPU of the source's rail in the destination's domain, then
// NVLink. `ForwardingMode` says how the two legs follow each other: store (each transfer whole on
// its first leg, then on its second), pipelined (in chunks, chunk j's second leg as soon as its
// first leg is delivered, the legs of different chunks overlapping), two_phase (every GPU's
// first legs, a barrier, then everything else: the non-overlapped reading of the paper's
// all-to-all analysis, Wang et al., arXiv 2307.12169).
enum class ForwardVia : std::uint8_t { hb_first, rail_first };
enum class ForwardingMode : std::uint8_t { store, pipelined, two_phase };
std::string_view to_string(ForwardVia v);
std::string_view to_string(ForwardingMode m);
// Throw InputError(option, ...) listing the valid names.
ForwardVia parse_forward_via(std::string_view s, const std::string& option = "--forward-via");
ForwardingMode parse_forwarding_mode(std::string_view s,
                                     const std::string& option = "--forwarding");
inline constexpr int kMaxForwardingChunks = 4096;

// How a transfer that leaves the HB domain is spread over its GPU's NIC ports, and so over the
// planes when the ports are in different planes (docs/model.md section 5): spray, an equal share
// on every port (NCCL's channels dealt over every NIC; a SuperNIC's plane load balancing,
// NVIDIA Spectrum-X multiplane); hash, the transfer as `connections` connections, each whole on
// the one port a hash of the connection picks (per-connection hashing over a bonded multi-port
// NIC, as link aggregation does: IEEE 802.1AX), so that ports, and planes, may collide.
enum class PortBalance : std::uint8_t { spray, hash };
std::string_view to_string(PortBalance b);
// Throws InputError(option, ...) listing the valid names.
PortBalance parse_port_balance(std::string_view s, const std::string& option = "--port-balance");
inline constexpr int kMaxConnections = 256;

struct NetworkDesign {
  DesignKind kind = DesignKind::rail_optimized;
  Routing routing = Routing::ecmp;
  bool routing_default = false;  // routing is default_routing(sw): the user asked for "auto"
  std::uint64_t ecmp_seed = 0;   // salt of the ECMP hash (sim); the analytic model takes the
                                 // expectation over hashes
  // Rail-only's forwarding between rails (the simulator's and the analytic model's alike). The
  // default is what NCCL's PXN does: the source writes over NVLink into the peer on the
  // destination's rail, whose proxy sends it on over the network chunk by chunk as it arrives
  // (NVIDIA, "Doubling all2all Performance with NVIDIA Collective Communication Library 2.12",
  // 2022): pipelined, hb_first.
  ForwardingMode forwarding = ForwardingMode::pipelined;
  ForwardVia forward_via = ForwardVia::hb_first;
  int forwarding_chunks = 8;  // pipelined: pieces per forwarded transfer
  SwitchSpec sw;
  // Leaf downlink:uplink ratio (1 = non-blocking; 7 = 1:7 as between Meta's pods). Applies to the
  // tier given by oversubscribed_tier (1 = leaf uplinks, 2 = spine uplinks, ...).
  double oversubscription = 1.0;
  int oversubscribed_tier = 1;
  // Ports per switch at the oversubscribed tier given as counts, down and up (0, 0: as
  // `oversubscription` splits the radix); the rest of the switch's ports stay unused. Alibaba
  // HPN's ToR: 128 x 200G down and 60 x 400G up, 120 lanes of 200G (Qian et al., SIGCOMM 2024):
  // 128:120. oversubscription is then split_down / split_up.
  int split_down = 0, split_up = 0;
  bool copper_gpu_leaf = false;  // passive DAC for in-rack GPU-leaf links instead of optics
  // Leaf ports cabled to non-GPU endpoints (the UFM fabric manager: 4 links in the DGX H100
  // SuperPOD RA). They occupy free leaf ports and count as GPU-leaf links in the bill of
  // materials; they carry no training traffic and are not nodes of the Fabric graph.
  int management_links = 0;
  // Planes (docs/design.md, "Planes"): the design is built `planes` times over, each copy (a
  // plane) cabled to its share of every GPU's NIC ports: NIC port e of a GPU (NIC e / nic_ports,
  // its port e % nic_ports) is in plane e % planes, so every GPU reaches every plane (NVIDIA
  // Spectrum-X multiplane, Alibaba HPN's dual plane). One plane per rail, each GPU in the plane of
  // its local rank (DeepSeek's multi-plane fat-tree), is rail_only with planes = 1.
  int planes = 1;
  // Ports each NIC is split into, at 1/nic_ports of its speed each (an 800G NIC as 2 x 400G or
  // 4 x 200G); the switch must have a port mode at that speed.
  int nic_ports = 1;
  // Each port of a NIC on a different leaf (a ToR pair: Alibaba HPN's dual-ToR): the NIC ports a
  // GPU has in one plane are cabled to different leaves, so one leaf lost costs capacity, not
  // connectivity. Needs NICs of >= 2 ports.
  bool dual_tor = false;
  // How a transfer spreads over its GPU's NIC ports (PortBalance): `connections` connections
  // per transfer under hash (one queue pair per transfer: NCCL_IB_QPS_PER_CONNECTION's default;
  // Meta's Llama 3 collectives open 16 flows per GPU pair, Dubey et al. 2024 Sec. 3.3.1).
  PortBalance port_balance = PortBalance::spray;
  int connections = 1;
  // nic_ports was chosen for the planes (split_nics_over_planes: sweep and optimize), so that an
  // impossible split is the planes' error (--planes), not a port count the user never gave.
  bool nic_ports_from_planes = false;
};

inline constexpr int kMaxPlanes = 64;

// P planes over GPUs of `nics_per_gpu` NICs: each NIC split in P / gcd(P, nics_per_gpu) ports,
// so that a GPU's ports deal evenly over the planes (one 800G NIC over 4 planes: 4 x 200G; 2
// NICs over 2 planes: unsplit). Sets planes, nic_ports and nic_ports_from_planes; checks P in
// [1, kMaxPlanes] (--planes).
void split_nics_over_planes(NetworkDesign& d, std::int64_t planes, std::int64_t nics_per_gpu);
inline constexpr int kMaxNicPorts = 8;

// What a user asked for on the command line (or in a sweep); resolved by make_network_design.
struct NetworkOptions {
  std::string design = "rail_optimized";  // rail_optimized | rail_only | ideal
  std::string sw = "ETH-51.2T-128x400G";  // switch preset or JSON file (docs/design.md: why)
  double oversubscription = 1.0;          // down:up ratio at oversubscribed_tier, >= 1
  int oversubscribed_tier = 1;            // 1 = leaf uplinks, 2 = spine uplinks, ...
  std::string port_split;                 // "D:U" down and up ports at that tier; "" = none
  bool copper_gpu_leaf = false;
  int management_links = 0;
  std::int64_t planes = 1;     // 1 .. kMaxPlanes, dividing the NIC ports of a GPU
  std::int64_t nic_ports = 1;  // 1 .. kMaxNicPorts
  bool dual_tor = false;
  std::string port_balance = "spray";  // spray | hash
  std::int64_t connections = 1;        // 1 .. kMaxConnections, connections per transfer (hash)
  std::string routing = "auto";  // auto (the switch family's default) | ecmp | adaptive | spray
  std::int64_t seed = 0;         // ECMP hash salt, 0 .. 2^62
  std::string forwarding = "pipelined";  // store | pipelined | two-phase
  std::string forward_via = "hb_first";  // hb_first | rail_first
  std::int64_t chunks = 8;               // 1 .. kMaxForwardingChunks
};

// Validates and resolves the options (loads the switch preset or file). Errors name the CLI
// option: --design, --switch, --oversubscription, --oversubscribed-tier, --management-links,
// --planes, --nic-ports, --dual-tor, --port-balance, --connections, --routing, --seed,
// --forwarding, --forward-via, --chunks.
NetworkDesign make_network_design(const NetworkOptions& opt);
// The routing part of `opt` (routing against d.sw, seed, forwarding, forward_via, chunks) set
// on `d`, with the same checks and errors.
void apply_routing_options(NetworkDesign& d, const NetworkOptions& opt);
// Same, with an already loaded switch.
NetworkDesign make_network_design(DesignKind kind, const SwitchSpec& sw,
                                  double oversubscription = 1.0, int oversubscribed_tier = 1,
                                  bool copper_gpu_leaf = false, int management_links = 0);

// The routing assumptions every answer states (docs/model.md section 5), in words: "routing
// ecmp (Ethernet's default), seed 0; rail-only forwarding pipelined via hb_first, 8 chunks
// (NCCL's PXN)", after the planes when the design has any ("4 planes, NICs split in 4 ports,
// ports by hash of 1 connection per transfer, routing ..."); and as JSON: {"routing",
// "routing_default", "seed", "forwarding", "forward_via", "chunks", "planes", "nic_ports",
// "dual_tor", "port_balance", "connections"}, the same keys every document carries.
// The forwarding part is stated for rail_only designs, or with `with_forwarding` for an answer
// that covers several designs (compare, fail goodput).
std::string describe_routing(const NetworkDesign& d);
std::string describe_routing(const NetworkDesign& d, bool with_forwarding);
Json routing_json(const NetworkDesign& d);

// The design as built for this cluster: the switch in the port mode that serves its NICs
// (spec::fit_to_nics). Every consumer of a design over a cluster (topo's sizing and graph, the
// bill of materials and its price, perf's network view, sim) goes through this, so an 800G NIC
// is priced, sized, simulated and timed on the same 800G ports. With nic_ports > 1 the switch
// must have a mode at the split port's speed (InputError naming --nic-ports). Checks the planes
// against the cluster: they divide its NIC ports (--planes), dual_tor has NICs of >= 2 ports
// (--dual-tor). Idempotent.
NetworkDesign fit_to_cluster(const Cluster& cluster, const NetworkDesign& design);

// The cluster as its scale-out network sees it: each NIC port an endpoint (nics_per_gpu x
// nic_ports links per GPU at nic_bw / nic_ports each). perf's contention census and the
// simulator's SimNetwork count NIC links in this view; the Fabric keeps the cluster as given and
// counts its NIC links with Fabric::nics_per_gpu(). Identity when nic_ports = 1 or the design is
// ideal; not idempotent (apply it once, to a cluster as the user gave it).
Cluster port_view(const Cluster& cluster, const NetworkDesign& design);
// One NIC port's speed per direction: the NIC's over its ports (the NIC's when ideal).
double nic_port_Bps(const Cluster& cluster, const NetworkDesign& design);

// "4 planes, NICs split in 4 ports, dual ToR, ports by hash of 16 connections per transfer"
// ("..., transfers sprayed over the ports" under spray), or "" for one plane of unsplit NICs.
std::string describe_planes(const NetworkDesign& d);

}  // namespace railsim::spec
