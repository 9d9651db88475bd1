// TrafficMatrix from hand-made CommSchedules: every expected byte below follows from the
// per-algorithm formulas in include/railsim/traffic/traffic_matrix.hpp (ring all-reduce
// 2(n-1)/n B per GPU, hierarchical phases, direct all-to-all B/n per peer, p2p B per stage).
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <map>

#include "../common/error_of.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/units.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/traffic/aggregate.hpp"
#include "railsim/traffic/summary.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

using namespace railsim;
using perf::Algorithm;
using perf::Axis;
using perf::CollectiveOp;
using perf::Parallelism;
using perf::Phase;
using traffic::Locality;

namespace {

spec::Cluster cluster(std::int64_t n, std::int64_t k) {
  return spec::make_cluster(spec::load_gpu("H100-SXM"), n, k, 400, 450, 1);
}

perf::CommOp op(CollectiveOp c, Parallelism p, Axis a, Algorithm alg, double bytes,
                double count = 1, Phase ph = Phase::forward) {
  return {c, p, a, alg, ph, bytes, count};
}

// (src, dst) -> bytes summed over parallelisms.
std::map<std::pair<std::int64_t, std::int64_t>, double> pairs(const traffic::TrafficMatrix& tm) {
  std::map<std::pair<std::int64_t, std::int64_t>, double> m;
  for (std::size_t i = 0; i < tm.size(); ++i) m[{tm[i].src, tm[i].dst}] += tm[i].bytes;
  return m;
}

}  // namespace

TEST(TrafficMatrix, TensorParallelRingStaysInTheDomain) {
  const auto c = cluster(16, 8);
  const perf::Placement pl(c, {.tp = 8, .pp = 1, .dp = 2, .ep = 1});
  perf::CommSchedule s;
  s.add(op(CollectiveOp::all_reduce, Parallelism::tp, Axis::tp, Algorithm::ring, 1000, 3));
  const auto tm = traffic::TrafficMatrix::build(s, pl, c);
  ASSERT_EQ(tm.size(), 16u);  // one ring neighbour per GPU
  const auto m = pairs(tm);
  const double per = 2.0 * 7.0 / 8.0 * 1000 * 3;  // ring all-reduce, 3 times
  for (std::int64_t g = 0; g < 16; ++g) {
    const std::int64_t next = (g / 8) * 8 + (g % 8 + 1) % 8;
    EXPECT_DOUBLE_EQ(m.at({g, next}), per) << g;
  }
  const auto sum = traffic::summarize(tm, c, spec::DesignKind::rail_optimized);
  EXPECT_DOUBLE_EQ(sum.bytes_by_locality(Locality::same_domain), 16 * per);
  EXPECT_EQ(sum.bytes_by_locality(Locality::same_rail), 0.0);
  EXPECT_EQ(sum.bytes_by_locality(Locality::cross_rail), 0.0);
  EXPECT_EQ(sum.pairs_with_traffic, 16);
  EXPECT_DOUBLE_EQ(sum.pair_fraction_with_traffic, 16.0 / (16.0 * 15.0));
  EXPECT_EQ(sum.busiest_nic.gpu, -1);  // nothing leaves a domain
}

TEST(TrafficMatrix, HierarchicalAllReduceKeepsInterDomainBytesOnRails) {
  // tp = 4, K = 8: a DP group (stride 4) has p = 2 members per domain over d = 4 domains.
  const auto c = cluster(32, 8);
  const perf::Placement pl(c, {.tp = 4, .pp = 1, .dp = 8, .ep = 1});
  perf::CommSchedule s;
  const double B = 8e6;
  s.add(op(CollectiveOp::all_reduce, Parallelism::dp, Axis::dp, Algorithm::hierarchical, B));
  const auto tm = traffic::TrafficMatrix::build(s, pl, c);
  const auto m = pairs(tm);
  // Intra-domain ring of p = 2 on B: reduce-scatter + all-gather = 2 (p-1)/p B = B.
  EXPECT_DOUBLE_EQ(m.at({0, 4}), B);
  EXPECT_DOUBLE_EQ(m.at({4, 0}), B);
  // Inter-domain ring of d = 4 along the rail on B/p: 2 (d-1)/d B/2 = 0.75 B.
  EXPECT_DOUBLE_EQ(m.at({0, 8}), 0.75 * B);
  EXPECT_DOUBLE_EQ(m.at({24, 0}), 0.75 * B);
  EXPECT_DOUBLE_EQ(m.at({4, 12}), 0.75 * B);
  const auto sum = traffic::summarize(tm, c, spec::DesignKind::rail_only);
  EXPECT_EQ(sum.bytes_by_locality(Locality::cross_rail), 0.0);
  EXPECT_DOUBLE_EQ(sum.bytes_by_locality(Locality::same_domain), 32 * B);
  EXPECT_DOUBLE_EQ(sum.bytes_by_locality(Locality::same_rail), 32 * 0.75 * B);
  // Per GPU 2(p-1)/p B + 2(d-1)/d B/p, the hierarchical formula.
  EXPECT_DOUBLE_EQ(tm.total_bytes(), 32 * (B + 0.75 * B));
  EXPECT_EQ(sum.forwarded_bytes, 0.0);
  EXPECT_DOUBLE_EQ(sum.busiest_nic.tx_bytes, 0.75 * B);
  EXPECT_DOUBLE_EQ(sum.busiest_nic.rx_bytes, 0.75 * B);
  EXPECT_EQ(sum.busiest_nic.gpu, 0);  // ties go to the lowest GPU
}

