// Collectives on hand-made fabrics against closed forms, and aggregation against flow-by-flow.
#include <gtest/gtest.h>

#include <cmath>

#include "../common/sim_fixtures.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/sim/collective.hpp"
#include "test_fabrics.hpp"

using namespace railsim;
using railsim::sim::Aggregation;
using railsim::sim::CollectiveRequest;
using railsim::sim::ForwardingMode;
using railsim::sim::SimConfig;
using railsim::sim::simulate_collective;
using railsim::test::make_test_fabric;
using railsim::test::TestFabricSpec;

namespace {
constexpr double kB = 1e9;  // 1 GB per GPU
}  // namespace

// Ring all-reduce on one rail: 2(n-1) steps of S/n at the NIC rate, each step also paying the
// hops' latency (NCCL's ring model, Thakur et al. 2005 / nccl-tests' busbw definition).
TEST(Collective, RingAllReduceOnOneRailMatchesClosedForm) {
  for (std::int64_t per_leaf : {8, 2}) {  // one leaf holds the rail, or a 2-tier rail
    TestFabricSpec s;
    s.gpus = 64;
    s.per_leaf = per_leaf;
    s.spines = 2;
    auto t = make_test_fabric(s);
    SimConfig cfg;
    cfg.hop_latency_s = 1e-6;
    auto rails = sim::groups_rails(t.net.cluster);
    auto r = simulate_collective(
        t.net, test::collective_request(perf::CollectiveOp::all_reduce, kB, {rails[0]}), cfg);
    const double n = 8, hops = per_leaf == 8 ? 2 : 4;
    const double closed = 2 * (n - 1) * (kB / n / s.nic_Bps + hops * 1e-6);
    EXPECT_NEAR(r.completion_time_s / closed, 1.0, 0.02) << per_leaf;
    EXPECT_FALSE(r.phases[0].step_scaled);
    // The busiest NIC channel is saturated during the ring.
    EXPECT_NEAR(r.busiest.at(0).peak_utilisation, 1.0, 1e-9);
  }
}

TEST(Collective, RingAllGatherAndReduceScatterTakeHalfTheAllReduce) {
  TestFabricSpec s;
  auto t = make_test_fabric(s);
  auto rails = sim::groups_rails(t.net.cluster);
  SimConfig cfg;
  const double ar =
      simulate_collective(
          t.net, test::collective_request(perf::CollectiveOp::all_reduce, kB, {rails[1]}), cfg)
          .completion_time_s;
  const double ag =
      simulate_collective(
          t.net, test::collective_request(perf::CollectiveOp::all_gather, kB, {rails[1]}), cfg)
          .completion_time_s;
  const double rs =
      simulate_collective(
          t.net, test::collective_request(perf::CollectiveOp::reduce_scatter, kB, {rails[1]}), cfg)
          .completion_time_s;
  EXPECT_NEAR(ag, ar / 2, 1e-9 * ar);
  EXPECT_NEAR(rs, ar / 2, 1e-9 * ar);
  EXPECT_NEAR(ag, 7.0 / 8.0 * kB / s.nic_Bps, 1e-9 * ag);
}

// Simulating one ring step and scaling equals the step-by-step simulation for symmetric rings.
TEST(Collective, ScaledRingEqualsStepByStep) {
  TestFabricSpec s;
  s.gpus = 64;
  s.per_leaf = 2;
  s.spines = 2;
  for (bool rail_only : {false, true}) {
    s.rail_only = rail_only;
    auto t = make_test_fabric(s);
    SimConfig full, scaled;
    full.hop_latency_s = scaled.hop_latency_s = 0.5e-6;
    // Store-and-forward: a forwarded ring edge is two flows (pipelined: two per chunk).
    full.mode = scaled.mode = ForwardingMode::store;
    scaled.max_flows = 100;  // one step (64 flows) fits, 126 steps do not
    auto req = test::collective_request(perf::CollectiveOp::all_reduce, kB,
                                        sim::groups_all(t.net.cluster));
    auto a = simulate_collective(t.net, req, full), b = simulate_collective(t.net, req, scaled);
    EXPECT_FALSE(a.phases[0].step_scaled);
    EXPECT_TRUE(b.phases[0].step_scaled);
    EXPECT_NEAR(b.completion_time_s / a.completion_time_s, 1.0, 1e-9) << rail_only;
  }
}

