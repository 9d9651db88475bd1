// railsim validate's tables (perf/validation.hpp) and the error bands of estimate and plan.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/stack.hpp"
#include "railsim/spec/switch.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {

// The table of `id` among `tables`, or null.
const ValidationTable* table_named(const std::vector<ValidationTable>& tables,
                                   std::string_view id) {
  const auto it = std::find_if(tables.begin(), tables.end(),
                               [id](const ValidationTable& t) { return t.id == id; });
  return it == tables.end() ? nullptr : &*it;
}

// The points of table `id` by their labels; empty when the table is missing.
std::map<std::string, const ValidationPoint*> points_by_label(
    const std::vector<ValidationTable>& tables, std::string_view id) {
  std::map<std::string, const ValidationPoint*> by;
  if (const ValidationTable* t = table_named(tables, id))
    for (const auto& p : t->points) by[p.label] = &p;
  return by;
}

// Whether every run of `by` (`runs` of them) has railsim's figure and GEMMs in FP8 or narrower,
// as every MLPerf submission's do; the first that does not, named.
testing::AssertionResult all_timed_in_low_precision(
    const std::map<std::string, const ValidationPoint*>& by, std::size_t runs) {
  if (by.size() != runs) return testing::AssertionFailure() << by.size() << " runs, not " << runs;
  for (const auto& [label, p] : by) {
    if (!(p->railsim > 0)) return testing::AssertionFailure() << label << ": " << p->note;
    if (!p->low_precision) return testing::AssertionFailure() << label << " in BF16";
  }
  return testing::AssertionSuccess();
}

// Writes to `path` a table of iteration times as `railsim validate --table` reads it: the table
// block with `table_extra` (its further fields, each led by a comma), then `rest` (its "common"
// and "rows").
void write_time_table(const std::string& path, const std::string& table_extra,
                      const std::string& rest) {
  std::ofstream(path) << R"({"table": {"id": "own", "title": "Own", "metric": "iteration_time_s",
    "max_tolerance": 0.1, "mean_tolerance": 0.05)"
                      << table_extra << "}, " << rest << "}";
}

// The one point of the single-run table `id`, or null when the table is missing or holds another
// number of runs.
const ValidationPoint* single_point(const std::vector<ValidationTable>& tables,
                                    std::string_view id) {
  const ValidationTable* t = table_named(tables, id);
  return t != nullptr && t->points.size() == 1 ? &t->points[0] : nullptr;
}

// The fabric validate times its runs on: InfiniBand's rail-optimized, non-blocking Clos (QM9700)
// under adaptive routing.
spec::NetworkDesign validate_fabric() {
  spec::NetworkDesign ib =
      spec::make_network_design(spec::DesignKind::rail_optimized, spec::load_switch("QM9700"));
  ib.routing = spec::Routing::adaptive;
  return ib;
}

// The MFU railsim's count of model FLOPs gives row `i` of the validation data `file` at its
// published iteration time, against `peak_flops` per GPU: the check that a transcribed row's
// time, batch and model agree with the MFU its source prints beside them.
double implied_mfu(const std::string& file, std::size_t i, double peak_flops) {
  const Json d = spec::load_preset_or_file("validation", file, "test");
  const Json& row = d["rows"][i];
  const auto value = [&](const char* key) -> const Json& {
    return row.contains(key) ? row[key] : d["common"][key];
  };
  const std::int64_t gpus = value("gpus").get<std::int64_t>();
  const spec::GpuSpec g = spec::load_gpu(value("gpu").get<std::string>());
  const spec::Cluster c = spec::make_cluster(g, gpus, 8, 400, g.hb_bw_Bps / 1e9, 1);
  const Model m = load_model(value("model").get<std::string>());
  const Training tr =
      make_training(value("global_batch").get<std::int64_t>(), value("seq_len").get<std::int64_t>(),
                    load_stack(value("stack").get<std::string>()));
  const Strategy s{.tp = value("tp").get<std::int64_t>(),
                   .pp = value("pp").get<std::int64_t>(),
                   .dp = value("dp").get<std::int64_t>()};
  return estimate(m, tr, s, c, validate_fabric()).model_flops /
         (value("iteration_time_s").get<double>() * static_cast<double>(gpus) * peak_flops);
}

}  // namespace

TEST(ValidationTables, EveryDocumentedTableHoldsItsTolerance) {
  const auto tables = validation_tables();
  ASSERT_GE(tables.size(), 20u);
  // The six tables of code are enforced; the tables written as data (hold-outs) are not.
  for (std::size_t i = 0; i < tables.size(); ++i) EXPECT_EQ(tables[i].enforced, i < 6) << i;
  EXPECT_EQ(tables[0].points.size(), 8u);   // Korthikanti et al. Table 5
  EXPECT_EQ(tables[1].points.size(), 2u);   // 530B with DP 8
  EXPECT_EQ(tables[2].points.size(), 10u);  // Narayanan et al. Table 1
  EXPECT_EQ(tables[3].points.size(), 2u);   // Llama 3 405B
  EXPECT_EQ(tables[4].points.size(), 5u);   // NeMo on DGX-H100
  EXPECT_EQ(tables[5].points.size(), 2u);   // Megatron-Core GPT-3 175B strong scaling
  EXPECT_TRUE(broken(tables).empty());
  // The project's bar: mean |error| under 5% and max |error| under 10% on every table, except
  // Narayanan et al.'s (6.3% and 10.0%: the 2021 A100 stack's model is 8-10% optimistic for the
  // large runs on InfiniBand's spread routing; docs/validation.md), held at 7% and 11%, and the
  // two NVIDIA H100 tables whose fit runs one GEMM fraction for both precisions cannot both meet
  // (NeMo's FP8 Llama 3, 8.5% and 11.3%, held at 9% and 12%; Megatron-Core's GPT-3 175B, 7.5%
  // and 7.9%, held at 8% and 10%).
  const std::map<std::string, std::pair<double, double>> wider = {
      {"narayanan-2021", {0.11, 0.07}},
      {"nemo-h100-2025", {0.12, 0.09}},
      {"megatron-core-h100-2024", {0.10, 0.08}}};
  for (const auto& t : tables) {
    if (!t.enforced) continue;
    const auto w = wider.find(t.id);
    const double max_bar = w != wider.end() ? w->second.first : 0.10;
    const double mean_bar = w != wider.end() ? w->second.second : 0.05;
    EXPECT_LT(t.max_abs_error(), max_bar) << t.id;
    EXPECT_LE(t.max_tolerance, max_bar) << t.id;
    EXPECT_LT(t.mean_abs_error(), mean_bar) << t.id;
    EXPECT_GT(t.mean_tolerance, 0.0) << t.id;  // every table states its mean bar
    EXPECT_LE(t.mean_tolerance, mean_bar) << t.id;
  }
  // docs/validation.md's summaries.
  EXPECT_NEAR(tables[0].max_abs_error(), 0.026, 0.001);
  EXPECT_NEAR(tables[0].mean_abs_error(), 0.019, 0.001);
  EXPECT_NEAR(tables[2].max_abs_error(), 0.100, 0.001);
  EXPECT_NEAR(tables[2].mean_abs_error(), 0.063, 0.001);
  // The GEMM fraction (0.70 of each microbenchmark) minimises the worst error of H100's three fit
  // runs: Llama 3 405B on 8,192 GPUs (Meta's stack), Megatron-Core's GPT-3 175B on 96 and NeMo's
  // Llama 3 8B FP8 (25.11).
  EXPECT_NEAR(tables[3].points[0].error(), 0.007, 0.001);   // fit (v free, Meta's stack)
  EXPECT_NEAR(tables[5].points[0].error(), 0.071, 0.001);   // fit
  EXPECT_NEAR(tables[3].points[1].error(), 0.010, 0.001);   // held out
  EXPECT_NEAR(tables[4].points[3].error(), -0.066, 0.001);  // the fit point (8B, 25.11)
  // 70B with TP and PP overlap and the output layer in bf16, at the published CP 1.
  EXPECT_NEAR(tables[4].points[0].error(), -0.103, 0.001);
  // Megatron-Core at 4,608 GPUs on InfiniBand's adaptive routing, held out; the fall in MFU from
  // 96 to 4,608 GPUs (47% to 42%, 5 points) within 2 points.
  EXPECT_NEAR(tables[5].points[1].error(), 0.079, 0.001);
  EXPECT_NEAR(tables[5].points[0].railsim - tables[5].points[1].railsim, 0.47 - 0.42, 0.02);
  for (const auto& t : tables)
    for (const auto& p : t.points) EXPECT_TRUE(std::isfinite(p.error())) << t.id << " " << p.label;
}

// The GEMM fraction is what its rule gives on the frozen fit runs (docs/validation.md): the
// hundredth e whose fractions, e of H100's bf16 and fp8 microbenchmarks to the hundredth,
// minimise the worst |error| of Llama 3 405B on 8,192 GPUs, GPT-3 175B on 96 and NeMo's Llama 3
// 8B 25.11. A change to the model that moves the fit runs must refit it by the same rule.
TEST(ValidationTables, GemmFractionIsItsRulesMinimumOnTheFitRuns) {
  const spec::GpuSpec h = spec::load_gpu("H100-SXM");
  auto worst = [&](double e) {
    spec::GpuSpec g = h;
    g.eff.gemm_max = spec::gemm_fraction_of_bench(h.eff.gemm_bench_bf16, e);
    g.eff.gemm_max_fp8 = spec::gemm_fraction_of_bench(h.eff.gemm_bench_fp8, e);
    const auto tables = validation_tables({g});
    // tables[3]: Llama 3 405B, [4]: NeMo on DGX-H100, [5]: Megatron-Core GPT-3 175B.
    EXPECT_TRUE(tables[3].points[0].fit && tables[4].points[3].fit && tables[5].points[0].fit);
    return std::max({std::abs(tables[3].points[0].error()), std::abs(tables[4].points[3].error()),
                     std::abs(tables[5].points[0].error())});
  };
  const double e = spec::kGemmBenchFraction;
  const double at = worst(e);
  for (const double step : {-0.01, 0.01}) EXPECT_LT(at, worst(e + step)) << "e " << e + step;
  EXPECT_DOUBLE_EQ(e, 0.70);
  EXPECT_NEAR(at, 0.071, 0.001);
  EXPECT_DOUBLE_EQ(h.eff.gemm_max, 0.56);
  EXPECT_DOUBLE_EQ(h.eff.gemm_max_fp8, 0.50);
}

// The hold-outs written as data: every run has railsim's figure or the reason it has none, and
// they span the GPUs and software stacks the bands speak for.
TEST(ValidationTables, HoldOutsAreReportedAsTheyFall) {
  const auto tables = validation_tables();
  std::set<std::string> gpus, stacks;
  int runs = 0, figures = 0;
  for (const auto& t : tables) {
    if (t.enforced) continue;
    EXPECT_TRUE(t.held_out) << t.id;
    EXPECT_LE(t.max_tolerance, 0.10) << t.id;  // the project's bar, whatever the table's error
    EXPECT_LE(t.mean_tolerance, 0.05) << t.id;
    for (const auto& p : t.points) {
      ++runs;
      EXPECT_FALSE(p.fit) << p.label;
      EXPECT_GT(p.measured, 0) << p.label;
      if (p.railsim > 0) {
        ++figures;
        EXPECT_TRUE(std::isfinite(p.error())) << p.label;
        // The strategy railsim timed, the row's published degrees in it.
        EXPECT_NE(p.plan.find("micro-batch"), std::string::npos) << p.label << ": " << p.plan;
        gpus.insert(p.gpu);
        stacks.insert(p.stack);
      } else {
        EXPECT_FALSE(p.note.empty()) << p.label;  // why railsim has no figure
      }
    }
  }
  EXPECT_GE(runs, 150);
  EXPECT_GE(figures, 140);
  EXPECT_GE(gpus.size(), 5u);
  EXPECT_GE(stacks.size(), 4u);
  // A missed bar of a hold-out table does not fail validate; a broken enforced one does.
  EXPECT_TRUE(broken(tables).empty());
}