TEST(TrafficMatrix, ExpertAllToAllAcrossDomainsCrossesRails) {
  // tp = 2, ep = 8 (stride 2): each EP group has 4 members in each of 2 domains, on rails
  // {0,2,4,6} in both. Each member sends B/8 to each of 7 peers: 3 in its domain, 1 on its rail
  // in the other domain, 3 on other rails there.
  const auto c = cluster(32, 8);
  const perf::Placement pl(c, {.tp = 2, .pp = 1, .dp = 16, .ep = 8});
  perf::CommSchedule s;
  const double B = 64e6;
  s.add(op(CollectiveOp::all_to_all, Parallelism::ep, Axis::ep, Algorithm::direct, B, 2));
  s.add(op(CollectiveOp::all_to_all, Parallelism::ep, Axis::ep, Algorithm::direct, B, 2,
           Phase::backward));
  const auto tm = traffic::TrafficMatrix::build(s, pl, c);
  EXPECT_EQ(tm.size(), 32u * 7u);
  const auto sum = traffic::summarize(tm, c, spec::DesignKind::rail_optimized);
  const double per_peer = B / 8 * 4;  // 4 = two ops x count 2
  EXPECT_DOUBLE_EQ(sum.bytes_by_parallelism(Parallelism::ep), 32 * 7 * per_peer);
  EXPECT_DOUBLE_EQ(sum.bytes_by_locality(Locality::cross_rail), 32 * 3 * per_peer);
  EXPECT_DOUBLE_EQ(sum.bytes_by_locality(Locality::same_rail), 32 * 1 * per_peer);
  EXPECT_DOUBLE_EQ(sum.bytes_by_locality(Locality::same_domain), 32 * 3 * per_peer);
  EXPECT_DOUBLE_EQ(sum.busiest_pair.bytes, per_peer);
  // rail_optimized: each GPU's NIC sends its 4 inter-domain peers' bytes. rail_only: the 3
  // cross-rail sends leave through forwarders, but the load is symmetric, so every NIC still
  // carries 4 per-peer shares while 3/7 of the EP bytes are forwarded.
  EXPECT_DOUBLE_EQ(sum.busiest_nic.tx_bytes, 4 * per_peer);
  const auto ro = traffic::summarize(tm, c, spec::DesignKind::rail_only);
  EXPECT_DOUBLE_EQ(ro.forwarded_bytes, 32 * 3 * per_peer);
  EXPECT_DOUBLE_EQ(ro.busiest_nic.tx_bytes, 4 * per_peer);
}

TEST(TrafficMatrix, RailOnlyForwardingLoadsTheForwardersNic) {
  // One EP group over all 16 GPUs (2 domains): every GPU sends 1 byte to every other.
  const auto c = cluster(16, 8);
  const perf::Placement pl(c, {.tp = 1, .pp = 1, .dp = 16, .ep = 16});
  perf::CommSchedule s;
  s.add(op(CollectiveOp::all_to_all, Parallelism::ep, Axis::ep, Algorithm::direct, 16.0));
  const auto tm = traffic::TrafficMatrix::build(s, pl, c);
  const auto ro = traffic::nic_loads(tm, c, spec::DesignKind::rail_only);
  const auto opt = traffic::nic_loads(tm, c, spec::DesignKind::rail_optimized);
  // Each GPU sends 1 byte to each of the 8 GPUs of the other domain.
  for (std::int64_t g = 0; g < 16; ++g) {
    EXPECT_DOUBLE_EQ(opt.tx_bytes[static_cast<std::size_t>(g)], 8.0);
    EXPECT_DOUBLE_EQ(opt.rx_bytes[static_cast<std::size_t>(g)], 8.0);
    // rail_only: GPU g's NIC carries, for each of the 8 senders of its domain, the byte to the
    // GPU on g's rail in the other domain: still 8, but 7 of them forwarded for others.
    EXPECT_DOUBLE_EQ(ro.tx_bytes[static_cast<std::size_t>(g)], 8.0);
  }
  EXPECT_DOUBLE_EQ(ro.forwarded_bytes, 16.0 * 7.0);
  EXPECT_DOUBLE_EQ(opt.forwarded_bytes, 0.0);
  const auto ideal = traffic::nic_loads(tm, c, spec::DesignKind::ideal);
  EXPECT_DOUBLE_EQ(ideal.tx_bytes[0], 0.0);
}