// All-to-all on a full-bisection Clos (K = 1: every pair crosses the network): each GPU sends
// (N-1)/N of its S bytes through its NIC, so T = (N-1)/N S / B_nic.
TEST(Collective, AllToAllOnFullBisectionClosMatchesClosedForm) {
  TestFabricSpec s;
  s.gpus = 64;
  s.k = 1;
  s.per_leaf = 8;
  s.spines = 4;
  auto t = make_test_fabric(s);
  SimConfig cfg;
  auto req =
      test::collective_request(perf::CollectiveOp::all_to_all, kB, sim::groups_all(t.net.cluster));
  const double closed = 63.0 / 64.0 * kB / s.nic_Bps;
  auto r = simulate_collective(t.net, req, cfg);
  EXPECT_NEAR(r.completion_time_s / closed, 1.0, 0.02);
  EXPECT_EQ(r.flows_represented, 64.0 * 63.0);
  cfg.aggregate = Aggregation::on;
  auto agg = simulate_collective(t.net, req, cfg);
  EXPECT_TRUE(agg.phases[0].aggregated);
  EXPECT_NEAR(agg.completion_time_s / closed, 1.0, 0.02);
  // Hash-based ECMP collides: some uplinks carry more flows than others, and the all-to-all
  // takes longer than on the balanced fabric (never shorter).
  s.balanced = false;
  auto u = make_test_fabric(s);
  cfg.aggregate = Aggregation::off;
  EXPECT_GE(simulate_collective(u.net, req, cfg).completion_time_s, closed * (1 - 1e-9));
}

// Aggregation by link class equals flow-by-flow simulation where routing spreads load evenly.
TEST(Collective, AggregatedAllToAllEqualsFlowByFlow) {
  struct Case {
    bool rail_only;
    std::int64_t per_leaf, spines;
    ForwardingMode mode;
    topo::Forwarding fw;
  };
  const Case cases[] = {
      {false, 8, 4, ForwardingMode::store, topo::Forwarding::hb_first},  // K = 1 below
      {true, 8, 1, ForwardingMode::store, topo::Forwarding::hb_first},
      {true, 8, 1, ForwardingMode::store, topo::Forwarding::rail_first},
      {true, 8, 1, ForwardingMode::pipelined, topo::Forwarding::hb_first},
      {true, 4, 2, ForwardingMode::pipelined, topo::Forwarding::hb_first},
      {true, 8, 1, ForwardingMode::two_phase, topo::Forwarding::hb_first},
  };
  for (const auto& c : cases) {
    TestFabricSpec s;
    s.gpus = 64;
    s.k = c.rail_only ? 8 : 1;
    s.rail_only = c.rail_only;
    s.per_leaf = c.per_leaf;
    s.spines = c.spines;
    auto t = make_test_fabric(s);
    SimConfig cfg;
    cfg.mode = c.mode;
    cfg.forwarding = c.fw;
    cfg.chunks = 4;
    cfg.hop_latency_s = 1e-6;
    auto req = test::collective_request(perf::CollectiveOp::all_to_all, kB,
                                        sim::groups_all(t.net.cluster));
    cfg.aggregate = Aggregation::off;
    auto a = simulate_collective(t.net, req, cfg);
    cfg.aggregate = Aggregation::on;
    auto b = simulate_collective(t.net, req, cfg);
    EXPECT_FALSE(a.phases[0].aggregated);
    EXPECT_TRUE(b.phases[0].aggregated);
    EXPECT_LT(b.flows_simulated * 20, a.flows_simulated);
    EXPECT_NEAR(b.completion_time_s / a.completion_time_s, 1.0, 1e-9)
        << c.rail_only << " " << c.per_leaf << " " << static_cast<int>(c.mode) << " "
        << static_cast<int>(c.fw);
  }
}

