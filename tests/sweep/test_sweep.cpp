#include <gtest/gtest.h>

#include <string>

#include "../common/error_of.hpp"
#include "../common/sweep_fixtures.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/cost/catalog.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/report/table.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/stack.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/sweep/sweep.hpp"

namespace railsim::sweep {
namespace {

using test::error_of;

TEST(Sweep, CartesianProductInOrderWithTheLastInputFastest) {
  SweepOptions o;
  o.axes.gpus = {1024, 2048};
  o.axes.hb_domain = {8, 16, 32};
  const std::vector<SweepPoint> p = expand_points(o);
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0].gpus, 1024);
  EXPECT_EQ(*p[0].hb_domain, 8);
  EXPECT_EQ(*p[1].hb_domain, 16);
  EXPECT_EQ(*p[2].hb_domain, 32);
  EXPECT_EQ(p[3].gpus, 2048);
  EXPECT_EQ(*p[3].hb_domain, 8);
  EXPECT_EQ(p[5].model, "GPT-1T");
  EXPECT_FALSE(p[5].seq.has_value());
}

TEST(Sweep, ZipTakesTheListsTogether) {
  SweepOptions o;
  o.zip = true;
  o.axes.gpus = {1024, 2048, 4096};
  o.axes.hb_domain = {8, 16, 32};
  o.axes.model = {"GPT-1T"};
  const std::vector<SweepPoint> p = expand_points(o);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[2].gpus, 4096);
  EXPECT_EQ(*p[2].hb_domain, 32);
  o.axes.batch = {1, 2};
  EXPECT_EQ(error_of([&] { expand_points(o); }),
            "--batch: --zip takes the lists together: --batch has 2 values, --gpus has 3; give "
            "them the same length (or one value)");
}

TEST(Sweep, MorePointsThanTheLimitIsRefusedWithTheCount) {
  SweepOptions o;
  o.axes.gpus = {1024, 2048, 4096};
  o.axes.hb_domain = {8, 16};
  o.max_points = 5;
  EXPECT_EQ(error_of([&] { expand_points(o); }),
            "--max-points: the sweep has 6 points (3 --gpus x 2 --hb-domain), more than 5");
}

// A sweep with no valid point reports its first point's reason, field kept, marked as such.
TEST(Sweep, NoValidPointIsTheFirstPointsErrorMarked) {
  SweepOptions o = test::design_sweep({1001, 1003});  // no HB domain of 8 divides either
  const SweepResult r = run_sweep(o);
  ASSERT_EQ(r.valid_points(), 0);
  const InputError& first = *r.points.front().invalid;
  const InputError e = no_valid_point(first);
  EXPECT_EQ(e.field(), first.field());
  EXPECT_EQ(std::string(e.what()),
            std::string(first.what()) + " (every point of the sweep is invalid)");
}

// 0 GPUs asked for is an invalid point, not the default cluster of 32,768.
TEST(Sweep, ZeroGpusIsInvalidNotTheDefault) {
  SweepOptions o = test::design_sweep({0, 1024});
  const SweepResult r = run_sweep(o);
  ASSERT_EQ(r.points.size(), 2u);
  ASSERT_TRUE(r.points[0].invalid.has_value());
  EXPECT_EQ(r.points[0].invalid->field(), "--gpus");
  EXPECT_EQ(r.points[0].gpus, 0);
  EXPECT_FALSE(r.points[1].invalid.has_value());
  o.axes.gpus.clear();  // no value: the default
  EXPECT_EQ(run_sweep(o).points[0].gpus, 32768);
}