TEST(TrafficMatrix, PipelineSendsToTheNextStageForwardAndBackBackward) {
  const auto c = cluster(32, 8);
  const perf::Placement pl(c, {.tp = 8, .pp = 4, .dp = 1, .ep = 1});
  perf::CommSchedule s;
  s.add(op(CollectiveOp::send_recv, Parallelism::pp, Axis::pp, Algorithm::p2p, 100, 5));
  s.add(op(CollectiveOp::send_recv, Parallelism::pp, Axis::pp, Algorithm::p2p, 100, 5,
           Phase::backward));
  const auto tm = traffic::TrafficMatrix::build(s, pl, c);
  const auto m = pairs(tm);
  // Stage i holds GPUs [8i, 8i+8); GPU 3 of stage 0 talks to GPU 11 of stage 1, same rail.
  EXPECT_DOUBLE_EQ(m.at({3, 11}), 500);
  EXPECT_DOUBLE_EQ(m.at({11, 3}), 500);
  EXPECT_EQ(m.count({3, 27}), 0u);  // no wrap-around from the last stage
  EXPECT_EQ(m.count({27, 3}), 0u);
  EXPECT_EQ(tm.size(), 2u * 3u * 8u);
  const auto sum = traffic::summarize(tm, c, spec::DesignKind::rail_optimized);
  EXPECT_DOUBLE_EQ(sum.bytes_by_locality(Locality::same_rail), 2 * 3 * 8 * 500.0);
}

TEST(TrafficMatrix, CarelessPlacementsPutBytesOnOtherClasses) {
  const auto c = cluster(64, 8);
  perf::CommSchedule s;
  s.add(op(CollectiveOp::all_reduce, Parallelism::tp, Axis::tp, Algorithm::ring, 1e6, 4));
  s.add(op(CollectiveOp::all_reduce, Parallelism::dp, Axis::dp, Algorithm::hierarchical, 1e8));
  const perf::Degrees d{.tp = 8, .pp = 1, .dp = 8, .ep = 1};
  const auto aligned =
      traffic::summarize(traffic::TrafficMatrix::build(s, perf::Placement(c, d), c), c,
                         spec::DesignKind::rail_optimized);
  const auto across =
      traffic::summarize(traffic::TrafficMatrix::build(
                             s, perf::Placement(c, d, perf::PlacementKind::tp_across_domains), c),
                         c, spec::DesignKind::rail_optimized);
  const auto shuffled = traffic::summarize(
      traffic::TrafficMatrix::build(s, perf::Placement(c, d, perf::PlacementKind::shuffled, 7), c),
      c, spec::DesignKind::rail_optimized);
  // Rail-aligned: TP inside domains, DP (p = 1 per domain) along rails only.
  EXPECT_EQ(aligned.bytes_by_locality(Locality::cross_rail), 0.0);
  EXPECT_DOUBLE_EQ(aligned.bytes[0][0], 64 * 2 * 7.0 / 8 * 4e6);
  // TP across domains: the TP ring now runs between domains (on one rail, N/t = K), DP inside.
  EXPECT_EQ(across.bytes[0][static_cast<int>(Locality::same_domain)], 0.0);
  EXPECT_DOUBLE_EQ(across.bytes[0][static_cast<int>(Locality::same_rail)], 64 * 2 * 7.0 / 8 * 4e6);
  // Shuffled: the same ring bytes in total, now mostly cross rail.
  EXPECT_DOUBLE_EQ(shuffled.bytes_by_parallelism(Parallelism::tp),
                   aligned.bytes_by_parallelism(Parallelism::tp));
  EXPECT_GT(shuffled.bytes_by_locality(Locality::cross_rail), 0.5 * shuffled.total_bytes);
}

