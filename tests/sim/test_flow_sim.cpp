// The engine on hand-made channel graphs, against hand-derived max-min fair schedules.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "railsim/sim/flow_sim.hpp"

using railsim::sim::ChannelId;
using railsim::sim::EngineOptions;
using railsim::sim::FlowId;
using railsim::sim::simulate;
using railsim::sim::Workload;

namespace {
std::vector<ChannelId> P(std::initializer_list<ChannelId> c) {
  return c;
}
}  // namespace

TEST(FlowSim, SingleFlowTakesBytesOverCapacityPlusHopLatency) {
  Workload w({10.0, 20.0, 5.0});
  auto p = P({0, 1, 2});
  w.add_flow(p, 100.0);
  EngineOptions o;
  o.hop_latency_s = 0.5;
  auto r = simulate(w, o);
  // Bottleneck 5 B/s: 20 s, plus 3 hops x 0.5 s.
  EXPECT_DOUBLE_EQ(r.completion_time_s, 21.5);
  EXPECT_DOUBLE_EQ(r.channel_peak_utilisation[2], 1.0);
  EXPECT_DOUBLE_EQ(r.channel_peak_utilisation[0], 0.5);
  EXPECT_DOUBLE_EQ(r.channel_bytes[1], 100.0);
}

TEST(FlowSim, RatesAreRecomputedWhenAFlowEnds) {
  // A (100 B) and B (300 B) share channel 0 (10 B/s): 5 B/s each until A ends at 20 s, then B
  // alone at 10 B/s for its remaining 200 B: ends at 40 s.
  Workload w({10.0, 10.0});
  w.add_flow(P({0}), 100.0);
  w.add_flow(P({0, 1}), 300.0);
  auto r = simulate(w);
  EXPECT_DOUBLE_EQ(r.finish_s[0], 20.0);
  EXPECT_DOUBLE_EQ(r.finish_s[1], 40.0);
}

TEST(FlowSim, MaxMinFairParkingLot) {
  // Flow 0 crosses channels 0 (1 B/s) and 1 (2 B/s); flow 1 only channel 0; flow 2 only channel
  // 1. Max-min: channel 0 is the bottleneck, flows 0 and 1 get 0.5; flow 2 gets the 1.5 left.
  Workload w({1.0, 2.0});
  w.add_flow(P({0, 1}), 1.0);
  w.add_flow(P({0}), 1.0);
  w.add_flow(P({1}), 3.0);
  auto r = simulate(w);
  EXPECT_DOUBLE_EQ(r.finish_s[0], 2.0);
  EXPECT_DOUBLE_EQ(r.finish_s[1], 2.0);
  EXPECT_DOUBLE_EQ(r.finish_s[2], 2.0);  // 1.5 B/s x 2 s = 3 B
  EXPECT_DOUBLE_EQ(r.channel_peak_utilisation[1], 1.0);
}

TEST(FlowSim, WeightedFlowEqualsItsIdenticalFlows) {
  Workload a({8.0, 4.0}), b({8.0, 4.0});
  for (int i = 0; i < 4; ++i) a.add_flow(P({0, 1}), 10.0);
  a.add_flow(P({0}), 30.0);
  b.add_flow(P({0, 1}), 10.0, 4.0);
  b.add_flow(P({0}), 30.0);
  auto ra = simulate(a), rb = simulate(b);
  EXPECT_DOUBLE_EQ(ra.completion_time_s, rb.completion_time_s);
  EXPECT_DOUBLE_EQ(ra.finish_s[0], rb.finish_s[0]);
  EXPECT_DOUBLE_EQ(ra.finish_s[4], rb.finish_s[1]);
  // Channel 1 (4 B/s) limits the four to 1 B/s each; the lone flow takes the other 4 B/s.
  EXPECT_DOUBLE_EQ(rb.finish_s[0], 10.0);
  EXPECT_DOUBLE_EQ(rb.finish_s[1], 7.5);
  EXPECT_DOUBLE_EQ(rb.flows_represented, 5.0);
  EXPECT_EQ(rb.flows_simulated, 2);
}

TEST(FlowSim, DependentFlowStartsAfterDelivery) {
  Workload w({10.0, 10.0});
  auto a = w.add_flow(P({0}), 100.0);
  auto b = w.add_flow(P({1}), 50.0);
  auto c = w.add_flow(P({1}), 50.0);
  w.add_dependency(a, c);
  w.add_dependency(b, c);
  EngineOptions o;
  o.hop_latency_s = 1.0;
  auto r = simulate(w, o);
  EXPECT_DOUBLE_EQ(r.finish_s[a], 11.0);
  EXPECT_DOUBLE_EQ(r.finish_s[b], 6.0);
  EXPECT_DOUBLE_EQ(r.finish_s[c], 17.0);  // released at 11, 5 s alone on channel 1, +1 hop
}

