#pragma once
// Helpers shared by the perf tests.
#include <optional>

#include "railsim/perf/iteration.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/stack.hpp"
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

// `model` trained in bf16 on `batch` sequences of 2048 tokens on `n` `gpu`s in HB domains of `k`,
// under the QM9700 design `kind`, with its estimate context. The context points at the model and
// the cluster, so a Setting stays where it is built.
struct Setting {
  perf::Model m;
  perf::Training tr;
  spec::Cluster c;
  perf::EstimateContext ctx;
  Setting(const char* model, std::int64_t batch, const char* gpu, std::int64_t n, std::int64_t k,
          spec::DesignKind kind)
      : m(spec::load_model(model)),
        tr{batch, 2048, spec::Dtype::bf16},
        c(cluster(gpu, n, k)),
        ctx(perf::make_context(m, tr, c, design(kind))) {}
  Setting(const Setting&) = delete;
  Setting& operator=(const Setting&) = delete;
};

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

// A model on a cluster with a strategy, trained on `batch` sequences of `seq` tokens under
// megatron-core-2024 with one of its knobs on or off, timed on the rail-optimized design: the
// fixture of the overlap tests.
struct KnobCase {
  perf::Model m;
  spec::Cluster c;
  perf::Strategy s;
  bool spec::StackKnobs::*knob;
  std::int64_t batch, seq;
  std::optional<spec::Dtype> dtype = std::nullopt;
  perf::IterationTime run(bool on,
                          perf::PlacementKind placement = perf::PlacementKind::rail_aligned) const {
    spec::Stack st = spec::load_stack("megatron-core-2024");
    st.knobs.*knob = on;
    return perf::estimate(m, spec::make_training(batch, seq, st, dtype), s, c,
                          design(spec::DesignKind::rail_optimized), placement);
  }
};

}  // namespace railsim::test