// Rail-only all-to-all: store-and-forward through the HB domain. With barrier-separated phases
// (the paper's reading: the HB shuffle, then the rail all-to-all) the time is the sum
// (K-1)/K S / B_hb + (N-K)/N S / B_nic; per-transfer store-and-forward and pipelining overlap the
// phases and lie between the rail-optimized time and that sum.
TEST(Collective, RailOnlyAllToAllForwardingOverheads) {
  TestFabricSpec s;
  s.gpus = 64;
  s.per_leaf = 8;
  s.spines = 1;
  s.hb_Bps = 100e9;  // a slow HB domain makes the forwarding cost visible
  auto opt = make_test_fabric(s);
  s.rail_only = true;
  auto ro = make_test_fabric(s);
  auto req = test::collective_request(perf::CollectiveOp::all_to_all, kB,
                                      sim::groups_all(opt.net.cluster));
  SimConfig cfg;
  const double t_nic = 56.0 / 64.0 * kB / s.nic_Bps, t_hb = 7.0 / 8.0 * kB / s.hb_Bps;
  const double base = simulate_collective(opt.net, req, cfg).completion_time_s;
  EXPECT_NEAR(base / t_nic, 1.0, 1e-9);
  // Two-phase: the NVLink shuffle of the cross-rail bytes (49/64 of S), then the NICs with the
  // transfers inside the domain alongside: cross / B_hb + max(intra / B_hb, inter / B_nic).
  cfg.mode = ForwardingMode::two_phase;
  const double two_phase =
      49.0 / 64.0 * kB / s.hb_Bps + std::max(7.0 / 64.0 * kB / s.hb_Bps, t_nic);
  EXPECT_NEAR(simulate_collective(ro.net, req, cfg).completion_time_s / two_phase, 1.0, 1e-9);
  cfg.mode = ForwardingMode::store;
  const double store = simulate_collective(ro.net, req, cfg).completion_time_s;
  cfg.mode = ForwardingMode::pipelined;
  cfg.chunks = 16;
  const double piped = simulate_collective(ro.net, req, cfg).completion_time_s;
  EXPECT_GT(store, base * 1.01);
  EXPECT_LE(store, (t_hb + t_nic) * (1 + 1e-9));
  EXPECT_LT(piped, store);
  EXPECT_GE(piped, base * (1 - 1e-9));
  // rail_first with fair sharing finishes every rail leg together, then all HB legs: no overlap.
  cfg.mode = ForwardingMode::store;
  cfg.forwarding = topo::Forwarding::rail_first;
  EXPECT_NEAR(simulate_collective(ro.net, req, cfg).completion_time_s /
                  (t_nic + 7.0 / 8.0 * 56.0 / 64.0 * kB / s.hb_Bps),
              1.0, 0.02);
}

// Hierarchical all-reduce over all GPUs: reduce-scatter in the domain (K-1)/K S / B_hb, rail
// all-reduce of S/K: 2(D-1)/D S/K / B_nic, all-gather (K-1)/K S / B_hb.
TEST(Collective, HierarchicalAllReduceMatchesClosedForm) {
  TestFabricSpec s;
  s.gpus = 64;
  s.per_leaf = 8;
  s.spines = 1;
  auto t = make_test_fabric(s);
  SimConfig cfg;
  auto r = simulate_collective(
      t.net,
      test::collective_request(perf::CollectiveOp::all_reduce, kB, sim::groups_all(t.net.cluster),
                               perf::Algorithm::hierarchical),
      cfg);
  ASSERT_EQ(r.phases.size(), 3u);
  const double closed = 2 * 7.0 / 8.0 * kB / s.hb_Bps + 2 * 7.0 / 8.0 * kB / 8.0 / s.nic_Bps;
  EXPECT_NEAR(r.completion_time_s / closed, 1.0, 1e-9);
}