TEST(ValidationTables, HoldOutSummaryAndBiasAreTheRunsTakenTogether) {
  auto tables = validation_tables();
  // By hand: every point outside the fit set, dense and mixture-of-experts apart.
  std::vector<double> all, dense, moe;
  for (const auto& t : tables)
    for (const auto& p : t.points)
      if (!p.fit && p.railsim > 0) {
        all.push_back(std::fabs(p.error()));
        (p.moe ? moe : dense).push_back(std::fabs(p.error()));
      }
  const auto check = [](std::vector<double> e, const HoldOutSummary& h) {
    ASSERT_EQ(h.runs, static_cast<int>(e.size()));
    ASSERT_FALSE(e.empty());
    EXPECT_EQ(h.without_figure, 0);
    std::sort(e.begin(), e.end());
    double sum = 0;
    for (double x : e) sum += x;
    EXPECT_NEAR(h.mean_abs_error, sum / static_cast<double>(e.size()), 1e-12);
    const std::size_t n = e.size();
    EXPECT_NEAR(h.median_abs_error, n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2, 1e-12);
    const auto within = [&](double bar) {
      return static_cast<double>(
                 std::count_if(e.begin(), e.end(), [&](double x) { return x <= bar; })) /
             static_cast<double>(n);
    };
    EXPECT_DOUBLE_EQ(h.within_10, within(0.10));
    EXPECT_DOUBLE_EQ(h.within_5, within(0.05));
    EXPECT_LE(h.within_5, h.within_10);
  };
  check(all, summarize_hold_outs(tables));
  check(dense, summarize_hold_outs(tables, false));
  check(moe, summarize_hold_outs(tables, true));
  EXPECT_EQ(summarize_hold_outs(tables, false).runs + summarize_hold_outs(tables, true).runs,
            summarize_hold_outs(tables).runs);
  // A run railsim cannot plan is counted apart, not as an error of 0.
  auto& lost = tables.back().points.front();
  const bool lost_moe = lost.moe;
  lost.railsim = 0;
  EXPECT_EQ(summarize_hold_outs(tables).without_figure, 1);
  EXPECT_EQ(summarize_hold_outs(tables).runs, static_cast<int>(all.size()) - 1);
  EXPECT_EQ(summarize_hold_outs(tables, !lost_moe).without_figure, 0);

  // The bias is the mean signed error, read by the quantity: Megatron-DeepSpeed's MT-NLG times
  // come out short (railsim faster), B200's rates high (railsim faster too), Meta's Llama 3
  // TFLOP/s above measured.
  for (const auto& t : validation_tables()) {
    double s = 0;
    int n = 0;
    for (const auto& p : t.points)
      if (p.railsim > 0) {
        s += p.error();
        ++n;
      }
    EXPECT_NEAR(t.bias(), s / n, 1e-12) << t.id;
    EXPECT_LE(std::fabs(t.bias()), t.mean_abs_error() + 1e-12) << t.id;
    if (t.id == "megatron-deepspeed-mtnlg-530b-a100") {
      EXPECT_TRUE(t.time_metric());
      EXPECT_LT(t.bias(), -0.2);
      EXPECT_TRUE(t.faster_on_average());
    }
    if (t.id == "megatron-bridge-b200") {
      EXPECT_FALSE(t.time_metric());
      EXPECT_GT(t.bias(), 0.05);
      EXPECT_TRUE(t.faster_on_average());
    }
    if (t.id == "korthikanti-2022-time") {  // a time table, railsim a little slow on average
      EXPECT_TRUE(t.time_metric());
      EXPECT_EQ(t.faster_on_average(), t.bias() < 0);
    }
  }
}

TEST(ValidationTables, ABrokenToleranceIsReported) {
  auto tables = validation_tables();
  tables[2].max_tolerance = 0.05;  // Narayanan's worst run is 10.0% off
  const auto bad = broken(tables);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->id, "narayanan-2021");
  EXPECT_NE(to_text(tables).find("TOLERANCE BROKEN"), std::string::npos);
  const Json j = to_json(tables);
  EXPECT_FALSE(j["all_within_tolerance"].get<bool>());
  // Each point names the strategy it was timed with (Narayanan's: the row's tp, pp and dp pinned,
  // full recompute, the interleaving railsim's choice).
  const Json& first = j["tables"][2]["points"][0];
  EXPECT_EQ(first["plan"].get<std::string>().rfind("tp 1 pp 1 dp 32 ep 1,", 0), 0u) << first;
  EXPECT_NE(first["plan"].get<std::string>().find("recompute full"), std::string::npos);
  tables[2].max_tolerance = 0.11;
  tables[2].mean_tolerance = 0.02;  // its mean is 6.3%
  EXPECT_EQ(broken(tables).size(), 1u);
}

TEST(ValidationTables, JsonPointsCarryWhatRecomputesTheBands) {
  // validate --json alone reproduces the bands: each point's class (models, precision) and the
  // evidence the other tables give its GPU and stack, beside fit and error. The band of runs
  // whose GPU and stack were measured, per class: the nearest-rank 80th percentile of |error|
  // over the hold-outs of that class at that level.
  const auto tables = validation_tables();
  const Json j = to_json(tables);
  const Json& bands = j["error_bands"];
  ASSERT_EQ(bands.size(), 12u);
  int classes = 0;
  for (const Json& b : bands) {
    if (b["evidence"].get<std::string>() != "GPU and stack measured") continue;
    std::vector<double> errs;
    for (const Json& t : j["tables"])
      for (const Json& p : t["points"]) {
        ASSERT_TRUE(p["models"] == "dense" || p["models"] == "moe") << p;
        ASSERT_TRUE(p["precision"] == "bf16" || p["precision"] == "fp8") << p;
        if (p["fit"].get<bool>() || p["error"].is_null() || p["models"] != b["models"] ||
            p["precision"] != b["precision"] || p["evidence"] != b["evidence"])
          continue;
        errs.push_back(std::fabs(p["error"].get<double>()));
      }
    ASSERT_GE(errs.size(), static_cast<std::size_t>(kMinBandRuns)) << b;
    std::sort(errs.begin(), errs.end());
    const auto rank = static_cast<std::size_t>(
        std::ceil(kBandCoverage * static_cast<double>(errs.size()) - 1e-9));
    EXPECT_DOUBLE_EQ(errs[rank - 1], b["fraction"].get<double>()) << b;
    EXPECT_EQ(static_cast<int>(errs.size()), b["hold_out_runs"].get<int>()) << b;
    ++classes;
  }
  EXPECT_EQ(classes, 4);
  // The evidence is the other tables': Narayanan et al.'s runs are the only ones of A100 on
  // megatron-lm-2021, so theirs is "GPU measured on other stacks"; Korthikanti et al.'s 1T run
  // shares its GPU and stack with the 530B table.
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (tables[i].id != "narayanan-2021" && tables[i].id != "korthikanti-2022-time") continue;
    const Json& p = j["tables"][i]["points"][0];
    EXPECT_EQ(p["evidence"].get<std::string>(), tables[i].id == "narayanan-2021"
                                                    ? "GPU measured on other stacks"
                                                    : "GPU and stack measured")
        << p;
    EXPECT_EQ(p["models"].get<std::string>(), "dense");
    EXPECT_EQ(p["precision"].get<std::string>(), "bf16");
  }
}

