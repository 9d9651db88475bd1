// The link-load census of the analytic model (perf/contention.hpp, docs/model.md section 5): its
// shortcuts give the census they stand for. The aggregated all-to-all census (pairs counted by
// block, not one by one) equals the transfer-by-transfer one; rail 0's census standing for every
// alike rail equals the census of every rail; the cached step load equals a fresh census. Over
// small clusters (1 or 2 NICs per GPU), both designs, switches of radix 8 to 32 (one to three
// tiers, rails sharing leaves), oversubscribed leaves, every routing and forwarding mode, every
// axis and phase of the strategies drawn.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/small_network.hpp"
#include "railsim/core/error.hpp"
#include "railsim/perf/contention.hpp"
#include "railsim/perf/expansion.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/builders.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {

void expect_same(const StepLoad& a, const StepLoad& b, const std::string& what) {
  EXPECT_NEAR(a.s_per_byte, b.s_per_byte, 1e-12 * b.s_per_byte) << what;
  EXPECT_NEAR(a.forwarding_s_per_byte, b.forwarding_s_per_byte, 1e-12 * b.s_per_byte + 1e-300)
      << what;
  EXPECT_EQ(a.cross_rail, b.cross_rail) << what;
}

}  // namespace

TEST(Contention, ShortcutsGiveTheCensusTheyStandFor) {
  std::mt19937_64 rng(20261202);
  const spec::GpuSpec g = spec::load_gpu("H100-SXM");
  int compared = 0, by_rail = 0, all_to_all = 0, round_robin_ecmp = 0;
  for (int c = 0; c < 480; ++c) {
    const std::int64_t ks[] = {2, 4, 8};
    const std::int64_t ds[] = {2, 4, 6, 8, 16};
    const int radixes[] = {8, 12, 16, 32};
    const double overs[] = {1, 1, 2, 3};
    const std::int64_t k = ks[rng() % 3], domains = ds[rng() % 5];
    const int nics = rng() % 4 == 0 ? 2 : 1;
    const spec::Cluster cl = spec::make_cluster(g, k * domains, k, 400, g.hb_bw_Bps / 1e9, nics);
    spec::NetworkDesign d = spec::make_network_design(
        rng() % 2 ? spec::DesignKind::rail_only : spec::DesignKind::rail_optimized,
        test::small_switch(radixes[rng() % 4]), overs[rng() % 4]);
    d.routing = static_cast<spec::Routing>(rng() % 3);
    d.forwarding = static_cast<spec::ForwardingMode>(rng() % 3);
    try {
      d = spec::fit_to_cluster(cl, d);
      (void)topo::plan_network(cl, d);
    } catch (const InputError&) {
      continue;  // no Clos of this radix
    }
    const ContentionModel model(cl, d);
    bool round_robin = false;
    for (const topo::ClosTier& hi : topo::plan_network(cl, d).plan.tiers)
      round_robin = round_robin || (hi.group > 1 && !hi.even());
    const std::int64_t n = cl.gpus;
    // tp within the domain or across it; ep dividing dp.
    Degrees deg;
    deg.tp = rng() % 2 ? k : 1;
    deg.pp = (n / deg.tp) % 2 == 0 && rng() % 2 ? 2 : 1;
    deg.dp = n / (deg.tp * deg.pp);
    deg.ep = deg.dp % 4 == 0 && rng() % 2 ? 4 : 1;
    for (const PlacementKind kind :
         {PlacementKind::rail_aligned, PlacementKind::tp_across_domains}) {
      const Placement pl(cl, deg, kind);
      for (const Axis axis : {Axis::tp, Axis::dp, Axis::pp, Axis::ep, Axis::edp}) {
        if (pl.axis_size(axis) < 2) continue;
        const std::vector<Algorithm> algorithms =
            axis == Axis::pp ? std::vector<Algorithm>{Algorithm::p2p}
            : axis == Axis::ep
                ? std::vector<Algorithm>{Algorithm::direct, Algorithm::rail_then_domain}
                : std::vector<Algorithm>{Algorithm::ring, Algorithm::hierarchical};
        for (const Algorithm alg : algorithms)
          for (const Scope scope : {Scope::group, Scope::in_domain, Scope::along_rail})
            for (const bool reverse : {false, true}) {
              if (reverse && alg != Algorithm::p2p) continue;
              const std::string what = fmt::format(
                  "{} GPUs K={} x{} NIC {} radix {} {}:1 {} {} tp{} pp{} dp{} ep{} {} axis {} "
                  "alg {} scope {} {}",
                  n, k, nics, spec::to_string(d.kind), d.sw.radix, d.oversubscription,
                  spec::to_string(d.routing), spec::to_string(d.forwarding), deg.tp, deg.pp, deg.dp,
                  deg.ep, to_string(kind), to_string(axis), to_string(alg), static_cast<int>(scope),
                  reverse ? "reverse" : "");
              StepLoad full;
              try {
                full = model.census(pl, axis, alg, scope, reverse,
                                    /*aggregate_all_to_all=*/false, /*rail_symmetry=*/false);
              } catch (const std::logic_error&) {
                continue;  // no group of this axis runs this phase
              }
              const StepLoad fast = model.census(pl, axis, alg, scope, reverse);
              expect_same(fast, full, what);
              expect_same(model.step_load(pl, axis, alg, scope, reverse), fast, what + " cached");
              ++compared;
              all_to_all += alg == Algorithm::direct;
              // The all-to-all counted by block records where its flows come from on a
              // round-robin tier under ecmp, as pair by pair does (the down links' shapes).
              round_robin_ecmp += alg != Algorithm::ring && alg != Algorithm::hierarchical &&
                                  alg != Algorithm::p2p && round_robin &&
                                  d.routing == spec::Routing::ecmp;
              by_rail +=
                  kind == PlacementKind::rail_aligned && pl.axis_stride(axis) % cl.hb_domain == 0;
            }
      }
    }
  }
  // The draws reach what they are to check.
  EXPECT_GT(compared, 500);
  EXPECT_GT(all_to_all, 40);
  EXPECT_GT(round_robin_ecmp, 10) << round_robin_ecmp;
  EXPECT_GT(by_rail, 200);
}
