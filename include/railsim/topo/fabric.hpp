#pragma once
// The concrete network graph of one design over one cluster, and its routing.
//
// Node numbering: GPUs are nodes [0, N) (node id = GPU id); HB-domain switches follow, one per
// domain ([N, N + D)); then scale-out switches tier by tier (leaves first). The HB-domain switch
// is a non-blocking crossbar: each GPU has one HB link to it at hb_bw_Bps per direction.
// Each NIC is a link from its GPU to a leaf switch (LinkKind::nic).
//
// Links are full duplex. Directed channels, which the simulator allocates bandwidth on, are
// numbered 2 * link + 0 for a -> b ("up": from the GPU side towards higher tiers) and
// 2 * link + 1 for b -> a ("down").
#include <cstdint>
#include <string>
#include <vector>

#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/clos.hpp"

namespace railsim::topo {

enum class NodeKind : std::uint8_t { gpu, hb_switch, network_switch };
enum class LinkKind : std::uint8_t { hb, nic, switch_switch };

struct Node {
  NodeKind kind = NodeKind::gpu;
  std::int8_t tier = 0;    // 0 GPU, -1 HB switch, 1 leaf, 2 spine, 3 core, ...
  std::int32_t rail = -1;  // rail a switch (or GPU) belongs to; -1 when it serves several rails
};

struct Link {
  std::int32_t a = 0;       // lower end (GPU, or the lower-tier switch)
  std::int32_t b = 0;       // upper end (HB switch, or the higher-tier switch)
  double capacity_Bps = 0;  // per direction
  LinkKind kind = LinkKind::nic;
  std::int8_t tier = 0;  // tier boundary: 0 = GPU-leaf (or GPU-HB), 1 = leaf-spine, 2 = spine-core
};

// How rail-only carries traffic between GPUs of different rails (through the HB domain):
// hb_first (HB hop to the GPU of the destination's rail in the source's domain, then its rail) or
// rail_first (the source's rail to the destination's domain, then the HB hop); spec's ForwardVia.
using Forwarding = spec::ForwardVia;

using Path = std::vector<std::int32_t>;  // directed channel ids, in order

// Rail-only's forwarding rule, for every module that routes a transfer (sim's flows, perf's
// link-load census, traffic's locality, a DegradedFabric): a transfer between GPUs on different
// rails in different HB domains has no switched path and goes through one HB-domain peer,
// hb_first: the GPU of the destination's rail in the source's domain; rail_first: the GPU of the
// source's rail in the destination's domain.
inline bool needs_forwarding(const spec::Cluster& c, std::int64_t src, std::int64_t dst) {
  return c.rail_of(src) != c.rail_of(dst) && c.domain_of(src) != c.domain_of(dst);
}
inline std::int64_t forwarding_peer(const spec::Cluster& c, Forwarding fw, std::int64_t src,
                                    std::int64_t dst) {
  return fw == Forwarding::hb_first ? c.gpu_at(c.domain_of(src), c.rail_of(dst))
                                    : c.gpu_at(c.domain_of(dst), c.rail_of(src));
}

// Where each NIC port of a GPU is cabled: the Clos instances of a design (planes, times the
// rails on rail_only) and the leaf of each port inside its instance. `ports` counts the NIC links
// of a GPU (NICs x ports per NIC: spec::port_view's nics_per_gpu); port e is in plane e % planes,
// as its (e / planes)-th port there. Each instance is one ClosPlan over
// - rails: rail_optimized K (each rail its own leaves), rail_only 1; times the ports a GPU has in
//   a plane when dual_tor (each of them is a "rail" of its own, so that no two share a leaf);
// - positions: domain x (ports per plane) + that index, or the domain alone when dual_tor.
// One plane of one port per GPU is the paper's designs: instance 0 (rail_optimized) or the GPU's
// rail (rail_only).
struct PlaneLayout {
  std::int64_t instances = 0;  // planes (rail_optimized), planes x K (rail_only), 0 (ideal)
  int planes = 1;
  int ports = 1;          // NIC links per GPU
  bool per_rail = false;  // rail_only: one instance per plane and rail
  bool dual_tor = false;

  int ports_per_plane() const { return ports / planes; }
  int plane_of(int port) const { return port % planes; }
  std::int64_t instance(const spec::Cluster& c, std::int64_t gpu, int port) const {
    const std::int64_t p = plane_of(port);
    return per_rail ? p * c.hb_domain + c.rail_of(gpu) : p;
  }
  // The rails and ports per rail of one instance's ClosPlan.
  std::int64_t plan_rails(const spec::Cluster& c) const {
    return (per_rail ? 1 : c.hb_domain) * (dual_tor ? ports_per_plane() : 1);
  }
  std::int64_t plan_ports_per_rail(const spec::Cluster& c) const {
    return c.domains() * (dual_tor ? 1 : ports_per_plane());
  }
  // The most plan rails one leaf may hold (ClosPlan's cap; 0: no cap): with dual ToR, the rails
  // of one port index only, so that a GPU's ports never share a leaf.
  std::int64_t max_rails_per_leaf(const spec::Cluster& c) const {
    return dual_tor ? (per_rail ? 1 : c.hb_domain) : 0;
  }
  std::int64_t leaf(const ClosPlan& plan, const spec::Cluster& c, std::int64_t gpu,
                    int port) const {
    const std::int64_t l = port / planes;
    const std::int64_t rail = per_rail ? 0 : c.rail_of(gpu);
    if (dual_tor) return plan.leaf_of(l * (per_rail ? 1 : c.hb_domain) + rail, c.domain_of(gpu));
    return plan.leaf_of(rail, c.domain_of(gpu) * ports_per_plane() + l);
  }
  // The GPU rail of a rail of the plan (a switch's rail label).
  std::int64_t gpu_rail(const spec::Cluster& c, std::int64_t inst, std::int64_t plan_rail) const {
    return per_rail ? inst % c.hb_domain : plan_rail % c.hb_domain;
  }
};

// The layout of a design (fitted to the cluster) over a cluster.
PlaneLayout plane_layout(const spec::Cluster& cluster, const spec::NetworkDesign& design);

struct Fabric {
  spec::Cluster cluster;
  spec::NetworkDesign design;
  std::vector<Node> nodes;
  std::vector<Link> links;
  int tiers = 0;  // switch tiers of the scale-out network (0 for ideal)
  std::vector<std::int64_t> switches_per_tier;  // leaf first

