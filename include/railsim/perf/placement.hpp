#pragma once
// Placement: which GPU holds which logical rank of a strategy.
//
// Logical rank order follows Megatron-Core ("tp-cp-dp-pp"): r = tp + t * (cp + c * (dp + d *
// pp)). Context-parallel ranks hold the same weights, so the dense weights' gradients are reduced
// over the combined data-and-context coordinate q = cp + c * dp (Megatron-Core's "dp-cp" group:
// Axis::dp is that group, dp x cp members). Expert parallelism is carved out of that coordinate
// as Megatron-Core's expert rank generator does, q = ep + e * edp: the expert-parallel group is
// the e consecutive members of it, the expert-data-parallel group the dp x cp / e others. With
// cp = 1 this is Megatron-LM's "tp-ep-dp-pp". Hybrid sharding (HSDP) carves the same coordinate
// the same way, q = s + g * r: the shard group is the g consecutive members, the replica group the
// dp x cp / g others. A communication group along an axis is a set of ranks that differ only in
// that axis's coordinate.
//
// MoE parallel folding (Degrees::etp below tp, Megatron-Core's expert_tensor_parallel_size; Liu
// et al. 2025, arXiv 2504.14960): the expert layers have their own rank order "etp-ep-edp-pp" over
// the same ranks, r = et + etp * (ep + e * edp) within a pipeline stage: the expert tensor-
// parallel group is etp consecutive ranks (a part of the TP group, etp dividing tp), the expert-
// parallel group e ranks etp apart (it may span the TP ranks) and the expert-data-parallel group
// the tp x cp x dp / (etp e) others. With etp = tp this is the order above.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "railsim/spec/cluster.hpp"

namespace railsim::perf {

enum class Axis : std::uint8_t {
  tp,   // tensor (and sequence) parallel group
  dp,   // whole data-parallel group with the context-parallel ranks (dense weights' gradients):
        // dp x cp members
  pp,   // pipeline group (consecutive stages exchange activations)
  ep,   // expert-parallel group (MoE all-to-all)
  edp,  // expert-data-parallel group (expert weights' gradients): tp x cp x dp / (etp x ep)
  cp,   // context-parallel group (K and V all-gathered per layer)
  dp_shard,    // HSDP: the shard group (weights gathered, gradients reduce-scattered), g members
  dp_replica,  // HSDP: the replica group (gradient shards all-reduced), dp x cp / g members
  etp,  // expert tensor-parallel group (the routed experts' sequence-parallel pair): etp members
};
std::string_view to_string(Axis a);

struct Degrees {
  std::int64_t tp = 1, pp = 1, dp = 1, ep = 1, cp = 1;
  std::int64_t shard = 0;  // HSDP shard-group size over dp x cp; 0 = the whole group
  // Expert tensor-parallel size: 0 (or tp) = the experts split like the dense FFN, over the TP
  // group; a divisor of tp below it = folded, the experts split over etp consecutive ranks (1:
  // whole experts on every GPU).
  std::int64_t etp = 0;
  std::int64_t total() const { return tp * cp * pp * dp; }
  std::int64_t shard_size() const { return shard > 0 ? shard : dp * cp; }
  std::int64_t expert_tp() const { return etp > 0 && etp < tp ? etp : tp; }
  // etp is 0 or a divisor of tp (tp itself: unfolded).
  bool etp_divides_tp() const { return etp == 0 || (etp > 0 && etp <= tp && tp % etp == 0); }
  // Folded, the expert layers' etp x ep groups tile the tp x cp x dp ranks of a stage.
  bool folded_experts_tile() const { return (tp * cp * dp) % (expert_tp() * ep) == 0; }
  // The expert-data-parallel group: the tp x cp x dp ranks of a stage over etp x ep.
  std::int64_t expert_dp() const { return tp * cp * dp / (expert_tp() * ep); }
};

enum class PlacementKind : std::uint8_t {
  rail_aligned,       // GPU = logical rank: TP innermost inside the HB domain (the default)
  tp_across_domains,  // TP members placed in different HB domains (on one rail when possible)
  shuffled,           // a seeded random permutation of the rail-aligned order
};
std::string_view to_string(PlacementKind k);
PlacementKind parse_placement_kind(std::string_view s, const std::string& option = "--placement");

// Where a group sits on the cluster, for the analytic model: every group of an axis has the same
// shape under the structured placements (rail_aligned, tp_across_domains).
struct GroupShape {
  std::int64_t size = 1;        // members
  std::int64_t per_domain = 1;  // members in each HB domain it touches
  std::int64_t domains = 1;     // HB domains it touches (size / per_domain)
  // True when a hierarchical algorithm can keep the inter-domain phase on rails: the members of
  // every touched domain sit on the same set of local ranks.
  bool rail_aligned = true;
  // HB domains between the domains of consecutive members (1: neighbouring domains; pipeline
  // stages outermost in the rank order sit dp x ... domains apart). Routing needs it: members
  // far apart sit under different leaves, so their flows climb above the leaf.
  std::int64_t domain_stride = 1;
};

class Placement {
 public:
  Placement(const spec::Cluster& cluster, Degrees d,
            PlacementKind kind = PlacementKind::rail_aligned, std::uint64_t seed = 1);

  const Degrees& degrees() const { return d_; }
  PlacementKind kind() const { return kind_; }
  std::uint64_t seed() const { return seed_; }  // shuffled: its seed (0 otherwise)
  std::int64_t gpus() const { return n_; }
  std::int64_t hb_domain() const { return k_; }

  // GPU holding logical rank r.
  std::int64_t gpu_of(std::int64_t rank) const;
  // Degree and stride (in logical ranks) of an axis.
  std::int64_t axis_size(Axis a) const;
  std::int64_t axis_stride(Axis a) const;
  std::int64_t group_count(Axis a) const { return n_ / axis_size(a); }
  // Logical rank of member i of group g along axis a (g in [0, group_count(a))).
  std::int64_t rank_in_group(Axis a, std::int64_t g, std::int64_t i) const;
  // Shape of the groups of an axis: O(1) when the structured placements tile HB domains
  // regularly; otherwise the least local shape over every group (most domains, most members per
  // domain, rail-aligned only if every group is), since the slowest group paces a collective.
  GroupShape shape(Axis a) const;

 private:
  std::int64_t n_, k_;
  Degrees d_;
  PlacementKind kind_;
  std::uint64_t seed_ = 0;                                 // shuffled only: its seed
  std::shared_ptr<const std::vector<std::int64_t>> perm_;  // shuffled only
};

}  // namespace railsim::perf
