#pragma once
// Helpers shared by the perf tests.
#include "railsim/perf/iteration.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/switch.hpp"

namespace railsim::test {

inline spec::NetworkDesign design(spec::DesignKind kind, double oversubscription = 1.0) {
  return spec::make_network_design(kind, spec::load_switch("QM9700"), oversubscription);
}

// The same with perfect spreading above the leaf (adaptive routing): for tests of the designs'
// forwarding and oversubscription alone, apart from ECMP's collisions.
inline spec::NetworkDesign design_spread(spec::DesignKind kind, double oversubscription = 1.0) {
  spec::NetworkDesign d = design(kind, oversubscription);
  d.routing = spec::Routing::adaptive;
  return d;
}

inline spec::Cluster cluster(const std::string& gpu, std::int64_t n, std::int64_t k,
                             double nic_gbps = 0) {
  const spec::GpuSpec g = spec::load_gpu(gpu);
  return spec::make_cluster(g, n, k, nic_gbps > 0 ? nic_gbps : g.nic_bw_Bps * 8 / 1e9,
                            g.hb_bw_Bps / 1e9, g.nics_per_gpu);
}

// Megatron-Core's usual knobs on a (tp, pp, dp, v) shape: selective recompute, SP, the
// distributed optimizer and DP overlap.
inline perf::Strategy megatron_core_strategy(std::int64_t tp, std::int64_t pp, std::int64_t dp,
                                             std::int64_t v) {
  perf::Strategy x;
  x.tp = tp;
  x.pp = pp;
  x.dp = dp;
  x.interleave = v;
  x.recompute = perf::Recompute::selective;
  x.sp = true;
  x.dist_opt = true;
  x.dp_overlap = true;
  return x;
}

}  // namespace railsim::test
