#pragma once
// Shared fixtures of the fail tests: clusters, designs and hand-made failure rates.
#include <cstdint>
#include <string>
#include <vector>

#include "railsim/fail/model.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/switch.hpp"

namespace railsim::test {

inline spec::Cluster fail_cluster(const char* gpu, std::int64_t n, std::int64_t k) {
  const spec::GpuSpec g = spec::load_gpu(gpu);
  return spec::make_cluster(g, n, k, g.nic_bw_Bps * 8 / 1e9, g.hb_bw_Bps / 1e9, 1);
}

inline spec::NetworkDesign fail_design(spec::DesignKind kind) {
  return spec::make_network_design(kind, spec::load_switch("ETH-51.2T-128x400G"));
}

// One class of the given scope at `per_unit_hour`.
inline spec::FailureRates one_class(spec::FailureScope scope, double per_unit_hour, int tier = 0,
                                    const char* name = "only") {
  spec::FailureRates r;
  r.name = "test";
  spec::FailureClass c;
  c.name = name;
  c.scope = scope;
  c.rate_per_unit_hour = per_unit_hour;
  c.tier = scope == spec::FailureScope::link && tier == 0 ? 1 : tier;
  r.classes.push_back(c);
  return r;
}

}  // namespace railsim::test