TEST(ErrorBand, EachEvidenceLevelCoversItsHoldOuts) {
  const auto tables = validation_tables();
  // The levels: A100 and H100 were measured on their stacks; A100 on megatron-lm-2021 is
  // measured by Narayanan et al.'s table only; GH200 never.
  EXPECT_EQ(evidence(tables, "A100-SXM-80GB", "megatron-lm-2022"), Evidence::gpu_and_stack);
  EXPECT_EQ(evidence(tables, "H100-SXM", "megatron-core-2024"), Evidence::gpu_and_stack);
  EXPECT_EQ(evidence(tables, "H100-SXM", "fsdp-2024"), Evidence::gpu_and_stack);
  EXPECT_EQ(evidence(tables, "H100-SXM", "megatron-lm-2021"), Evidence::gpu_only);
  EXPECT_EQ(evidence(tables, "GH200", "megatron-core-2024"), Evidence::none);
  // Leaving Narayanan et al.'s table out, A100 on megatron-lm-2021 has only other stacks' runs.
  std::size_t nar = 0;
  while (tables[nar].id != "narayanan-2021") ++nar;
  EXPECT_EQ(evidence(tables, "A100-SXM-80GB", "megatron-lm-2021", nar), Evidence::gpu_only);

  // Recompute every level's band of each class by hand: the nearest-rank 80th percentile of the
  // class's hold-outs whose GPU and stack the other tables support at that level; with fewer
  // than five at a level, those of the weaker levels pooled in, then every hold-out of the class.
  auto p80 = [](std::vector<double> e) {
    std::sort(e.begin(), e.end());
    return e[static_cast<std::size_t>(std::ceil(0.8 * static_cast<double>(e.size()))) - 1];
  };
  for (const BandClass cls : kBandClasses) {
    const std::string what =
        fmt::format("{} {}", models_key(cls.moe), precision_key(cls.low_precision));
    std::vector<std::vector<double>> by_level(3);
    std::vector<double> all;
    double faster = 0;  // the strongest level's signed errors, read as railsim faster
    for (std::size_t i = 0; i < tables.size(); ++i)
      for (const auto& p : tables[i].points)
        if (!p.fit && p.railsim > 0 && p.moe == cls.moe && p.low_precision == cls.low_precision) {
          const Evidence e = evidence(tables, p.gpu, p.stack, i);
          by_level[static_cast<std::size_t>(e)].push_back(std::fabs(p.error()));
          all.push_back(std::fabs(p.error()));
          if (e == Evidence::gpu_and_stack)
            faster += tables[i].time_metric() ? -p.error() : p.error();
        }
    ASSERT_GE(all.size(), 15u) << what;
    ASSERT_GE(by_level[0].size(), static_cast<std::size_t>(kMinBandRuns)) << what;
    const auto bands = error_bands(tables, cls);
    ASSERT_EQ(bands.size(), 3u);
    double narrowest = 0;
    for (std::size_t l = 0; l < 3; ++l) {
      std::vector<double> e = by_level[l];
      if (e.size() < static_cast<std::size_t>(kMinBandRuns))
        for (std::size_t w = l + 1; w < 3; ++w)
          e.insert(e.end(), by_level[w].begin(), by_level[w].end());
      if (e.size() < static_cast<std::size_t>(kMinBandRuns)) e = all;
      narrowest = std::max(narrowest, p80(e));  // less evidence never narrows the band
      EXPECT_DOUBLE_EQ(bands[l].fraction, narrowest) << what << " level " << l;
      EXPECT_EQ(bands[l].moe, cls.moe);
      EXPECT_EQ(bands[l].low_precision, cls.low_precision);
      if (by_level[l].size() >= static_cast<std::size_t>(kMinBandRuns)) {
        // The band covers at least 80% of its own level's hold-outs.
        const auto inside = std::count_if(by_level[l].begin(), by_level[l].end(),
                                          [&](double x) { return x <= bands[l].fraction; });
        EXPECT_GE(static_cast<double>(inside), 0.8 * static_cast<double>(by_level[l].size()))
            << what << " level " << l;
      }
    }
    EXPECT_NE(bands[0].basis.find(
                  fmt::format("{} in {}", models_name(cls.moe), precision_name(cls.low_precision))),
              std::string::npos)
        << bands[0].basis;
    // How those runs lean: their mean error read as railsim faster, stated in the basis.
    const double bias = faster / static_cast<double>(by_level[0].size());
    EXPECT_NEAR(bands[0].bias, bias, 1e-12) << what;
    // The runs lean less than their band is wide, but for MoE in FP8: a few runs far off (up to
    // +413%) pull its mean lean past the 80th percentile of the sizes (55.7% against 53.7%).
    if (!(cls.moe && cls.low_precision)) {
      EXPECT_LE(std::fabs(bands[0].bias), bands[0].fraction) << what;
    }
    EXPECT_NE(
        bands[0].basis.find(fmt::format("; railsim {:.1f}% {} than measured on them",
                                        100 * std::fabs(bias), bias > 0 ? "faster" : "slower")),
        std::string::npos)
        << bands[0].basis;
  }
  // One GEMM fraction for both precisions: the dense BF16 band's runs lean neither way (-0.1%),
  // the FP8 ones fast (+4.1%), and MoE runs in FP8 far too fast (docs/validation.md, item 5).
  EXPECT_LT(std::fabs(error_bands(tables, {false, false})[0].bias), 0.01);
  EXPECT_GT(error_bands(tables, {false, true})[0].bias, 0.03);
  EXPECT_GT(error_bands(tables, {true, true})[0].bias, 0.45);

  const auto bands = error_bands(tables);  // dense models in BF16
  const ErrorBand a = error_band(tables, "A100-SXM-80GB", "megatron-lm-2022");
  EXPECT_TRUE(a.validated);
  EXPECT_EQ(a.level, Evidence::gpu_and_stack);
  EXPECT_DOUBLE_EQ(a.fraction, bands[0].fraction);
  const ErrorBand g = error_band(tables, "GH200", "megatron-core-2024");
  EXPECT_FALSE(g.validated);
  EXPECT_EQ(g.level, Evidence::none);
  EXPECT_DOUBLE_EQ(g.fraction, bands[2].fraction);
  EXPECT_EQ(g.basis.rfind("GPU never measured", 0), 0u);
  const Json j = to_json(g, 2.0);
  EXPECT_DOUBLE_EQ(j["low_s"].get<double>(), 2.0 * (1 - g.fraction));
  EXPECT_DOUBLE_EQ(j["high_s"].get<double>(), 2.0 * (1 + g.fraction));
  EXPECT_EQ(j["evidence"], "GPU never measured");
  EXPECT_EQ(j["models"], "dense");
  EXPECT_EQ(j["precision"], "bf16");
  // A band above 100% (runs measured more than twice as slow as predicted) bounds the time
  // below by 0, not by a negative time.
  ErrorBand wide = g;
  wide.fraction = 1.2;
  EXPECT_DOUBLE_EQ(to_json(wide, 2.0)["low_s"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(to_json(wide, 2.0)["high_s"].get<double>(), 4.4);
}

// The bands judged as a new user's run is: each table left out in turn, its hold-outs judged by
// the bands the other tables give. The dense bands hold about as well on tables they did not come
// from (80% and 81% today) as on their own runs; the MoE FP8 runs all sit in one table, and the
// bands of the other classes (none of theirs is left) miss most of them, as they should: railsim
// is far too fast on them (docs/validation.md, item 5).
TEST(ErrorBand, BandsHoldOnTablesTheyDidNotComeFrom) {
  const auto tables = validation_tables();
  const std::vector<BandCheck> checks = check_bands(tables);
  ASSERT_EQ(checks.size(), 4u);
  int runs = 0;
  for (std::size_t c = 0; c < checks.size(); ++c) {
    const BandClass cls = kBandClasses[c];
    EXPECT_EQ(checks[c].cls.moe, cls.moe);
    EXPECT_EQ(checks[c].cls.low_precision, cls.low_precision);
    // By hand: every table out in turn.
    int n = 0, inside = 0, thin = 0;
    std::array<int, 3> level_runs{}, level_inside{};
    double sum = 0;
    for (std::size_t out = 0; out < tables.size(); ++out) {
      std::vector<ValidationTable> rest = tables;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(out));
      bool any = false;  // a hold-out of the class left in the other tables
      for (const auto& t : rest)
        for (const auto& p : t.points)
          any |=
              !p.fit && p.railsim > 0 && p.moe == cls.moe && p.low_precision == cls.low_precision;
      const auto bands = error_bands(rest, cls);
      for (const auto& p : tables[out].points) {
        if (p.fit || !(p.railsim > 0) || p.moe != cls.moe || p.low_precision != cls.low_precision)
          continue;
        const auto level = static_cast<std::size_t>(evidence(rest, p.gpu, p.stack));
        const ErrorBand& b = bands[level];
        const int in = std::fabs(p.error()) <= b.fraction ? 1 : 0;
        ++n;
        inside += in;
        ++level_runs[level];
        level_inside[level] += in;
        thin += !any || b.runs < kMinBandRuns ? 1 : 0;
        sum += b.fraction;
      }
    }
    EXPECT_EQ(checks[c].runs(), n) << c;
    EXPECT_EQ(checks[c].inside(), inside) << c;
    EXPECT_EQ(checks[c].thin, thin) << c;
    EXPECT_EQ(checks[c].level_runs, level_runs) << c;
    EXPECT_EQ(checks[c].level_inside, level_inside) << c;
    EXPECT_NEAR(checks[c].mean_fraction, sum / n, 1e-12) << c;
    runs += n;
  }
  EXPECT_EQ(runs, summarize_hold_outs(tables).runs);  // every hold-out judged once
  for (const std::size_t dense : {0u, 1u}) {
    EXPECT_GE(checks[dense].share_inside(), 0.75) << dense;
    EXPECT_EQ(checks[dense].thin, 0) << dense;
  }
  // MoE in FP8: hold-outs in two tables, each judged by the other's runs (none thin), and the
  // bands hold fewer of them than the 80% they must (docs/validation.md, item 5).
  EXPECT_EQ(checks[3].thin, 0);
  EXPECT_LT(checks[3].share_inside(), kBandCoverage);
}

// The band of a GPU never measured, judged on GPUs it has not seen: each GPU left out in turn
// (its runs taken out of every table, the multi-GPU tables included), its hold-outs judged by the
// band the other GPUs' runs give that level. By hand, against check_bands.
TEST(ErrorBand, ANewGpusBandIsJudgedWithEachGpuLeftOut) {
  const auto tables = validation_tables();
  const auto checks = check_bands(tables);
  std::set<std::string> gpus;
  for (const auto& t : tables)
    for (const auto& p : t.points) gpus.insert(p.gpu);
  int judged = 0;
  for (std::size_t c = 0; c < checks.size(); ++c) {
    const BandClass cls = kBandClasses[c];
    int n = 0, inside = 0;
    for (const std::string& gpu : gpus) {
      std::vector<ValidationTable> rest = tables;
      for (auto& t : rest)
        t.points.erase(std::remove_if(t.points.begin(), t.points.end(),
                                      [&](const ValidationPoint& p) { return p.gpu == gpu; }),
                       t.points.end());
      const double band = error_bands(rest, cls)[2].fraction;
      for (const auto& t : tables)
        for (const auto& p : t.points)
          if (p.gpu == gpu && !p.fit && p.railsim > 0 && p.moe == cls.moe &&
              p.low_precision == cls.low_precision) {
            EXPECT_EQ(evidence(rest, p.gpu, p.stack), Evidence::none) << p.label;
            ++n;
            inside += std::fabs(p.error()) <= band ? 1 : 0;
          }
    }
    EXPECT_EQ(checks[c].new_gpu_runs, n) << c;
    EXPECT_EQ(checks[c].new_gpu_inside, inside) << c;
    EXPECT_EQ(checks[c].new_gpu_runs, checks[c].runs()) << c;  // every hold-out judged once
    judged += n;
  }
  EXPECT_EQ(judged, summarize_hold_outs(tables).runs);
  // The figures docs/model.md states: dense BF16 131 of 157, dense FP8 111 of 123, both above
  // the 80% a band should hold (109 and 100 while BF16 and FP8 GEMMs had fractions of their own,
  // H100's BF16 runs then leaning slow and the other GPUs' fast).
  EXPECT_EQ(checks[0].new_gpu_inside, 131);
  EXPECT_EQ(checks[1].new_gpu_inside, 111);
  EXPECT_GE(checks[0].new_gpu_share(), 0.8);
  EXPECT_GE(checks[1].new_gpu_share(), 0.8);
  // The printed band's basis at that level states it; the other levels' do not.
  const std::string note =
      "; each GPU left out in turn, the band of a GPU never measured held 131 of 157 (83%)";
  const std::string never = error_band("GH200", "megatron-core-2024", kBandClasses[0]).basis;
  EXPECT_NE(never.find(note), std::string::npos) << never;
  const std::string h100 = error_band("H100-SXM", "megatron-core-2024", kBandClasses[0]).basis;
  EXPECT_EQ(h100.find(note), std::string::npos) << h100;
}

// Why the bands stay symmetric (docs/model.md section 10, "Signed ranges, tried and left out"):
// a range of the signed error, narrower on the runs it comes from since the bands lean, holds
// fewer of the dense hold-outs on the tables it did not come from than the symmetric band does.
// Each construction below takes the same runs as the shipped bands (the level's, pooled with the
// weaker levels' below 5, then the class's), holds the stronger level's range, and is judged as
// check_bands judges the shipped ones: each table left out in turn.
TEST(ErrorBand, SignedRangesHoldFewerRunsOnTablesTheyDidNotComeFrom) {
  const auto tables = validation_tables();
  enum class Kind { equal_tails, around_lean };
  // The range of the signed errors `e`: their middle `share` (the runs left out split evenly
  // between the tails), or the lean +- the `share` quantile of |error - lean| (nearest rank).
  auto range = [](std::vector<double> e, Kind kind, double share) {
    std::sort(e.begin(), e.end());
    const std::size_t n = e.size();
    const auto kept = static_cast<std::size_t>(std::ceil(share * static_cast<double>(n) - 1e-9));
    if (kind == Kind::equal_tails) {
      const std::size_t below = (n - kept) / 2;
      return std::pair{e[below], e[below + kept - 1]};
    }
    double lean = 0;
    for (const double x : e) lean += x / static_cast<double>(n);
    std::vector<double> off;
    for (const double x : e) off.push_back(std::fabs(x - lean));
    std::sort(off.begin(), off.end());
    return std::pair{lean - off[kept - 1], lean + off[kept - 1]};
  };
  // The share of the dense hold-outs inside, and the mean width of the ranges they were judged by.
  auto judge = [&](Kind kind, double share) {
    int n = 0, inside = 0;
    double width = 0;
    for (std::size_t out = 0; out < tables.size(); ++out) {
      std::vector<ValidationTable> rest = tables;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(out));
      for (const bool fp8 : {false, true}) {
        auto in_class = [&](const ValidationPoint& p) {
          return !p.fit && p.railsim > 0 && !p.moe && p.low_precision == fp8;
        };
        std::vector<std::vector<double>> by_level(3);
        std::vector<double> all;
        for (std::size_t i = 0; i < rest.size(); ++i)
          for (const auto& p : rest[i].points)
            if (in_class(p)) {
              const double f = rest[i].time_metric() ? -p.error() : p.error();
              by_level[static_cast<std::size_t>(evidence(rest, p.gpu, p.stack, i))].push_back(f);
              all.push_back(f);
            }
        std::pair<double, double> band[3];
        for (std::size_t l = 0; l < 3; ++l) {
          std::vector<double> e = by_level[l];
          if (e.size() < std::size_t{kMinBandRuns})
            for (std::size_t w = l + 1; w < 3; ++w)
              e.insert(e.end(), by_level[w].begin(), by_level[w].end());
          if (e.size() < std::size_t{kMinBandRuns}) e = all;
          band[l] = range(e, kind, share);
          if (l > 0) {
            band[l].first = std::min(band[l].first, band[l - 1].first);
            band[l].second = std::max(band[l].second, band[l - 1].second);
          }
        }
        for (const auto& p : tables[out].points) {
          if (!in_class(p)) continue;
          const auto& b = band[static_cast<std::size_t>(evidence(rest, p.gpu, p.stack))];
          const double f = tables[out].time_metric() ? -p.error() : p.error();
          ++n;
          inside += b.first <= f && f <= b.second ? 1 : 0;
          width += b.second - b.first;
        }
      }
    }
    return std::pair{static_cast<double>(inside) / n, width / n};
  };
  // On the runs they come from, the dense ranges at GPU and stack measured are narrower than the
  // symmetric band (the figures docs/model.md states).
  auto own_range = [&](bool fp8) {
    std::vector<double> e;
    for (std::size_t i = 0; i < tables.size(); ++i)
      for (const auto& p : tables[i].points)
        if (!p.fit && p.railsim > 0 && !p.moe && p.low_precision == fp8 &&
            evidence(tables, p.gpu, p.stack, i) == Evidence::gpu_and_stack)
          e.push_back(tables[i].time_metric() ? -p.error() : p.error());
    return range(e, Kind::equal_tails, kBandCoverage);
  };
  const auto [bf16_lo, bf16_hi] = own_range(false);
  const auto [fp8_lo, fp8_hi] = own_range(true);
  EXPECT_NEAR(bf16_lo, -0.1044, 0.0005);
  EXPECT_NEAR(bf16_hi, 0.1630, 0.0005);
  EXPECT_NEAR(fp8_lo, -0.1192, 0.0005);
  EXPECT_NEAR(fp8_hi, 0.1704, 0.0005);
  // The shipped symmetric bands, judged so by check_bands.
  const auto checks = check_bands(tables);
  const int runs = checks[0].runs() + checks[1].runs();
  const double symmetric = static_cast<double>(checks[0].inside() + checks[1].inside()) / runs;
  const double symmetric_width =
      2 *
      (checks[0].mean_fraction * checks[0].runs() + checks[1].mean_fraction * checks[1].runs()) /
      runs;
  const auto [tails, tails_width] = judge(Kind::equal_tails, kBandCoverage);
  const auto [tails90, tails90_width] = judge(Kind::equal_tails, 0.9);
  const auto [lean, lean_width] = judge(Kind::around_lean, kBandCoverage);
  // The figures docs/model.md states.
  EXPECT_NEAR(symmetric, 0.7857, 0.0005);
  EXPECT_NEAR(symmetric_width, 0.2825, 0.0005);
  EXPECT_NEAR(tails, 0.7536, 0.0005);
  EXPECT_NEAR(tails_width, 0.3023, 0.0005);
  EXPECT_NEAR(tails90, 0.8357, 0.0005);
  EXPECT_NEAR(tails90_width, 0.4340, 0.0005);
  EXPECT_NEAR(lean, 0.7786, 0.0005);
  EXPECT_NEAR(lean_width, 0.3109, 0.0005);
  // The decision they carry: narrower, the signed ranges hold fewer unseen runs than the
  // symmetric bands; holding as many, they are wider. The symmetric bands themselves hold 78.6%
  // of the unseen dense runs at 28.3% wide, below the 80% a band should hold (79.3% at 37.3% wide
  // before one GEMM fraction served both precisions; 77.9% before LLM Foundry's
  // attention ran at FlashAttention-1's rate, which narrowed them too; 80.4% before MaxText's runs
  // were timed with their recipe's rematerialisation narrowed the dense BF16 band, 78.9% before
  // MXFP8's GEMM rate narrowed the FP8 one, 78.6% before the Blackwell presets' measured
  // attention widened it again; docs/model.md section 10 says so).
  EXPECT_LT(tails, kBandCoverage);
  EXPECT_LT(lean, kBandCoverage);
  EXPECT_GT(symmetric, tails);
  EXPECT_GT(symmetric, lean);
  EXPECT_GT(symmetric, 0.78);
  EXPECT_GE(tails90, symmetric);
  EXPECT_GT(tails90_width, symmetric_width);
}