  std::int64_t gpu_count() const { return cluster.gpus; }
  std::int32_t hb_switch_of(std::int64_t gpu) const {
    return static_cast<std::int32_t>(cluster.gpus + cluster.domain_of(gpu));
  }

  // Appends to `out` the directed channels from GPU src to GPU dst (src != dst). Inside one HB
  // domain: GPU -> HB switch -> GPU. Across domains: up the Clos to the lowest common tier and
  // down; `flow_hash` picks among equal-cost uplinks deterministically (ECMP) and, unless `nic`
  // (0 .. nics_per_gpu - 1) names it, the NIC when a GPU has several. On rail_only, traffic
  // between different rails is forwarded through the HB domain as `fw` says. Allocation-free
  // when `out` has capacity.
  void route(std::int64_t src, std::int64_t dst, std::uint64_t flow_hash, Forwarding fw, Path& out,
             int nic = -1) const;

  // Routing data that route() needs, filled by the builders in src/topo/builders.cpp.
  //
  // Link numbering: links [0, N) are the HB links (link g joins GPU g to its HB switch); links
  // [N, N + N*M) are the NIC links (GPU g's NIC port n is link N + g*M + n, M = nics_per_gpu():
  // NICs x ports per NIC); then the
  // switch-switch links boundary by boundary (leaf-spine first), instance by instance.
  // Scale-out switch node ids follow the same order: tier by tier, instance by instance.
  // rail_optimized has one Clos instance per plane over all K rails; rail_only has K per plane
  // (one per rail), all with the same plan; ideal has none (one HB domain over all GPUs).
  PlaneLayout layout;
  ClosPlan plan;                             // of one instance
  std::vector<std::int64_t> tier_node_base;  // [t] = first node id of tier t (t = 1..L)
  std::vector<std::int64_t> link_base;       // [t] = first link id of boundary t (t = 1..L-1)

  // NIC links (ports) per GPU, and the line rate of one (the NIC's speed / its ports).
  int nics_per_gpu() const { return layout.ports; }
  double nic_link_Bps() const { return spec::nic_port_Bps(cluster, design); }
  std::int32_t hb_link(std::int64_t gpu) const { return static_cast<std::int32_t>(gpu); }
  std::int32_t nic_link(std::int64_t gpu, int nic) const {
    return static_cast<std::int32_t>(cluster.gpus + gpu * layout.ports + nic);
  }
  // Node id of the leaf that GPU `gpu`'s NIC `nic` is cabled to (-1 for ideal).
  std::int32_t leaf_of(std::int64_t gpu, int nic) const;
  // Link id of up port `port` of level-t block `block` of instance `inst` (boundary t, t >= 1):
  // a block's up ports are numbered switch by switch, u_t ports each.
  std::int64_t uplink(int t, std::int64_t inst, std::int64_t block, std::int64_t port) const {
    const ClosTier& lo = plan.tiers[static_cast<std::size_t>(t - 1)];
    return link_base[static_cast<std::size_t>(t)] + inst * lo.uplinks() +
           block * lo.up_ports_per_block() + port;
  }
  std::int64_t channel_count() const { return 2 * static_cast<std::int64_t>(links.size()); }
  // Longest path route() can return, in channels (reserve this much in a Path).
  int max_path_channels() const { return 2 * (tiers > 0 ? tiers : 0) + 4; }
};

// The name of node `id`, the one every output uses (the simulator's links, the graph exports), so
// that a node reads the same everywhere: gpu<g>; hb<d>, the HB switch of domain d; a scale-out
// switch by its tier's word and its index in the tier, the index --fail takes (leaf3 is leaf:3,
// spine0, core1; t4sw2 is switch:4:2), then .p<plane> on a network of several planes and
// .r<rail> when every NIC port below it is on one rail: leaf3.r3, spine5.p1. A Fabric made by
// hand, without tier_node_base, numbers its switches by node id.
std::string node_name(const Fabric& f, std::int32_t id);
// The HB domain of a GPU or an HB switch; -1 for other nodes.
std::int64_t node_domain(const Fabric& f, std::int32_t id);
// The plane of a scale-out switch (0 on a single-plane network); -1 for other nodes and where the
// Fabric has no plan.
int node_plane(const Fabric& f, std::int32_t id);

}  // namespace railsim::topo