TEST(FlowSim, EmptyPathFlowIsABarrier) {
  Workload w({10.0});
  auto a = w.add_flow(P({0}), 10.0);
  auto bar = w.add_flow({}, 0.0);
  auto b = w.add_flow(P({0}), 10.0);
  w.add_dependency(a, bar);
  w.add_dependency(bar, b);
  auto r = simulate(w);
  EXPECT_DOUBLE_EQ(r.finish_s[bar], 1.0);
  EXPECT_DOUBLE_EQ(r.completion_time_s, 2.0);
}

TEST(FlowSim, ReleaseTimesAreHonoured) {
  Workload w({10.0});
  w.add_flow(P({0}), 100.0, 1.0, 0.0);
  w.add_flow(P({0}), 50.0, 1.0, 5.0);
  auto r = simulate(w);
  // 0-5 s: flow 0 alone (50 B); then 5 B/s each: flow 1 ends at 15 s, flow 0 (50 B left) too.
  EXPECT_DOUBLE_EQ(r.finish_s[0], 15.0);
  EXPECT_DOUBLE_EQ(r.finish_s[1], 15.0);
}

TEST(FlowSim, IndependentComponentsDoNotDisturbEachOther) {
  Workload w({10.0, 1.0});
  w.add_flow(P({0}), 100.0);
  for (int i = 0; i < 5; ++i) w.add_flow(P({1}), 1.0 + i);
  auto r = simulate(w);
  EXPECT_DOUBLE_EQ(r.finish_s[0], 10.0);
  // Five flows of 1..5 B on 1 B/s: finish at 5, 9, 12, 14, 15 s (processor sharing).
  EXPECT_NEAR(r.finish_s[1], 5.0, 1e-12);
  EXPECT_NEAR(r.finish_s[2], 9.0, 1e-12);
  EXPECT_NEAR(r.finish_s[3], 12.0, 1e-12);
  EXPECT_NEAR(r.finish_s[4], 14.0, 1e-12);
  EXPECT_NEAR(r.finish_s[5], 15.0, 1e-12);
}

TEST(FlowSim, DependencyCycleIsAnInternalError) {
  Workload w({10.0});
  auto a = w.add_flow(P({0}), 1.0);
  auto b = w.add_flow(P({0}), 1.0);
  w.add_dependency(a, b);
  w.add_dependency(b, a);
  EXPECT_THROW(simulate(w), std::logic_error);
}

TEST(FlowSim, RejectsBadFlows) {
  Workload w({10.0});
  EXPECT_THROW(w.add_flow(P({1}), 1.0), std::logic_error);
  EXPECT_THROW(w.add_flow(P({0}), -1.0), std::logic_error);
  EXPECT_THROW(w.add_flow(P({0}), 1.0, 0.0), std::logic_error);
  EXPECT_THROW(Workload({0.0}), std::logic_error);
}

// Incremental re-filling (only flows at or above the lowest ended rate) equals re-filling whole
// components, on random workloads with shared channels, weights and dependencies.
TEST(FlowSim, IncrementalRefillEqualsFullRefill) {
  std::uint64_t x = 12345;
  auto next = [&x](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % m;
  };
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> cap;
    for (int c = 0; c < 12; ++c) cap.push_back(1.0 + static_cast<double>(next(9)));
    Workload w(cap);
    for (int f = 0; f < 60; ++f) {
      std::vector<ChannelId> p;
      const int len = 1 + static_cast<int>(next(4));
      for (int h = 0; h < len; ++h) p.push_back(static_cast<ChannelId>(next(12)));
      w.add_flow(p, 1.0 + static_cast<double>(next(50)), 1.0 + static_cast<double>(next(3)));
      if (f > 5 && next(4) == 0)
        w.add_dependency(static_cast<FlowId>(next(static_cast<std::uint64_t>(f))), f);
    }
    EngineOptions inc, full;
    full.incremental = false;
    auto a = simulate(w, inc), b = simulate(w, full);
    for (FlowId f = 0; f < w.flow_count(); ++f)
      EXPECT_NEAR(a.finish_s[static_cast<std::size_t>(f)], b.finish_s[static_cast<std::size_t>(f)],
                  1e-9 * b.completion_time_s)
          << trial << " " << f;
  }
}