// A class with no hold-out at all takes the bands of every class's hold-outs, and says so: not a
// band of 0 from no runs.
TEST(ErrorBand, AClassWithoutHoldOutsBorrowsEveryClasssRuns) {
  auto tables = validation_tables();
  for (auto& t : tables)
    std::erase_if(t.points, [](const ValidationPoint& p) { return p.moe && p.low_precision; });
  const auto bands = error_bands(tables, {true, true});
  ASSERT_EQ(bands.size(), 3u);
  for (const ErrorBand& b : bands) {
    EXPECT_GE(b.runs, kMinBandRuns);
    EXPECT_GT(b.fraction, 0.1);
    EXPECT_TRUE(b.moe && b.low_precision);
    EXPECT_NE(b.basis.find("hold-out runs of any model kind and precision (none of "
                           "mixture-of-experts models in FP8, MXFP8 or NVFP4)"),
              std::string::npos)
        << b.basis;
  }
}

// Each class of prediction has bands of its own, from its own hold-outs: dense and mixture-of-
// experts models, BF16 and FP8-or-narrower GEMMs. The model errs differently on them
// (docs/validation.md, item 5): MoE runs come out far too fast, so their bands are three times
// the dense ones, which one band over both would overstate for dense models and understate for
// MoE.
TEST(ErrorBand, EachModelKindAndPrecisionHasItsOwnBands) {
  const auto tables = validation_tables();
  std::vector<double> moe_bf16, moe_fp8;
  for (const auto& t : tables)
    for (const auto& p : t.points)
      if (!p.fit && p.railsim > 0 && p.moe)
        (p.low_precision ? moe_fp8 : moe_bf16).push_back(std::fabs(p.error()));
  ASSERT_GE(moe_bf16.size(), 15u);
  ASSERT_GE(moe_fp8.size(), 20u);
  // A prediction takes the band of its class, at its GPU and stack's level.
  std::vector<double> fraction;
  for (const BandClass cls : kBandClasses) {
    const ErrorBand b = error_band(tables, "GB200", "nemo-perf-2025", cls);
    EXPECT_EQ(b.level, Evidence::gpu_and_stack);
    EXPECT_DOUBLE_EQ(b.fraction, error_bands(tables, cls)[0].fraction);
    EXPECT_EQ(to_json(b, 1.0)["models"], cls.moe ? "moe" : "dense");
    EXPECT_EQ(to_json(b, 1.0)["precision"], cls.low_precision ? "fp8" : "bf16");
    fraction.push_back(b.fraction);
  }
  EXPECT_GT(fraction[2], 2.5 * fraction[0]);  // BF16: MoE against dense
  EXPECT_GT(fraction[3], 2.5 * fraction[1]);  // FP8: MoE against dense
  // A dense band would hold few MoE runs.
  auto share_within = [](const std::vector<double>& e, double f) {
    return static_cast<double>(
               std::count_if(e.begin(), e.end(), [&](double x) { return x <= f; })) /
           static_cast<double>(e.size());
  };
  EXPECT_LT(share_within(moe_fp8, fraction[1]), 0.5);
  EXPECT_LT(share_within(moe_bf16, fraction[0]), 0.5);
  // The shipped bands the commands print are the same (computed once per process).
  EXPECT_DOUBLE_EQ(error_band("GB200", "nemo-perf-2025", {true, true}).fraction, fraction[3]);
  EXPECT_DOUBLE_EQ(error_band("GB200", "nemo-perf-2025", {false, true}).fraction, fraction[1]);
}

// The two published runs docs/validation.md sets railsim's estimate against without a table:
// Llama 3 405B's 128K-token stage and DeepSeek-V3's pre-training. The figures here are the ones
// that page states; a change to the model that moves them must move the page too.
TEST(PublishedRuns, Llama3LongContextStageAndDeepSeekV3AreEstimatedAsDocumented) {
  const spec::NetworkDesign ib = validate_fabric();
  {
    // 16,384 H100, tp 8 cp 16 pp 16 dp 8, 128 sequences of 131,072 tokens (16M tokens), v = 8
    // over Meta's split (the embedding and the loss as a layer each: 16 x 8 chunks of one layer).
    const spec::GpuSpec g = spec::load_gpu("H100-SXM");
    const spec::Cluster c = spec::make_cluster(g, 16384, 8, 400, 450, 1);
    const Model m = load_model("Llama-3-405B");
    // Meta's stack: its context parallelism all-gathers K and V (Dubey et al. 2024, Sec. 3.3.2).
    const spec::Stack meta = load_stack("meta-llama3-2024");
    EXPECT_FALSE(meta.ring_cp);
    const Training tr = make_training(128, 131072, meta);
    Strategy s{.tp = 8, .pp = 16, .dp = 8, .cp = 16};
    s.interleave = 8;
    s.recompute = Recompute::selective;
    s.sp = true;
    s.dist_opt = true;
    s.dp_overlap = true;
    const IterationTime it = estimate(m, tr, s, c, ib);
    EXPECT_NEAR(it.iteration_time_s, 11.24, 0.05);
    // 380 TFLOP/s per GPU: 10.9 s if attention counts causal (railsim 3% slow), 15.3 s if it
    // counts full s x s.
    const double tokens = 128.0 * 131072.0;
    const double causal_flops = it.model_flops - 3.0 * tokens * 126.0 * 2.0 * 131072.0 * 16384.0;
    EXPECT_NEAR(causal_flops / (380e12 * 16384), 10.9, 0.1);
    EXPECT_NEAR(it.model_flops / (380e12 * 16384), 15.3, 0.1);
  }
  {
    // 2,048 H800, EP 64, PP 16. On Megatron-Core's 1F1B with bf16 dispatch: 306K GPU-hours per
    // trillion tokens against the published 180K, the EP all-to-all half the iteration. On
    // DeepSeek's stack, DualPipe with fp8 and hierarchical dispatch under node-limited routing:
    // 152K (15% under the published whole-run average), the all-to-all mostly hidden behind the
    // other micro-batch's computation; the last stage (1 layer, the MTP module and two bf16
    // output layers) shares its GPU with the first (4 layers). With the direct dispatch: 170K.
    const spec::GpuSpec g = spec::load_gpu("H800");
    const spec::Cluster c = spec::make_cluster(g, 2048, 8, 400, 200, 1);
    const Model m = load_model("DeepSeek-V3");
    Strategy s{.tp = 1, .pp = 16, .dp = 128, .ep = 64};
    s.recompute = Recompute::selective;
    s.dist_opt = true;
    s.dp_overlap = true;
    const Training tr = make_training(15360, 4096, load_stack("megatron-core-2024"), Dtype::fp8);
    const IterationTime it = estimate(m, tr, s, c, ib);
    auto gpu_hours_per_t = [](const IterationTime& x) {
      return 2048.0 * 1e12 / x.tokens_per_s / 3600.0;
    };
    EXPECT_NEAR(gpu_hours_per_t(it), 306e3, 3e3);
    EXPECT_GT(it.breakdown.ep_comm_s, 0.5 * it.iteration_time_s);
    EXPECT_NEAR(it.iteration_time_s - it.breakdown.ep_comm_s, 16.73, 0.2);
    const Training ds = make_training(15360, 4096, load_stack("deepseek-v3-2024"), Dtype::fp8);
    s.schedule = PipelineSchedule::dualpipe;
    const IterationTime dual = estimate(m, ds, s, c, ib);
    EXPECT_NEAR(dual.iteration_time_s, 16.99, 0.1);
    EXPECT_NEAR(gpu_hours_per_t(dual), 152e3, 2e3);
    EXPECT_NEAR(dual.breakdown.ep_comm_s, 1.1, 0.1);
    EXPECT_NEAR(dual.breakdown.bubble_s, 3.04, 0.1);
    // One dispatch: 3.30 ms along the rails and over NVLink at once, 7.26 ms sent directly.
    const Placement pl(c, s.degrees());
    const NetworkModel nm = make_network_model(c, ib);
    Training direct_ds = ds;
    direct_ds.stack.hierarchical_ep_dispatch = false;
    for (const auto& [t, ms] :
         {std::pair<const Training*, double>{&ds, 3.30}, {&direct_ds, 7.26}}) {
      const CommSchedule cs = build_comm_schedule(m, *t, s, pl);
      const auto a2a = std::find_if(
          cs.begin(), cs.end(), [](const CommOp& o) { return o.op == CollectiveOp::all_to_all; });
      ASSERT_NE(a2a, cs.end());
      EXPECT_NEAR(collective_time(*a2a, pl, nm).time_s * 1e3, ms, 0.005);
    }
    const IterationTime direct = estimate(m, direct_ds, s, c, ib);
    EXPECT_NEAR(direct.iteration_time_s, 18.79, 0.1);
    EXPECT_NEAR(gpu_hours_per_t(direct), 170e3, 2e3);
    EXPECT_NEAR(direct.breakdown.ep_comm_s, 3.26, 0.1);
    // It fits the H800's 80 GiB as it ran, as DeepSeek's stack stores it: the norms' and MLA
    // up-projections' outputs and the MoE SwiGLU's recomputed, its input kept in fp8, bf16 Adam
    // moments (report, Sec. 3.2.3 and 3.3.3); charged as Megatron-Core keeps them it needs
    // 117.9 GiB.
    const MemoryUse mem = memory_use(m, ds, s);
    EXPECT_NEAR(mem.total() / units::kGiB, 65.2, 0.1);
    EXPECT_LT(mem.total(), 80.0 * units::kGiB);
    spec::Stack megatron_kept = ds.stack;
    megatron_kept.recompute_norms = megatron_kept.recompute_up_projections =
        megatron_kept.moe_swiglu_recompute = false;
    megatron_kept.moment_bytes = 4.0;
    const Training kept = make_training(15360, 4096, megatron_kept, Dtype::fp8);
    EXPECT_NEAR(memory_use(m, kept, s).total() / units::kGiB, 117.9, 0.1);
  }
}

// The mixture-of-experts hold-outs (Megatron-Bridge 25.11 and 26.02): on five GPUs, and the bf16
// runs of DeepSeek-V3 and Qwen3-235B, whose experts spread over an NVL72 domain (EP 16 to 64,
// large expert GEMMs), within 20% (measured -19.2% to -1.8%, too slow: their all-to-all is
// charged exposed; docs/validation.md, "Mixture of experts"): the MoE path's FLOPs, token sorting,
// all-to-all and memory on the runs where neither fp8's casts nor per-kernel host time weigh. The
// two H100 runs whose EP spans TP x DP (Megatron-Core's MoE parallel folding, etp 1) are timed
// folded, within 15% (measured -13.1% and -10.9%), and every run has a figure.
TEST(ValidationTables, MixtureOfExpertsHoldOuts) {
  const auto tables = validation_tables();
  const ValidationTable* it = table_named(tables, "megatron-bridge-moe");
  ASSERT_NE(it, nullptr);
  std::set<std::string> gpus;
  int bf16 = 0, folded = 0;
  for (const auto& p : it->points) {
    EXPECT_FALSE(p.fit) << p.label;
    ASSERT_GT(p.railsim, 0) << p.label << ": " << p.note;
    gpus.insert(p.gpu);
    if (p.label.rfind("H100", 0) == 0 && p.label.find("Qwen3-235B") != std::string::npos) {
      ++folded;
      EXPECT_NE(p.plan.find("ep 32 etp 1"), std::string::npos) << p.plan;
      EXPECT_LT(std::fabs(p.error()), 0.15) << p.label;
    }
    if (p.label.find("BF16") != std::string::npos && p.label.find("GPT-OSS") == std::string::npos) {
      ++bf16;
      EXPECT_LT(std::fabs(p.error()), 0.20) << p.label;
    }
  }
  EXPECT_GE(it->points.size(), 35u);
  EXPECT_EQ(gpus.size(), 5u);
  EXPECT_EQ(bf16, 4);
  EXPECT_EQ(folded, 2);
}

