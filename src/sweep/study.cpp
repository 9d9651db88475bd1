#include "railsim/sweep/study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "railsim/core/error.hpp"

namespace railsim::sweep {

namespace {

// The paper's setting: GPT-1T, batch 4,096, on 32,768 GH200 (K=256) and H100 (K=8).
SweepOptions paper_setting() {
  SweepOptions o;
  o.axes.gpu.clear();
  for (const spec::ReferenceCluster& r : spec::kPaperClusters) o.axes.gpu.push_back(r.gpu);
  o.axes.gpus = {spec::kDefaultGpus};
  o.axes.model = {spec::kDefaultModel};
  o.axes.batch = {spec::kDefaultGlobalBatch};
  // The routing is a plain sweep's (auto: the switch's default; --routing sweeps it), and every
  // row states it: a study never differs silently from the plain sweep of its axes.
  return o;
}

StudyPlot timing_plot(std::string x, int x_log_base, std::string title) {
  StudyPlot p;
  p.x = std::move(x);
  p.y = "best_iteration_time_s";
  p.series = {"design", "gpu"};
  p.x_log_base = x_log_base;
  p.title = std::move(title);
  return p;
}

bool numeric(report::Type t) {
  return t == report::Type::integer || t == report::Type::real;
}

std::optional<double> number_of(const report::Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&c)) return *d;
  return std::nullopt;
}

// A column's values on a chart axis: money in millions of dollars, watts in megawatts, fractions
// in percent, so that the tick labels read as the tables do ("$80.9M", "1.07 MW", "23.4%") rather
// than as 8.09e+07.
struct AxisUnit {
  double scale = 1;
  std::string label;
};
AxisUnit axis_unit(const report::Column& c) {
  const std::string unit = c.style == report::Style::usd        ? "$M"
                           : c.style == report::Style::fraction ? "%"
                           : c.unit == "W"                      ? "MW"
                                                                : c.unit;
  const double scale = c.style == report::Style::usd || c.unit == "W" ? 1e-6
                       : c.style == report::Style::fraction           ? 100
                                                                      : 1;
  return {scale, unit.empty() ? c.label : fmt::format("{} ({})", c.label, unit)};
}

}  // namespace

std::vector<std::string> study_names() {
  return {"hb-domain", "hb-bandwidth", "nic-bandwidth", "batch", "cluster-size", "moe-alltoall"};
}

