#pragma once
// What `railsim fail goodput` prints: the Monte Carlo results of each design side by side, as a
// human table or JSON (docs/cli.md lists the fields).
#include <optional>
#include <string>
#include <vector>

#include "railsim/core/json.hpp"
#include "railsim/fail/monte_carlo.hpp"

namespace railsim::fail {

struct GoodputReport {
  std::string gpu;    // GPU name, for the heading
  std::string rates;  // failure-rates name
  std::vector<GoodputResult> designs;
  std::vector<std::optional<double>> network_cost_usd;  // per design, when priced
  double amortize_years = 4;
  std::optional<double> tokens;  // with tokens_per_s: the time to train them
  std::optional<double> tokens_per_s;
  // Where the degraded slowdowns come from: the inputs (--comm-fraction, --degraded-slowdown), or
  // the Fabric (fabric_effects: one line per stream changed, per design).
  std::string effects = "inputs";
  std::vector<std::vector<std::string>> effect_notes;  // per design
};

Json to_json(const GoodputReport& r);
std::string to_text(const GoodputReport& r);

}  // namespace railsim::fail