// NVIDIA's Megatron-MoE-ModelZoo runs of Qwen3-235B on 256 H100 name their dispatcher per row:
// DeepEP's rows are timed with the hierarchical dispatch (one copy per node over InfiniBand,
// then NVLink), the A2A row with the direct one. The cross-node EP 32 row, whose dispatch leaves
// the node, comes out within 5% (measured 19.7 s, railsim 19.12 s); sent directly its
// all-to-all would take 7.4 s more. The same run under combined 1F1B (the row's "ep_overlap")
// measured 17.6 s: railsim hides more of the all-to-all than the run did, 14.42 s (-18.0%), a
// gain of 4.7 s against the measured 2.1 s.
TEST(ValidationTables, ModelZooRowsRunTheDispatchTheyName) {
  const auto tables = validation_tables();
  const ValidationTable* it = table_named(tables, "megatron-moe-modelzoo-h100");
  ASSERT_NE(it, nullptr);
  ASSERT_EQ(it->points.size(), 4u);
  const ValidationPoint& deep = it->points[0];
  EXPECT_EQ(deep.label, "DeepEP-tp2-ep32-pp8-v4");
  EXPECT_NE(deep.plan.find("ep 32 etp 1"), std::string::npos) << deep.plan;
  EXPECT_LT(std::fabs(deep.error()), 0.05);
  const ValidationPoint& ovl = it->points[1];
  EXPECT_EQ(ovl.label, "DeepEP-tp2-ep32-pp8-v4-ovl");
  EXPECT_NEAR(ovl.railsim, 14.42, 0.05);
  EXPECT_NEAR(deep.railsim - ovl.railsim, 4.7, 0.1);
  EXPECT_NEAR(ovl.error(), -0.180, 0.002);
  for (const auto& p : it->points) EXPECT_TRUE(p.moe && !p.fit) << p.label;
  // The same strategy under the direct dispatch.
  const Model m = load_model("Qwen3-235B-A22B");
  spec::Stack direct = spec::load_stack("nemo-perf-2025");
  direct.hierarchical_ep_dispatch = false;
  const spec::Cluster c = spec::make_cluster(spec::load_gpu("H100-SXM"), 256, 8, 400, 450, 1);
  const spec::NetworkDesign ib = validate_fabric();
  PlanOptions opt;
  opt.top = 1;
  opt.pins.tp = 2;
  opt.pins.pp = 8;
  opt.pins.ep = 32;
  opt.pins.etp = 1;
  opt.pins.cp = 1;
  opt.pins.micro_batch = 1;
  opt.pins.interleave = 4;
  const PlanResult r =
      plan(make_context(m, make_training(2048, 4096, direct, Dtype::bf16), c, ib), opt);
  ASSERT_FALSE(r.plans.empty());
  EXPECT_GT(r.plans[0].time.iteration_time_s, deep.railsim + 5.0);
}

// TorchTitan's end-of-2024 benchmarks on 96 GB H100 (Tables 1 and 3-6 of its benchmark page):
// its bf16 FSDP rows of Llama 3.1 8B come out 11-20% fast (the 500 W power limit unmodelled);
// float8 gains 1.28x bf16 measured (8,532 against 6,667 tokens/s per GPU on 8 GPUs) against
// railsim's 1.26x (one GEMM fraction of the microbenchmarks for both precisions, torchao's casts
// charged as kernels of their own), while the async-TP row gains more in railsim than measured:
// 1.057x (876 against 829) against 1.20x.
// Every 405B row (FSDP 8 x TP 8 x PP 8, the gradients whole under pipelining) fits its 96 GB.
TEST(ValidationTables, TorchTitanH100RowsSeparateFloat8AndAsyncTp) {
  const auto tables = validation_tables();
  const ValidationTable* it = table_named(tables, "torchtitan-h100-2024");
  ASSERT_NE(it, nullptr);
  ASSERT_EQ(it->points.size(), 14u);
  std::map<std::string, const ValidationPoint*> by_label;
  int bf16 = 0, pipelined = 0;
  for (const auto& p : it->points) {
    EXPECT_FALSE(p.fit) << p.label;
    ASSERT_GT(p.railsim, 0) << p.label << ": " << p.note;
    by_label[p.label] = &p;
    if ((p.label.rfind("T1", 0) == 0 || p.label.rfind("T3", 0) == 0) &&
        p.label.find("fp8") == std::string::npos) {
      ++bf16;
      EXPECT_GT(p.error(), 0.10) << p.label;
      EXPECT_LT(p.error(), 0.20) << p.label;
    }
    if (p.label.find("405B") != std::string::npos) {
      ++pipelined;
      EXPECT_EQ(p.plan.rfind("tp 8 ", 0), 0u) << p.plan;
      EXPECT_NE(p.plan.find(" pp 8 "), std::string::npos) << p.plan;
    }
  }
  EXPECT_EQ(bf16, 4);
  EXPECT_EQ(pipelined, 6);
  auto gain = [&](const char* with, const char* without, bool measured) {
    const ValidationPoint& a = *by_label.at(with);
    const ValidationPoint& b = *by_label.at(without);
    return measured ? a.measured / b.measured : a.railsim / b.railsim;
  };
  EXPECT_NEAR(gain("T1-8B-8g-FSDP-compile-fp8", "T1-8B-8g-FSDP-compile", true), 1.28, 0.01);
  EXPECT_NEAR(gain("T1-8B-8g-FSDP-compile-fp8", "T1-8B-8g-FSDP-compile", false), 1.255, 0.005);
  EXPECT_NEAR(gain("T4-70B-256g-2D-asyncTP", "T4-70B-256g-2D", true), 1.057, 0.001);
  EXPECT_NEAR(gain("T4-70B-256g-2D-asyncTP", "T4-70B-256g-2D", false), 1.203, 0.005);
  // Their memory, as the page prints it (PyTorch's peak reserved), is above railsim's peak of the
  // tensors it counts on every run; the 405B 1F1B run holds its whole fp32 gradients (FSDP under
  // pipelining): 62.3 GiB against 82.5.
  for (const auto& p : it->points) {
    EXPECT_GT(p.memory_gib, 0) << p.label;
    EXPECT_LT(p.memory_gib, p.measured_memory_gib) << p.label;
  }
  EXPECT_NEAR(by_label.at("T5-405B-512g-1F1B")->memory_gib, 62.3, 0.05);
  EXPECT_DOUBLE_EQ(by_label.at("T5-405B-512g-1F1B")->measured_memory_gib, 82.5);
  // Reserved memory (the tables say "memory_measure": "reserved"), summarised apart from the
  // allocated memory of the runs that publish that.
  const MemorySummary mem = summarize_memory(tables, true);
  EXPECT_EQ(mem.runs, 18);  // these 14 and TorchTitan's four long-context runs
  EXPECT_EQ(mem.below, 18);
  EXPECT_LT(mem.bias, 0);
  EXPECT_DOUBLE_EQ(mem.mean_abs_error, -mem.bias);
  for (const auto& p : it->points) EXPECT_TRUE(p.memory_reserved) << p.label;
}

// NVIDIA's DGX Cloud recipes run each model in BF16 and FP8 with the same container, layout and
// GPU count, so a pair's ratio is FP8's measured gain with nothing else changed. On every pair of
// the five H100 tables (Llama 3.1 8B, 70B and 405B, Nemotron-4 15B and 340B, GPT-3 175B) railsim's
// gain is within -3% and +14% of it, the larger on 29 of 31: its GEMM fractions are one fraction of
// the microbenchmarks (0.56 bf16, 0.50 fp8), so a GEMM's FP8 gain is theirs, 1.79x, and what the
// runs spend beside the GEMMs keeps the measured gain below it. (With the two precisions' fractions
// fitted apart on runs of different years, 0.50 and 0.57, it was 2.28x per GEMM and 16% or more too
// high on every pair.) NeMo 24.09's Llama 3.1 and Nemotron-4 15B rows: BF16 4-7% slow, FP8 -6% to
// +9%.
TEST(ValidationTables, DgxCloudPairsMeasureFp8sGainWithNothingElseChanged) {
  const auto tables = validation_tables();
  int pairs = 0, larger = 0;
  double measured_sum = 0, railsim_sum = 0;
  for (const char* id : {"dgxc-nemo-llama31-8b-70b-h100", "dgxc-nemo-nemotron4-15b-h100",
                         "dgxc-nemo-llama31-405b-h100", "dgxc-nemo-nemotron4-340b-h100",
                         "dgxc-nemo-gpt3-175b-h100"}) {
    const ValidationTable* t = table_named(tables, id);
    ASSERT_NE(t, nullptr) << id;
    std::map<std::string, const ValidationPoint*> by_label;
    for (const auto& p : t->points) {
      EXPECT_FALSE(p.fit) << p.label;
      ASSERT_GT(p.railsim, 0) << p.label << ": " << p.note;
      by_label[p.label] = &p;
    }
    for (const auto& [label, fp8] : by_label) {
      const auto at = label.find("-fp8-");
      if (at == std::string::npos) continue;
      const auto bf16 = by_label.find(label.substr(0, at) + "-bf16-" + label.substr(at + 5));
      if (bf16 == by_label.end()) continue;
      // The same strategy timed, except where railsim's memory makes one of the two recompute:
      // Nemotron-4 340B's pair on 128 GPUs, whose BF16 row (fp32 gradients, 2 + 4 + 12/d bytes
      // per parameter, bf16 activations) does not fit without full recompute where the FP8 row
      // (bf16 gradients, fp8 casts kept) does.
      if (fp8->plan != bf16->second->plan) {
        EXPECT_EQ(label, "nemo-nemotron4-340b-fp8-128g");
        EXPECT_NE(bf16->second->plan.find("recompute full"), std::string::npos);
        EXPECT_NE(fp8->plan.find("recompute none"), std::string::npos);
        continue;
      }
      ++pairs;
      const double measured = fp8->measured / bf16->second->measured;
      const double railsim = fp8->railsim / bf16->second->railsim;
      measured_sum += measured;
      railsim_sum += railsim;
      EXPECT_GT(measured, 1.30) << label;
      EXPECT_LT(measured, 1.56) << label;
      EXPECT_GT(railsim, measured * 0.97) << label;
      EXPECT_LT(railsim, measured * 1.14) << label;
      larger += railsim > measured ? 1 : 0;
    }
  }
  EXPECT_EQ(pairs, 31);  // of 32
  EXPECT_EQ(larger, 29);
  EXPECT_NEAR(measured_sum / pairs, 1.392, 0.0005);  // published figures: exact
  EXPECT_NEAR(railsim_sum / pairs, 1.473, 0.005);

  const ValidationTable* nemo = table_named(tables, "dgxc-nemo-llama31-8b-70b-h100");
  const ValidationTable* nemotron = table_named(tables, "dgxc-nemo-nemotron4-15b-h100");
  ASSERT_EQ(nemo->points.size(), 22u);
  ASSERT_EQ(nemotron->points.size(), 16u);
  for (const ValidationTable* t : {nemo, nemotron})
    for (const auto& p : t->points) {
      if (p.label.find("-bf16-") != std::string::npos) {
        EXPECT_LT(p.error(), -0.03) << p.label;
        EXPECT_GT(p.error(), -0.07) << p.label;
      } else {
        EXPECT_GT(p.error(), -0.06) << p.label;
        EXPECT_LT(p.error(), 0.09) << p.label;
      }
    }
}

