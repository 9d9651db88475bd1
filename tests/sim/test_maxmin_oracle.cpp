// The engine (sim::simulate) against an independent max-min fair solver (maxmin_oracle.hpp:
// progressive filling from the definition, no code shared with src/sim): the rates at time 0
// and the finishing times of flows started together, on hand-computed networks and on a few
// hundred random ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "maxmin_oracle.hpp"
#include "railsim/sim/flow_sim.hpp"

// In a namespace of its own: the tests of a folder may be compiled as one unit.
namespace maxmin_oracle_test {

namespace flowsim = railsim::sim;
using maxmin_oracle::Route;

// A network and flows started together at time 0: link capacities (B/s), each flow's route, its
// bytes and its weight (that many identical flows; the oracle gets them one by one).
struct Case {
  std::vector<double> capacity;
  std::vector<Route> routes;
  std::vector<double> bytes;
  std::vector<int> weight;
};

flowsim::Workload workload(const Case& c, const std::vector<double>& bytes) {
  flowsim::Workload w(c.capacity);
  for (std::size_t f = 0; f < c.routes.size(); ++f) {
    const std::vector<flowsim::ChannelId> path(c.routes[f].begin(), c.routes[f].end());
    w.add_flow(path, bytes[f], static_cast<double>(c.weight[f]));
  }
  return w;
}

// The oracle's flows: each flow of the case `weight` times.
std::vector<Route> expanded_routes(const Case& c) {
  std::vector<Route> routes;
  for (std::size_t f = 0; f < c.routes.size(); ++f)
    for (int k = 0; k < c.weight[f]; ++k) routes.push_back(c.routes[f]);
  return routes;
}
std::vector<double> expanded_bytes(const Case& c) {
  std::vector<double> bytes;
  for (std::size_t f = 0; f < c.routes.size(); ++f)
    for (int k = 0; k < c.weight[f]; ++k) bytes.push_back(c.bytes[f]);
  return bytes;
}
// A value per flow of the case from the oracle's values per expanded flow (the first copy's).
std::vector<double> per_case_flow(const Case& c, const std::vector<double>& expanded) {
  std::vector<double> out;
  std::size_t j = 0;
  for (std::size_t f = 0; f < c.routes.size(); ++f) {
    out.push_back(expanded[j]);
    j += static_cast<std::size_t>(c.weight[f]);
  }
  return out;
}

// The oracle's max-min fair rates of the case's flows (B/s per flow).
std::vector<double> oracle_rates(const Case& c) {
  return per_case_flow(c, maxmin_oracle::max_min_rates(c.capacity, expanded_routes(c)));
}
std::vector<double> oracle_finish(const Case& c) {
  return per_case_flow(
      c, maxmin_oracle::finish_times(c.capacity, expanded_routes(c), expanded_bytes(c)));
}

// The engine's rates at time 0: max-min fair rates depend on the routes alone, so flow f is
// given 1 B and every other flow 1e6 B; f then finishes first, at 1 / (its rate at time 0),
// before any other flow's end changes the allocation.
std::vector<double> engine_rates(const Case& c, const flowsim::EngineOptions& opt) {
  std::vector<double> rates;
  for (std::size_t f = 0; f < c.routes.size(); ++f) {
    std::vector<double> bytes(c.routes.size(), 1e6);
    bytes[f] = 1.0;
    const flowsim::SimResult r = flowsim::simulate(workload(c, bytes), opt);
    rates.push_back(1.0 / r.finish_s[f]);
  }
  return rates;
}
flowsim::SimResult engine_run(const Case& c, const flowsim::EngineOptions& opt) {
  return flowsim::simulate(workload(c, c.bytes), opt);
}

// Seeded random cases: 1 to max_links links of random capacities (a few values, for ties, or
// spread), 2 to max_flows flows of 1 to 4 distinct links each, bytes from a few values or
// spread, weights 1 to 3 in a third of the cases.
Case random_case(std::uint64_t seed, int max_links, int max_flows) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
  auto next = [&x](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % m;
  };
  Case c;
  const int links = 1 + static_cast<int>(next(static_cast<std::uint64_t>(max_links)));
  const bool tied_capacity = next(2) == 0, tied_bytes = next(2) == 0, weighted = next(3) == 0;
  for (int l = 0; l < links; ++l)
    c.capacity.push_back(tied_capacity ? 10.0 * static_cast<double>(1 + next(3))
                                       : 0.5 + static_cast<double>(next(10000)) / 100.0);
  const int flows = 2 + static_cast<int>(next(static_cast<std::uint64_t>(max_flows - 1)));
  for (int f = 0; f < flows; ++f) {
    Route r;
    const int len = 1 + static_cast<int>(next(static_cast<std::uint64_t>(std::min(4, links))));
    while (static_cast<int>(r.size()) < len) {
      const int l = static_cast<int>(next(static_cast<std::uint64_t>(links)));
      if (std::find(r.begin(), r.end(), l) == r.end()) r.push_back(l);
    }
    c.routes.push_back(r);
    c.bytes.push_back(tied_bytes ? 100.0 * static_cast<double>(1 + next(4))
                                 : 1.0 + static_cast<double>(next(100000)) / 97.0);
    c.weight.push_back(weighted ? 1 + static_cast<int>(next(3)) : 1);
  }
  return c;
}

