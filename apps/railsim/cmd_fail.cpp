// railsim fail goodput: goodput of a long training run under failures, per network design
// (Monte Carlo; docs/failures.md).
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "commands.hpp"
#include "railsim/core/error.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/fail/model.hpp"
#include "railsim/fail/monte_carlo.hpp"
#include "railsim/fail/report.hpp"
#include "railsim/spec/failure_rates.hpp"

namespace railsim::cli {

namespace {

struct GoodputOptions {
  spec::ClusterOptions cluster;
  std::string design = "both";
  std::string sw = spec::NetworkOptions{}.sw;
  std::string rates = spec::kDefaultFailureRates;
  std::string catalog = cost::kDefaultCatalog;
  fail::RunParams run;
  fail::MonteCarloOptions mc;
  double amortize_years = 4;
  std::optional<double> tokens;
  std::optional<double> tokens_per_s;
  bool json = false;
};

void run_goodput(const GoodputOptions& o) {
  const spec::Cluster cluster = spec::make_cluster(o.cluster);
  fail::validate(o.run);
  fail::validate(o.mc);
  check_number("--amortize-years", o.amortize_years, Range::positive(100));
  if (o.tokens.has_value() != o.tokens_per_s.has_value())
    throw InputError(o.tokens ? "--tokens-per-s" : "--tokens",
                     "give both --tokens and --tokens-per-s for the time to train");
  if (o.tokens) check_number("--tokens", *o.tokens, Range::positive(1e30));
  if (o.tokens_per_s) check_number("--tokens-per-s", *o.tokens_per_s, Range::positive(1e30));
  std::vector<spec::DesignKind> kinds;
  if (o.design == "both")
    kinds = {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only};
  else if (o.design == "rail_optimized" || o.design == "rail_only" || o.design == "ideal")
    kinds = {spec::parse_design_kind(o.design, "--design")};  // ideal: the library says why not
  else
    throw InputError("--design", fmt::format("unknown design '{}'; valid: rail_optimized, "
                                             "rail_only, both",
                                             o.design));
  const spec::SwitchSpec sw = spec::load_switch(o.sw, "--switch");
  const spec::FailureRates rates = spec::load_failure_rates(o.rates, "--rates");
  const cost::Catalog catalog = cost::load_catalog(o.catalog, "--catalog");

  fail::GoodputReport rep;
  rep.gpu = cluster.gpu.name;
  rep.rates = rates.name;
  rep.amortize_years = o.amortize_years;
  rep.tokens = o.tokens;
  rep.tokens_per_s = o.tokens_per_s;
  for (spec::DesignKind kind : kinds) {
    const spec::NetworkDesign design = spec::make_network_design(kind, sw);
    const fail::FailureModel m = fail::make_failure_model(cluster, design, rates, o.run);
    rep.designs.push_back(fail::run_goodput(m, o.mc));
    rep.network_cost_usd.push_back(cost::evaluate(cluster, design, catalog).cost.cost_usd());
  }
  if (o.json)
    fmt::print("{}\n", fail::to_json(rep).dump(2));
  else
    fmt::print("{}network priced as `railsim design` does: switch {}, catalog {}\n",
               fail::to_text(rep), sw.name, catalog.name);
}

// A double option whose value lands in `target` scaled by `factor` (minutes to seconds, ...).
template <class T>
void scaled(CLI::App& cmd, const std::string& name, T& target, double factor,
            const std::string& help) {
  cmd.add_option_function<double>(
      name, [&target, factor](double v) { target = v * factor; }, help);
}

}  // namespace

void add_fail_command(CLI::App& app) {
  auto* fail_cmd = app.add_subcommand(
      "fail", "Training under failures: `railsim fail goodput` (see docs/failures.md)");
  fail_cmd->require_subcommand(1);
  auto o = std::make_shared<GoodputOptions>();
  auto* cmd = fail_cmd->add_subcommand(
      "goodput",
      "Effective training time ratio of a long run under failures, per network design "
      "(Monte Carlo)");
  add_cluster_options(*cmd, o->cluster);
  cmd->add_option("--design", o->design, "rail_optimized, rail_only or both")
      ->capture_default_str();
  cmd->add_option("--switch", o->sw, "Switch preset or JSON file")->capture_default_str();
  cmd->add_option("--rates", o->rates, "Failure rates: preset name or JSON file")
      ->capture_default_str();
  cmd->add_option("--days", o->run.days, "Length of the run in days")->capture_default_str();
  cmd->add_option_function<std::string>(
      "--trials",
      [o](const std::string& s) {
        o->mc.trials = parse_integer_option("--trials", s, 1, 10'000'000);
      },
      "Monte Carlo trials (default 1000)");
  cmd->add_option_function<std::string>(
      "--seed",
      [o](const std::string& s) {
        o->mc.seed =
            static_cast<std::uint64_t>(parse_integer_option("--seed", s, 0, std::int64_t{1} << 53));
      },
      "Seed (default 1); the results do not depend on --threads");
  cmd->add_option_function<std::string>(
      "--threads",
      [o](const std::string& s) {
        o->mc.threads = static_cast<int>(parse_integer_option("--threads", s, 0, 1024));
      },
      "Threads (default 0: every core)");
  cmd->add_option_function<double>(
      "--checkpoint-interval-min",
      [o](double v) {
        check_number("--checkpoint-interval-min", v, Range::positive(1e7));
        o->run.checkpoint_interval_s = v * 60;
      },
      "Running time between checkpoints in minutes (default: Young/Daly sqrt(2 C M))");
  cmd->add_option("--checkpoint-write-s", o->run.checkpoint_write_s,
                  "Checkpoint write time C in seconds (the job stalls)")
      ->capture_default_str();
  scaled(*cmd, "--detect-min", o->run.detect_s, 60,
         "Failure detection time in minutes (default 2)");
  scaled(*cmd, "--restart-min", o->run.restart_s, 60,
         "Restart time in minutes: reschedule, initialise, load the checkpoint (default 5)");
  scaled(*cmd, "--repair-h", o->run.repair_s, 3600,
         "Repair time in hours of a lost HB domain or failed component (default 24)");
  cmd->add_option_function<std::string>(
      "--spare-domains",
      [o](const std::string& s) {
        o->run.spare_domains = parse_integer_option("--spare-domains", s, 0, spec::kMaxGpus);
      },
      "Spare HB domains (default: auto, a wait has probability < 1e-4)");
  cmd->add_option_function<std::string>(
      "--gpus-per-host",
      [o](const std::string& s) {
        o->run.gpus_per_host = parse_integer_option("--gpus-per-host", s, 1, 1024);
      },
      "GPUs per host: a host failure drains them (default 8)");
  cmd->add_option("--comm-fraction", o->run.comm_fraction,
                  "Exposed scale-out communication fraction f of an iteration")
      ->capture_default_str();
  cmd->add_option_function<double>(
      "--degraded-slowdown", [o](double v) { o->run.degraded_slowdown = v; },
      "rail_only: iteration-time factor with a dead NIC/link/leaf (default 1 + f)");
  cmd->add_option_function<std::string>(
      "--degraded",
      [o](const std::string& s) { o->run.policy = fail::parse_degraded_policy(s, "--degraded"); },
      "swap-at-checkpoint (default) or until-repair");
  cmd->add_option_function<double>(
      "--tokens", [o](double v) { o->tokens = v; }, "Token budget (with --tokens-per-s)");
  cmd->add_option_function<double>(
      "--tokens-per-s", [o](double v) { o->tokens_per_s = v; },
      "The job's full-speed throughput in tokens/s");
  cmd->add_option("--catalog", o->catalog, "Price catalog of the network cost")
      ->capture_default_str();
  cmd->add_option("--amortize-years", o->amortize_years,
                  "Years the network cost is spread over per effective GPU-hour")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] { run_goodput(*o); });
}

}  // namespace railsim::cli