TEST(TrafficMatrix, SameInputsGiveIdenticalEntriesWhateverTheThreadCount) {
  const auto c = cluster(4096, 8);
  const perf::Placement pl(c, {.tp = 4, .pp = 8, .dp = 128, .ep = 16});
  perf::CommSchedule s;
  s.add(op(CollectiveOp::all_reduce, Parallelism::tp, Axis::tp, Algorithm::ring, 3.3e6, 7));
  s.add(op(CollectiveOp::send_recv, Parallelism::pp, Axis::pp, Algorithm::p2p, 1.1e6, 9));
  s.add(op(CollectiveOp::all_to_all, Parallelism::ep, Axis::ep, Algorithm::direct, 7.7e6, 3));
  s.add(op(CollectiveOp::all_reduce, Parallelism::dp, Axis::dp, Algorithm::hierarchical, 1.3e9));
  s.add(op(CollectiveOp::reduce_scatter, Parallelism::dp, Axis::edp, Algorithm::hierarchical, 1e9));
  traffic::TrafficMatrix one, many;
  {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 1);
    one = traffic::TrafficMatrix::build(s, pl, c);
  }
  many = traffic::TrafficMatrix::build(s, pl, c);
  ASSERT_EQ(one.size(), many.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    ASSERT_EQ(one[i].src, many[i].src);
    ASSERT_EQ(one[i].dst, many[i].dst);
    ASSERT_EQ(one[i].parallelism, many[i].parallelism);
    ASSERT_EQ(one[i].bytes, many[i].bytes);  // bit-identical
  }
  // Entries are sorted and unique by (src, dst, parallelism).
  for (std::size_t i = 1; i < one.size(); ++i) {
    const auto a = one[i - 1], b = one[i];
    ASSERT_TRUE(std::tie(a.src, a.dst, a.parallelism) < std::tie(b.src, b.dst, b.parallelism));
  }
}

TEST(TrafficMatrix, ZeroBytesAndSingleMemberGroupsAddNothing) {
  const auto c = cluster(16, 8);
  const perf::Placement pl(c, {.tp = 1, .pp = 1, .dp = 16, .ep = 1});
  perf::CommSchedule s;
  s.add(op(CollectiveOp::all_reduce, Parallelism::tp, Axis::tp, Algorithm::ring, 1e6));  // tp = 1
  s.add(op(CollectiveOp::all_reduce, Parallelism::dp, Axis::dp, Algorithm::ring, 0.0));
  const auto tm = traffic::TrafficMatrix::build(s, pl, c);
  EXPECT_EQ(tm.size(), 0u);
  const auto sum = traffic::summarize(tm, c, spec::DesignKind::rail_only);
  EXPECT_EQ(sum.pairs_with_traffic, 0);
  EXPECT_EQ(sum.total_bytes, 0.0);
}

TEST(TrafficMatrix, HierarchicalOnAnIrregularGroupFallsBackToAFlatRing) {
  // Shuffled placement: DP members land unevenly in domains, so the ring over the whole group is
  // used: n records of 2(n-1)/n B.
  const auto c = cluster(64, 8);
  const perf::Placement pl(c, {.tp = 1, .pp = 1, .dp = 64, .ep = 1}, perf::PlacementKind::shuffled,
                           3);
  perf::CommSchedule s;
  s.add(op(CollectiveOp::all_reduce, Parallelism::dp, Axis::dp, Algorithm::hierarchical, 64.0));
  const auto tm = traffic::TrafficMatrix::build(s, pl, c);
  // With tp = 1 and dp = 64 the single group holds all 64 GPUs, 8 per domain: regular after all.
  EXPECT_DOUBLE_EQ(tm.total_bytes(), 64 * (2 * 7.0 / 8 * 64 + 2 * 7.0 / 8 * 8));
  const perf::Placement pl2(c, {.tp = 2, .pp = 1, .dp = 32, .ep = 1}, perf::PlacementKind::shuffled,
                            3);
  const auto tm2 = traffic::TrafficMatrix::build(s, pl2, c);
  std::vector<std::int64_t> per_domain(8, 0);
  for (std::int64_t i = 0; i < 32; ++i)
    ++per_domain[static_cast<std::size_t>(pl2.gpu_of(pl2.rank_in_group(Axis::dp, 0, i)) / 8)];
  bool regular = true;
  for (auto v : per_domain) regular = regular && (v == per_domain[0]);
  ASSERT_FALSE(regular);  // seed 3 scatters group 0 unevenly
  EXPECT_DOUBLE_EQ(tm2.total_bytes(), 2 * 32 * (2 * 31.0 / 32 * 64));
}

