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

// How rail-only carries traffic between GPUs of different rails (through the HB domain).
enum class Forwarding : std::uint8_t {
  hb_first,    // HB hop to the GPU of the destination's rail in the source's domain, then its rail
  rail_first,  // source's rail to the destination's domain, then HB hop to the destination
};

using Path = std::vector<std::int32_t>;  // directed channel ids, in order

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
  // down; `flow_hash` picks among equal-cost uplinks deterministically (ECMP) and the NIC when a
  // GPU has several. On rail_only, traffic between different rails is forwarded through the HB
  // domain as `fw` says. Allocation-free when `out` has capacity.
  void route(std::int64_t src, std::int64_t dst, std::uint64_t flow_hash, Forwarding fw,
             Path& out) const;

  // Routing data that route() needs, filled by the builders in src/topo/builders.cpp.
  //
  // Link numbering: links [0, N) are the HB links (link g joins GPU g to its HB switch); links
  // [N, N + N*M) are the NIC links (GPU g's NIC n is link N + g*M + n, M = nics_per_gpu); then the
  // switch-switch links boundary by boundary (leaf-spine first), instance by instance.
  // Scale-out switch node ids follow the same order: tier by tier, instance by instance.
  // rail_optimized has one Clos instance over all K rails; rail_only has K instances (one per
  // rail), all with the same plan; ideal has none (one HB domain over all GPUs).
  std::int64_t instances = 0;
  ClosPlan plan;                             // of one instance
  std::vector<std::int64_t> tier_node_base;  // [t] = first node id of tier t (t = 1..L)
  std::vector<std::int64_t> link_base;       // [t] = first link id of boundary t (t = 1..L-1)

  int nics_per_gpu() const { return cluster.nics_per_gpu; }
  std::int32_t hb_link(std::int64_t gpu) const { return static_cast<std::int32_t>(gpu); }
  std::int32_t nic_link(std::int64_t gpu, int nic) const {
    return static_cast<std::int32_t>(cluster.gpus + gpu * cluster.nics_per_gpu + nic);
  }
  // Node id of the leaf that GPU `gpu`'s NIC `nic` is cabled to (-1 for ideal).
  std::int32_t leaf_of(std::int64_t gpu, int nic) const;
  std::int64_t channel_count() const { return 2 * static_cast<std::int64_t>(links.size()); }
  // Longest path route() can return, in channels (reserve this much in a Path).
  int max_path_channels() const { return 2 * (tiers > 0 ? tiers : 0) + 4; }
};

}  // namespace railsim::topo
