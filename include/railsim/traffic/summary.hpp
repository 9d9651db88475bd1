#pragma once
// What a TrafficMatrix says in a few numbers: bytes per parallelism x locality, how many GPU
// pairs talk at all, the busiest pair, and the busiest NIC.
#include <array>
#include <cstdint>
#include <vector>

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
  // bytes[parallelism][locality], parallelism in perf::Parallelism order (tp, sp, pp, dp, ep).
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

}  // namespace railsim::traffic