// 1:7 oversubscribed leaf uplinks (Meta's 24k cluster between pods; here between leaves): an
// all-to-all between two leaves' GPUs crosses the uplinks only, which carry 1/7 of the NIC
// bandwidth: 7x slower than on the full-bisection fabric.
TEST(Collective, OversubscribedUpperTierSlowsCrossAllToAllSevenfold) {
  TestFabricSpec s;
  s.gpus = 64;
  s.k = 1;
  s.per_leaf = 16;
  s.spines = 4;
  auto full = make_test_fabric(s);
  s.oversubscription = 7;
  auto over = make_test_fabric(s);
  // Group: 16 GPUs of leaf 0 and 16 of leaf 1, alternating, so that pairs cross the uplinks.
  sim::Group g;
  for (int i = 0; i < 16; ++i) {
    g.push_back(i);
    g.push_back(16 + i);
  }
  auto req = test::collective_request(perf::CollectiveOp::all_to_all, kB, {g});
  SimConfig cfg;
  const double a = simulate_collective(full.net, req, cfg).completion_time_s;
  const double b = simulate_collective(over.net, req, cfg).completion_time_s;
  // Full bisection: the NIC limits, (n-1)/n S / B_nic. Oversubscribed: each leaf's uplinks carry
  // 16 GPUs x 16/32 S at 16 B_nic / 7.
  EXPECT_NEAR(a / (31.0 / 32.0 * kB / s.nic_Bps), 1.0, 0.02);
  EXPECT_NEAR(b / (16.0 * 16.0 / 32.0 * kB / (16.0 * s.nic_Bps / 7.0)), 1.0, 0.02);
  EXPECT_NEAR(b / a, 7.0 * 16.0 / 31.0, 0.02 * 7);
}

TEST(Collective, P2pSendsOneTransferPerAdjacentPair) {
  TestFabricSpec s;
  auto t = make_test_fabric(s);
  SimConfig cfg;
  cfg.hop_latency_s = 1e-6;
  auto r = simulate_collective(
      t.net, test::collective_request(perf::CollectiveOp::send_recv, kB, {{0, 8, 16, 24}}), cfg);
  EXPECT_NEAR(r.completion_time_s, kB / s.nic_Bps + 2e-6, 1e-12);
}

TEST(Collective, BadInputNamesTheField) {
  TestFabricSpec s;
  auto t = make_test_fabric(s);
  SimConfig cfg;
  try {
    simulate_collective(
        t.net, test::collective_request(perf::CollectiveOp::all_reduce, -1, {{0, 1}}), cfg);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--bytes");
  }
  cfg.chunks = 0;
  EXPECT_THROW(
      simulate_collective(
          t.net, test::collective_request(perf::CollectiveOp::all_reduce, 1, {{0, 1}}), cfg),
      InputError);
  cfg.chunks = 1;
  EXPECT_THROW(
      simulate_collective(
          t.net, test::collective_request(perf::CollectiveOp::all_reduce, 1, {{0, 99}}), cfg),
      InputError);
  EXPECT_THROW(spec::parse_forwarding_mode("fast"), InputError);
}