// NVIDIA's own pre-training runs of 2024 (the Nemotron-4 15B and 340B technical reports, Table 2
// of each), on the Megatron-Core of the fit runs' year. Each row's published MFU agrees with its
// published iteration time under railsim's count of model FLOPs, which guards the transcription.
// The 340B rows (TP 8, PP 12) come out 3-5% fast, the last stage carrying the 256K-vocabulary
// output layer on every micro-batch and the pipeline waiting on it (with a 32K vocabulary the
// bubble is under a third of it). The 15B rows (TP 8 and DP only, 4 sequences per replica) come
// out 24-33% fast at the planner's micro-batch of 4, flat in DP where the measured time grows 12%
// from DP 96 to DP 288.
TEST(ValidationTables, NemotronPretrainingRunsOfTheFitRunsYear) {
  const auto tables = validation_tables();
  const ValidationTable* t = table_named(tables, "nemotron4-pretraining-h100");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->points.size(), 6u);
  EXPECT_TRUE(t->time_metric());
  const std::string file = "holdout-nemotron4-pretraining-h100";
  const Json d = spec::load_preset_or_file("validation", file, "test");
  for (std::size_t i = 0; i < t->points.size(); ++i) {
    const Json& row = d["rows"][i];
    const ValidationPoint& p = t->points[i];
    ASSERT_EQ(p.label, row["label"].get<std::string>());
    ASSERT_GT(p.railsim, 0) << p.label << ": " << p.note;
    EXPECT_FALSE(p.fit) << p.label;
    // 1%: the reports print the times to two or three digits (0.57 s: +-0.9%).
    EXPECT_NEAR(implied_mfu(file, i, 989e12) / row["_published_mfu"].get<double>(), 1.0, 0.01)
        << p.label;
    if (row["model"] == "Nemotron-4-340B") {
      EXPECT_GT(p.error(), -0.05) << p.label;
      EXPECT_LT(p.error(), -0.02) << p.label;
    } else {
      EXPECT_LT(p.error(), -0.20) << p.label;
      EXPECT_NEAR(p.railsim / t->points[0].railsim, 1.0, 0.005) << p.label;
    }
  }
  EXPECT_NEAR(t->points[2].measured / t->points[0].measured, 1.123, 0.001);

  // The 340B's bubble at DP 16 (48 micro-batches, v = 8): most of it is the output layer's stage.
  const spec::NetworkDesign ib = validate_fabric();
  const spec::Cluster c = spec::make_cluster(spec::load_gpu("H100-SXM"), 1536, 8, 400, 450, 1);
  Model m = load_model("Nemotron-4-340B");
  const Training tr = make_training(768, 4096, load_stack("megatron-core-2024"));
  Strategy s{.tp = 8, .pp = 12, .dp = 16};
  s.interleave = 8;
  s.recompute = Recompute::selective;
  s.sp = true;
  s.dist_opt = true;
  s.dp_overlap = true;
  const double bubble = estimate(m, tr, s, c, ib).breakdown.bubble_s;
  m.vocab = 32000;
  const double bubble_32k = estimate(m, tr, s, c, ib).breakdown.bubble_s;
  EXPECT_GT(bubble, 3 * bubble_32k);
}

// ByteDance's baseline runs of open-source Megatron-LM in the MegaScale paper (NSDI'24, Table 2):
// a 175B GPT on 256 to 12,288 A100, TP 8, PP 8, 6 chunks per stage, on the megatron-lm-2022 stack
// (the paper's Table 3 names the overlaps and FlashAttention-2 as what the baseline lacked). The
// first table of runs from outside the fit set's organisations to meet the project's bar. Each
// row's published MFU agrees with its time under railsim's FLOP count; A800's slower NVLink, the
// other Ampere part the paper may mean, would make the 256-GPU run about 5% slower.
TEST(ValidationTables, MegaScaleBaselineMeetsTheBar) {
  const auto tables = validation_tables();
  const ValidationTable* t = table_named(tables, "megascale-megatron-lm-a100");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->points.size(), 8u);
  EXPECT_TRUE(t->held_out);
  EXPECT_TRUE(t->within_tolerance());
  EXPECT_LE(t->mean_tolerance, 0.05);
  EXPECT_LE(t->max_tolerance, 0.10);
  const std::string file = "holdout-megascale-megatron-lm-a100";
  const Json d = spec::load_preset_or_file("validation", file, "test");
  for (std::size_t i = 0; i < t->points.size(); ++i) {
    const ValidationPoint& p = t->points[i];
    ASSERT_GT(p.railsim, 0) << p.label << ": " << p.note;
    EXPECT_LT(std::fabs(p.error()), 0.07) << p.label;
    EXPECT_NE(p.plan.find("tp 8 pp 8 "), std::string::npos) << p.plan;
    EXPECT_NE(p.plan.find("interleave 6"), std::string::npos) << p.plan;
    // 0.5%: the paper prints the times to three or four digits (11.9 s: +-0.4%).
    EXPECT_NEAR(implied_mfu(file, i, 312e12) / d["rows"][i]["_published_mfu"].get<double>(), 1.0,
                0.005)
        << p.label;
  }
  const spec::NetworkDesign ib = validate_fabric();
  const spec::GpuSpec g = spec::load_gpu("A100-SXM-80GB");
  const Model m = load_model("MegaScale-175B");
  const Training tr = make_training(768, 2048, load_stack("megatron-lm-2022"));
  Strategy s{.tp = 8, .pp = 8, .dp = 4, .micro_batch = 2};
  s.interleave = 6;
  s.recompute = Recompute::selective;
  s.sp = true;
  const double a100 =
      estimate(m, tr, s, spec::make_cluster(g, 256, 8, 200, 300, 1), ib).iteration_time_s;
  const double a800 =
      estimate(m, tr, s, spec::make_cluster(g, 256, 8, 200, 200, 1), ib).iteration_time_s;
  EXPECT_NEAR(a100, t->points[0].railsim, 1e-9);
  EXPECT_NEAR(a800 / a100, 1.05, 0.01);

  // The paper's MFU figures: the 175B at batch 256 within 3%; the 530B 12-15% fast, where
  // Korthikanti et al.'s nearly identical 530B run on Selene (2,240 GPUs, DP 8) is within 5%: the
  // two clusters measured 10% apart on one shape, railsim's figures 2% apart.
  const ValidationTable* mfu = table_named(tables, "megascale-megatron-lm-a100-mfu");
  ASSERT_NE(mfu, nullptr);
  ASSERT_EQ(mfu->points.size(), 4u);
  EXPECT_LT(std::fabs(mfu->points[0].error()), 0.03);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_GT(mfu->points[i].error(), 0.12) << mfu->points[i].label;
    EXPECT_LT(mfu->points[i].error(), 0.16) << mfu->points[i].label;
  }
  const ValidationTable* selene = table_named(tables, "korthikanti-2022-530b-dp8");
  ASSERT_NE(selene, nullptr);
  const ValidationPoint& selective = selene->points[0];
  EXPECT_NEAR(selective.measured / mfu->points[1].measured, 1.10, 0.01);
  EXPECT_NEAR(selective.railsim / mfu->points[1].railsim, 1.02, 0.01);
}

// GLM-130B on 768 A100 40 GB (DeepSpeed's pipeline, full recomputation), the third run of the
// Megatron-DeepSpeed family that railsim times fast, as BLOOM-176B and MT-NLG 530B are.
TEST(ValidationTables, Glm130bIsAThirdDeepSpeedRunTimedFast) {
  const auto tables = validation_tables();
  const ValidationPoint* glm = single_point(tables, "glm-130b-a100-40gb");
  ASSERT_NE(glm, nullptr);
  const ValidationPoint& p = *glm;
  ASSERT_GT(p.railsim, 0) << p.note;
  EXPECT_NEAR(p.error(), 0.303, 0.005);
  EXPECT_NE(p.plan.find("tp 4 pp 8 dp 24"), std::string::npos) << p.plan;
  EXPECT_NE(p.plan.find("recompute full"), std::string::npos) << p.plan;
  for (const char* id :
       {"megatron-deepspeed-bloom-176b-a100", "megatron-deepspeed-mtnlg-530b-a100"})
    for (const auto& q : table_named(tables, id)->points) EXPECT_LT(q.error(), -0.15) << q.label;
}

// NVIDIA's MLPerf GPT-3 175B submissions: the same job on the same 512 H100 ran 16% faster in v4.1
// (NeMo 24.09) than in v3.1 (NeMo 23.09), where railsim's figures for the two published layouts
// differ by 1%: the v3.1 runs come out within 2%, the v4.1 ones 14-16% slow.
TEST(ValidationTables, MlperfGpt3RunsDifferByReleaseNotLayout) {
  const auto tables = validation_tables();
  const auto by = points_by_label(tables, "mlperf-gpt3-nvidia");
  ASSERT_TRUE(all_timed_in_low_precision(by, 6));
  for (const char* v31 : {"v3.1-H100-512g", "v3.1-H100-768g", "v3.1-H100-10752g"}) {
    EXPECT_LT(by.at(v31)->error(), 0.0) << v31;
    EXPECT_GT(by.at(v31)->error(), -0.02) << v31;
  }
  for (const char* v41 : {"v4.1-H100-256g", "v4.1-H100-512g"}) {
    EXPECT_GT(by.at(v41)->error(), 0.13) << v41;
    EXPECT_LT(by.at(v41)->error(), 0.17) << v41;
    EXPECT_NE(by.at(v41)->plan.find("micro-batch 2, interleave 6"), std::string::npos);
  }
  const ValidationPoint& a = *by.at("v3.1-H100-512g");
  const ValidationPoint& b = *by.at("v4.1-H100-512g");
  EXPECT_NEAR(a.measured / b.measured, 1.163, 0.001);
  EXPECT_NEAR(a.railsim / b.railsim, 1.0, 0.015);
  EXPECT_NEAR(by.at("v4.1-B200-64g")->error(), 0.011, 0.005);
}

// A Megatron-Bridge recipe's own validation run publishes the peak of its allocated memory, the
// tensors railsim counts: Llama 3.1 405B on 64 GB200 (TP 8, PP 8 x 8 virtual stages, DP 1, no
// recomputation, MXFP8, bf16 gradients), 154.6 GiB. railsim's peak is within 2% of it because the
// optimizer's fp32 copy of the bf16 gradients (4 bytes per parameter at DP 1, 23.8 GiB) exists
// only during the step, when the activations (59.7 GiB) are freed; added to them, as railsim did,
// the peak came out 17% high. Its time is a hold-out like any other: 9.8% fast, as GB200's are.
TEST(ValidationTables, RecipeRunsAllocatedMemoryIsComparedLikeForLike) {
  const auto tables = validation_tables();
  const ValidationPoint* run = single_point(tables, "megatron-bridge-gb200-405b-recipe");
  ASSERT_NE(run, nullptr);
  const ValidationPoint& p = *run;
  ASSERT_GT(p.railsim, 0) << p.note;
  EXPECT_FALSE(p.fit);
  EXPECT_TRUE(p.low_precision);
  EXPECT_FALSE(p.memory_reserved);
  EXPECT_DOUBLE_EQ(p.measured_memory_gib, 154.6);
  EXPECT_NEAR(p.memory_error(), 0.014, 0.005);
  EXPECT_NEAR(p.error(), -0.098, 0.005);  // time: railsim 260.6 s against 289
  EXPECT_NE(p.plan.find("tp 8 pp 8 dp 1 ep 1, micro-batch 1, interleave 8, recompute none"),
            std::string::npos)
      << p.plan;
  // The parts: the copy is the step's, smaller than the activations it does not meet.
  const Model m = load_model("Llama-3-405B");
  const Training tr = make_training(1536, 8192, load_stack("nemo-perf-2025"), spec::Dtype::mxfp8);
  Strategy s{.tp = 8, .pp = 8, .dp = 1};
  s.interleave = 8;
  s.sp = true;
  s.recompute = Recompute::none;
  const MemoryUse mem = memory_use(m, tr, s);
  EXPECT_NEAR(mem.step_bytes / units::kGiB, 23.75, 0.01);
  EXPECT_NEAR(mem.activations_bytes / units::kGiB, 59.72, 0.01);
  EXPECT_NEAR(mem.total() / units::kGiB, p.memory_gib, 1e-9);
  EXPECT_NEAR((mem.total() + mem.step_bytes) / units::kGiB / 154.6 - 1.0, 0.167, 0.005);
  // The transcription: the two time figures the docstring prints agree under Megatron-Bridge's
  // FLOP count (causal attention: 2 s h per token and layer forward, not railsim's 4 s h), to
  // the 0.2% that its three-digit 289 s carries (+-0.5 s).
  const double h = 16384, kvd = 1024, f = 53248, layers = 126, vocab = 128256, seq = 8192;
  const double per_token =
      3 * (layers * 2 * (h * (h + 2 * kvd) + h * h + 3 * h * f + seq * h) + 2 * h * vocab);
  EXPECT_NEAR(1536 * seq * per_token / 289 / 64 / 1e12, 1718, 1718 * 0.002);
}

