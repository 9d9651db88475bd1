#pragma once
// What the flow simulator needs to know of a network: the capacity of every directed channel, a
// class per channel (link tier and direction, for reports and for aggregation) and routing.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "railsim/sim/flow_sim.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/topo/fabric.hpp"
#include "railsim/topo/failures.hpp"

namespace railsim::sim {

// `nic` >= 0 asks for that NIC of a multi-NIC GPU (the simulator splits a transfer that leaves
// the HB domain over every NIC, as NCCL's channels do); -1 lets the hash pick.
using RouteFn = std::function<void(std::int64_t src, std::int64_t dst, std::uint64_t hash, int nic,
                                   topo::Path& out)>;

struct SimNetwork {
  // The cluster as the network sees it (spec::port_view): a split NIC's ports count as NICs.
  spec::Cluster cluster;
  // Rail-only: GPUs on different rails in different HB domains have no switched path; the
  // simulator forwards their traffic through the HB domain (SimConfig says how).
  bool rail_only = false;
  std::vector<double> capacity_Bps;         // per directed channel (2 * link + direction)
  std::vector<std::int16_t> channel_class;  // per channel, index into class_names
  std::vector<std::string> class_names;     // "HB up", "GPU-leaf down", "leaf-spine up", ...
  // Routes a pair that needs no forwarding (same rail or same HB domain, or any pair when the
  // design is not rail-only); appends channel ids to `out`.
  RouteFn route;
  // Optional (failures): a transfer that detours around dead components through HB-domain
  // peers splits evenly over spread(src, dst) > 1 routes, route k given by route_part; when
  // spread is empty or returns 0 or 1 the transfer takes `route`.
  std::function<int(std::int64_t src, std::int64_t dst)> spread;
  std::function<void(std::int64_t src, std::int64_t dst, std::uint64_t hash, int part,
                     topo::Path& out)>
      route_part;
  // Optional (failures): whether NIC port `nic` of `gpu` still reaches its leaf; a transfer
  // split over a GPU's NIC ports takes the ports alive at both ends. Empty: all alive.
  std::function<bool(std::int64_t gpu, int nic)> nic_alive;
  // A channel in words, its nodes named as the graph exports name them (topo::node_name):
  // "gpu3 -> leaf3.r3 (GPU-leaf)".
  std::function<std::string(ChannelId)> describe;
  // Packet spraying (SimConfig's Routing::spray): the bundle each directed channel belongs to, -1
  // for channels in none (HB and NIC channels, dead links); empty = no bundles. A bundle is
  // every switch-switch link between one block of the Clos (a leaf, a pod of spines, ...) and
  // the tier above it, in one direction: the parallel equal-cost uplinks over which spraying
  // splits a flow's bytes evenly. docs/sim.md states the model and its limits.
  std::vector<std::int32_t> bundle_of;
  std::int32_t bundle_count = 0;

  std::int32_t channel_count() const { return static_cast<std::int32_t>(capacity_Bps.size()); }
};

// Capacity of each bundle: the sum of its members' (current) capacities.
std::vector<double> bundle_capacities(const SimNetwork& net);

// Scales capacities: HB-domain channels by `hb`, every other channel by `network` (achievable
// fractions of line rate, e.g. the GPU preset's efficiency block, as the analytic model uses).
void scale_capacities(SimNetwork& net, double hb, double network);

// Link tier name for a link of `kind` at `tier` ("HB", "GPU-leaf", "leaf-spine", "spine-core",
// then "tier-N").
std::string tier_name(topo::LinkKind kind, int tier);

// Capacities and classes from the fabric's links, and the bundles: per Clos block and direction
// when the fabric carries its Clos plan (topo/'s builders), else per lower switch and direction
// (exact for two tiers); routing with `route` (tests pass their own for hand-made fabrics).
SimNetwork make_sim_network(const topo::Fabric& fabric, RouteFn route);
// Same, routing with Fabric::route (the fabric must outlive the result).
SimNetwork make_sim_network(const topo::Fabric& fabric);
// The degraded fabric (it must outlive the result): live routing, and transfers forwarded through
// HB-domain peers spread over every live peer route; a bundle holds its live links only (spraying
// over live paths). A pair with no live path throws InputError("--fail") when routed.
SimNetwork make_sim_network(const topo::DegradedFabric& degraded);

}  // namespace railsim::sim