Study make_study(const std::string& name, const std::string& option) {
  Study s;
  s.name = name;
  s.options = paper_setting();
  if (name == "hb-domain") {
    s.summary = "iteration time vs HB-domain size K, GPT-1T on 32,768 GPUs";
    s.options.axes.hb_domain = {8, 16, 32, 64, 128, 256};
    s.plot =
        timing_plot("hb_domain", 2, "GPT-1T on 32,768 GPUs: best iteration time vs HB-domain size");
  } else if (name == "hb-bandwidth") {
    s.summary = "iteration time vs HB bandwidth per GPU, GPT-1T on 32,768 GPUs";
    s.options.axes.hb_GBps = {150, 300, 450, 600, 750, 900};
    s.plot =
        timing_plot("hb_GBps", 0, "GPT-1T on 32,768 GPUs: best iteration time vs HB bandwidth");
  } else if (name == "nic-bandwidth") {
    s.summary = "iteration time vs NIC bandwidth, GPT-1T on 32,768 GPUs";
    s.options.axes.nic_gbps = {100, 200, 400, 800};
    s.plot =
        timing_plot("nic_gbps", 2, "GPT-1T on 32,768 GPUs: best iteration time vs NIC bandwidth");
  } else if (name == "batch") {
    s.summary = "iteration time vs global batch, GPT-1T on 32,768 GPUs";
    s.options.axes.batch = {512, 1024, 2048, 4096, 8192, 16384};
    s.plot = timing_plot("batch", 2, "GPT-1T on 32,768 GPUs: best iteration time vs global batch");
    s.plot.y_log_base = 2;
    s.plot.legend = report::Legend::top_left;
  } else if (name == "cluster-size") {
    s.summary = "network cost vs cluster size (no plan search)";
    s.options.axes.gpus.assign(std::begin(spec::kPaperClusterSizes),
                               std::end(spec::kPaperClusterSizes));
    s.options.perf = false;
    s.plot.x = "gpus";
    s.plot.y = "cost_usd";
    s.plot.series = {"design", "gpu"};
    s.plot.designs = {"rail_optimized", "rail_only"};
    s.plot.x_log_base = 2;
    s.plot.y_log_base = 10;
    s.plot.title = "Network cost vs cluster size (H100 K=8, GH200 K=256)";
    s.plot.legend = report::Legend::top_left;
  } else if (name == "moe-alltoall") {
    s.summary =
        "rail-only's all-to-all slowdown vs HB-domain size K: 256 MB per GPU over 32,768 H100, "
        "two-phase forwarding (simulated), no plan search";
    s.options.axes.gpu = {spec::kDefaultGpu};
    s.options.axes.hb_domain = {8, 16, 32, 64, 128, 256};
    s.options.axes.hb_GBps = {450, 900};
    s.options.perf = false;
    s.options.alltoall_bytes = 256e6;
    // The paper's figure: store-and-forward in two phases (--forwarding pipelined is NCCL's PXN).
    s.options.network.forwarding = "two-phase";
    s.plot.x = "hb_domain";
    s.plot.y = "alltoall_vs_rail_optimized_pct";
    s.plot.series = {"design", "hb_GBps"};
    s.plot.designs = {"rail_only"};
    s.plot.x_log_base = 2;
    s.plot.title = "MoE all-to-all on 32,768 H100: rail-only forwarding overhead vs HB-domain size";
    s.plot.legend = report::Legend::bottom_right;
  } else {
    std::string valid;
    for (const auto& n : study_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InputError(option, fmt::format("unknown study '{}'; valid: {}", name, valid));
  }
  return s;
}

std::string column_of(const std::string& option_or_column) {
  std::string s = option_or_column;
  if (s.rfind("--", 0) == 0) s = s.substr(2);
  static const std::map<std::string, std::string> kOptions = {
      {"gpu", "gpu"},           {"gpus", "gpus"},       {"hb-domain", "hb_domain"},
      {"nic-gbps", "nic_gbps"}, {"hb-GBps", "hb_GBps"}, {"nics-per-gpu", "nics_per_gpu"},
      {"switch", "switch"},     {"catalog", "catalog"}, {"oversubscription", "oversubscription"},
      {"model", "model"},       {"batch", "batch"},     {"seq", "seq"}};
  const auto it = kOptions.find(s);
  return it != kOptions.end() ? it->second : option_or_column;
}

StudyPlot resolve_plot(const Study* study, const std::string& x, const std::string& y,
                       const SweepOptions& opt) {
  StudyPlot p;
  if (study) p = study->plot;
  if (!x.empty()) p.x = column_of(x);
  if (!y.empty()) p.y = column_of(y);
  if (p.x.empty() || p.y.empty())
    throw InputError("--plot",
                     "a plain sweep plots with --plot-x OPTION and --plot-y COLUMN (or "
                     "take a --study)");
  if (study && !x.empty()) {  // the study's series and title were chosen for its x
    p.series.clear();
    p.title.clear();
    p.x_log_base = 0;
  }
  if (study && !y.empty()) {
    p.title.clear();
    p.y_log_base = 0;
  }
  const std::vector<report::Column> cols = sweep_columns(opt);
  std::string valid;
  for (const auto& c : cols)
    if (numeric(c.type)) valid += (valid.empty() ? "" : ", ") + c.name;
  for (const auto& [value, option] : {std::pair{p.x, "--plot-x"}, {p.y, "--plot-y"}}) {
    const auto it =
        std::find_if(cols.begin(), cols.end(), [&, name = value](const report::Column& c) {
          return c.name == name;  // a copy: clang 14 cannot capture a structured binding
        });
    if (it == cols.end()) {
      const bool timing = value.rfind("best_", 0) == 0 || value == "vs_rail_optimized_pct";
      const bool alltoall = value.rfind("alltoall_", 0) == 0;
      throw InputError(
          study && value == study->plot.y && y.empty() ? "--no-perf" : option,
          timing     ? fmt::format("column '{}' needs the plan search (drop --no-perf)", value)
          : alltoall ? fmt::format("column '{}' needs --alltoall BYTES", value)
                     : fmt::format("no column '{}'; numeric columns: {}", value, valid));
    }
    if (!numeric(it->type))
      throw InputError(
          option, fmt::format("column '{}' is not numeric; numeric columns: {}", value, valid));
  }
  return p;
}

report::LineChart sweep_chart(const report::Table& t, const StudyPlot& p) {
  auto index = [&](const std::string& name) -> std::size_t {
    for (std::size_t i = 0; i < t.columns.size(); ++i)
      if (t.columns[i].name == name) return i;
    throw InputError("--plot", fmt::format("the table has no column '{}'", name));
  };
  const std::size_t xi = index(p.x), yi = index(p.y), di = index("design");
  // The series columns: as given, or the design and every other input that varies.
  std::vector<std::size_t> series;
  if (!p.series.empty()) {
    for (const auto& s : p.series) series.push_back(index(s));
  } else {
    series.push_back(di);
    for (std::size_t c = 0; c < di; ++c) {
      if (c == xi) continue;
      bool varies = false;
      for (const auto& row : t.rows) varies = varies || row[c] != t.rows.front()[c];
      if (varies) series.push_back(c);
    }
  }
  auto keep = [&](const std::vector<report::Cell>& row) {
    if (p.designs.empty()) return true;
    const auto* d = std::get_if<std::string>(&row[di]);
    return d && std::find(p.designs.begin(), p.designs.end(), *d) != p.designs.end();
  };
  const AxisUnit xu = axis_unit(t.columns[xi]), yu = axis_unit(t.columns[yi]);
  report::LineChart chart;
  std::map<std::string, std::size_t> by_name;
  std::vector<std::vector<std::pair<double, double>>> points;
  for (const auto& row : t.rows) {
    if (!keep(row)) continue;
    const auto x = number_of(row[xi]), y = number_of(row[yi]);
    if (!x || !y) continue;
    std::string name;
    for (std::size_t c : series) {
      const report::Column& col = t.columns[c];
      std::string v = report::human_cell(col, row[c]);
      if (numeric(col.type)) v = col.label + " " + v;
      name += (name.empty() ? "" : ", ") + v;
    }
    auto [it, added] = by_name.emplace(name, chart.series.size());
    if (added) {
      report::Series added_series;
      added_series.name = name;
      chart.series.push_back(std::move(added_series));
      points.emplace_back();
    }
    points[it->second].emplace_back(*x * xu.scale, *y * yu.scale);
  }
  if (chart.series.empty())
    throw InputError("--plot", fmt::format("nothing to plot: no row has both {} and {}", p.x, p.y));
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    std::stable_sort(points[s].begin(), points[s].end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [x, y] : points[s]) {
      chart.series[s].x.push_back(x);
      chart.series[s].y.push_back(y);
    }
  }
  chart.x = {.label = xu.label, .log_base = p.x_log_base};
  chart.y = {.label = yu.label, .log_base = p.y_log_base};
  chart.title =
      p.title.empty() ? fmt::format("{} vs {}", t.columns[yi].label, t.columns[xi].label) : p.title;
  chart.legend = p.legend;
  return chart;
}

}  // namespace railsim::sweep
