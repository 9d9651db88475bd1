#pragma once
// Failures as operations on the Fabric: a FailureSet names dead components (GPUs, NICs, NIC-leaf
// links, switches of any tier, switch-switch links, whole HB domains); a DegradedFabric marks
// what they take with them (a dead switch kills its links, a dead domain its GPUs and its HB
// switch) and routes around them:
// - above the leaf, ECMP picks among the live uplinks whose switch still reaches the
//   destination (a depth-first search in hash order: the healthy choice when it is alive);
// - a GPU whose own NIC path is dead (NIC, NIC-leaf link or leaf) sends through the NIC of a
//   peer GPU of its HB domain, as NCCL's PXN does (`pxn`): GPU -> HB switch -> peer -> network
//   -> (the destination's peer ->) HB switch -> destination. On rail_only the peer's rail
//   carries the pair between the two domains; on rail_optimized any rail reaches any rail;
// - a pair with no live path is reported (RouteStatus::none), never routed over a dead link.
//
// Ours: the routing rules above; docs/failures.md has the what-if they serve.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/topo/fabric.hpp"

namespace railsim::topo {

enum class FailureKind : std::uint8_t {
  gpu,       // a GPU (its HB link and NICs go with it)
  nic,       // one NIC of a GPU
  link,      // one NIC-leaf link (cable or transceivers): the same effect on the graph as the NIC
  switch_,   // a scale-out switch of a tier (leaf = tier 1, spine = 2, core = 3)
  uplink,    // a switch-switch link at a tier boundary (1 = leaf-spine, 2 = spine-core)
  domain,    // a whole HB domain (its GPUs and its HB switch)
  hb_plane,  // one switch plane of an HB domain (an NVSwitch chip or tray): 1/planes of its HB
             // bandwidth (GpuSpec::hb_planes); every plane dead = the HB switch dead
  plane,     // one network plane (spec::NetworkDesign::planes): every switch of it (index)
};

struct Failure {
  FailureKind kind = FailureKind::gpu;
  std::int64_t index = 0;  // GPU, switch (over every instance of the tier), link or domain
  int nic = 0;             // nic, link: which of the GPU's NICs; hb_plane: which plane
  int tier = 0;            // switch_: tier (1 = leaf); uplink: boundary (1 = leaf-spine)
};

// "gpu:12", "nic:12" (NIC 0) or "nic:12.1", "link:12[.1]", "leaf:3", "spine:3", "core:3",
// "switch:T:I", "uplink:T:I", "domain:5", "nvswitch:5" (plane 0) or "nvswitch:5.2", "plane:1"
// (network plane 1: its switches, with them its NIC ports and switch links).
std::string to_string(const Failure& f);

using FailureSet = std::vector<Failure>;

// Parses one spec (syntax above) against the fabric's sizes. Throws InputError(option, ...) for
// an unknown component, a malformed index or one out of range (the message gives the range).
Failure parse_failure(std::string_view spec, const Fabric& f, const std::string& option = "--fail");

// `count` distinct components drawn at random (deterministic for a seed): each draw picks a kind
// with probability proportional to how many components of that kind the fabric has (GPUs, NICs,
// NIC-leaf links, switches, switch-switch links, HB switch planes), then one of them uniformly
// (whole network planes are named, never drawn).
// Throws InputError (option) when count exceeds the components there are.
FailureSet random_failures(const Fabric& f, std::int64_t count, std::uint64_t seed,
                           const std::string& option = "--fail-random");

enum class RouteStatus : std::uint8_t {
  direct,     // the healthy route's kind of path (ECMP may have picked other live uplinks)
  forwarded,  // through an HB-domain peer's NIC (PXN) at one end or both
  none,       // no live path
};

class DegradedFabric {
 public:
  // `pxn`: allow forwarding through HB-domain peers (above). Throws InputError("--fail") for a
  // component out of range.
  DegradedFabric(const Fabric& f, const FailureSet& failures, bool pxn);