// The Megatron-Bridge summaries' FP8-MX rows against their FP8-CS (or 25.09 fp8) siblings run with
// the same layout: measured, MXFP8 took 1.02x to 1.07x as long; railsim, whose MXFP8 GEMMs run at
// 0.951 of the fp8 ones (Transformer Engine's B300 microbenchmark, inputs quantized beforehand),
// gives 1.02x to 1.05x, where at the fp8 rate it gave 1.00x (validation.md, item 4).
TEST(ValidationTables, MxRowsRunLongerThanTheirPerTensorSiblings) {
  const auto tables = validation_tables();
  int pairs = 0;
  for (const char* id :
       {"megatron-bridge-b200", "megatron-bridge-gb200", "megatron-bridge-gb300"}) {
    const auto by = points_by_label(tables, id);
    for (const auto& [label, mx] : by)
      for (const auto& [mx_suffix, cs_suffix] :
           {std::pair<std::string, std::string>{"-FP8-MX", "-FP8-CS"}, {"-mxfp8-paren", "-fp8"}}) {
        if (label.size() <= mx_suffix.size() ||
            label.compare(label.size() - mx_suffix.size(), mx_suffix.size(), mx_suffix) != 0)
          continue;
        const auto it = by.find(label.substr(0, label.size() - mx_suffix.size()) + cs_suffix);
        if (it == by.end() || it->second->plan != mx->plan) continue;  // same layout only
        ++pairs;
        const double measured = it->second->measured / mx->measured;  // tokens/s: CS over MX
        const double railsim = it->second->railsim / mx->railsim;
        EXPECT_GT(measured, 1.02) << label;
        EXPECT_LT(measured, 1.07) << label;
        EXPECT_GT(railsim, 1.02) << label;
        EXPECT_LT(railsim, 1.05) << label;
      }
  }
  EXPECT_EQ(pairs, 7);
}

// NVIDIA's MLPerf Training v5.1 Llama 3.1 405B runs in FP4 on GB200 and GB300 NVL72: railsim is
// fast on GB200, as on the Megatron-Bridge summaries' NVFP4 rows (its FP4 GEMMs charged fp8's
// fraction of the fp4 peak, no NVFP4 microbenchmark of it being published, validation.md item 4);
// on GB300, whose NVFP4 GEMMs run at the 1.90x over MXFP8 that Transformer Engine's B300
// microbenchmark measured (MXFP8's at 0.951 of fp8's), within 5%; from 512 to 5,120 GB200 (global
// batches of 1,152, 960 and 1,280) its times keep the measured ratio within 5%, so what it misses
// is per GPU, not in the scaling.
TEST(ValidationTables, MlperfLlama405bRunsAreFastAsNvfp4RowsAre) {
  const auto tables = validation_tables();
  const auto by = points_by_label(tables, "mlperf-llama31-405b-nvidia");
  ASSERT_TRUE(all_timed_in_low_precision(by, 4));
  for (const auto& [label, p] : by)
    EXPECT_NE(p->plan.find("interleave 8, recompute none"), std::string::npos) << p->plan;
  for (const char* gb200 : {"v5.1-GB200-512g", "v5.1-GB200-2560g", "v5.1-GB200-5120g"}) {
    EXPECT_LT(by.at(gb200)->error(), -0.06) << gb200;
    EXPECT_GT(by.at(gb200)->error(), -0.12) << gb200;
  }
  EXPECT_NEAR(by.at("v5.1-GB300-512g")->error(), 0.045, 0.005);
  const ValidationPoint& small = *by.at("v5.1-GB200-512g");
  const ValidationPoint& large = *by.at("v5.1-GB200-5120g");
  EXPECT_NEAR((small.railsim / large.railsim) / (small.measured / large.measured), 1.0, 0.05);
}

// The same round's Llama 3.1 8B on GB300, one sequence per replica: steps of 85 and 146 ms, of
// which railsim charges 40 and 127 ms. What it leaves out does not scale with the tokens: the
// fewer tokens a GPU has per step, the larger the miss.
TEST(ValidationTables, MlperfLlama8bStepsPayWhatDoesNotScaleWithTokens) {
  const auto tables = validation_tables();
  const ValidationTable* t = table_named(tables, "mlperf-llama31-8b-nvidia");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->points.size(), 2u);
  const ValidationPoint &wide = t->points[0], &narrow = t->points[1];
  ASSERT_EQ(wide.label, "v5.1-GB300-512g");
  ASSERT_GT(wide.railsim, 0) << wide.note;
  ASSERT_GT(narrow.railsim, 0) << narrow.note;
  EXPECT_NEAR(wide.error(), -0.537, 0.005);
  EXPECT_NEAR(narrow.error(), -0.133, 0.005);
  // Tokens per GPU per step: 8,192 / (2 x 4) on 512 GPUs, 8,192 / 2 on 72.
  EXPECT_LT(wide.error(), narrow.error());
}

// GB300 against GB200 in the Megatron-Bridge summaries, the same job on both (model, GPU count,
// precision, container): measured, GB300 runs 1.05x to 1.25x GB200's tokens per second in BF16
// and FP8 (median 1.21x over 17 pairs); railsim, whose two presets share their BF16 and FP8
// peaks and whose GEMM microbenchmarks are 3-8% apart, median 1.02x, and 1.00x to 1.05x where
// the two ran the same layout, which 5 of those 6 pairs measured at 1.19x to 1.24x
// (validation.md, item 4: a gap between the chips that the presets do not carry).
TEST(ValidationTables, Gb300OutrunsGb200MoreThanTheirPresetsSay) {
  const auto tables = validation_tables();
  std::map<std::string, std::array<const ValidationPoint*, 2>> pairs;  // GB200, GB300
  for (const char* id : {"megatron-bridge-gb200", "megatron-bridge-gb300", "megatron-bridge-moe"})
    for (const auto& [label, p] : points_by_label(tables, id)) {
      const bool gb300 = label.rfind("GB300-", 0) == 0;
      if ((gb300 || label.rfind("GB200-", 0) == 0) && label.find("NVFP4") == std::string::npos)
        pairs[label.substr(6)][gb300 ? 1 : 0] = p;
    }
  std::vector<double> measured, railsim;
  int same_layout = 0, same_layout_fast = 0;
  for (const auto& [job, pair] : pairs) {
    if (pair[0] == nullptr || pair[1] == nullptr) continue;
    ASSERT_GT(pair[0]->railsim, 0) << job;
    ASSERT_GT(pair[1]->railsim, 0) << job;
    const double m = pair[1]->measured / pair[0]->measured;
    const double r = pair[1]->railsim / pair[0]->railsim;
    measured.push_back(m);
    railsim.push_back(r);
    if (pair[0]->plan == pair[1]->plan) {
      ++same_layout;
      EXPECT_LE(r, 1.05) << job;
      same_layout_fast += m >= 1.19 ? 1 : 0;
    }
  }
  ASSERT_EQ(measured.size(), 17u);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
  };
  EXPECT_NEAR(median(measured), 1.21, 0.005);
  EXPECT_NEAR(median(railsim), 1.025, 0.005);
  EXPECT_NEAR(*std::min_element(measured.begin(), measured.end()), 1.05, 0.005);
  EXPECT_NEAR(*std::max_element(measured.begin(), measured.end()), 1.25, 0.005);
  EXPECT_EQ(same_layout, 6);
  EXPECT_EQ(same_layout_fast, 5);
}

// What Blackwell Ultra's doubled exponential rate can carry of that gap, by a microbenchmark of
// the attention itself: NVIDIA's cuDNN frontend training SDPA benchmark timed Llama 3.1's
// attention (64 query and 8 KV heads of 128, causal, 2 x 8,192 tokens, cuDNN 9.26, July 2026) at
// 1.336 ms forward and 4.090 ms backward on GB200, 1.105 and 3.797 ms on GB300: 1.107x for the
// pair. Attention is about a fifth of railsim's time for the Llama 3 8B job both ran (FP8, 8
// GPUs, 25.11), so an attention 1.107x faster makes GB300 about 1.02x faster, of the 1.19x
// measured (validation.md, item 4). The presets carry the same benchmark's fractions as measured
// in the runs' own containers (GB200: NGC 25.11, cuDNN 9.17, 1,584 and 1,211 TFLOP/s).
TEST(ValidationTables, AttentionCarriesLittleOfGb300sLeadOverGb200) {
  const spec::GpuSpec g = spec::load_gpu("GB200");
  EXPECT_NEAR(g.eff.flash_attention, 1584e12 / g.peak_bf16_flops, 0.001);
  EXPECT_NEAR(g.eff.flash_attention_bwd, 1211e12 / g.peak_bf16_flops, 0.001);
  const Model m = load_model("Llama-3-8B");
  const Training tr = make_training(128, 8192, load_stack("nemo-perf-2025"), Dtype::fp8);
  Strategy s{.tp = 1, .pp = 1, .dp = 8};
  s.micro_batch = 2;
  s.recompute = Recompute::selective;
  s.dist_opt = true;
  s.dp_overlap = true;
  auto time_with = [&](double scale) {
    spec::GpuSpec gpu = g;
    gpu.eff.flash_attention *= scale;
    gpu.eff.flash_attention_bwd *= scale;
    const spec::Cluster c = spec::make_cluster(gpu, 8, 8, gpu.nic_bw_Bps * 8 / 1e9,
                                               gpu.hb_bw_Bps / 1e9, gpu.nics_per_gpu);
    return estimate(m, tr, s, c, validate_fabric()).iteration_time_s;
  };
  const double t = time_with(1.0);
  // Half the fractions double every fused attention kernel's time and nothing else.
  const double attention = time_with(0.5) - t;
  EXPECT_NEAR(attention / t, 0.21, 0.01);
  // The pair's ratio from the benchmark's four times, as docs/validation.md quotes it (a check of
  // the transcription, so at compile time).
  constexpr double pair_ratio = (1.336 + 4.090) / (1.105 + 3.797);
  static_assert(pair_ratio > 1.106 && pair_ratio < 1.108);
  const double attention_gain = t / (t - attention * (1.0 - 1.0 / pair_ratio));
  EXPECT_LT(attention_gain, 1.03);
  const auto tables = validation_tables();
  const ValidationPoint& gb200 =
      *points_by_label(tables, "megatron-bridge-gb200").at("GB200-25.11-LLAMA3_8B-8g-FP8-CS");
  const ValidationPoint& gb300 =
      *points_by_label(tables, "megatron-bridge-gb300").at("GB300-25.11-LLAMA3_8B-8g-FP8-CS");
  EXPECT_NEAR(gb300.measured / gb200.measured, 1.19, 0.005);
  EXPECT_NEAR(t, 128.0 * 8192.0 / 8.0 / gb200.railsim, 1e-6);  // the row's own plan and time
  // What attention leaves of the measured lead: about 1.17x.
  EXPECT_NEAR(gb300.measured / gb200.measured / attention_gain, 1.17, 0.01);
}

