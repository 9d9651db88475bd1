// The traffic matrix and the iteration-time model read the same CommSchedule: for every
// strategy, the bytes per parallelism summed over the matrix must equal perf::wire_bytes().
// And the paper's observation, checked on the best plans of the search.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "railsim/core/hash.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/spec/stack.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/traffic/summary.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

using namespace railsim;
using perf::Parallelism;
using traffic::Locality;

namespace {

// splitmix64: the same sequence on every platform (std distributions are not portable).
struct Rng {
  SplitMix64 stream;
  std::uint64_t next() { return stream.next(); }
  template <class T>
  T pick(std::initializer_list<T> v) {
    return *(v.begin() + static_cast<std::ptrdiff_t>(next() % v.size()));
  }
};

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> d;
  for (std::int64_t i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// MoE-1.2T on 32,768 H100 (K = 8) under strategy s, 4,096 sequences: its traffic on rail-only
// and the EP bytes' shares in the domain, on the rail, across rails.
struct EpTraffic {
  traffic::TrafficSummary sum;
  std::array<double, 3> shares{};  // same domain, same rail, cross rail
};
EpTraffic moe_1t_traffic(const perf::Strategy& s, const spec::Stack& stack = spec::Stack{}) {
  const perf::Model m = perf::load_model("MoE-1.2T");
  const spec::Cluster c = spec::make_cluster(spec::load_gpu("H100-SXM"), 32768, 8, 400, 450, 1);
  perf::Training tr;
  tr.global_batch = 4096;
  tr.seq_len = m.seq_len;
  tr.stack = stack;
  perf::validate(m, tr, s, c);
  const perf::Placement pl(c, s.degrees());
  const auto tm = traffic::TrafficMatrix::build(perf::build_comm_schedule(m, tr, s, pl), pl, c);
  EpTraffic out{traffic::summarize(tm, c, spec::DesignKind::rail_only), {}};
  const auto& b = out.sum.bytes[static_cast<std::size_t>(Parallelism::ep)];
  const double total = out.sum.bytes_by_parallelism(Parallelism::ep);
  EXPECT_GT(total, 0.0);
  out.shares = {b[static_cast<int>(Locality::same_domain)] / total,
                b[static_cast<int>(Locality::same_rail)] / total,
                b[static_cast<int>(Locality::cross_rail)] / total};
  return out;
}

// Summing up to a few million positive terms in a different order than wire_bytes() does moves
// the result by at most about (terms x 2^-53) relatively: 1e-9 is far above that and far below
// any real disagreement (a missing member or phase changes totals by >= 1/n).
constexpr double kRelTol = 1e-9;

}  // namespace

TEST(TrafficConsistency, MatrixBytesEqualTheTimeModelsWireBytesForRandomStrategies) {
  Rng rng{SplitMix64(20240613)};
  const char* models[] = {"GPT-3-175B", "Megatron-22B", "Llama-3-70B", "Mixtral-8x7B", "MoE-1.2T"};
  int tested = 0, with_wrap = 0, hierarchical = 0, moe = 0, careless = 0;
  for (int attempt = 0; attempt < 6000 && tested < 300; ++attempt) {
    const std::int64_t n = rng.pick<std::int64_t>({32, 64, 128, 256, 512, 1024});
    const std::int64_t k = rng.pick<std::int64_t>({2, 4, 8, 16, 32});
    if (n % k != 0) continue;
    const spec::Cluster c = spec::make_cluster(spec::load_gpu("H100-SXM"), n, k, 400, 450, 1);
    const perf::Model m = perf::load_model(models[rng.next() % 5]);
    perf::Strategy s;
    const auto dv = divisors(n);
    s.tp = dv[rng.next() % dv.size()];
    const auto dv2 = divisors(n / s.tp);
    s.pp = dv2[rng.next() % dv2.size()];
    s.dp = n / (s.tp * s.pp);
    const auto dv3 = divisors(s.dp);
    s.ep = m.is_moe() ? dv3[rng.next() % dv3.size()] : 1;
    s.micro_batch = rng.pick<std::int64_t>({1, 2});
    s.interleave = rng.pick<std::int64_t>({1, 1, 2, 4});
    s.recompute =
        rng.pick({perf::Recompute::none, perf::Recompute::selective, perf::Recompute::full});
    s.sp = rng.next() % 2;
    s.dist_opt = rng.next() % 2;
    s.dp_overlap = rng.next() % 2;
    perf::Training tr;
    tr.seq_len = m.seq_len;
    tr.global_batch = s.dp * s.micro_batch * rng.pick<std::int64_t>({4, 8, 16});
    if (!perf::is_valid(m, tr, s, c)) continue;
    const auto kind =
        rng.pick({perf::PlacementKind::rail_aligned, perf::PlacementKind::rail_aligned,
                  perf::PlacementKind::tp_across_domains, perf::PlacementKind::shuffled});
    const perf::Placement pl(c, s.degrees(), kind, rng.next());
    const perf::CommSchedule cs = perf::build_comm_schedule(m, tr, s, pl);
    const perf::WireBytes want = perf::wire_bytes(cs, pl);
    const auto tm = traffic::TrafficMatrix::build(cs, pl, c);
    const auto sum = traffic::summarize(tm, c, spec::DesignKind::rail_only);
    for (Parallelism p :
         {Parallelism::tp, Parallelism::sp, Parallelism::pp, Parallelism::dp, Parallelism::ep}) {
      const double w = want.of(p), got = sum.bytes_by_parallelism(p);
      ASSERT_NEAR(got, w, kRelTol * w)
          << perf::to_string(p) << " N=" << n << " K=" << k << " " << m.name << " tp" << s.tp
          << " pp" << s.pp << " dp" << s.dp << " ep" << s.ep << " v" << s.interleave << " "
          << perf::to_string(kind);
    }
    ASSERT_NEAR(sum.total_bytes, want.total(), kRelTol * want.total());
    ++tested;
    for (const auto& op : cs) {
      with_wrap += op.wrap_count > 0;
      hierarchical += op.algorithm == perf::Algorithm::hierarchical;
    }
    moe += s.ep > 1;
    careless += kind != perf::PlacementKind::rail_aligned;
  }
  // The sample must exercise every expansion path.
  EXPECT_EQ(tested, 300);
  EXPECT_GT(with_wrap, 20);
  EXPECT_GT(hierarchical, 20);
  EXPECT_GT(moe, 20);
  EXPECT_GT(careless, 50);
}

TEST(TrafficConsistency, ContextParallelBytesEqualTheCommSchedule) {
  // Strategies with cp > 1: the matrix's bytes of each parallelism, cp's K/V all-gathers and
  // reduce-scatters and the dp x cp gradient reduction included, equal perf::wire_bytes().
  Rng rng{SplitMix64(20261202)};
  const char* models[] = {"Llama-3-8B", "Llama-3-70B", "Mixtral-8x7B"};
  int tested = 0, hierarchical = 0, careless = 0;
  for (int attempt = 0; attempt < 4000 && tested < 100; ++attempt) {
    const std::int64_t n = rng.pick<std::int64_t>({32, 64, 128, 256});
    const std::int64_t k = rng.pick<std::int64_t>({2, 4, 8});
    const spec::Cluster c = spec::make_cluster(spec::load_gpu("H100-SXM"), n, k, 400, 450, 1);
    const perf::Model m = perf::load_model(models[rng.next() % 3]);
    perf::Strategy s;
    s.tp = rng.pick<std::int64_t>({1, 2, 4, 8});
    s.cp = rng.pick<std::int64_t>({2, 4, 8});
    s.pp = rng.pick<std::int64_t>({1, 2, 4});
    if (n % (s.tp * s.cp * s.pp) != 0) continue;
    s.dp = n / (s.tp * s.cp * s.pp);
    const auto dv = divisors(s.dp);
    s.ep = m.is_moe() ? dv[rng.next() % dv.size()] : 1;
    s.recompute = rng.pick({perf::Recompute::none, perf::Recompute::full});
    s.sp = rng.next() % 2;
    s.dist_opt = rng.next() % 2;
    perf::Training tr;
    tr.seq_len = 8192;
    tr.global_batch = s.dp * rng.pick<std::int64_t>({4, 8});
    if (!perf::is_valid(m, tr, s, c)) continue;
    const auto kind =
        rng.pick({perf::PlacementKind::rail_aligned, perf::PlacementKind::tp_across_domains,
                  perf::PlacementKind::shuffled});
    const perf::Placement pl(c, s.degrees(), kind, rng.next());
    const perf::CommSchedule cs = perf::build_comm_schedule(m, tr, s, pl);
    const perf::WireBytes want = perf::wire_bytes(cs, pl);
    ASSERT_GT(want.of(Parallelism::cp), 0.0);
    const auto sum = traffic::summarize(traffic::TrafficMatrix::build(cs, pl, c), c,
                                        spec::DesignKind::rail_only);
    for (int p = 0; p < traffic::kParallelisms; ++p) {
      const auto par = static_cast<Parallelism>(p);
      ASSERT_NEAR(sum.bytes_by_parallelism(par), want.of(par), kRelTol * want.of(par))
          << perf::to_string(par) << " N=" << n << " K=" << k << " " << perf::describe(s);
    }
    ++tested;
    for (const auto& op : cs)
      hierarchical +=
          op.parallelism == Parallelism::cp && op.algorithm == perf::Algorithm::hierarchical;
    careless += kind != perf::PlacementKind::rail_aligned;
  }
  EXPECT_EQ(tested, 100);
  EXPECT_GT(hierarchical, 5);
  EXPECT_GT(careless, 20);
}

namespace {

struct Best {
  perf::Strategy s;
  traffic::TrafficSummary sum;
};

Best best_plan_traffic(const char* model, const char* gpu, std::int64_t k, spec::DesignKind kind) {
  const perf::Model m = perf::load_model(model);
  const spec::Cluster c = spec::make_cluster(spec::load_gpu(gpu), 32768, k, 400,
                                             spec::load_gpu(gpu).hb_bw_Bps / 1e9, 1);
  const spec::NetworkDesign d = spec::make_network_design(kind, spec::load_switch("QM9700"));
  perf::Training tr;
  tr.global_batch = 4096;  // the CLI's default (apps/railsim/strategy_options.hpp)
  tr.seq_len = m.seq_len;
  const auto ctx = perf::make_context(m, tr, c, d);
  perf::PlanOptions po;
  po.top = 1;
  const auto res = perf::plan(ctx, po);
  EXPECT_FALSE(res.plans.empty());
  Best b;
  b.s = res.plans.front().strategy;
  const perf::Placement pl(c, b.s.degrees());
  const auto tm = traffic::TrafficMatrix::build(perf::build_comm_schedule(m, tr, b.s, pl), pl, c);
  b.sum = traffic::summarize(tm, c, kind);
  return b;
}

}  // namespace

// The paper's observation (Wang et al., Section 3): with the optimal parallelization of a dense
// trillion-parameter model, no byte crosses rails and almost every GPU pair exchanges nothing.
TEST(TrafficPaper, BestDensePlansOfGpt1tSendNothingAcrossRails) {
  for (auto kind : {spec::DesignKind::rail_only, spec::DesignKind::rail_optimized}) {
    for (auto [gpu, k] : {std::pair{"H100-SXM", 8}, std::pair{"GH200", 256}}) {
      const Best b = best_plan_traffic("GPT-1T", gpu, k, kind);
      SCOPED_TRACE(std::string(gpu) + " " + std::string(spec::to_string(kind)));
      EXPECT_EQ(b.sum.bytes_by_locality(Locality::cross_rail), 0.0);  // exactly
      EXPECT_EQ(b.sum.forwarded_bytes, 0.0);
      EXPECT_GT(b.sum.bytes_by_locality(Locality::same_rail), 0.0);  // PP and DP do leave domains
      // Fraction of the N(N-1) ordered pairs with any traffic: far below the paper's ~1%.
      const double n = 32768;
      EXPECT_DOUBLE_EQ(b.sum.pair_fraction_with_traffic,
                       static_cast<double>(b.sum.pairs_with_traffic) / (n * (n - 1)));
      EXPECT_LT(b.sum.pair_fraction_with_traffic, 1e-3);
      // Each GPU talks to a handful of peers (ring neighbours, pipeline neighbours).
      EXPECT_LE(b.sum.pairs_with_traffic, 8 * 32768);
    }
  }
}

// Expert parallelism across HB domains: with tp = 4 on K = 8 an EP group of 64 holds 2 members
// (rails r and r + 4) in each of 32 domains. Each member's 63 peers: 1 in its domain, 31 on its
// rail elsewhere, 31 on the other rail elsewhere: 31/63 of the all-to-all bytes cross rails.
TEST(TrafficPaper, ExpertParallelismAcrossDomainsCrossesRails) {
  const EpTraffic t =
      moe_1t_traffic({.tp = 4, .pp = 8, .dp = 1024, .ep = 64, .sp = true, .dist_opt = true});
  const traffic::TrafficSummary& sum = t.sum;
  EXPECT_NEAR(t.shares[2], 31.0 / 63.0, 1e-12);
  EXPECT_NEAR(t.shares[1], 31.0 / 63.0, 1e-12);
  EXPECT_NEAR(t.shares[0], 1.0 / 63.0, 1e-12);
  // Only EP crosses rails; on rail-only every such byte is forwarded through the HB domain.
  EXPECT_DOUBLE_EQ(
      sum.bytes_by_locality(Locality::cross_rail),
      sum.bytes[static_cast<std::size_t>(Parallelism::ep)][static_cast<int>(Locality::cross_rail)]);
  EXPECT_DOUBLE_EQ(sum.forwarded_bytes, sum.bytes_by_locality(Locality::cross_rail));
  const double share = sum.bytes_by_locality(Locality::cross_rail) / sum.total_bytes;
  EXPECT_GT(share, 0.01);
  RecordProperty("cross_rail_share", std::to_string(share));
}

// Folded experts (etp 1): the EP group is ep consecutive ranks. ep = K = 8 under tp 8 is the TP
// group, one HB domain: every all-to-all byte stays on NVLink. ep = 16 spans two domains: of each
// member's 15 peers 7 are in its domain, 1 on its rail and 7 on other rails (docs/traffic.md).
TEST(TrafficPaper, FoldedExpertGroupsAreConsecutiveRanks) {
  const spec::Stack nemo = spec::load_stack("nemo-perf-2025");
  auto shares = [&](std::int64_t ep) {
    perf::Strategy s{.tp = 8, .pp = 8, .dp = 512, .ep = ep, .sp = true, .dist_opt = true};
    s.etp = 1;
    return moe_1t_traffic(s, nemo).shares;
  };
  const auto in_domain = shares(8);
  EXPECT_DOUBLE_EQ(in_domain[0], 1.0);
  EXPECT_DOUBLE_EQ(in_domain[2], 0.0);
  const auto two = shares(16);
  EXPECT_NEAR(two[0], 7.0 / 15.0, 1e-12);
  EXPECT_NEAR(two[1], 1.0 / 15.0, 1e-12);
  EXPECT_NEAR(two[2], 7.0 / 15.0, 1e-12);
}
