// railsim fail goodput: goodput of a long training run under failures, per network design
// (Monte Carlo; docs/failures.md).
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "commands.hpp"
#include "network_options.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/fail/model.hpp"
#include "railsim/fail/monte_carlo.hpp"
#include "railsim/fail/report.hpp"
#include "railsim/fail/whatif.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "strategy_options.hpp"

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
  StrategyOptions strategy;
  bool from_fabric = false;  // --model given: network failure effects from the Fabric
  std::string pxn = "on";
  std::string routing = "auto";
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
  const std::vector<spec::DesignKind> kinds = fail::parse_designs(o.design, "--design");
  const spec::SwitchSpec sw = spec::load_switch(o.sw, "--switch");
  const spec::FailureRates rates = spec::load_failure_rates(o.rates, "--rates");
  const cost::Catalog catalog = cost::load_catalog(o.catalog, "--catalog");
  fail::GoodputRequest req;
  spec::NetworkOptions routing;
  routing.routing = o.routing;
  for (spec::DesignKind kind : kinds) {
    req.designs.push_back(spec::make_network_design(kind, sw));
    spec::apply_routing_options(req.designs.back(), routing);
  }
  req.catalog = catalog;
  req.rates = rates;
  req.run = o.run;
  req.run.pxn = fail::parse_pxn_mode(o.pxn, "--pxn") == fail::PxnMode::on;
  req.mc = o.mc;
  if (o.from_fabric) {
    const StrategyInputs in = resolve_strategy_inputs(o.strategy);
    fail::WhatIfOptions w;
    w.plan.pins = in.pins;
    req.fabric = fail::GoodputRequest::FabricJob{in.model, in.training, w};
  }
  req.amortize_years = o.amortize_years;
  req.tokens = o.tokens;
  req.tokens_per_s = o.tokens_per_s;
  const fail::GoodputReport rep = fail::goodput_report(cluster, req);
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

struct WhatIfArgs {
  spec::ClusterOptions cluster;
  NetworkOptions network;
  StrategyOptions strategy;
  std::string design = "both";
  std::vector<std::string> fail;
  std::int64_t random = 0;
  std::int64_t seed = 1;
  std::string pxn = "on";
  std::string sim = "auto";
  std::optional<std::int64_t> spare_domains;
  std::int64_t examples = 5;
  std::int64_t threads = 0;
  bool json = false;
};

void run_whatif(const WhatIfArgs& a) {
  const StrategyInputs in = resolve_strategy_inputs(a.strategy);
  const spec::Cluster c = spec::make_cluster(a.cluster);
  fail::WhatIfOptions o;
  o.fail = a.fail;
  o.random = check_integer("--fail-random", a.random, 0, 1'000'000);
  o.seed = static_cast<std::uint64_t>(check_integer("--seed", a.seed, 0, std::int64_t{1} << 53));
  o.pxn = fail::parse_pxn_mode(a.pxn, "--pxn");
  o.sim = fail::parse_sim_mode(a.sim, "--sim");
  if (a.spare_domains)
    o.spare_domains = check_integer("--spare-domains", *a.spare_domains, 0, spec::kMaxGpus);
  o.examples = static_cast<int>(check_integer("--examples", a.examples, 0, 1000));
  o.plan.pins = in.pins;
  o.plan.top = 1;
  o.plan.threads = check_threads("--threads", a.threads);
  std::vector<spec::NetworkDesign> designs;
  for (spec::DesignKind k : fail::parse_designs(a.design, "--design")) {
    NetworkOptions n = a.network;
    n.design = std::string(spec::to_string(k));
    designs.push_back(resolve_network(n));
  }
  const fail::WhatIfReport r = fail::what_if(c, designs, in.model, in.training, o);
  if (a.json)
    fmt::print("{}\n", fail::to_json(r).dump(2));
  else
    fmt::print("{}", fail::to_text(r));
}

void add_whatif_command(CLI::App& fail_cmd) {
  auto a = std::make_shared<WhatIfArgs>();
  auto* cmd = fail_cmd.add_subcommand(
      "whatif",
      "What a set of failed components cuts off and slows on each design, and the job's options");
  add_cluster_options(*cmd, a->cluster);
  add_network_options(*cmd, a->network, /*with_design=*/false);
  add_strategy_options(*cmd, a->strategy);
  cmd->add_option("--design", a->design, "rail_optimized, rail_only or both")
      ->capture_default_str();
  cmd->add_option("--fail", a->fail,
                  "Failed component, repeatable: gpu:G, nic:G[.n], link:G[.n] (NIC-leaf link), "
                  "leaf:I, spine:I, core:I, switch:T:I, uplink:T:I (T = 1 leaf-spine), "
                  "domain:D, nvswitch:D[.p] (a switch plane of an HB domain)");
  cmd->add_option("--fail-random", a->random,
                  "Also fail this many components drawn at random in each design");
  cmd->add_option("--seed", a->seed, "Seed of --fail-random")->capture_default_str();
  cmd->add_option("--routing", a->network.routing, kRoutingHelp)->capture_default_str();
  cmd->add_option("--pxn", a->pxn,
                  "Forward through HB-domain peers around a dead NIC, link or leaf, on every "
                  "design: on (NCCL's PXN) or off (a dead NIC stops the job)")
      ->capture_default_str();
  cmd->add_option("--sim", a->sim,
                  "Flow-simulate the plan's schedule on the degraded network: auto (up to 4,096 "
                  "GPUs), on, off")
      ->capture_default_str();
  cmd->add_option("--spare-domains", a->spare_domains,
                  "Spare HB domains the job can swap in (default: fail goodput's auto spares "
                  "under the default failure rates)");
  cmd->add_option("--examples", a->examples, "Rerouted pairs shown per design")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Threads of the plan search (0 = all cores)")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { run_whatif(*a); });
}

}  // namespace

void add_fail_command(CLI::App& app) {
  auto* fail_cmd = app.add_subcommand(
      "fail",
      "Training under failures: `railsim fail whatif` and `railsim fail goodput` (see "
      "docs/failures.md)");
  fail_cmd->require_subcommand(1);
  add_whatif_command(*fail_cmd);
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
        o->mc.threads = static_cast<int>(parse_integer_option("--threads", s, 0, kMaxThreads));
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
  add_strategy_options(*cmd, o->strategy);
  cmd->add_option("--pxn", o->pxn,
                  "Forwarding through HB-domain peers around a dead NIC on every design: on "
                  "(NCCL's PXN: the job runs degraded) or off (it stops and loses the domain)")
      ->capture_default_str();
  cmd->add_option("--routing", o->routing, kRoutingHelp)->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o, cmd] {
    o->from_fabric = cmd->count("--model") > 0;
    if (!o->from_fabric) {
      std::vector<std::string> strategy(kStrategyOptionNames.begin() + 1,
                                        kStrategyOptionNames.end());
      refuse_ignored(*cmd, strategy,
                     "without --model (the network failure effects come from the inputs)");
    }
    run_goodput(*o);
  });
}

}  // namespace railsim::cli
