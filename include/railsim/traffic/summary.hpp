#pragma once
// What a TrafficMatrix says in a few numbers: bytes per parallelism x locality, how many GPU
// pairs talk at all, the busiest pair, and the busiest NIC.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "railsim/core/json_fwd.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

namespace railsim::traffic {

// Bytes that load each GPU's NIC(s): inter-domain bytes leaving (tx) and entering (rx) it.
// On rail_optimized a cross-rail byte leaves the sender's NIC and enters the receiver's. On
// rail_only it is forwarded through the HB domain first (hb_first: NVLink hop to the GPU of the
// receiver's rail in the sender's domain, as NCCL's PXN does), so it leaves the *forwarding*
// GPU's NIC. On ideal there is no NIC network: all loads are zero.
struct NicLoads {
  std::vector<double> tx_bytes, rx_bytes;  // per GPU
  double forwarded_bytes = 0;              // cross-rail bytes sent by a GPU other than their source
};
NicLoads nic_loads(const TrafficMatrix& tm, const spec::Cluster& cluster, spec::DesignKind design);

struct TrafficSummary {
  std::int64_t gpus = 0;
  std::int64_t hb_domain = 1;
  spec::DesignKind design = spec::DesignKind::rail_optimized;
  // bytes[parallelism][locality], parallelism in perf::Parallelism order (tp, sp, pp, dp, ep, cp).
  std::array<std::array<double, kLocalities>, kParallelisms> bytes{};
  double total_bytes = 0;
  double bytes_by_locality(Locality l) const;
  double bytes_by_parallelism(perf::Parallelism p) const;

  // Ordered pairs (src != dst) with any traffic, out of N(N-1) ordered pairs.
  std::int64_t pairs_with_traffic = 0;
  double pair_fraction_with_traffic = 0;
  std::int64_t entries = 0;  // non-zero (src, dst, parallelism) entries stored
  // Distinct HB-domain pairs (ordered, different domains) and rail pairs with inter-domain bytes.
  std::int64_t domain_pairs_with_traffic = 0;

  struct Pair {
    std::int64_t src = -1, dst = -1;
    double bytes = 0;
  } busiest_pair;  // most bytes in one direction; ties go to the lowest (src, dst)

  struct Nic {
    std::int64_t gpu = -1;
    double tx_bytes = 0, rx_bytes = 0;
  } busiest_nic;               // largest max(tx, rx); ties go to the lowest GPU id
  double forwarded_bytes = 0;  // rail_only: cross-rail bytes carried by a forwarding GPU's NIC
};

TrafficSummary summarize(const TrafficMatrix& tm, const spec::Cluster& cluster,
                         spec::DesignKind design);

// The busiest NIC's load averaged over one iteration: max(tx, rx) bytes over the iteration time x
// the GPU's NIC bandwidth (ours; bursts run at line rate, so this is the fraction of the
// iteration they take). 0 without a busiest NIC or an iteration time.
double busiest_nic_utilisation(const TrafficSummary& s, const spec::Cluster& cluster,
                               const perf::IterationTime& it);

// JSON of a summary: bytes_by_locality {same_domain, same_rail, cross_rail},
// bytes_by_parallelism {tp, sp, pp, dp, ep}, bytes {parallelism: {locality: bytes}}, shares,
// pairs_with_traffic, ordered_pairs, pair_fraction_with_traffic, busiest_pair, busiest_nic, ...
Json to_json(const TrafficSummary& s, const spec::Cluster& cluster);

// The document `railsim traffic --json` prints and Python's traffic() returns as its summary:
// to_json(summary, cluster) and where the matrix came from: "model", "gpu", "global_batch",
// "seq_len", "strategy" (perf::to_json(s, placement)), "strategy_source" ("given" or "best plan
// of N strategies"), "seed" (of the shuffled placement), "iteration_time_s" and "feasible" (the
// strategy's estimate), "matrix_memory_bytes" (tm's) and "network" (the design, switch and
// spec::routing_json of `d`: the routing the best plan and the estimate assumed).
Json traffic_document(const TrafficMatrix& tm, const TrafficSummary& summary,
                      const spec::Cluster& cluster, const perf::Model& m, const perf::Training& tr,
                      const perf::Strategy& s, perf::PlacementKind placement,
                      const std::string& strategy_source, std::int64_t seed,
                      const perf::IterationTime& it, const spec::NetworkDesign& d);

// Calls fn(src, dst, bytes) once per GPU pair with traffic, in (src, dst) order, with the pair's
// bytes per parallelism (indexed by perf::Parallelism).
template <class Fn>
void for_each_pair(const TrafficMatrix& tm, Fn&& fn) {
  std::array<double, kParallelisms> b{};
  std::size_t i = 0;
  while (i < tm.size()) {
    const TrafficEntry first = tm[i];
    b.fill(0.0);
    for (; i < tm.size() && tm[i].src == first.src && tm[i].dst == first.dst; ++i)
      b[static_cast<std::size_t>(tm[i].parallelism)] += tm[i].bytes;
    fn(first.src, first.dst, b);
  }
}

}  // namespace railsim::traffic
