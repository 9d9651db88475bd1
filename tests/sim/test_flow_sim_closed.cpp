// Closed components: once every flow of a component is released and none has a successor, the
// component runs its remaining events on its own (in parallel with the others). Its flows must
// finish exactly when they would in a simulation of that component alone.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "railsim/sim/flow_sim.hpp"

using railsim::sim::ChannelId;
using railsim::sim::EngineOptions;
using railsim::sim::FlowId;
using railsim::sim::simulate;
using railsim::sim::Workload;

namespace {

struct Rng {
  std::uint64_t x;
  std::uint64_t operator()(std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % m;
  }
};

// `parts` groups of flows on disjoint channels. Group g's flows cross 1-3 of its own 6
// channels; in the odd groups some flows wait for others (their components never close), in
// the even ones every flow is released at once or at a release time and nothing waits on them.
struct Parts {
  Workload whole;
  std::vector<Workload> alone;
  std::vector<std::vector<FlowId>> ids;  // per group: its flows' ids in `whole`
};

Parts make_parts(std::uint64_t seed, int parts) {
  Rng rng{seed * 0x9E3779B97F4A7C15ull + 7};
  constexpr int kCh = 6;
  std::vector<double> cap;
  std::vector<std::vector<double>> caps(static_cast<std::size_t>(parts));
  for (int g = 0; g < parts; ++g)
    for (int c = 0; c < kCh; ++c) {
      const double x = 1.0 + static_cast<double>(rng(9));
      cap.push_back(x);
      caps[static_cast<std::size_t>(g)].push_back(x);
    }
  Parts out{Workload(cap), {}, {}};
  for (int g = 0; g < parts; ++g) {
    out.alone.emplace_back(caps[static_cast<std::size_t>(g)]);
    out.ids.emplace_back();
    const int flows = 20 + static_cast<int>(rng(60));
    for (int f = 0; f < flows; ++f) {
      std::vector<ChannelId> local;
      const int len = 1 + static_cast<int>(rng(3));
      for (int h = 0; h < len; ++h) local.push_back(static_cast<ChannelId>(rng(kCh)));
      std::vector<ChannelId> global = local;
      for (auto& c : global) c += g * kCh;
      const double bytes = 1.0 + static_cast<double>(rng(500)) / 3.0;
      const double release = rng(4) == 0 ? static_cast<double>(rng(30)) / 7.0 : 0.0;
      const FlowId a = out.alone.back().add_flow(local, bytes, 1.0, release);
      const FlowId b = out.whole.add_flow(global, bytes, 1.0, release);
      out.ids.back().push_back(b);
      if (g % 2 == 1 && f > 2 && rng(3) == 0) {
        const auto from = static_cast<std::size_t>(rng(static_cast<std::uint64_t>(f)));
        out.alone.back().add_dependency(static_cast<FlowId>(from), a);
        out.whole.add_dependency(out.ids.back()[from], b);
      }
    }
  }
  return out;
}

}  // namespace

// Every flow of the combined workload finishes as in its group's workload alone: to 1e-9
// relative (events of different groups within 1e-9 of each other are one event of the main
// loop), and the groups whose components close run exactly as alone.
TEST(FlowSim, ClosedComponentsFinishAsTheyWouldAlone) {
  int closed_exact = 0, closed_total = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Parts p = make_parts(seed, 5);
    EngineOptions opt;
    opt.hop_latency_s = 0.01;
    const auto whole = simulate(p.whole, opt);
    double completion = 0;
    for (std::size_t g = 0; g < p.alone.size(); ++g) {
      const auto alone = simulate(p.alone[g], opt);
      completion = std::max(completion, alone.completion_time_s);
      for (std::size_t f = 0; f < p.ids[g].size(); ++f) {
        const double a = alone.finish_s[f];
        const double b = whole.finish_s[static_cast<std::size_t>(p.ids[g][f])];
        EXPECT_NEAR(b, a, 1e-9 * a) << "seed " << seed << " group " << g << " flow " << f;
        if (g % 2 == 0) {
          ++closed_total;
          if (a == b) ++closed_exact;
        }
      }
    }
    EXPECT_NEAR(whole.completion_time_s, completion, 1e-9 * completion);
  }
  // The even groups' components close once their last flow is released and run alone from then
  // on: the same arithmetic as a simulation of the group alone, bit for bit.
  EXPECT_GT(closed_total, 2000);
  EXPECT_EQ(closed_exact, closed_total);
}

// The closed components run in parallel; the result is the same bit for bit on one thread.
TEST(FlowSim, ClosedComponentsGiveTheSameResultOnAnyNumberOfThreads) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const Parts p = make_parts(seed + 100, 12);
    railsim::sim::SimResult one, many;
    {
      tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 1);
      one = simulate(p.whole);
    }
    many = simulate(p.whole);
    ASSERT_EQ(one.finish_s.size(), many.finish_s.size());
    for (std::size_t f = 0; f < one.finish_s.size(); ++f)
      EXPECT_EQ(one.finish_s[f], many.finish_s[f]) << "seed " << seed << " flow " << f;
    EXPECT_EQ(one.events, many.events);
    EXPECT_EQ(one.completion_time_s, many.completion_time_s);
    EXPECT_EQ(one.refilled_flows, many.refilled_flows);
  }
}
