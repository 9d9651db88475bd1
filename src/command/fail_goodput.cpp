// railsim fail goodput: goodput of a long training run under failures, per network design
// (Monte Carlo; docs/failures.md).
#include <fmt/format.h>

#include "railsim/command/inputs.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/cost/catalog.hpp"
#include "railsim/fail/model.hpp"
#include "railsim/fail/monte_carlo.hpp"
#include "railsim/fail/report.hpp"
#include "railsim/fail/whatif.hpp"
#include "railsim/report/progress.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {
// An integer written in full or as a number ("1e4"), shown as TEXT in --help.
Field count_text(std::string key, std::string flag, std::string help, std::int64_t min,
                 std::int64_t max) {
  Field f = integer_field(std::move(key), std::move(flag), std::move(help), min, max);
  f.kind = Kind::count;
  f.type_name = "TEXT";
  return f;
}

// A real number the library checks where it is used (fail::validate names the option).
Field real(std::string key, std::string flag, std::string help, std::string default_text = "",
           std::string unit = "") {
  Field f = number_field(std::move(key), std::move(flag), std::move(help), Range{},
                         std::move(default_text), std::move(unit));
  f.range.reset();
  return f;
}

// The run, its times given in minutes and hours kept in seconds (fail::validate checks them).
fail::RunParams run_params(const Args& a) {
  fail::RunParams run;
  run.days = a.number("days");
  if (const auto v = a.number_if("checkpoint_interval_min")) run.checkpoint_interval_s = *v * 60;
  run.checkpoint_write_s = a.number("checkpoint_write_s");
  if (const auto v = a.number_if("detect_min")) run.detect_s = *v * 60;
  if (const auto v = a.number_if("restart_min")) run.restart_s = *v * 60;
  if (const auto v = a.number_if("repair_h")) run.repair_s = *v * 3600;
  run.spare_domains = a.integer_if("spare_domains");
  if (const auto v = a.integer_if("gpus_per_host")) run.gpus_per_host = *v;
  run.comm_fraction = a.number("comm_fraction");
  run.degraded_slowdown = a.number_if("degraded_slowdown");
  if (const auto v = a.text_if("degraded"))
    run.policy = fail::parse_degraded_policy(*v, "--degraded");
  return run;
}

fail::MonteCarloOptions monte_carlo(const Args& a) {
  fail::MonteCarloOptions mc;
  if (const auto v = a.integer_if("trials")) mc.trials = *v;
  if (const auto v = a.integer_if("seed")) mc.seed = static_cast<std::uint64_t>(*v);
  if (const auto v = a.integer_if("threads")) mc.threads = static_cast<int>(*v);
  return mc;
}

void run_goodput(const Args& a, Output& out) {
  const fail::MonteCarloOptions mc = monte_carlo(a);
  const fail::RunParams run = run_params(a);
  const bool from_fabric = a.given("model");  // network failure effects from the Fabric
  if (!from_fabric)
    a.refuse(std::vector<std::string>(strategy_keys().begin() + 1, strategy_keys().end()),
             "without --model (the network failure effects come from the inputs)");
  const spec::Cluster cluster = spec::make_cluster(cluster_options(a));
  fail::validate(run);
  fail::validate(mc);
  fail::GoodputRequest req;
  req.amortize_years = a.number("amortize_years");
  if (a.given("tokens_per_s") && !a.given("tokens"))
    throw InputError("--tokens", "give the tokens to train (--tokens) with --tokens-per-s");
  if (a.given("tokens") && !a.given("tokens_per_s") && !from_fabric)
    throw InputError("--tokens-per-s",
                     "give the job's throughput, or --model to take each design's from its best "
                     "plan");
  req.tokens = a.number_if("tokens");
  req.tokens_per_s = a.number_if("tokens_per_s");
  const std::vector<spec::DesignKind> kinds = fail::parse_designs(a.text("design"), "--design");
  const spec::SwitchSpec sw = spec::load_switch(a.text("switch"), "--switch");
  req.rates = spec::load_failure_rates(a.text("rates"), "--rates");
  req.catalog = cost::load_catalog(a.text("catalog"), "--catalog");
  spec::NetworkOptions routing;  // --routing alone: the rest keeps its defaults
  routing.routing = a.text("routing");
  for (spec::DesignKind kind : kinds) {
    req.designs.push_back(spec::make_network_design(kind, sw));
    spec::apply_routing_options(req.designs.back(), routing);
  }
  req.run = run;
  req.run.pxn = fail::parse_pxn_mode(a.text("pxn"), "--pxn") == fail::PxnMode::on;
  req.mc = mc;
  if (from_fabric) {
    const StrategyInputs in = resolve_strategy_inputs(a);
    fail::WhatIfOptions w;
    w.plan.pins = in.pins;
    req.fabric = fail::GoodputRequest::FabricJob{in.model, in.training, w};
  }
  // On a terminal, Monte Carlo runs over 2 s show each design's trials on stderr.
  report::ProgressBar bar(stderr, "goodput: trials", mc.trials);
  req.mc.progress = &bar;
  const fail::GoodputReport rep = fail::goodput_report(cluster, req);
  bar.finish();
  if (a.flag("json"))
    out.print("{}\n", fail::to_json(rep).dump(2));
  else
    out.print("{}network priced as `railsim design` does: switch {}, catalog {}\n",
              fail::to_text(rep), sw.name, req.catalog->name);
}