double relative_error(double a, double b) {
  return std::abs(a - b) / std::max(std::abs(b), 1e-300);
}
std::string scientific(double x) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3g", x);
  return s;
}

// Both engines: the default (repairs, a heap of fair shares) and the reference one.
std::vector<flowsim::EngineOptions> engines() {
  flowsim::EngineOptions fast, reference;
  reference.incremental = false;
  return {fast, reference};
}

// Runs `cases` random cases with the engine and the oracle and expects every finishing time
// equal to 1e-9 relative; records the worst relative error as test property `name`.
struct Compared {
  double worst = 0;
  int flows = 0;              // finishing times compared
  std::int64_t refilled = 0;  // flows the engine gave a new rate, over every case
};
Compared compare_finish(const flowsim::EngineOptions& opt, std::uint64_t cases, int max_links,
                        int max_flows, const char* name) {
  Compared out;
  for (std::uint64_t seed = 1; seed <= cases; ++seed) {
    const Case c = random_case(seed, max_links, max_flows);
    const auto want = oracle_finish(c);
    const auto got = engine_run(c, opt);
    EXPECT_EQ(got.finish_s.size(), want.size());
    for (std::size_t f = 0; f < want.size() && f < got.finish_s.size(); ++f) {
      EXPECT_NEAR(got.finish_s[f], want[f], 1e-9 * want[f]) << "seed " << seed << " flow " << f;
      out.worst = std::max(out.worst, relative_error(got.finish_s[f], want[f]));
      ++out.flows;
    }
    out.refilled += got.refilled_flows;
  }
  ::testing::Test::RecordProperty(name, scientific(out.worst));
  ::testing::Test::RecordProperty(std::string(name) + "_refilled", std::to_string(out.refilled));
  return out;
}

}  // namespace maxmin_oracle_test

// The oracle itself on hand-computed allocations.
TEST(MaxMinOracle, HandComputedAllocations) {
  using namespace maxmin_oracle_test;
  // The classic: flow 0 crosses links A and B (1 B/s each), flow 1 A alone, flow 2 B alone:
  // every flow gets half of each link.
  auto r = maxmin_oracle::max_min_rates({1.0, 1.0}, {{0, 1}, {0}, {1}});
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 0.5);
  // B at 2 B/s: A saturates first at 0.5 (flows 0 and 1); flow 2 takes the 1.5 B left on B.
  r = maxmin_oracle::max_min_rates({1.0, 2.0}, {{0, 1}, {0}, {1}});
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 1.5);
  // Three flows share link 0 (1/3 each); flow 3 gets what flow 0 leaves of link 1.
  r = maxmin_oracle::max_min_rates({1.0, 1.0}, {{0, 1}, {0}, {0}, {1}});
  EXPECT_DOUBLE_EQ(r[1], 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(r[3], 2.0 / 3.0);
  // Finishing times of the second network with 1, 3 and 1 B: flow 2 ends at 1 / 1.5 s; flows 0
  // and 1 stay at 0.5 (link A), flow 0 ends at 2 s; flow 1 alone on A sends its last 2 B at
  // 1 B/s: 4 s.
  const auto t = maxmin_oracle::finish_times({1.0, 2.0}, {{0, 1}, {0}, {1}}, {1.0, 3.0, 1.0});
  EXPECT_DOUBLE_EQ(t[0], 2.0);
  EXPECT_DOUBLE_EQ(t[1], 4.0);
  EXPECT_DOUBLE_EQ(t[2], 1.0 / 1.5);
}

