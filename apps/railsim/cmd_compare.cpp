#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/report/tables.hpp"
#include "strategy_options.hpp"

namespace railsim::cli {

namespace {

struct CompareOptions {
  spec::ClusterOptions cluster;
  NetworkOptions network;
  CostOptions cost;
  bool json = false;
  bool csv = false;
  bool savings_table = false;
};

// Each design's best parallelization for a model: GPT-1T, 4096 sequences of 2048 tokens by
// default (about 8M tokens per iteration), searched exhaustively by perf::plan.
struct PerformanceOptions {
  std::string model = spec::kDefaultModel;
  std::int64_t batch = kDefaultGlobalBatch;
  std::optional<std::int64_t> seq;
  SoftwareOptions software;
  bool skip = false;
};
void add_performance_options(CLI::App& cmd, PerformanceOptions& opt) {
  cmd.add_option("--model", opt.model,
                 "Model whose best-plan iteration time is compared (preset or JSON file)")
      ->capture_default_str();
  cmd.add_option("--batch", opt.batch, "Global batch in sequences for the model")
      ->capture_default_str();
  cmd.add_option("--seq", opt.seq, "Sequence length (default: the model's)");
  add_software_options(cmd, opt.software);
  cmd.add_flag("--no-perf", opt.skip, "Cost and power only: skip the best-plan search");
}
// Adds the best plan of each design as columns of `t`, whose rows are `designs` in order. A
// design without a plan has missing figures and says why in no_plan_reason. Returns rail_only's
// verdict under the contrasting routing (none without both plans).
std::optional<perf::VerdictFlip> add_performance_columns(
    report::Table& t, const PerformanceOptions& opt, const spec::Cluster& cluster,
    const std::vector<spec::NetworkDesign>& designs) {
  if (opt.skip) return std::nullopt;
  using report::Cell;
  using report::Style;
  using report::Type;
  StrategyOptions so;
  so.model = opt.model;
  so.batch = opt.batch;
  so.seq = opt.seq;
  so.software = opt.software;
  const StrategyInputs in = resolve_strategy_inputs(so);
  std::vector<Cell> model, batch, seq, stack, time, vs, mfu, best, knobs, reason;
  double reference = 0;
  std::optional<double> rail_only_pct;
  for (const spec::NetworkDesign& d : designs) {
    model.push_back(
        fmt::format("{}, {} x {}", in.model.name, in.training.global_batch, in.training.seq_len));
    batch.push_back(in.training.global_batch);
    seq.push_back(in.training.seq_len);
    stack.push_back(fmt::format("{}, {}{}", in.training.stack.name,
                                perf::to_string(in.training.dtype),
                                in.training.flash_attention ? ", flash attention" : ""));
    perf::PlanOptions po;
    po.top = 1;
    const perf::PlanResult r =
        perf::plan(perf::make_context(in.model, in.training, cluster, d), po);
    if (r.plans.empty()) {
      for (auto* col : {&time, &vs, &mfu, &best, &knobs}) col->push_back(report::Missing{});
      const InputError why = perf::explain_no_plan(r, in.model, in.training, {}, cluster);
      reason.push_back(why.message());
      continue;
    }
    const perf::Plan& p = r.plans.front();
    const perf::Strategy& s = p.strategy;
    const double seconds = p.time.iteration_time_s;
    if (d.kind == spec::DesignKind::rail_optimized) reference = seconds;
    time.push_back(seconds);
    vs.push_back(reference > 0 ? Cell(100 * (seconds / reference - 1)) : report::Missing{});
    if (reference > 0 && d.kind == spec::DesignKind::rail_only)
      rail_only_pct = 100 * (seconds / reference - 1);
    mfu.push_back(p.time.mfu);
    best.push_back(fmt::format("tp{} pp{} dp{}{}", s.tp, s.pp, s.dp,
                               s.ep > 1 ? fmt::format(" ep{}", s.ep) : ""));
    knobs.push_back(fmt::format("mb{} v{} {}{}{}{}", s.micro_batch, s.interleave,
                                perf::to_string(s.recompute), s.sp ? " sp" : "",
                                s.dist_opt ? " dopt" : "", s.dp_overlap ? " ovl" : ""));
    reason.push_back(report::Missing{});
  }
  t.add_column({.name = "perf_model", .label = "model"}, model);
  t.add_column({.name = "perf_global_batch",
                .label = "global batch",
                .type = Type::integer,
                .unit = "sequences",
                .human = false},
               batch);
  t.add_column({.name = "perf_seq_len",
                .label = "sequence length",
                .type = Type::integer,
                .unit = "tokens",
                .human = false},
               seq);
  t.add_column({.name = "perf_stack", .label = "software"}, stack);
  t.add_column({.name = "best_iteration_time_s",
                .label = "best iteration time",
                .type = Type::real,
                .unit = "s",
                .precision = 3},
               time);
  t.add_column({.name = "vs_rail_optimized_pct",
                .label = "vs rail_optimized",
                .type = Type::real,
                .unit = "%",
                .precision = 2,
                .style = Style::signed_},
               vs);
  t.add_column({.name = "best_plan_mfu",
                .label = "best plan MFU",
                .type = Type::real,
                .precision = 1,
                .style = Style::fraction},
               mfu);
  t.add_column({.name = "best_plan", .label = "best plan"}, best);
  t.add_column({.name = "best_plan_knobs", .label = "best plan knobs"}, knobs);
  t.add_column({.name = "no_plan_reason", .label = "no plan"}, reason);
  if (!rail_only_pct) return std::nullopt;
  return perf::rail_only_under_contrasting_routing(in.model, in.training, cluster, designs.front(),
                                                   *rail_only_pct);
}

bool any_cluster_option(const CLI::App& cmd) {
  for (const char* opt :
       {"--gpus", "--gpu", "--hb-domain", "--nic-gbps", "--hb-GBps", "--nics-per-gpu"})
    if (cmd.count(opt) > 0) return true;
  return false;
}

void run_compare(const CLI::App& cmd, const CompareOptions& o, const PerformanceOptions& perf) {
  const spec::NetworkDesign base = resolve_network(o.network);
  const auto [cat, counting] = resolve_cost(o.cost);
  if (o.json && o.csv) throw InputError("--csv", "choose one of --json and --csv");
  (void)resolve_software(perf.software);  // a bad --stack is refused even with --no-perf
  // The model options feed the best-plan search alone.
  const std::vector<std::string> model_options = {"--model", "--batch", "--seq", "--dtype",
                                                  "--flash-attention"};
  if (perf.skip)
    refuse_ignored(cmd, model_options,
                   "with --no-perf (no best plan is searched); drop one of them");
  if (o.savings_table)
    refuse_ignored(cmd, model_options, "with --savings-table (it prints cost and power only)");

  if (o.savings_table) {  // docs/design.md's table: N from 1k to 128k, K in {8, 72, 256}
    if (o.json || o.csv) throw InputError("--savings-table", "prints Markdown; drop --json/--csv");
    spec::ClusterOptions like = o.cluster;
    like.gpus = 1024;
    like.hb_domain = 8;
    const spec::Cluster c = spec::make_cluster(like);
    const std::vector<std::int64_t> sizes = {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
    const std::vector<std::int64_t> ks = {8, 72, 256};
    fmt::print(
        "rail_only vs rail_optimized, {} NIC {:g} Gb/s, switch {} ({} x {:g}G), catalog {}, {} "
        "switch counting\n\n",
        c.gpu.name, units::Bps_to_gbps(c.nic_bw_Bps), base.sw.name, base.sw.radix,
        base.sw.port_gbps, cat.name, cost::to_string(counting));
    fmt::print("{}",
               cost::savings_markdown(cost::savings_grid(c, sizes, ks, base, cat, counting), ks));
    return;
  }

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

  report::Table all;
  std::string text;
  Json flips = Json::array();
  for (std::size_t ci = 0; ci < clusters.size(); ++ci) {
    const spec::Cluster& c = clusters[ci];
    const auto rows = cost::compare_designs(c, base, cat, counting);
    std::vector<spec::NetworkDesign> designs;
    for (const auto& r : rows) {
      spec::NetworkDesign d = base;
      d.kind = r.bom.design;
      designs.push_back(d);
    }
    report::Table t = report::designs_table(c, rows, /*with_savings=*/true);
    const std::optional<perf::VerdictFlip> flip = add_performance_columns(t, perf, c, designs);
    report::add_routing_columns(t, base);
    if (ci) text += "\n";
    text += cost::compare_heading(c, rows) +
            spec::describe_routing(base, /*with_forwarding=*/true) + "\n" +
            report::to_text_by_column(t, "design") + cost::compare_notes(rows);
    if (flip && flip->flips) text += "  note: " + flip->line + "\n";
    if (flip) flips.push_back(perf::to_json(*flip));
    if (ci == 0)
      all = std::move(t);
    else
      report::append(all, t);
  }
  if (o.json) {
    Json j{{"designs", report::to_json(all)}};
    j.update(spec::routing_json(base));
    if (!perf.skip) j["routing_flip"] = std::move(flips);  // one per cluster, in order
    fmt::print("{}\n", j.dump(2));
  } else if (o.csv) {
    fmt::print("{}", report::to_csv(all));
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
  add_routing_options(*cmd, o->network);
  add_cost_options(*cmd, o->cost);
  cmd->add_flag("--json", o->json, "Print JSON: {\"designs\": [...]}");
  cmd->add_flag("--csv", o->csv, "Print CSV (a header and one row per design)");
  cmd->add_flag(
      "--savings-table", o->savings_table,
      "Print the Markdown table of rail_only savings for 1k..128k GPUs and K = 8, 72, 256 "
      "(uses --gpu, --nic-gbps, --switch, --catalog; ignores --gpus and --hb-domain)");
  add_performance_options(*cmd, *perf);
  cmd->callback([cmd, o, perf] { run_compare(*cmd, *o, *perf); });
}

}  // namespace railsim::cli
