#pragma once
// Contention in the analytic model: the load one phase of a collective puts on every link it
// crosses, and the time that load takes under the design's routing (docs/model.md section 5).
//
// A phase step is a set of transfers of equal size running at once: one piece from every ring
// member to its successor, every pipeline stage to the next, every all-to-all pair; every group
// of the axis at once, as the flow simulator runs them. Each transfer is routed by the Fabric's
// own rules, the code sim's flows follow (topo::leaf_in_instance, ClosPlan::common_blocks,
// topo::forwarding_peer): the HB links inside a domain; else the NIC links (a share per NIC of a
// multi-NIC GPU) and, for each tier it climbs, the bundle of parallel uplinks of the block it
// leaves and of the block it enters (the links between one block and the tier above, one way);
// on rail_only, a pair on other rails and domains through its HB-domain peer (two legs).
//
// The census counts, per link and per bundle, the flows of the step. Max-min fairness gives every
// flow of a set of equal flows that start together at least the busiest link's fair share, and
// the flows of that link exactly that, so the step ends when the busiest link has carried its
// load: time = max over links of load / capacity. Routing decides a bundle's busiest link:
//   adaptive, spray  the flows share the bundle's links evenly (sim's bundle model): the bundle's
//                    load over its summed capacity;
//   ecmp             each flow is hashed uniformly onto one of the bundle's u links (sim's
//                    per-hop hash, uniform over a block's up ports when the tier below stripes
//                    evenly): f flows meet a busiest link of M(f, u) flows, the largest of f
//                    balls in u bins; the step takes the expected maximum over every bundle and
//                    link at once, E[max(D, unit x max_b M_b)], the bundles taken independent
//                    (ours: the same flows' up and down choices are correlated in a 2-tier Clos
//                    with one link per leaf-spine pair, which this overstates slightly).
// Rail-only's forwarding (spec::ForwardingMode) turns the legs' loads into a time: store
// max(T_all, T_1 + T_2), pipelined max(T_all, max(T_1, T_2) + min(T_1, T_2) / chunks), two_phase
// (all-to-all only; rings and pipelines store, as sim) T_A + T_B over the barrier's two sets; T_S
// the busiest link's time counting the flows of S only (1, 2: first and second legs).
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/expansion.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/builders.hpp"

namespace railsim::perf {

// One phase step's time per byte of one of its transfers (time = bytes x s_per_byte).
struct StepLoad {
  double s_per_byte = 0;             // the step, rail-only forwarding included
  double forwarding_s_per_byte = 0;  // of it, what the HB hops of forwarded transfers add
  bool cross_rail = false;           // a transfer goes between rails through the NIC network
  // Collective latencies the step pays: 2 for rail-only's two-phase all-to-all, whose barrier
  // ends a first collective step (every first leg delivered) before the second starts.
  double latency_steps = 1;
};

// P(max <= x) for f balls thrown uniformly into u bins: exact for f <= 64 (the multinomial count
// f!/u^f [z^f] (sum_{j<=x} z^j/j!)^u), beyond it the independent-Poisson form
// P(Pois(f/u) <= x)^u (ours: the bins of a heavily loaded throw are nearly independent).
double max_load_cdf(std::int64_t f, std::int64_t u, std::int64_t x);
// E[max load] of f balls in u bins (from max_load_cdf).
double expected_max_load(std::int64_t f, std::int64_t u);

class ContentionModel {
 public:
  // The design must be fitted to the cluster (spec::fit_to_cluster); capacities are the line
  // rates times the GPU preset's achievable fractions (HB links by eff.hb, every other link by
  // eff.nic, as sim::like_for_like scales them).
  ContentionModel(const spec::Cluster& cluster, const spec::NetworkDesign& design);

  // The step load of phase `scope` of an op of `algorithm` (the op's: hierarchical for its
  // in-domain and rail phases) run over the groups of `axis` under `pl` (the rings, chains or
  // exchanges perf::expand_group gives each group). Cached per signature
  // (placement kind and seed, degrees, axis, algorithm, scope, direction): the first call builds
  // the census (O(GPUs x tiers)), later ones read it without allocating. Thread-safe. `reverse`:
  // pipeline sends of the backward pass, member i+1 to member i (sim's direction), which differ
  // from the forward ones where forwarding peers or leaves are shared unevenly.
  StepLoad step_load(const Placement& pl, Axis axis, Algorithm algorithm, Scope scope,
                     bool reverse = false) const;