// Forwarding legs and pipelined chunks count against max_flows, as many as are simulated: a
// rail-only all-to-all of 64 GPUs (K = 8) has 4,032 pairs, 896 in a domain or on a rail and
// 3,136 forwarded. Store-and-forward: a first leg is the direct transfer to the peer (merged),
// so 4,032 flows. Pipelined with 4 chunks: 896 + 4 x (3,136 second legs + 64 x 7 first legs,
// one per source and peer) = 15,232.
TEST(Collective, ChunksCountAgainstMaxFlows) {
  TestFabricSpec s;
  s.rail_only = true;
  s.per_leaf = 8;
  s.spines = 1;
  auto t = make_test_fabric(s);
  auto req =
      test::collective_request(perf::CollectiveOp::all_to_all, kB, sim::groups_all(t.net.cluster));
  SimConfig cfg;
  cfg.mode = ForwardingMode::store;  // each forwarded pair two flows (pipelined: 2 x chunks)
  cfg.aggregate = Aggregation::off;
  cfg.max_flows = 4'032;
  EXPECT_EQ(simulate_collective(t.net, req, cfg).flows_simulated, 4'032);
  cfg.max_flows = 4'031;
  EXPECT_THROW(simulate_collective(t.net, req, cfg), InputError);
  cfg.mode = ForwardingMode::pipelined;
  cfg.chunks = 4;
  cfg.max_flows = 15'231;
  try {
    simulate_collective(t.net, req, cfg);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--aggregate");
    EXPECT_NE(std::string(e.what()).find("15232"), std::string::npos) << e.what();
  }
  cfg.max_flows = 15'232;
  EXPECT_EQ(simulate_collective(t.net, req, cfg).flows_simulated, 15'232);
  // With automatic aggregation the chunked all-to-all goes by link class instead.
  cfg.aggregate = Aggregation::automatic;
  cfg.max_flows = 15'231;
  EXPECT_TRUE(simulate_collective(t.net, req, cfg).phases.at(0).aggregated);
}

// A phase whose estimated memory exceeds max_memory_bytes is refused before it is built, with
// the estimate in the message.
TEST(Collective, EstimatedMemoryBeyondTheLimitIsRefused) {
  TestFabricSpec s;
  auto t = make_test_fabric(s);
  auto req =
      test::collective_request(perf::CollectiveOp::all_to_all, kB, sim::groups_all(t.net.cluster));
  SimConfig cfg;
  cfg.aggregate = Aggregation::off;
  const double flows = 64.0 * 63.0;
  const double hops = static_cast<double>(t.net.class_names.size());
  const double est = sim::estimated_memory_bytes(flows, flows * hops, 2 * flows);
  EXPECT_GT(est, 100.0 * flows);  // at least the engine's state per flow
  cfg.max_memory_bytes = est * 1.01;
  EXPECT_NO_THROW(simulate_collective(t.net, req, cfg));
  cfg.max_memory_bytes = est * 0.99;
  try {
    simulate_collective(t.net, req, cfg);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--max-memory");
    EXPECT_NE(std::string(e.what()).find("GB (estimated)"), std::string::npos) << e.what();
  }
  // The same limit lets a send/recv chain of 63 flows run, and refuses the ring all-reduce
  // simulated step by step (126 steps of 64 flows).
  EXPECT_NO_THROW(simulate_collective(
      t.net,
      test::collective_request(perf::CollectiveOp::send_recv, kB, sim::groups_all(t.net.cluster)),
      cfg));
  EXPECT_THROW(simulate_collective(t.net,
                                   test::collective_request(perf::CollectiveOp::all_reduce, kB,
                                                            sim::groups_all(t.net.cluster)),
                                   cfg),
               InputError);
}

TEST(Collective, StopsWhenCancelled) {
  TestFabricSpec s;
  s.gpus = 64;
  s.per_leaf = 8;
  s.spines = 2;
  auto t = make_test_fabric(s);
  const std::vector<sim::Group> all = sim::groups_all(t.net.cluster);
  request_cancel();
  EXPECT_THROW((void)simulate_collective(t.net,
                                         test::collective_request(perf::CollectiveOp::all_to_all,
                                                                  kB, all, perf::Algorithm::direct),
                                         SimConfig{}),
               Cancelled);
  reset_cancel();
}
