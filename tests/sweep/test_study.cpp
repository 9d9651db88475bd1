#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "../common/error_of.hpp"
#include "../common/sweep_fixtures.hpp"
#include "railsim/core/error.hpp"
#include "railsim/report/table.hpp"
#include "railsim/sweep/study.hpp"
#include "railsim/sweep/sweep.hpp"

namespace railsim::sweep {
namespace {

using test::error_of;

// A study's table, with access by column name.
struct Rows {
  report::Table t;
  std::size_t col(const std::string& name) const {
    for (std::size_t i = 0; i < t.columns.size(); ++i)
      if (t.columns[i].name == name) return i;
    ADD_FAILURE() << "no column " << name;
    return 0;
  }
  double num(const std::vector<report::Cell>& row, const std::string& name) const {
    const report::Cell& c = row[col(name)];
    if (const auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&c)) return *d;
    ADD_FAILURE() << name << " is missing";
    return NAN;
  }
  std::string text(const std::vector<report::Cell>& row, const std::string& name) const {
    return std::get<std::string>(row[col(name)]);
  }
  // value[(gpu, design)][x] = y
  std::map<std::pair<std::string, std::string>, std::map<double, double>> by(
      const std::string& x, const std::string& y) const {
    std::map<std::pair<std::string, std::string>, std::map<double, double>> m;
    for (const auto& row : t.rows)
      m[{text(row, "gpu"), text(row, "design")}][num(row, x)] = num(row, y);
    return m;
  }
};

Rows run(const Study& s) {
  return {sweep_table(run_sweep(s.options))};
}

// The paper's analysis spreads traffic over every path above the leaf (full bisection): its
// claims are checked under adaptive routing, which the studies take when asked.
Rows run_spread(Study s) {
  s.options.axes.routing = {"adaptive"};
  return run(s);
}

// rail_only's best plan is rail_optimized's (same time within 1e-9); ideal is never slower; the
// time never rises with `x` on any design.
void expect_paper_shape(const Rows& r, const std::string& x, bool non_increasing) {
  const auto v = r.by(x, "best_iteration_time_s");
  for (const std::string gpu : {"GH200", "H100-SXM"}) {
    const auto& ro = v.at({gpu, "rail_only"});
    const auto& rop = v.at({gpu, "rail_optimized"});
    const auto& ideal = v.at({gpu, "ideal"});
    ASSERT_EQ(ro.size(), rop.size());
    for (const auto& [k, t] : ro) {
      EXPECT_NEAR(t, rop.at(k), 1e-9 * rop.at(k)) << gpu << " " << x << "=" << k;
      EXPECT_LE(ideal.at(k), t * (1 + 1e-12)) << gpu << " " << x << "=" << k;
    }
    if (!non_increasing) continue;
    for (const auto* series : {&ro, &ideal}) {
      double prev = INFINITY;
      for (const auto& [k, t] : *series) {
        EXPECT_LE(t, prev * (1 + 1e-12)) << gpu << " " << x << "=" << k;
        prev = t;
      }
    }
  }
}

TEST(Study, NamesAndUnknownStudy) {
  EXPECT_EQ(study_names().size(), 6u);
  for (const auto& n : study_names()) EXPECT_EQ(make_study(n).name, n);
  EXPECT_EQ(error_of([] { make_study("hb_domain"); }),
            "--study: unknown study 'hb_domain'; valid: hb-domain, hb-bandwidth, nic-bandwidth, "
            "batch, cluster-size, moe-alltoall");
}

TEST(Study, HbDomainIterationTimeFallsWithKAndRailOnlyMatchesRailOptimized) {
  const Study s = make_study("hb-domain");
  const Rows r = run_spread(s);
  ASSERT_EQ(r.t.rows.size(), 2u * 6u * 3u);
  expect_paper_shape(r, "hb_domain", true);
  const auto v = r.by("hb_domain", "best_iteration_time_s");
  // The paper's two clusters (README, --routing adaptive): GH200 K=256 3.39 s, H100 K=8 4.02 s;
  // larger K helps H100.
  EXPECT_NEAR(v.at({"GH200", "rail_only"}).at(256), 3.394, 0.001);
  EXPECT_NEAR(v.at({"H100-SXM", "rail_only"}).at(8), 4.020, 0.001);
  EXPECT_NEAR(v.at({"H100-SXM", "ideal"}).at(8), 3.326, 0.001);  // one domain: 17% less time
  EXPECT_LT(v.at({"H100-SXM", "rail_only"}).at(256), 0.9 * v.at({"H100-SXM", "rail_only"}).at(8));
  // The chart: one line per design and GPU, K on the x axis in order.
  const report::LineChart c = sweep_chart(r.t, s.plot);
  ASSERT_EQ(c.series.size(), 6u);
  EXPECT_EQ(c.series[0].name, "rail_optimized, GH200");
  EXPECT_EQ(c.series[0].x, (std::vector<double>{8, 16, 32, 64, 128, 256}));
  EXPECT_EQ(c.x.log_base, 2);
  EXPECT_EQ(c.y.label, "best iteration time (s)");
  for (const auto& se : c.series)
    for (double y : se.y) EXPECT_TRUE(std::isfinite(y) && y > 0);
}

// A study is the plain sweep of its axes: the same routing (auto: the switch's default, ecmp on
// the default Ethernet switch), stated on every row, and the same rows.
TEST(Study, IsThePlainSweepOfItsAxesAndStatesItsRouting) {
  const Study s = make_study("hb-domain");
  SweepOptions plain;
  plain.axes.gpu = s.options.axes.gpu;
  plain.axes.gpus = s.options.axes.gpus;
  plain.axes.hb_domain = s.options.axes.hb_domain;
  const Rows a = run(s);
  const Rows b{sweep_table(run_sweep(plain))};
  ASSERT_EQ(a.t.rows.size(), b.t.rows.size());
  EXPECT_EQ(a.t.rows, b.t.rows);
  for (const auto& row : a.t.rows) {
    EXPECT_EQ(a.text(row, "routing"), "ecmp");
    EXPECT_EQ(a.text(row, "forwarding"), "pipelined");
  }
  EXPECT_EQ(routing_line(a.t),
            "routing ecmp, seed 0; rail-only forwarding pipelined via hb_first, "
            "8 chunks");
  // Under ECMP the verdict moves with the tiers: GH200 K=256 needs one rail tier against
  // rail-optimized's three, and fewer hashed tiers collide less.
  const auto v = a.by("hb_domain", "best_iteration_time_s");
  EXPECT_LT(v.at({"GH200", "rail_only"}).at(256), 0.97 * v.at({"GH200", "rail_optimized"}).at(256));
  // The moe-alltoall study states the paper's forwarding, two-phase.
  const Study m = make_study("moe-alltoall");
  EXPECT_EQ(m.options.network.forwarding, "two-phase");
}

TEST(Study, BandwidthAndBatchStudiesHaveThePapersShape) {
  expect_paper_shape(run_spread(make_study("hb-bandwidth")), "hb_GBps", true);
  expect_paper_shape(run_spread(make_study("nic-bandwidth")), "nic_gbps", true);
  const Rows b = run_spread(make_study("batch"));
  expect_paper_shape(b, "batch", false);
  // A larger batch takes less time per sequence (a small one pays the pipeline bubble and cannot
  // use every GPU well); from 4,096 to 16,384 the iteration grows at least threefold.
  for (const auto& [key, series] : b.by("batch", "best_iteration_time_s")) {
    double prev_per_seq = INFINITY;
    for (const auto& [batch, t] : series) {
      EXPECT_LT(t / batch, prev_per_seq) << key.first << " " << key.second << " " << batch;
      prev_per_seq = t / batch;
    }
    EXPECT_GT(series.at(16384), 3 * series.at(4096)) << key.first << " " << key.second;
  }
}

TEST(Study, ClusterSizeSavingsAreThePapers) {
  Study s = make_study("cluster-size");
  s.options.axes.catalog = {"paper-ratio"};
  const Rows r = run(s);
  ASSERT_EQ(r.t.rows.size(), 2u * 8u * 3u);
  const auto saving = r.by("gpus", "cost_saving");
  const auto power = r.by("gpus", "power_saving");
  // The abstract's 38-77% (cost) and 37-75% (power) at 32,768 GPUs: H100 K=8 and GH200 K=256.
  EXPECT_NEAR(saving.at({"H100-SXM", "rail_only"}).at(32768), 0.385, 0.001);
  EXPECT_NEAR(saving.at({"GH200", "rail_only"}).at(32768), 0.769, 0.001);
  EXPECT_NEAR(power.at({"H100-SXM", "rail_only"}).at(32768), 0.375, 0.001);
  EXPECT_NEAR(power.at({"GH200", "rail_only"}).at(32768), 0.750, 0.001);
  // Cost grows with the cluster; rail-only costs no more from 16,384 GPUs on, but a GH200
  // cluster of 1,024 GPUs needs a one-tier rail switch for each of its 256 rails: more.
  const auto cost = r.by("gpus", "cost_usd");
  for (const std::string gpu : {"GH200", "H100-SXM"}) {
    double prev = 0;
    for (const auto& [n, c] : cost.at({gpu, "rail_optimized"})) {
      EXPECT_GT(c, prev) << gpu << " " << n;
      if (n >= 16384) {
        EXPECT_LE(cost.at({gpu, "rail_only"}).at(n), c) << gpu << " " << n;
      }
      prev = c;
    }
  }
  EXPECT_GT(cost.at({"GH200", "rail_only"}).at(1024),
            cost.at({"GH200", "rail_optimized"}).at(1024));
  const report::LineChart c = sweep_chart(r.t, s.plot);
  EXPECT_EQ(c.series.size(), 4u);  // ideal left out
  EXPECT_EQ(c.y.log_base, 10);
}

TEST(Study, MoeAllToAllOverheadIsThePapersRange) {
  const Study s = make_study("moe-alltoall");
  const Rows r = run(s);
  std::map<double, std::map<double, double>> pct;  // [hb_GBps][K]
  for (const auto& row : r.t.rows) {
    if (r.text(row, "design") == "rail_optimized") {
      EXPECT_EQ(r.num(row, "alltoall_vs_rail_optimized_pct"), 0.0);
    }
    if (r.text(row, "design") != "rail_only") continue;
    pct[r.num(row, "hb_GBps")][r.num(row, "hb_domain")] =
        r.num(row, "alltoall_vs_rail_optimized_pct");
  }
  ASSERT_EQ(pct.size(), 2u);
  // Two-phase forwarding: (K-1)/K x B_nic/B_hb x N/(N-K) (docs/sim.md), 9.7% at K=8 to 11.1% at
  // K=256 with HB 450 GB/s; half of it at 900 GB/s.
  for (const auto& [k, p] : pct.at(450)) {
    const double closed = 100 * (k - 1) / k * 50.0 / 450.0 * 32768 / (32768 - k);
    EXPECT_NEAR(p, closed, 0.2) << "K=" << k;
    EXPECT_GE(p, 8.2 + 1.0) << "K=" << k;
    EXPECT_LE(p, 11.2 + 0.05) << "K=" << k;
    EXPECT_NEAR(pct.at(900).at(k), p / 2, 0.05) << "K=" << k;
  }
  double prev = 0;
  for (const auto& [k, p] : pct.at(450)) {
    EXPECT_GE(p, prev - 1e-9) << "K=" << k;
    prev = p;
  }
  const report::LineChart c = sweep_chart(r.t, s.plot);
  ASSERT_EQ(c.series.size(), 2u);
  EXPECT_EQ(c.series[0].name, "rail_only, HB 450 GB/s");
}

TEST(Study, PlotColumnsAreCheckedAgainstTheOptions) {
  const Study s = make_study("hb-domain");
  SweepOptions o = s.options;
  EXPECT_EQ(resolve_plot(&s, "", "", o).y, "best_iteration_time_s");
  EXPECT_EQ(resolve_plot(&s, "--gpus", "cost_usd", o).x, "gpus");
  EXPECT_EQ(column_of("--hb-GBps"), "hb_GBps");
  EXPECT_EQ(column_of("nics-per-gpu"), "nics_per_gpu");
  EXPECT_EQ(column_of("cost_usd"), "cost_usd");
  o.perf = false;
  EXPECT_EQ(error_of([&] { resolve_plot(&s, "", "", o); }),
            "--no-perf: column 'best_iteration_time_s' needs the plan search (drop --no-perf)");
  EXPECT_EQ(error_of([&] { resolve_plot(nullptr, "gpus", "", o); }).rfind("--plot: ", 0), 0u);
  EXPECT_EQ(
      error_of([&] {
        resolve_plot(nullptr, "gpus", "design", o);
      }).rfind("--plot-y: column 'design' is not numeric; numeric columns: gpus, hb_domain", 0),
      0u);
  EXPECT_EQ(error_of([&] {
              resolve_plot(nullptr, "gpus", "speed", o);
            }).rfind("--plot-y: no column 'speed'", 0),
            0u);
  EXPECT_EQ(error_of([&] { resolve_plot(nullptr, "gpus", "alltoall_time_s", o); }),
            "--plot-y: column 'alltoall_time_s' needs --alltoall BYTES");
}

TEST(Study, PlainSweepChartSeriesAreTheDesignAndTheOtherVaryingInputs) {
  SweepOptions o = test::design_sweep({1024, 2048});
  o.axes.hb_domain = {8, 16};
  const report::Table t = sweep_table(run_sweep(o));
  const StudyPlot p = resolve_plot(nullptr, "--gpus", "cost_usd", o);
  const report::LineChart c = sweep_chart(t, p);
  ASSERT_EQ(c.series.size(), 6u);
  EXPECT_EQ(c.series[0].name, "rail_optimized, HB domain 8");
  EXPECT_EQ(c.series[0].x, (std::vector<double>{1024, 2048}));
  EXPECT_EQ(c.title, "cost vs GPUs");
}

}  // namespace
}  // namespace railsim::sweep
