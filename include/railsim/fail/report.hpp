#pragma once
// What `railsim fail goodput` prints: the Monte Carlo results of each design side by side, as a
// human table or JSON (docs/cli.md lists the fields).
#include <optional>
#include <string>
#include <vector>

#include "railsim/core/json_fwd.hpp"
#include "railsim/cost/catalog.hpp"
#include "railsim/fail/model.hpp"
#include "railsim/fail/monte_carlo.hpp"
#include "railsim/fail/whatif.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/spec/network.hpp"

namespace railsim::fail {

struct GoodputReport {
  std::string gpu;    // GPU name, for the heading
  std::string rates;  // failure-rates name
  std::vector<GoodputResult> designs;
  std::vector<std::optional<double>> network_cost_usd;  // per design, when priced
  double amortize_years = 4;
  std::optional<double> tokens;  // with tokens_per_s: the time to train them
  std::optional<double> tokens_per_s;
  // Per design, the throughput of its best plan when the job's came from the plan (a --model
  // given, --tokens-per-s not): each design trains at its own speed. Empty: tokens_per_s for all.
  std::vector<double> plan_tokens_per_s;
  std::vector<std::string> plan_text;  // per design, the plan those figures come from
  // Where the degraded slowdowns come from: the inputs (--comm-fraction, --degraded-slowdown), or
  // the Fabric (fabric_effects: one line per stream changed, per design).
  std::string effects = "inputs";
  std::vector<std::vector<std::string>> effect_notes;  // per design
  spec::NetworkDesign network;  // the routing and forwarding assumed (every design's)
  bool pxn = true;              // RunParams::pxn
};

// The designs a failure study runs on: "both" (rail_optimized, then rail_only) or one design's
// name (ideal is refused with spec's reason); anything else is an InputError naming `option`.
std::vector<spec::DesignKind> parse_designs(const std::string& design, const std::string& option);

// The inputs of `railsim fail goodput` (and Python's fail_goodput), resolved.
struct GoodputRequest {
  std::vector<spec::NetworkDesign> designs;  // each one's goodput, in this order
  spec::FailureRates rates;
  RunParams run;
  MonteCarloOptions mc;
  // Network failure effects from the Fabric (fabric_effects of this job's best plan, then
  // resolve_run); without it, the effects of the inputs (comm_fraction, degraded_slowdown).
  struct FabricJob {
    perf::Model model;
    perf::Training training;
    WhatIfOptions whatif;  // its plan.pins (its pxn is the run's: RunParams::pxn)
  };
  std::optional<FabricJob> fabric;
  // Prices each design's network as `railsim design` does (cost::evaluate, whole switches), for
  // the network cost per effective GPU-hour; unset: the networks are not priced.
  std::optional<cost::Catalog> catalog;
  double amortize_years = 4;
  // tokens without tokens_per_s (with `fabric`): each design's throughput is its best plan's.
  std::optional<double> tokens, tokens_per_s;
};

// The report of one goodput study: per design the failure model of the cluster under the rates
// and the run (make_failure_model), its network effects from the Fabric when asked, the Monte
// Carlo (run_goodput) and the network's price under the catalog. One function for the CLI and the
// Python module.
GoodputReport goodput_report(const spec::Cluster& cluster, const GoodputRequest& req);

Json to_json(const GoodputReport& r);
std::string to_text(const GoodputReport& r);

}  // namespace railsim::fail
