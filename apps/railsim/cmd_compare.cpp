#include <fmt/format.h>

#include <memory>

#include "commands.hpp"
#include "railsim/core/error.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/cost/report.hpp"

namespace railsim::cli {

namespace {

struct CompareOptions {
  spec::ClusterOptions cluster;
  NetworkOptions network;
  std::string catalog = cost::kDefaultCatalog;
  std::string counting = "whole";
  bool json = false;
  bool csv = false;
};

// ---- Performance hook (issue 3) -------------------------------------------------------------
// Per-design figures from the performance model, e.g. each design's best-plan iteration time
// for a model. Return one ExtraColumn per figure with one value per design, in the order of
// `designs` (rail_optimized, rail_only, ideal); they appear as rows of the table, columns of the
// CSV and fields of each design's JSON. Register any options it needs in
// add_performance_options. Nothing here yet: the cost comparison stands alone.
struct PerformanceOptions {};
void add_performance_options(CLI::App& /*cmd*/, PerformanceOptions& /*opt*/) {}
std::vector<cost::ExtraColumn> performance_columns(
    const PerformanceOptions& /*opt*/, const spec::Cluster& /*cluster*/,
    const std::vector<spec::NetworkDesign>& /*designs*/) {
  return {};
}
// ----------------------------------------------------------------------------------------------

bool any_cluster_option(const CLI::App& cmd) {
  for (const char* opt :
       {"--gpus", "--gpu", "--hb-domain", "--nic-gbps", "--hb-GBps", "--nics-per-gpu"})
    if (cmd.count(opt) > 0) return true;
  return false;
}

void run_compare(const CLI::App& cmd, const CompareOptions& o, const PerformanceOptions& perf) {
  const spec::NetworkDesign base = resolve_network(o.network);
  const cost::Catalog cat = cost::load_catalog(o.catalog, "--catalog");
  const cost::SwitchCounting counting = cost::parse_switch_counting(o.counting);
  if (o.json && o.csv) throw InputError("--csv", "choose one of --json and --csv");

  // With no cluster option: the README's main job, the two clusters of the paper's ranges.
  std::vector<spec::Cluster> clusters;
  if (any_cluster_option(cmd)) {
    clusters.push_back(spec::make_cluster(o.cluster));
  } else {
    spec::ClusterOptions gh200;
    gh200.gpu = "GH200";
    gh200.gpus = 32768;
    gh200.hb_domain = 256;
    spec::ClusterOptions h100;
    h100.gpu = "H100-SXM";
    h100.gpus = 32768;
    h100.hb_domain = 8;
    clusters.push_back(spec::make_cluster(gh200));
    clusters.push_back(spec::make_cluster(h100));
  }

  Json all = Json::array();
  std::string text, csv = o.csv ? cost::csv_header() : "";
  bool header_done = false;
  for (std::size_t ci = 0; ci < clusters.size(); ++ci) {
    const spec::Cluster& c = clusters[ci];
    const auto rows = cost::compare_designs(c, base, cat, counting);
    std::vector<spec::NetworkDesign> designs;
    for (const auto& r : rows) {
      spec::NetworkDesign d = base;
      d.kind = r.bom.design;
      designs.push_back(d);
    }
    const auto extra = performance_columns(perf, c, designs);
    if (o.csv && !extra.empty() && !header_done) csv = cost::csv_header(extra);
    header_done = true;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Json j = cost::to_json(rows[i], true);
      j["gpu"] = c.gpu.name;
      for (const auto& col : extra)
        if (i < col.values.size()) j[col.name] = col.values[i];
      all.push_back(std::move(j));
      if (o.csv) csv += cost::csv_row(c, rows[i], true, extra, i);
    }
    if (ci) text += "\n";
    text += cost::compare_table(c, rows, extra);
  }
  if (o.json) {
    fmt::print("{}\n", Json{{"designs", all}}.dump(2));
  } else if (o.csv) {
    fmt::print("{}", csv);
  } else {
    fmt::print("{}", text);
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  auto perf = std::make_shared<PerformanceOptions>();
  auto* cmd = app.add_subcommand(
      "compare",
      "rail_optimized vs rail_only vs ideal side by side: bill of materials, cost, power and "
      "savings. With no cluster option: 32,768 GH200 (K=256) and 32,768 H100 (K=8)");
  add_cluster_options(*cmd, o->cluster);
  add_network_options(*cmd, o->network, /*with_design=*/false);
  cmd->add_option(
         "--catalog", o->catalog,
         "Component price/power catalog: preset name (`railsim presets catalogs`) or JSON file")
      ->capture_default_str();
  cmd->add_option("--switch-counting", o->counting,
                  "whole: buy every switch box; ports: pay for cabled ports only")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON: {\"designs\": [...]}");
  cmd->add_flag("--csv", o->csv, "Print CSV (a header and one row per design)");
  add_performance_options(*cmd, *perf);
  cmd->callback([cmd, o, perf] { run_compare(*cmd, *o, *perf); });
}

}  // namespace railsim::cli
