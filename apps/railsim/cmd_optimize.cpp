// railsim optimize: the cheapest network that trains the given models as fast as needed.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "commands.hpp"
#include "network_options.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/optimize/optimize.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/plot.hpp"
#include "railsim/report/table.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/sweep/values.hpp"
#include "strategy_options.hpp"

namespace railsim::cli {

namespace {

struct OptimizeArgs {
  std::string gpu = "H100-SXM";
  std::int64_t gpus = 0;
  std::vector<std::string> models;
  StrategyOptions strategy;  // batch, seq, software and pins shared by every model
  std::string design = "rail_only,rail_optimized";
  std::string oversubscription = "1,2,3";
  std::string hb_domain, nic_gbps, nics_per_gpu, switches, catalogs;
  std::string copper = "off";
  std::optional<double> max_iteration_s, min_mfu_pct, within_pct, tokens, days;
  std::string of = "ideal";
  std::optional<double> max_cost, max_power;
  bool first = false, all = false, json = false, csv = false;
  std::string plot;
  int threads = 0;
  std::string routing = "auto";
  std::int64_t seed = 0;
};

void run(const OptimizeArgs& a) {
  if (a.json && a.csv) throw InputError("--csv", "choose one of --json and --csv");
  const spec::GpuSpec gpu = spec::load_gpu(a.gpu, "--gpu");
  const std::int64_t gpus =
      a.gpus > 0 ? check_integer("--gpus", a.gpus, 1, spec::kMaxGpus)
                 : spec::kDefaultGpus / gpu.default_hb_domain * gpu.default_hb_domain;
  if (a.gpus < 0) throw InputError("--gpus", "must be positive");
  std::vector<optimize::ModelSpec> models;
  for (const std::string& name :
       a.models.empty() ? std::vector<std::string>{spec::kDefaultModel} : a.models) {
    StrategyOptions so = a.strategy;
    so.model = name;
    const StrategyInputs in = resolve_strategy_inputs(so);
    models.push_back({in.model, in.training, in.pins});
  }
  optimize::Space space;
  space.designs.clear();
  for (const auto& d : sweep::parse_names("--design", a.design)) {
    const spec::DesignKind k = spec::parse_design_kind(d, "--design");
    if (k == spec::DesignKind::ideal)
      throw InputError("--design", "ideal is the reference, not a network to buy");
    space.designs.push_back(k);
  }
  space.oversubscription = sweep::parse_reals("--oversubscription", a.oversubscription);
  for (double o : space.oversubscription)
    check_number("--oversubscription", o, Range::between(1, 64));
  if (!a.hb_domain.empty()) space.hb_domain = sweep::parse_integers("--hb-domain", a.hb_domain);
  if (!a.nic_gbps.empty()) space.nic_gbps = sweep::parse_reals("--nic-gbps", a.nic_gbps);
  if (!a.nics_per_gpu.empty())
    space.nics_per_gpu = sweep::parse_integers("--nics-per-gpu", a.nics_per_gpu);
  if (!a.switches.empty()) space.switches = sweep::parse_names("--switch", a.switches);
  if (!a.catalogs.empty()) space.catalogs = sweep::parse_names("--catalog", a.catalogs);
  if (a.routing != "auto")
    space.routing = spec::resolve_routing(a.routing, spec::SwitchSpec{}, "--routing");
  check_integer("--seed", a.seed, 0, spec::kMaxRoutingSeed);  // sim's hash only: no effect here
  space.copper.clear();
  for (const auto& c : sweep::parse_names("--copper-gpu-leaf", a.copper)) {
    if (c != "on" && c != "off")
      throw InputError("--copper-gpu-leaf", fmt::format("'{}': give on, off or on,off", c));
    space.copper.push_back(c == "on");
  }
  optimize::Target t;
  if (a.max_iteration_s)
    t.max_iteration_s =
        check_number("--max-iteration-time", *a.max_iteration_s, Range::positive(1e9));
  if (a.min_mfu_pct)
    t.min_mfu = check_number("--min-mfu", *a.min_mfu_pct, Range::between(1e-6, 100)) / 100;
  if (a.within_pct)
    t.within = check_number("--within", *a.within_pct, Range::between(0, 1e4)) / 100;
  t.within_of = spec::parse_design_kind(a.of, "--of");
  if (t.within_of == spec::DesignKind::rail_only)
    throw InputError("--of", "the reference is ideal or rail_optimized");
  if (a.tokens) t.tokens = check_number("--tokens", *a.tokens, Range::positive(1e30));
  if (a.days) t.days = check_number("--days", *a.days, Range::positive(1e6));
  optimize::Budget b;
  if (a.max_cost)
    b.max_cost_usd = check_number("--max-network-cost", *a.max_cost, Range::positive(1e15));
  if (a.max_power) b.max_power_w = check_number("--max-power", *a.max_power, Range::positive(1e15));
  optimize::Options o;
  if (a.first && a.all)
    throw InputError("--all",
                     "lists every candidate of the whole search, which --first stops "
                     "early; choose one of them");
  o.frontier = !a.first;
  o.threads = check_threads("--threads", a.threads);
  if (!a.plot.empty()) {  // checked before the search
    report::plot_format(a.plot, "--plot");
    report::check_writable(a.plot, "--plot");
    report::require_gnuplot("--plot");
  }
  const optimize::Result r = optimize::optimize(gpu, gpus, models, space, t, b, o);
  if (!a.plot.empty()) report::write_plot(optimize::frontier_chart(r), a.plot, "--plot");
  const optimize::RoutingFlip flip =
      optimize::under_contrasting_routing(gpu, gpus, models, space, t, b, o, r);
  if (a.json) {
    fmt::print("{}\n", optimize::optimize_document(r, flip).dump(2));
    return;
  }
  const report::Table table = optimize::candidates_table(r, a.all);
  if (a.csv) {
    fmt::print("{}", report::to_csv(table));
    return;
  }
  fmt::print("{} x {}: {}\n\n{}\n{}:\n{}", gpus, gpu.name, fmt::join(r.model_names, ", "),
             optimize::explain(r),
             a.all ? "every candidate evaluated, cheapest first"
                   : "frontier (each faster than every cheaper candidate)",
             report::to_text(table));
  if (flip.flips) fmt::print("note: {}\n", flip.line);
}

}  // namespace

void add_optimize_command(CLI::App& app) {
  auto a = std::make_shared<OptimizeArgs>();
  auto* cmd = app.add_subcommand(
      "optimize",
      "The cheapest network (design, HB domain, NIC, switch, catalog) that trains the "
      "models as fast as needed, and the cost/time frontier");
  cmd->add_option("--gpu", a->gpu, "GPU preset or JSON file")->capture_default_str();
  cmd->add_option("--gpus", a->gpus, "GPUs (default: 32,768 rounded down to whole HB domains)");
  add_strategy_options(*cmd, a->strategy);
  cmd->remove_option(cmd->get_option("--model"));
  cmd->add_option("--model", a->models,
                  "Model preset or JSON file; repeat for several (default GPT-1T)");
  cmd->add_option("--design", a->design, "Designs to consider (list)")->capture_default_str();
  cmd->add_option("--oversubscription", a->oversubscription,
                  "Leaf down:up ratios to consider (list or range)")
      ->capture_default_str();
  cmd->add_option("--hb-domain", a->hb_domain, "HB-domain sizes K (list; default the GPU's)");
  cmd->add_option("--nic-gbps", a->nic_gbps, "NIC speeds (list; default the GPU's)");
  cmd->add_option("--nics-per-gpu", a->nics_per_gpu, "NICs per GPU (list; default the GPU's)");
  cmd->add_option("--switch", a->switches, "Switch presets or files (list; default every preset)");
  cmd->add_option("--catalog", a->catalogs,
                  "Price catalogs (list; default ib-ndr-thirdparty-2024)");
  cmd->add_option("--copper-gpu-leaf", a->copper, "off, on, or on,off (both)")
      ->capture_default_str();
  cmd->add_option_function<double>(
      "--max-iteration-time", [a](double v) { a->max_iteration_s = v; },
      "Target: iteration time at most S seconds (every model)");
  cmd->add_option_function<double>(
      "--min-mfu", [a](double v) { a->min_mfu_pct = v; },
      "Target: MFU at least X percent (every model)");
  cmd->add_option_function<double>(
      "--within", [a](double v) { a->within_pct = v; },
      "Target: within PCT percent of the reference (--of)");
  cmd->add_option("--of", a->of, "Reference of --within: ideal or rail_optimized")
      ->capture_default_str();
  cmd->add_option_function<double>(
      "--tokens", [a](double v) { a->tokens = v; },
      "Target (with --days): train this many tokens of every model");
  cmd->add_option_function<double>(
      "--days", [a](double v) { a->days = v; }, "Target: in D days");
  cmd->add_option_function<double>(
      "--max-network-cost", [a](double v) { a->max_cost = v; }, "Budget: network cost in USD");
  cmd->add_option_function<double>(
      "--max-power", [a](double v) { a->max_power = v; }, "Budget: network power in W");
  cmd->add_flag("--first", a->first,
                "Stop at the cheapest network that meets the target (no frontier)");
  cmd->add_flag("--all", a->all, "Print every candidate evaluated, not only the frontier");
  cmd->add_option("--threads", a->threads, "Threads of the plan searches (0 = all cores)");
  cmd->add_option("--routing", a->routing, kRoutingHelp)->capture_default_str();
  cmd->add_option("--seed", a->seed, kSeedHelp)->capture_default_str();
  cmd->add_option("--plot", a->plot,
                  "Also draw the frontier (cost against time) to FILE.png, .svg or .pdf (gnuplot)");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_flag("--csv", a->csv, "Print CSV (the frontier, or every candidate with --all)");
  cmd->callback([a] { run(*a); });
}

}  // namespace railsim::cli