  // The same without the cache (tests compare both, the aggregated all-to-all census with the
  // transfer-by-transfer one, and rail 0's census standing for every alike rail with the census
  // of every rail).
  StepLoad census(const Placement& pl, Axis axis, Algorithm algorithm, Scope scope,
                  bool reverse = false, bool aggregate_all_to_all = true,
                  bool rail_symmetry = true) const;

  // The same network with its capacities scaled, for the what-if of a failure set (fail/):
  // every NIC's by 1 / nic_load (the busiest NIC's load against healthy, forwarding included),
  // every HB link's by `hb`, and boundary t's bundles by uplink[t] (live over healthy capacity;
  // index 0 unused). A coarse reading of a degraded fabric, with a cache of its own.
  std::shared_ptr<const ContentionModel> scaled(double nic_load, double hb,
                                                const std::vector<double>& uplink) const;

  const spec::Cluster& cluster() const { return cluster_; }
  spec::Routing routing() const { return design_.routing; }

 private:
  struct Key {
    std::int64_t tp = 0, pp = 0, dp = 0, ep = 0;
    std::uint64_t seed = 0;
    std::uint8_t kind = 0, axis = 0, algorithm = 0, scope = 0, reverse = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  // step_load past its per-thread cache of rail-aligned signatures.
  StepLoad lookup(const Placement& pl, Axis axis, Algorithm algorithm, Scope scope,
                  bool reverse) const;

  spec::Cluster cluster_;
  spec::Cluster ports_;  // spec::port_view: the census counts NIC ports as links
  spec::NetworkDesign design_;
  std::uint64_t id_ = 0;  // unique per model, for the per-thread cache of recent step loads
  topo::NetworkPlan plan_;
  double hb_Bps_ = 0, nic_Bps_ = 0, port_Bps_ = 0;  // achievable, per link
  // scaled()'s NIC load (1 when healthy): under port hashing the connections rehash over the
  // M / nic_load ports left, each at its own speed, instead of every port slowed.
  double nic_load_ = 1.0;
  std::vector<std::int64_t> bundle_base_;   // [t]: first bundle of boundary t in an instance
  std::vector<std::int64_t> bundle_links_;  // [t]: links of one bundle at boundary t
  std::vector<double> bundle_scale_;        // [t]: capacity factor of boundary t's bundles
  bool rails_alike_ = false;                // see the constructor
  std::vector<std::int32_t> leaf_;          // [gpu x ports + port]: its leaf in its instance
  std::vector<std::int32_t> instance_;      // [gpu x ports + port]: its Clos instance
  std::vector<std::vector<std::int32_t>> ancestor_;  // [t][leaf]: the leaf's level-t block
  // ClosPlan::common_blocks of the leaves of a's and b's NIC `nic`, from the tables.
  int walk(std::int64_t a, std::int64_t b, int nic, std::int64_t* bs, std::int64_t* bd) const;
  std::int64_t instance_of(std::int64_t gpu, int port) const {
    return instance_[static_cast<std::size_t>(gpu * ports_.nics_per_gpu + port)];
  }
  std::int64_t bundles_per_instance_ = 0;
  // Per round-robin tier t (topo::ClosTier::even() false): c(i, j), the links between sub-block
  // position i and top switch j, [t][i X + j] (ClosTier::links_between tabulated). Under ecmp a
  // top switch with one link into a sub-block takes about as many of its flows as one with two,
  // so the down links are not equally likely: the census records the flows each down bundle
  // expects at each switch (docs/model.md section 5).
  std::vector<std::vector<double>> switch_links_;

  mutable std::shared_mutex mu_;
  mutable std::unordered_map<Key, StepLoad, KeyHash> cache_;

  friend class Census;
};

}  // namespace railsim::perf