// MLPerf Training v6.0: DeepSeek-V3 671B on GB300 10-11% slow as its scripts run it: the expert
// all-to-all under combined 1F1B (28% slow without) and the two output layers of its last stage
// (the model's and the MTP module's) in MXFP8 (18% slow in BF16); the round's Llama 3.1 405B
// FP4 runs on GB300 5-12% slow; on GB200 (TP 2) DeepSeek-V3 is fast, and more so the
// more GPUs share the batch: a per-GPU gap (GB200's transferred fractions, as on every GB200
// table) and a scaling loss the model does not carry (validation.md, item 10).
TEST(ValidationTables, MlperfV6DeepSeekV3HoldsOnGb300AndRunsFastOnGb200) {
  const auto tables = validation_tables();
  const auto by = points_by_label(tables, "mlperf-v6-nvidia");
  ASSERT_TRUE(all_timed_in_low_precision(by, 8));
  for (const auto& [label, p] : by)
    EXPECT_EQ(p->moe, label.find("DSV3") != std::string::npos) << label;
  EXPECT_NEAR(by.at("v6.0-DSV3-GB300-256g")->error(), 0.110, 0.005);
  EXPECT_NEAR(by.at("v6.0-DSV3-GB300-512g")->error(), 0.096, 0.005);
  EXPECT_NEAR(by.at("v6.0-405B-GB300-512g")->error(), 0.121, 0.005);
  EXPECT_NEAR(by.at("v6.0-405B-GB300-2048g")->error(), 0.050, 0.005);
  // GB200: fast, by more at each step up in GPUs (512, 2,048, 4,096, 8,192).
  double before = 0;
  for (const char* gb200 : {"v6.0-DSV3-GB200-512g", "v6.0-DSV3-GB200-2048g",
                            "v6.0-DSV3-GB200-4096g", "v6.0-DSV3-GB200-8192g"}) {
    const double e = by.at(gb200)->error();
    EXPECT_LT(e, -0.21) << gb200;
    EXPECT_LT(e, before) << gb200;
    before = e;
  }
  // Per GPU, at 512 GPUs: the measured GB200 (TP 2) run is 1.64x the GB300 (TP 1) one; railsim
  // has it 1.18x.
  const ValidationPoint& gb200 = *by.at("v6.0-DSV3-GB200-512g");
  const ValidationPoint& gb300 = *by.at("v6.0-DSV3-GB300-512g");
  EXPECT_NEAR(gb200.measured / gb300.measured, 1.641, 0.001);
  EXPECT_NEAR(gb200.railsim / gb300.railsim, 1.175, 0.01);
  // The overlap the scripts turn on (OVERLAP_MOE_EXPERT_PARALLEL_COMM): without it, the 512-GPU
  // GB300 run's all-to-all is left exposed and railsim is 28% slow.
  const std::string path = testing::TempDir() + "railsim_dsv3_overlap.json";
  write_time_table(path, "",
                   R"("common": {"stack": "nemo-perf-2025", "model": "DeepSeek-V3", "gpu": "GB300",
                 "hb_domain": 72, "nic_gbps": 800, "gpus": 512, "global_batch": 15360,
                 "seq_len": 4096, "dtype": "mxfp8", "tp": 1, "pp": 4, "interleave": 4,
                 "ep": 32, "etp": 1, "micro_batch": 1, "recompute": "none",
                 "fp8_output_layer": true},
      "rows": [{"label": "on", "ep_overlap": true, "iteration_time_s": 20.0},
               {"label": "off", "ep_overlap": false, "iteration_time_s": 20.0},
               {"label": "bf16 head", "ep_overlap": true, "fp8_output_layer": false,
                "iteration_time_s": 20.0}])");
  const ValidationTable own = own_table(path, "--table");
  ASSERT_EQ(own.points.size(), 3u);
  EXPECT_DOUBLE_EQ(own.points[0].railsim, gb300.railsim);
  EXPECT_NEAR(own.points[2].error(), 0.182, 0.005);
  EXPECT_NEAR(own.points[1].error(), 0.280, 0.01);
}

// A table may say how its runs' fabric routes: an Ethernet cluster's ECMP hashing instead of
// the adaptive routing validate's InfiniBand fabrics use. MegaScale's 6,144-GPU run on uniform
// 200G ports: ECMP's collisions make it 15% slower than adaptive routing's spreading.
TEST(ValidationTables, ATableRoutesAsItSays) {
  const std::string path = testing::TempDir() + "railsim_routed_table.json";
  auto write = [&](const std::string& routing) {
    write_time_table(path, routing, R"("common": {"gpu": "A100-SXM-80GB",
      "stack": "megatron-lm-2022", "nic_gbps": 200, "model": "MegaScale-175B", "seq_len": 2048,
      "tp": 8, "pp": 8, "interleave": 6},
      "rows": [{"label": "6144", "gpus": 6144, "global_batch": 6144, "iteration_time_s": 14.78}])");
  };
  write("");
  const ValidationTable adaptive = own_table(path, "--table");
  write(R"(, "routing": "ecmp")");
  const ValidationTable ecmp = own_table(path, "--table");
  EXPECT_EQ(adaptive.routing, "adaptive");
  EXPECT_EQ(ecmp.routing, "ecmp");
  ASSERT_GT(adaptive.points[0].railsim, 0) << adaptive.points[0].note;
  ASSERT_GT(ecmp.points[0].railsim, 0) << ecmp.points[0].note;
  EXPECT_NEAR(ecmp.points[0].railsim / adaptive.points[0].railsim, 1.15, 0.02);
  write(R"(, "routing": "hashed")");
  try {
    (void)own_table(path, "--table");
    ADD_FAILURE() << "routing hashed accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--table: table.routing: ", 0), 0u) << e.what();
  }
}

// A table may name the switch its runs' fabric is built of (a preset or a JSON file): the runs
// are timed on it, under its default routing unless the table says otherwise, and a NIC faster
// than its ports is that run's reason for having no figure, not a silent change of switch.
TEST(ValidationTables, ATableNamesItsSwitch) {
  const std::string path = testing::TempDir() + "railsim_switched_table.json";
  auto write = [&](const std::string& table) {
    write_time_table(path, table, R"("common": {"gpu": "GB300", "stack": "nemo-perf-2025",
      "nic_gbps": 800, "hb_domain": 72, "model": "Llama-3-70B", "seq_len": 8192, "dtype": "fp8",
      "tp": 1, "pp": 4, "interleave": 5, "micro_batch": 1},
      "rows": [{"label": "64", "gpus": 64, "global_batch": 128, "iteration_time_s": 10}])");
  };
  write("");
  const ValidationTable auto_ib = own_table(path, "--table");
  EXPECT_EQ(auto_ib.switch_name, "Q3400");  // validate's InfiniBand at the NICs' 800G
  EXPECT_EQ(auto_ib.routing, "adaptive");
  write(R"(, "switch": "ETH-51.2T-64x800G")");
  const ValidationTable eth = own_table(path, "--table");
  EXPECT_EQ(eth.switch_name, "ETH-51.2T-64x800G");
  EXPECT_EQ(eth.points[0].switch_name, "ETH-51.2T-64x800G");
  EXPECT_EQ(eth.routing, "ecmp");  // Ethernet's default
  ASSERT_GT(eth.points[0].railsim, 0) << eth.points[0].note;
  write(R"(, "switch": "ETH-51.2T-64x800G", "routing": "adaptive")");
  EXPECT_EQ(own_table(path, "--table").routing, "adaptive");
  write(R"(, "switch": "QM9700")");
  const ValidationTable slow = own_table(path, "--table");
  EXPECT_EQ(slow.points[0].railsim, 0);
  EXPECT_NE(slow.points[0].note.find("800 Gb/s NICs are faster than the 400 Gb/s ports"),
            std::string::npos)
      << slow.points[0].note;
  write(R"(, "switch": "no-such-switch")");
  try {
    (void)own_table(path, "--table");
    ADD_FAILURE() << "unknown switch accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--table: table.switch: unknown preset", 0), 0u)
        << e.what();
  }
}

// LLM Foundry's 2023 benchmarks ran FlashAttention's Triton port, a FlashAttention-1-class kernel
// at half the FlashAttention-2 class's rate (Dao 2023; docs/validation.md, item 3). Timed so,
// MPT-7B on 8 A100 80 GB from 4K to 65K tokens, where attention grows from under a tenth of the
// FLOPs to more than half, no longer comes out faster with every doubling of the sequence: before,
// the error climbed from +7.0% to +46.1% (39 points); it now spans under 10 points, every row a
// little slow (the port ran nearer 0.6 of FlashAttention-2's rate on these runs than the paper's
// half).
TEST(ValidationTables, LlmFoundrysAttentionIsFlashAttention1Class) {
  const auto tables = validation_tables();  // the points below live in it
  const auto by = points_by_label(tables, "llmfoundry-a100-80gb");
  double lo = 1, hi = -1;
  for (const char* label : {"7b-s4096-8g-mb16", "7b-s8192-8g-mb8", "7b-s16384-8g-mb4",
                            "7b-s32768-8g-mb2", "7b-s65536-8g-mb1"}) {
    ASSERT_TRUE(by.contains(label)) << label;
    const ValidationPoint& p = *by.at(label);
    ASSERT_GT(p.railsim, 0) << label << ": " << p.note;
    lo = std::min(lo, p.error());
    hi = std::max(hi, p.error());
  }
  EXPECT_LT(hi - lo, 0.10);
  EXPECT_LT(hi, 0.0);    // railsim slower than measured on each
  EXPECT_GT(lo, -0.15);  // but by less than 15%
  EXPECT_EQ(spec::load_stack("llm-foundry-2023").attention_kernel, spec::AttentionKernel::fa1);
}

// One's own table, read from a file: timed as the shipped tables are, each run with the band of
// its GPU, stack and model kind, and refused field by field where it is malformed.
TEST(ValidationTables, OwnTableIsCheckedTimedAndBanded) {
  const std::string path = testing::TempDir() + "railsim_own_table.json";
  auto write = [&](const std::string& rows) {
    std::ofstream(path) << R"({"table": {"id": "mine", "title": "Mine", "metric": "mfu",
      "max_tolerance": 0.1, "mean_tolerance": 0.05},
      "common": {"gpu": "A100-SXM-80GB", "stack": "megatron-lm-2022", "hb_domain": 8,
                 "nic_gbps": 200, "model": "GPT-3-175B", "gpus": 1024, "global_batch": 1536,
                 "seq_len": 2048, "tp": 8, "pp": 16, "micro_batch": 1},
      "rows": )" << rows << "}";
  };
  write(R"([{"label": "near", "mfu": 0.47, "memory_gib": 60}, {"label": "far", "mfu": 0.9}])");
  const ValidationTable own = own_table(path, "--table");
  ASSERT_EQ(own.points.size(), 2u);
  EXPECT_TRUE(own.held_out);
  EXPECT_FALSE(own.enforced);
  const auto tables = validation_tables();
  const ErrorBand band = error_band(tables, "A100-SXM-80GB", "megatron-lm-2022");
  EXPECT_EQ(band.level, Evidence::gpu_and_stack);
  const Json j = to_json(tables, own);
  // The same run measured at two MFUs: one figure, +9.0% against 0.47 (inside the band), -43%
  // against 0.9 (outside).
  ASSERT_GT(own.points[0].railsim, 0) << own.points[0].note;
  EXPECT_DOUBLE_EQ(own.points[1].railsim, own.points[0].railsim);
  EXPECT_NEAR(own.points[0].error(), 0.090, 0.001);
  for (std::size_t i = 0; i < own.points.size(); ++i)
    EXPECT_DOUBLE_EQ(j["own"]["table"]["points"][i]["band"].get<double>(), band.fraction);
  EXPECT_TRUE(j["own"]["table"]["points"][0]["inside_band"].get<bool>());
  EXPECT_FALSE(j["own"]["table"]["points"][1]["inside_band"].get<bool>());
  EXPECT_EQ(j["own"]["inside_band"].get<int>(), 1);
  EXPECT_EQ(j["error_bands"], to_json(tables)["error_bands"]);
  // The memory a row publishes, against railsim's for the same plan.
  EXPECT_DOUBLE_EQ(j["own"]["table"]["points"][0]["measured_memory_gib"].get<double>(), 60.0);
  EXPECT_TRUE(j["own"]["table"]["points"][1]["measured_memory_gib"].is_null());
  EXPECT_NEAR(j["own"]["table"]["points"][0]["memory_gib"].get<double>(), own.points[0].memory_gib,
              1e-12);
  // A row's memory is of the allocated tensors unless it says "memory_measure": "reserved".
  EXPECT_EQ(j["own"]["memory"]["allocated"]["runs"].get<int>(), 1);
  EXPECT_EQ(j["own"]["memory"]["reserved"]["runs"].get<int>(), 0);
  EXPECT_NEAR(j["own"]["memory"]["allocated"]["bias"].get<double>(),
              own.points[0].memory_gib / 60.0 - 1.0, 1e-12);
  // Malformed: each refused naming the option and the row's field.
  const std::pair<const char*, const char*> bad[] = {
      {R"([{"label": "x", "mfu": 0.4, "pipeline": 16}])", "--table: rows[0].pipeline: unknown"},
      {R"([{"label": "x", "mfu": 0.4, "tp": "8"}])", "--table: rows[0].tp: got \"8\""},
      {R"([{"label": "x", "mfu": 0.4, "fit": true}])", "--table: rows[0].fit: the fit set"},
      {R"([{"label": "x", "mfu": 0.4, "memory_gib": -2}])", "--table: rows[0].memory_gib: got -2"},
      {R"([{"label": "x", "mfu": 0.4, "memory_gib": 60, "memory_measure": "peak"}])",
       "--table: rows[0].memory_measure: got \"peak\", expected allocated or reserved"},
      {R"([{"label": "x"}])", "--table: rows[0].mfu: missing"},
      {R"([])", "--table: rows: expected a non-empty array"},
      {R"([{"label": "x", "mfu": 0.4, "gpu": "A200"}])", "--table: rows[0].gpu: unknown preset"},
  };
  for (const auto& [rows, what] : bad) {
    write(rows);
    try {
      (void)own_table(path, "--table");
      ADD_FAILURE() << rows;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(what, 0), 0u) << e.what();
    }
  }
}