TEST(Sweep, RowsAreTheDesignsOfEachPointAndAnInvalidPointSaysWhy) {
  SweepOptions o = test::design_sweep({1001, 1024});
  const SweepResult r = run_sweep(o);
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_EQ(r.valid_points(), 1);
  ASSERT_TRUE(r.points[0].invalid.has_value());
  EXPECT_EQ(r.points[0].invalid->field(), "--hb-domain");

  spec::ClusterOptions co;
  co.gpus = 1024;
  const spec::Cluster c = spec::make_cluster(co);
  const auto designs = cost::compare_designs(c, spec::make_network_design(spec::NetworkOptions{}),
                                             cost::load_catalog(cost::kDefaultCatalog));
  const report::Table t = sweep_table(r);
  ASSERT_EQ(t.rows.size(), 6u);
  auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < t.columns.size(); ++i)
      if (t.columns[i].name == name) return i;
    ADD_FAILURE() << name;
    return std::size_t{0};
  };
  EXPECT_EQ(t.rows[0][col("gpus")], report::Cell(std::int64_t{1001}));
  EXPECT_EQ(t.rows[0][col("cost_usd")], report::Cell(report::Missing{}));
  EXPECT_NE(std::get<std::string>(t.rows[0][col("reason")]).find("--hb-domain"), std::string::npos);
  for (std::size_t d = 0; d < 3; ++d) {
    const auto& row = t.rows[3 + d];
    EXPECT_EQ(row[col("design")],
              report::Cell(std::string(spec::to_string(designs[d].bom.design))));
    EXPECT_EQ(row[col("cost_usd")], report::Cell(designs[d].cost.cost_usd()));
    EXPECT_EQ(row[col("power_w")], report::Cell(designs[d].cost.power_w()));
    EXPECT_EQ(row[col("cost_saving")], report::Cell(designs[d].cost_saving));
    EXPECT_EQ(row[col("switches")], report::Cell(designs[d].bom.switches));
    EXPECT_EQ(row[col("reason")], report::Cell(report::Missing{}));
  }
  for (const char* perf : {"best_iteration_time_s", "best_plan"})
    for (const auto& c2 : t.columns) EXPECT_NE(c2.name, perf);
}

// What `railsim compare` shows of a cluster is what a sweep computes of the same point.
TEST(Sweep, PlanDesignsAndPlanCellsAreAPointsPlanColumns) {
  SweepOptions o;
  o.axes.gpus = {64};
  o.axes.hb_domain = {8};
  o.axes.model = {"Llama-3-8B"};
  o.axes.batch = {64};
  o.stack = spec::load_stack(std::string(spec::kDefaultStack));
  const SweepResult r = run_sweep(o);
  ASSERT_EQ(r.points.size(), 1u);
  const PointResult& p = r.points[0];
  spec::ClusterOptions co;
  co.gpus = 64;
  co.hb_domain = 8;
  const spec::Cluster c = spec::make_cluster(co);
  const spec::Model m = spec::load_model("Llama-3-8B");
  const spec::Training tr = spec::make_training(64, m.seq_len, o.stack, {}, {});
  const std::vector<DesignPlan> plans = plan_designs(m, tr, c, p.network, p.designs);
  ASSERT_EQ(plans.size(), 3u);
  const std::vector<PlanCells> cells = plan_cells(p.designs, plans);
  const report::Table t = sweep_table(r);
  std::size_t first = 0;
  while (t.columns[first].name != "best_iteration_time_s") ++first;
  for (std::size_t d = 0; d < 3; ++d) {
    ASSERT_TRUE(plans[d].best.has_value());
    EXPECT_FALSE(plans[d].error.has_value());
    EXPECT_EQ(plans[d].best->time.iteration_time_s, p.plans[d].best->time.iteration_time_s);
    ASSERT_EQ(cells[d].cells.size(), 5u);
    // The time, its error band (the one estimate and plan print for it), then the rest.
    EXPECT_EQ(cells[d].cells[0], t.rows[d][first]);
    EXPECT_EQ(t.columns[first + 1].name, "error_band");
    EXPECT_EQ(t.rows[d][first + 1], report::Cell(p.error_band));
    for (std::size_t k = 1; k < 5; ++k) EXPECT_EQ(cells[d].cells[k], t.rows[d][first + 1 + k]);
    EXPECT_EQ(cells[d].reason, report::Cell(report::Missing{}));
  }
  EXPECT_EQ(cells[0].cells[1], report::Cell(0.0));  // rail_optimized against itself
  EXPECT_DOUBLE_EQ(p.error_band,
                   perf::error_band("H100-SXM", std::string(spec::kDefaultStack)).fraction);
  EXPECT_GT(p.error_band, 0.0);
}

