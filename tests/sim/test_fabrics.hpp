#pragma once
// Hand-made fabrics for the simulator's tests, independent of topo/'s builders: HB domains of K
// GPUs (one crossbar each), one NIC per GPU to a leaf holding `per_leaf` GPUs of one rail, and
// `spines` spine switches above the leaves, each with one link to every leaf it serves.
//  - rail_optimized: the spines serve all leaves (one Clos over all rails);
//  - rail_only: every rail has its own `spines` spines (or none when one leaf holds the rail).
// Uplink capacity = per_leaf * B_nic / spines / oversubscription (1 = full bisection).
// ECMP: spine = hash % spines, or, with balanced = true, a spread that loads every uplink and
// downlink equally in an all-to-all (what adaptive routing or spraying achieves).
#include <cstdint>
#include <memory>

#include "railsim/perf/strategy.hpp"
#include "railsim/sim/network.hpp"
#include "railsim/topo/fabric.hpp"

namespace railsim::test {

struct TestFabricSpec {
  std::int64_t gpus = 64, k = 8, per_leaf = 4, spines = 4;
  double hb_Bps = 450e9, nic_Bps = 50e9, oversubscription = 1.0;
  bool rail_only = false;
  bool balanced = true;
};

struct TestFabric {
  std::shared_ptr<topo::Fabric> fabric;
  sim::SimNetwork net;
};

inline TestFabric make_test_fabric(const TestFabricSpec& s) {
  auto f = std::make_shared<topo::Fabric>();
  f->cluster.gpus = s.gpus;
  f->cluster.hb_domain = s.k;
  f->cluster.hb_bw_Bps = s.hb_Bps;
  f->cluster.nic_bw_Bps = s.nic_Bps;
  f->design.kind = s.rail_only ? spec::DesignKind::rail_only : spec::DesignKind::rail_optimized;
  const std::int64_t N = s.gpus, K = s.k, D = N / K, G = s.per_leaf;
  const std::int64_t leaves_per_rail = D / G, leaves = leaves_per_rail * K;
  const bool has_spines = !(s.rail_only && leaves_per_rail == 1);
  const std::int64_t spine_count = has_spines ? (s.rail_only ? s.spines * K : s.spines) : 0;
  for (std::int64_t g = 0; g < N; ++g)
    f->nodes.push_back({topo::NodeKind::gpu, 0, static_cast<std::int32_t>(g % K)});
  for (std::int64_t d = 0; d < D; ++d) f->nodes.push_back({topo::NodeKind::hb_switch, -1, -1});
  const auto leaf0 = static_cast<std::int32_t>(f->nodes.size());
  for (std::int64_t l = 0; l < leaves; ++l)
    f->nodes.push_back(
        {topo::NodeKind::network_switch, 1, static_cast<std::int32_t>(l / leaves_per_rail)});
  const auto spine0 = static_cast<std::int32_t>(f->nodes.size());
  for (std::int64_t sp = 0; sp < spine_count; ++sp)
    f->nodes.push_back({topo::NodeKind::network_switch, 2, -1});
  // Links: HB (GPU g -> link g), NIC (GPU g -> link N + g), then leaf-spine.
  for (std::int64_t g = 0; g < N; ++g)
    f->links.push_back({static_cast<std::int32_t>(g), static_cast<std::int32_t>(N + g / K),
                        s.hb_Bps, topo::LinkKind::hb, 0});
  auto leaf_of = [=](std::int64_t g) { return (g % K) * leaves_per_rail + (g / K) / G; };
  for (std::int64_t g = 0; g < N; ++g)
    f->links.push_back({static_cast<std::int32_t>(g), static_cast<std::int32_t>(leaf0 + leaf_of(g)),
                        s.nic_Bps, topo::LinkKind::nic, 0});
  const auto up0 = static_cast<std::int32_t>(f->links.size());
  const double up_cap = has_spines ? static_cast<double>(G) * s.nic_Bps /
                                         static_cast<double>(s.spines) / s.oversubscription
                                   : 0.0;
  // Leaf l's link to its j-th spine is link up0 + l * spines + j.
  if (has_spines)
    for (std::int64_t l = 0; l < leaves; ++l)
      for (std::int64_t j = 0; j < s.spines; ++j) {
        const std::int64_t sp = s.rail_only ? (l / leaves_per_rail) * s.spines + j : j;
        f->links.push_back({static_cast<std::int32_t>(leaf0 + l),
                            static_cast<std::int32_t>(spine0 + sp), up_cap,
                            topo::LinkKind::switch_switch, 1});
      }
  f->tiers = has_spines ? 2 : 1;
  const topo::Fabric* fp = f.get();
  const TestFabricSpec spec = s;
  auto route = [fp, spec, leaf_of, up0, N, K, G](std::int64_t a, std::int64_t b, std::uint64_t h,
                                                 int /*nic: one per GPU*/, topo::Path& out) {
    if (a / K == b / K) {  // same HB domain
      out.push_back(static_cast<std::int32_t>(2 * a));
      out.push_back(static_cast<std::int32_t>(2 * b + 1));
      return;
    }
    if (spec.rail_only && a % K != b % K) throw std::logic_error("test fabric: cross-rail pair");
    out.push_back(static_cast<std::int32_t>(2 * (N + a)));
    const std::int64_t la = leaf_of(a), lb = leaf_of(b);
    if (la != lb) {
      // Balanced: spread by the positions of both ends inside their leaves, so that each uplink
      // and each downlink carries the same number of pairs in an all-to-all.
      const std::int64_t j =
          spec.balanced ? static_cast<std::int64_t>(
                              ((a / K) % G + (b / K) % G + (b % K) + (b / K / G)) % spec.spines)
                        : static_cast<std::int64_t>(h % static_cast<std::uint64_t>(spec.spines));
      out.push_back(static_cast<std::int32_t>(2 * (up0 + la * spec.spines + j)));
      out.push_back(static_cast<std::int32_t>(2 * (up0 + lb * spec.spines + j) + 1));
    }
    out.push_back(static_cast<std::int32_t>(2 * (N + b) + 1));
    (void)fp;
  };
  TestFabric t{f, sim::make_sim_network(*f, route)};
  return t;
}

// The whole-iteration case of the sim tests: MoE-1.2T on 1,024 GPUs, tp 8 pp 8 dp 16 ep 16, SP.
inline perf::Strategy moe_iteration_strategy() {
  perf::Strategy s;
  s.tp = 8;
  s.pp = 8;
  s.dp = 16;
  s.ep = 16;
  s.sp = true;
  return s;
}

}  // namespace railsim::test