TEST(TrafficGrids, DomainAndRailGridsSumTheRightBytes) {
  const auto c = cluster(32, 8);
  const perf::Placement pl(c, {.tp = 2, .pp = 1, .dp = 16, .ep = 8});
  perf::CommSchedule s;
  s.add(op(CollectiveOp::all_to_all, Parallelism::ep, Axis::ep, Algorithm::direct, 8.0));
  s.add(op(CollectiveOp::all_reduce, Parallelism::tp, Axis::tp, Algorithm::ring, 10.0));
  const auto tm = traffic::TrafficMatrix::build(s, pl, c);
  const auto dg = traffic::domain_grid(tm, c, 1024);
  EXPECT_EQ(dg.cells, 4);
  EXPECT_EQ(dg.bin, 1);
  double sum = 0;
  for (double v : dg.bytes) sum += v;
  EXPECT_DOUBLE_EQ(sum, tm.total_bytes());
  // Domain 0 -> 1: 2 EP groups x 4 members in domain 0 x 4 peers in domain 1 x 1 byte.
  EXPECT_DOUBLE_EQ(dg.at(0, 1), 32.0);
  EXPECT_DOUBLE_EQ(dg.at(0, 2), 0.0);
  const auto rg = traffic::rail_grid(tm, c, 1024);
  EXPECT_EQ(rg.cells, 8);
  double inter = 0;
  for (double v : rg.bytes) inter += v;
  const auto summ = traffic::summarize(tm, c, spec::DesignKind::rail_optimized);
  EXPECT_DOUBLE_EQ(inter, summ.bytes_by_locality(Locality::same_rail) +
                              summ.bytes_by_locality(Locality::cross_rail));
  EXPECT_DOUBLE_EQ(rg.at(0, 2), 4.0);         // rail 0 senders in 4 domains, 1 byte each to rail 2
  EXPECT_DOUBLE_EQ(rg.at(1, 3), 4.0);         // the odd-rank EP groups likewise
  EXPECT_DOUBLE_EQ(rg.at(0, 1), 0.0);         // even and odd ranks never meet across domains
  const auto gg = traffic::gpu_grid(tm, 10);  // 32 GPUs binned 4 per cell
  EXPECT_EQ(gg.bin, 4);
  EXPECT_EQ(gg.cells, 8);
  double gsum = 0;
  for (double v : gg.bytes) gsum += v;
  EXPECT_DOUBLE_EQ(gsum, tm.total_bytes());
}

TEST(TrafficMatrix, AnAllToAllTooLargeToHoldIsAnInputErrorNotACrash) {
  // One all-to-all over 32,768 GPUs: 32,768 x 32,767 pairs (1.07e9), beyond the record budget.
  const auto c = cluster(32768, 8);
  const perf::Placement pl(c, {.tp = 1, .pp = 1, .dp = 32768, .ep = 32768});
  perf::CommSchedule s;
  s.add(op(CollectiveOp::all_to_all, Parallelism::ep, Axis::ep, Algorithm::direct, 1e6));
  // The error names the degree whose groups are too large.
  const auto e = test::caught([&] { traffic::TrafficMatrix::build(s, pl, c); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "--ep");
  EXPECT_NE(e->message().find("ep all_to_all over groups of 32768 GPUs); use a smaller ep degree"),
            std::string::npos)
      << e->what();
  // An expert-data-parallel group is dp / ep: its error names --dp.
  const perf::Placement edp(c, {.tp = 1, .pp = 1, .dp = 32768, .ep = 1});
  perf::CommSchedule g;
  g.add(op(CollectiveOp::all_to_all, Parallelism::dp, Axis::edp, Algorithm::direct, 1e6));
  EXPECT_EQ(test::field_of([&] { traffic::TrafficMatrix::build(g, edp, c); }), "--dp");
}

TEST(TrafficMatrix, StopsWhenCancelled) {
  const auto c = cluster(1024, 8);
  const perf::Placement pl(c, {.tp = 8, .pp = 1, .dp = 128, .ep = 1});
  perf::CommSchedule s;
  s.add(op(CollectiveOp::all_reduce, Parallelism::dp, Axis::dp, Algorithm::ring, 1000));
  request_cancel();
  EXPECT_THROW((void)traffic::TrafficMatrix::build(s, pl, c), Cancelled);
  reset_cancel();
}