std::vector<Field> run_fields() {
  const fail::RunParams d;
  return {
      real("days", "--days", "Length of the run in days", fmt::format("{}", d.days), "days"),
      count_text("trials", "--trials", "Monte Carlo trials (default 1000)", 1, 10'000'000),
      count_text("seed", "--seed", "Seed (default 1); the results do not depend on --threads", 0,
                 std::int64_t{1} << 53),
      count_text("threads", "--threads", "Threads (default 0: every core)", 0, kMaxThreads),
      number_field("checkpoint_interval_min", "--checkpoint-interval-min",
                   "Running time between checkpoints in minutes (default: Young/Daly sqrt(2 C "
                   "M))",
                   Range::positive(1e7), "", "min"),
      real("checkpoint_write_s", "--checkpoint-write-s",
           "Checkpoint write time C in seconds (the job stalls)",
           fmt::format("{}", d.checkpoint_write_s), "s"),
      real("detect_min", "--detect-min", "Failure detection time in minutes (default 2)", "",
           "min"),
      real("restart_min", "--restart-min",
           "Restart time in minutes: reschedule, initialise, load the checkpoint (default 5)", "",
           "min"),
      real("repair_h", "--repair-h",
           "Repair time in hours of a lost HB domain or failed component (default 24)", "", "h"),
      count_text("spare_domains", "--spare-domains",
                 "Spare HB domains (default: auto, a wait has probability < 1e-4)", 0,
                 spec::kMaxGpus),
      count_text("gpus_per_host", "--gpus-per-host",
                 "GPUs per host: a host failure drains them (default 8)", 1, 1024),
      real("comm_fraction", "--comm-fraction",
           "Exposed scale-out communication fraction f of an iteration",
           fmt::format("{}", d.comm_fraction)),
      real("degraded_slowdown", "--degraded-slowdown",
           "rail_only: iteration-time factor with a dead NIC/link/leaf (default 1 + f)"),
      text_field("degraded", "--degraded", "swap-at-checkpoint (default) or until-repair"),
      number_field("tokens", "--tokens",
                   "Tokens to train: the days each design takes, at --tokens-per-s or, with "
                   "--model, at each design's best plan's throughput",
                   Range::positive(1e30)),
      number_field("tokens_per_s", "--tokens-per-s", "The job's full-speed throughput in tokens/s",
                   Range::positive(1e30))};
}
}  // namespace

Command fail_goodput_command() {
  Command c;
  c.path = "fail goodput";
  c.summary =
      "Effective training time ratio of a long run under failures, per network design (Monte "
      "Carlo)";
  c.fields = join(
      {cluster_fields(),
       {text_field("design", "--design", "rail_optimized, rail_only or both", "both"),
        text_field("switch", "--switch", "Switch preset or JSON file", spec::NetworkOptions{}.sw),
        text_field("rates", "--rates", "Failure rates: preset name or JSON file",
                   spec::kDefaultFailureRates)},
       run_fields(),
       {text_field("catalog", "--catalog", "Price catalog of the network cost",
                   cost::kDefaultCatalog),
        number_field("amortize_years", "--amortize-years",
                     "Years the network cost is spread over per effective GPU-hour",
                     Range::positive(100), "4", "years")},
       strategy_fields()},
      {text_field("pxn", "--pxn",
                  "Forwarding through HB-domain peers around a dead NIC on every design: on "
                  "(NCCL's PXN: the job runs degraded) or off (it stops and loses the domain)",
                  "on"),
       routing_field(), flag_field("json", "--json", "Print JSON")});
  c.run = run_goodput;
  c.python_name = "fail_goodput";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