// A search that fails (not a search that finds nothing) keeps its error: compare stops on it, a
// sweep shows it as the design's reason.
TEST(Sweep, PlanDesignsKeepsTheErrorOfAFailedSearch) {
  spec::ClusterOptions co;
  co.gpu = "A100-SXM-80GB";
  co.gpus = 64;
  co.hb_domain = 8;
  const spec::Cluster c = spec::make_cluster(co);
  const spec::NetworkDesign base = spec::make_network_design(spec::NetworkOptions{});
  const auto designs = cost::compare_designs(c, base, cost::load_catalog(cost::kDefaultCatalog));
  const spec::Model m = spec::load_model("Llama-3-8B");
  const spec::Training tr = spec::make_training(
      64, m.seq_len, spec::load_stack(std::string(spec::kDefaultStack)), spec::Dtype::fp8, {});
  const std::vector<DesignPlan> plans = plan_designs(m, tr, c, base, designs);
  ASSERT_EQ(plans.size(), 3u);
  for (const DesignPlan& dp : plans) {
    EXPECT_FALSE(dp.best.has_value());
    ASSERT_TRUE(dp.error.has_value());
    EXPECT_EQ(dp.error->field(), "--dtype");
    EXPECT_EQ(dp.no_plan_reason, dp.error->what());
  }
  const std::vector<PlanCells> cells = plan_cells(designs, plans);
  EXPECT_EQ(cells[1].cells, std::vector<report::Cell>(5, report::Missing{}));
  EXPECT_EQ(cells[1].reason, report::Cell(plans[1].no_plan_reason));
}

// Planes as a swept input: each point's designs are those `design` builds with the planes (the
// NIC split in a port per plane), and the column says which.
TEST(Sweep, PlanesAreAnAxisPricedAsDesignPricesThem) {
  SweepOptions o;
  o.perf = false;
  o.axes.gpu = {"B300"};
  o.axes.gpus = {32768};
  o.axes.sw = {"ETH-102.4T-128x800G"};
  o.axes.planes = {1, 4};
  const SweepResult r = run_sweep(o);
  ASSERT_EQ(r.points.size(), 2u);
  const spec::Cluster c = spec::make_cluster(spec::load_gpu("B300"), 32768, 8, 800, 900, 1);
  for (std::size_t i = 0; i < 2; ++i) {
    const std::int64_t planes = i == 0 ? 1 : 4;
    EXPECT_EQ(r.points[i].point.planes, planes);
    spec::NetworkDesign d = spec::make_network_design(spec::DesignKind::rail_optimized,
                                                      spec::load_switch("ETH-102.4T-128x800G"));
    d.planes = planes;
    d.nic_ports = planes;
    const auto designs = cost::compare_designs(c, d, cost::load_catalog(cost::kDefaultCatalog));
    ASSERT_EQ(r.points[i].designs.size(), designs.size());
    for (std::size_t k = 0; k < designs.size(); ++k)
      EXPECT_EQ(r.points[i].designs[k].bom.switches, designs[k].bom.switches);
  }
  // One 800G plane: 3 tiers; four 200G planes: 2.
  EXPECT_EQ(r.points[0].designs[0].bom.tiers, 3);
  EXPECT_EQ(r.points[1].designs[0].bom.tiers, 2);
  const report::Table t = sweep_table(r);
  std::size_t planes_col = t.columns.size();
  for (std::size_t k = 0; k < t.columns.size(); ++k)
    if (t.columns[k].name == "planes") planes_col = k;
  ASSERT_LT(planes_col, t.columns.size());
  EXPECT_EQ(t.rows[3][planes_col], report::Cell(std::int64_t{4}));
  // A plane count that does not divide the ports of a GPU is that point's error.
  o.axes.planes = {3};
  o.axes.nics_per_gpu = {2};
  const SweepResult bad = run_sweep(o);
  ASSERT_TRUE(bad.points[0].invalid.has_value());
  EXPECT_EQ(bad.points[0].invalid->field(), "--planes");
}

TEST(Sweep, UnknownPresetIsAnErrorBeforeAnyPoint) {
  SweepOptions o;
  o.axes.model = {"GPT-1T", "no-such-model"};
  EXPECT_NE(error_of([&] { run_sweep(o); }).rfind("--model: ", 0), std::string::npos);
}

TEST(Sweep, SameOutputForAnyThreadCount) {
  SweepOptions o;
  o.axes.gpus = {512, 1024, 8192};
  o.axes.model = {"GPT-1T", "MoE-1.2T"};
  o.axes.batch = {4097, 2048};
  o.threads = 1;
  const std::string one = report::to_csv(sweep_table(run_sweep(o)));
  o.threads = 2;
  const std::string two = report::to_csv(sweep_table(run_sweep(o)));
  EXPECT_EQ(one, two);
  EXPECT_NE(one.find("no valid strategy"), std::string::npos);  // a batch of 4097 sequences
}

TEST(Sweep, StopsWhenCancelled) {
  SweepOptions o = test::design_sweep({1024, 2048});
  request_cancel();
  EXPECT_THROW((void)run_sweep(o), Cancelled);
  reset_cancel();
  EXPECT_EQ(run_sweep(o).points.size(), 2u);
}

}  // namespace
}  // namespace railsim::sweep