  const Fabric& fabric() const { return *f_; }
  const FailureSet& failures() const { return failures_; }
  bool pxn() const { return pxn_; }
  bool link_alive(std::int64_t link) const { return !link_dead_[static_cast<std::size_t>(link)]; }
  bool node_alive(std::int64_t node) const { return !node_dead_[static_cast<std::size_t>(node)]; }
  bool gpu_alive(std::int64_t g) const { return node_alive(g); }
  // The GPU's NIC `nic` reaches its leaf: GPU, NIC link and leaf alive.
  bool edge_alive(std::int64_t g, int nic) const;
  bool any_edge_alive(std::int64_t g) const;
  bool hb_alive(std::int64_t g) const;  // the GPU's HB link and its domain's HB switch
  // Share of its HB bandwidth a domain keeps: live planes / planes (1 when none failed).
  double hb_factor(std::int64_t domain) const {
    return hb_factor_.empty() ? 1.0 : hb_factor_[static_cast<std::size_t>(domain)];
  }

  // Routes src -> dst (src != dst) like Fabric::route, around the dead components; `choice`
  // picks among the HB-domain peers when the pair is forwarded (peer_choices of them, in
  // order; taken modulo the count). `nic`, when >= 0, is the NIC to use if its edges are alive
  // (else the first live one, as for a hashed choice). Allocation-free when `out` has
  // max_path_channels().
  // Pairs on different rails of rail_only are routed only within one rail or one domain: give
  // them as two legs, as the simulator does (the first through the HB domain).
  RouteStatus route(std::int64_t src, std::int64_t dst, std::uint64_t flow_hash, int choice,
                    Path& out, int nic = -1) const;
  // How many peer routes a forwarded pair can spread over (0 when the pair is not forwarded or
  // has no live path).
  int peer_choices(std::int64_t src, std::int64_t dst) const;
  int max_path_channels() const { return f_->max_path_channels() + 4; }

  // A GPU is cut off when it is dead, or alive but with no live way out of its HB domain (no
  // live edge of its own and, with pxn, none through a peer).
  bool cut_off(std::int64_t g) const;

 private:
  bool clos_live(std::int64_t s, std::int64_t d, int nic, std::uint64_t h, Path& out) const;
  bool up(int t, const std::int64_t* bs, const std::int64_t* bd, int top, std::int64_t j,
          std::int64_t inst, std::uint64_t h, Path& out) const;
  bool down(int t, const std::int64_t* bd, std::int64_t j, std::int64_t inst, std::uint64_t h,
            Path& out) const;
  // Ends of the detour through rail r (false when that rail offers none).
  bool detour_ends(std::int64_t src, std::int64_t dst, std::int64_t r, std::int64_t& x,
                   std::int64_t& y) const;
  std::int64_t switch_node(int tier, std::int64_t inst, std::int64_t block, std::int64_t j) const;

  const Fabric* f_;
  FailureSet failures_;
  bool pxn_;
  std::vector<std::uint8_t> link_dead_, node_dead_;
  std::vector<double> hb_factor_;  // per domain; empty when no plane failed
};

// Capacity of each link tier, healthy and lost (links dead or with a dead end).
struct TierCapacity {
  std::string name;  // "HB", "GPU-leaf", "leaf-spine", ...
  std::int64_t links = 0, links_lost = 0;
  double capacity_Bps = 0, lost_Bps = 0;  // per direction, summed over links
};
std::vector<TierCapacity> capacity_by_tier(const DegradedFabric& d);

// Worst-block down:up ratio of each tier boundary t (1..tiers-1) on the degraded fabric, at
// least the healthy one: a tier-t block whose live uplinks are u of U planned has its ratio
// multiplied by U / u (infinity when u = 0 and the block still has live switches). Blocks whose
// switches are all dead are skipped (their GPUs are forwarded or cut off).
std::vector<double> degraded_uplink_ratio(const DegradedFabric& d,
                                          const std::vector<double>& healthy);

// Link tier name ("HB", "GPU-leaf", "leaf-spine", "spine-core", then "tier-N").
std::string link_tier_name(LinkKind kind, int tier);

}  // namespace railsim::topo