// The engine on the same hand-computed networks, rates and finishing times.
TEST(MaxMinOracle, EngineMatchesHandComputedCases) {
  using namespace maxmin_oracle_test;
  for (const auto& opt : engines()) {
    const Case classic{{1.0, 1.0}, {{0, 1}, {0}, {1}}, {1.0, 1.0, 1.0}, {1, 1, 1}};
    for (double r : engine_rates(classic, opt)) EXPECT_NEAR(r, 0.5, 1e-12);
    for (double t : engine_run(classic, opt).finish_s) EXPECT_NEAR(t, 2.0, 1e-12);
    const Case uneven{{1.0, 2.0}, {{0, 1}, {0}, {1}}, {1.0, 3.0, 1.0}, {1, 1, 1}};
    const auto r = engine_rates(uneven, opt);
    EXPECT_NEAR(r[0], 0.5, 1e-12);
    EXPECT_NEAR(r[1], 0.5, 1e-12);
    EXPECT_NEAR(r[2], 1.5, 1e-12);
    const auto t = engine_run(uneven, opt).finish_s;
    EXPECT_NEAR(t[0], 2.0, 1e-12);
    EXPECT_NEAR(t[1], 4.0, 1e-12);
    EXPECT_NEAR(t[2], 1.0 / 1.5, 1e-12);
    // A weight of 2 on flow 1 of the classic: link A carries three flows (1/3 each), flow 2
    // takes the 2/3 flow 0 leaves on B.
    const Case weighted{{1.0, 1.0}, {{0, 1}, {0}, {1}}, {1.0, 1.0, 1.0}, {1, 2, 1}};
    const auto rw = engine_rates(weighted, opt);
    EXPECT_NEAR(rw[0], 1.0 / 3.0, 1e-12);
    EXPECT_NEAR(rw[1], 1.0 / 3.0, 1e-12);
    EXPECT_NEAR(rw[2], 2.0 / 3.0, 1e-12);
    const auto ow = oracle_rates(weighted);
    EXPECT_NEAR(ow[0], 1.0 / 3.0, 1e-15);
    EXPECT_NEAR(ow[1], 1.0 / 3.0, 1e-15);
    EXPECT_NEAR(ow[2], 2.0 / 3.0, 1e-15);
  }
}

// Rates at time 0 on 300 random networks: the engine's equal the oracle's to 1e-9 relative.
TEST(MaxMinOracle, EngineRatesEqualOracleOnRandomNetworks) {
  using namespace maxmin_oracle_test;
  for (const auto& opt : engines()) {
    double worst = 0;
    int checked = 0;
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
      const Case c = random_case(seed, 12, 40);
      const auto want = oracle_rates(c), got = engine_rates(c, opt);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t f = 0; f < want.size(); ++f) {
        EXPECT_NEAR(got[f], want[f], 1e-9 * want[f]) << "seed " << seed << " flow " << f;
        worst = std::max(worst, relative_error(got[f], want[f]));
        ++checked;
      }
    }
    EXPECT_GT(checked, 5000);
    RecordProperty(opt.incremental ? "worst_rate_error" : "worst_rate_error_reference",
                   scientific(worst));
  }
}

// Finishing times of the flows of 300 random networks (up to 12 links, 2 to 40 flows), all
// started at time 0: the engine's (events, repairs after each end) equal the oracle's (a whole
// allocation after each end) to 1e-9 relative. The default engine re-fills fewer flows than the
// reference one over the cases: its repairs ran.
TEST(MaxMinOracle, EngineFinishingTimesEqualOracleOnRandomNetworks) {
  using namespace maxmin_oracle_test;
  const auto fast = compare_finish(engines()[0], 300, 12, 40, "worst_finish_error");
  const auto reference = compare_finish(engines()[1], 300, 12, 40, "worst_finish_error_reference");
  EXPECT_GT(fast.flows, 5000);
  EXPECT_LT(fast.refilled, reference.refilled);
}

// The same on 40 larger networks (up to 30 links, 2 to 200 flows), where repairs succeed more
// often (a repair gives up past an eighth of the flows in progress).
TEST(MaxMinOracle, EngineFinishingTimesEqualOracleOnLargerNetworks) {
  using namespace maxmin_oracle_test;
  const auto fast = compare_finish(engines()[0], 40, 30, 200, "worst_finish_error_larger");
  const auto reference =
      compare_finish(engines()[1], 40, 30, 200, "worst_finish_error_larger_reference");
  EXPECT_GT(fast.flows, 3000);
  EXPECT_LT(fast.refilled, reference.refilled);
}
