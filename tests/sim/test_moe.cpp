// Skewed (MoE) all-to-all: token routing with a popularity, top-k and domain limits, the byte
// matrices it gives, and their simulation.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/sim/check.hpp"
#include "railsim/sim/moe.hpp"
#include "test_fabrics.hpp"

using namespace railsim;
using railsim::sim::MoeRouting;
using railsim::sim::Popularity;
using railsim::test::make_test_fabric;
using railsim::test::TestFabricSpec;

namespace {

spec::Cluster cluster(std::int64_t gpus, std::int64_t k) {
  spec::Cluster c;
  c.gpus = gpus;
  c.hb_domain = k;
  c.hb_bw_Bps = 450e9;
  c.nic_bw_Bps = 50e9;
  return c;
}

MoeRouting routing(Popularity p, double s, std::int64_t experts, std::int64_t topk,
                   std::int64_t tokens, std::int64_t max_domains = 0) {
  MoeRouting r;
  r.popularity = p;
  r.zipf_s = s;
  r.experts = experts;
  r.topk = topk;
  r.tokens = tokens;
  r.max_domains = max_domains;
  return r;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

template <class F>
void expect_input_error(F f, const std::string& field) {
  try {
    f();
    ADD_FAILURE() << "no InputError for " << field;
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

}  // namespace

TEST(Moe, DispatchTotalsAreTokensTimesTopkTimesBytesPerToken) {
  const auto c = cluster(64, 8);
  const auto g = sim::groups_all(c)[0];
  const double bpt = 7168;  // DeepSeek-V3's hidden size, one byte per value (FP8 dispatch)
  MoeRouting weights = routing(Popularity::expert_weights, 0, 128, 6, 300);
  for (std::int64_t e = 0; e < 128; ++e) weights.weights.push_back(e % 5 == 0 ? 0.0 : 1.0 + e);
  MoeRouting pairs = routing(Popularity::pair_weights, 0, 64, 8, 300);
  pairs.weight_rows = 64;
  for (int i = 0; i < 64 * 64; ++i) pairs.weights.push_back((i * 37) % 11);
  for (const MoeRouting& r :
       {routing(Popularity::uniform, 0, 64, 8, 300), routing(Popularity::zipf, 1.2, 256, 8, 300),
        routing(Popularity::zipf, 0.8, 64, 4, 300, 2), weights, pairs}) {
    const auto m = sim::moe_dispatch_bytes(r, g, c, bpt);
    ASSERT_EQ(m.size(), 64u * 64u);
    EXPECT_NEAR(sum(m) / (64.0 * 300 * r.topk * bpt), 1.0, 1e-12);
    if (r.popularity == Popularity::pair_weights) continue;
    for (int i = 0; i < 64; ++i) {  // every GPU dispatches exactly its own tokens
      double row = 0;
      for (int j = 0; j < 64; ++j) row += m[static_cast<std::size_t>(i * 64 + j)];
      EXPECT_EQ(row, 300.0 * static_cast<double>(r.topk) * bpt) << i;
    }
  }
  // Combine sends everything back: the transpose, same total, rows become columns.
  const auto m = sim::moe_dispatch_bytes(routing(Popularity::zipf, 1.2, 64, 8, 100), g, c, 1.0);
  const auto t = sim::transpose_square(m);
  EXPECT_EQ(t[3 * 64 + 17], m[17 * 64 + 3]);
  EXPECT_EQ(sum(t), sum(m));
}

TEST(Moe, ZipfExponentZeroIsTheUniformAllToAll) {
  const auto c = cluster(64, 8);
  const auto g = sim::groups_all(c)[0];
  const std::int64_t tokens = 2048, k = 8;
  const auto uni = sim::moe_dispatch_bytes(routing(Popularity::uniform, 0, 64, k, tokens), g, c, 1);
  const auto z0 = sim::moe_dispatch_bytes(routing(Popularity::zipf, 0, 64, k, tokens), g, c, 1);
  EXPECT_EQ(uni, z0);  // bit for bit: the same law and the same random streams
  // Each pair gets tokens k / n expert copies on average (binomial: within 5 sigma), and the
  // overall mean is exact.
  const double mean = static_cast<double>(tokens * k) / 64.0;
  const double sigma = std::sqrt(mean * (1 - 1.0 / 64));
  for (double x : z0) EXPECT_LT(std::abs(x - mean), 5 * sigma);
  EXPECT_NEAR(sum(z0) / (64.0 * 64.0), mean, 1e-9);

  // Simulated: the sampled uniform dispatch takes the uniform all-to-all's time (within the
  // sampling noise of the busiest NIC), on rail-optimized and on rail-only.
  for (bool rail_only : {false, true}) {
    TestFabricSpec s;
    s.rail_only = rail_only;
    auto f = make_test_fabric(s);
    sim::SimConfig cfg;
    sim::CollectiveRequest u;
    u.op = perf::CollectiveOp::all_to_all;
    u.algorithm = perf::Algorithm::direct;
    u.bytes = 1e9;
    u.groups = sim::groups_all(f.net.cluster);
    const double t_uniform = sim::simulate_collective(f.net, u, cfg).completion_time_s;
    sim::MoeRequest req;
    req.routing = routing(Popularity::zipf, 0, 64, k, tokens);
    req.bytes_per_token = 1e9 / static_cast<double>(tokens * k);
    req.groups = u.groups;
    req.phase = sim::MoePhase::dispatch;
    const auto r = sim::simulate_moe(f.net, req, cfg);
    ASSERT_EQ(r.sim.phases.size(), 1u);
    EXPECT_EQ(r.sim.phases[0].name, "dispatch");
    EXPECT_NEAR(r.sim.completion_time_s / t_uniform, 1.0, 0.04) << rail_only;
    EXPECT_LT(r.stats.max_in_over_mean, 1.1);
  }
}

TEST(Moe, DomainLimitedRoutingReachesAtMostMDomains) {
  const auto c = cluster(128, 8);  // 16 HB domains
  const auto g = sim::groups_all(c)[0];
  for (std::int64_t m : {0, 1, 2, 4}) {
    const auto r = routing(Popularity::zipf, 1.2, 256, 8, 500, m);
    int most = 0;
    for (std::int64_t src : {0, 5, 77, 127}) {
      const auto ids = sim::route_tokens(r, g, c, src);
      ASSERT_EQ(ids.size(), 500u * 8u);
      for (std::size_t t = 0; t < 500; ++t) {
        std::set<std::int64_t> experts, domains;
        for (std::size_t j = 0; j < 8; ++j) {
          const auto e = ids[t * 8 + j];
          ASSERT_GE(e, 0);
          ASSERT_LT(e, 256);
          experts.insert(e);
          domains.insert(c.domain_of(g[static_cast<std::size_t>(sim::expert_host(e, 256, 128))]));
        }
        EXPECT_EQ(experts.size(), 8u);  // distinct experts
        if (m > 0) {
          EXPECT_LE(static_cast<std::int64_t>(domains.size()), m) << "token " << t;
        }
        most = std::max(most, static_cast<int>(domains.size()));
      }
    }
    if (m == 0) {
      EXPECT_GT(most, 4);  // without the limit tokens do reach more domains
    } else {
      EXPECT_EQ(most, m);  // and the limit is reached
    }
  }
  // Simulated: tokens reach fewer domains as M falls (the M domains are those of the token's
  // favourite experts, not its own, so the share leaving the source's domain hardly changes).
  TestFabricSpec s;
  s.gpus = 128;
  auto f = make_test_fabric(s);
  double prev = 1e9;
  for (std::int64_t m : {0, 4, 1}) {
    sim::MoeRequest req;
    req.routing = routing(Popularity::zipf, 1.2, 256, 8, 200, m);
    req.bytes_per_token = 1000;
    req.groups = sim::groups_all(f.net.cluster);
    req.phase = sim::MoePhase::dispatch;
    const auto r = sim::simulate_moe(f.net, req, sim::SimConfig{});
    EXPECT_LT(r.stats.domains_per_token, prev) << m;
    if (m > 0) {
      EXPECT_LE(r.stats.domains_per_token, static_cast<double>(m));
    }
    EXPECT_GT(r.stats.cross_domain_share, 0.8);
    prev = r.stats.domains_per_token;
  }
  EXPECT_EQ(prev, 1.0);
}

TEST(Moe, ZipfSkewConcentratesOnTheHotExpertsGpus) {
  const auto c = cluster(64, 8);
  const auto g = sim::groups_all(c)[0];
  TestFabricSpec s;
  auto f = make_test_fabric(s);
  double prev_ratio = 0, prev_time = 0;
  for (double z : {0.0, 0.8, 1.2}) {
    auto r = routing(Popularity::zipf, z, 64, 8, 1000);
    // The GPU hosting the most popular expert receives the most.
    const auto p = sim::expert_popularity(r);
    const auto hot = std::max_element(p.begin(), p.end()) - p.begin();
    const auto m = sim::moe_dispatch_bytes(r, g, c, 1);
    std::vector<double> in(64, 0);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) in[static_cast<std::size_t>(j)] += m[i * 64 + j];
    if (z > 0) {
      EXPECT_EQ(std::max_element(in.begin(), in.end()) - in.begin(), hot);
    }
    // Simulated on a full-bisection Clos: the dispatch is bound by the busiest receiver's NIC
    // (bytes from other domains; its HB link carries its own domain's share in parallel).
    sim::MoeRequest req;
    req.routing = r;
    req.bytes_per_token = 1e9 / 8000.0;
    req.groups = sim::groups_all(f.net.cluster);
    req.phase = sim::MoePhase::dispatch;
    const auto res = sim::simulate_moe(f.net, req, sim::SimConfig{});
    double bound = 0;
    for (int j = 0; j < 64; ++j) {
      double inter = 0;
      for (int i = 0; i < 64; ++i)
        if (i / 8 != j / 8) inter += m[i * 64 + j] * req.bytes_per_token;
      bound = std::max(bound, inter / s.nic_Bps);
    }
    EXPECT_GE(res.sim.completion_time_s, bound * (1 - 1e-9)) << z;
    EXPECT_LT(res.sim.completion_time_s, bound * 1.15) << z;
    EXPECT_GT(res.stats.max_in_over_mean, prev_ratio);
    EXPECT_GT(res.sim.completion_time_s, prev_time);
    prev_ratio = res.stats.max_in_over_mean;
    prev_time = res.sim.completion_time_s;
  }
  EXPECT_GT(prev_ratio, 3.0);  // Zipf 1.2 over 64 experts: the top expert gets ~20% of tokens
}

TEST(Moe, CombineIsTheDispatchReversed) {
  TestFabricSpec s;
  s.rail_only = true;
  auto f = make_test_fabric(s);
  sim::MoeRequest req;
  req.routing = routing(Popularity::zipf, 1.2, 64, 8, 1000);
  req.bytes_per_token = 1e5;
  req.groups = sim::groups_all(f.net.cluster);
  sim::SimConfig cfg;
  const auto both = sim::simulate_moe(f.net, req, cfg);
  ASSERT_EQ(both.sim.phases.size(), 2u);
  EXPECT_EQ(both.sim.phases[1].name, "combine");
  // Same bytes handed to the network in both directions (forwarded legs counted once).
  EXPECT_NEAR(both.sim.phases[0].bytes_sent / both.sim.phases[1].bytes_sent, 1.0, 1e-12);
  EXPECT_NEAR(both.sim.completion_time_s, both.sim.phases[0].time_s + both.sim.phases[1].time_s,
              1e-15);
  req.phase = sim::MoePhase::combine;
  const auto comb = sim::simulate_moe(f.net, req, cfg);
  EXPECT_DOUBLE_EQ(comb.sim.completion_time_s, both.sim.phases[1].time_s);
}

TEST(Moe, DocumentHoldsTheResultTheSettingsAndTheRouting) {
  TestFabricSpec s;
  s.rail_only = true;
  auto f = make_test_fabric(s);
  sim::MoeRequest req;
  req.routing = routing(Popularity::zipf, 1.2, 64, 4, 200, 2);
  req.bytes_per_token = 1e4;
  req.groups = sim::groups_all(f.net.cluster);
  sim::SimConfig cfg;
  cfg.hop_latency_s = 2e-6;
  const auto m = sim::simulate_moe(f.net, req, cfg);
  const Json j = sim::moe_document(m, req, "all", *f.fabric, cfg, /*efficiency=*/true);
  // The simulation as to_json writes it, then what was simulated and how.
  const Json result = sim::to_json(m.sim);
  for (const auto& [k, v] : result.items()) EXPECT_EQ(j.at(k), v) << k;
  EXPECT_EQ(j.at("collective"), "all_to_all");
  EXPECT_EQ(j.at("group"), "all");
  EXPECT_EQ(j.at("groups"), 1);
  EXPECT_EQ(j.at("design"), "rail_only");
  EXPECT_EQ(j.at("gpus"), 64);
  EXPECT_EQ(j.at("hop_latency_s"), 2e-6);
  EXPECT_EQ(j.at("efficiency"), true);
  EXPECT_EQ(j.at("moe"), sim::to_json(req, m.stats));
  EXPECT_EQ(j.at("moe").at("max_domains"), 2);
  EXPECT_EQ(j.at("moe").at("skew"), "zipf");
}

TEST(Moe, DeterministicPerSeedAndThreadCount) {
  const auto c = cluster(64, 8);
  const auto g = sim::groups_all(c)[0];
  auto r = routing(Popularity::zipf, 1.2, 128, 8, 700, 2);
  const auto a = sim::moe_dispatch_bytes(r, g, c, 1);
  std::vector<double> b;
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    b = sim::moe_dispatch_bytes(r, g, c, 1);
  }
  EXPECT_EQ(a, b);
  r.seed = 2;
  EXPECT_NE(sim::moe_dispatch_bytes(r, g, c, 1), a);
}

TEST(Moe, BadParametersNameTheirOption) {
  const auto c = cluster(64, 8);
  const auto g = sim::groups_all(c)[0];
  MoeRouting r;
  expect_input_error([&] { sim::parse_skew("zipf:-0.5", r); }, "--skew");
  expect_input_error([&] { sim::parse_skew("zipf:4.5", r); }, "--skew");
  expect_input_error([&] { sim::parse_skew("zipf:nan", r); }, "--skew");
  expect_input_error([&] { sim::parse_skew("zipf:", r); }, "--skew");
  expect_input_error([&] { sim::parse_skew("pareto:1", r); }, "--skew");
  sim::parse_skew("zipf:1.25", r);
  EXPECT_EQ(r.popularity, Popularity::zipf);
  EXPECT_EQ(r.zipf_s, 1.25);
  auto bad = [&](MoeRouting x, const std::string& field) {
    expect_input_error([&] { sim::moe_dispatch_bytes(x, g, c, 1); }, field);
  };
  bad(routing(Popularity::uniform, 0, 64, 65, 10), "--topk");
  bad(routing(Popularity::uniform, 0, 64, 0, 10), "--topk");
  bad(routing(Popularity::uniform, 0, 32, 4, 10), "--experts");  // fewer experts than GPUs
  bad(routing(Popularity::uniform, 0, 64, 4, 0), "--tokens");
  bad(routing(Popularity::uniform, 0, 64, 16, 10, 1), "--max-domains");  // 8 experts per domain
  MoeRouting pm = routing(Popularity::pair_weights, 0, 64, 8, 10);
  pm.weight_rows = 3;
  pm.weights.assign(9, 1.0);
  bad(pm, "--pair-matrix");
  MoeRouting ew = routing(Popularity::expert_weights, 0, 64, 8, 10);
  ew.weights.assign(63, 1.0);
  bad(ew, "--expert-weights");
  ew.weights.assign(64, 0.0);
  ew.weights[0] = 1;
  bad(ew, "--expert-weights");  // fewer positive weights than top-k
  expect_input_error(
      [&] { sim::moe_dispatch_bytes(routing(Popularity::uniform, 0, 64, 8, 10), g, c, -1); },
      "--bytes-per-token");
}

// transfer_path gives the paths the simulator's flows take: the permutation's completion is the
// busiest channel's transfers (by those paths) over its capacity, exactly (max-min fairness: the
// channel with the most transfers per capacity saturates first and its flows finish last).
// (On rail-only a forwarded transfer is two legs, one after the other: no such closed form.)
TEST(Moe, TransferPathsAreTheSimulatedPaths) {
  for (bool rail_only : {false}) {
    TestFabricSpec s;
    s.balanced = false;  // hashed ECMP: collisions
    s.rail_only = rail_only;
    s.per_leaf = 2;
    auto f = make_test_fabric(s);
    sim::SimConfig cfg;
    const auto g = sim::groups_all(f.net.cluster)[0];
    const std::size_t n = g.size();
    sim::AllToAllV perm{"permutation", {std::vector<double>(n * n, 0.0)}};
    std::vector<double> count(f.net.capacity_Bps.size(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = (i * 13 + 21) % n;  // a permutation of 64 (13 is coprime with 64)
      if (i == j) continue;
      perm.pair_bytes[0][i * n + j] = 1e9;
      for (auto ch : sim::transfer_path(f.net, cfg, g[i], g[j]))
        count[static_cast<std::size_t>(ch)] += 1;
    }
    double worst = 0;
    for (std::size_t c = 0; c < count.size(); ++c)
      worst = std::max(worst, count[c] * 1e9 / f.net.capacity_Bps[c]);
    const auto r = sim::simulate_alltoallv(f.net, {g}, {perm}, cfg);
    EXPECT_NEAR(r.completion_time_s / worst, 1.0, 1e-9) << rail_only;
    if (!rail_only) {
      EXPECT_GT(worst, 1e9 / s.nic_Bps * 1.5);  // hashing did collide some flows
    }
  }
}
