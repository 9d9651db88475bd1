#pragma once
// The network-design options shared by every command that builds or evaluates a network:
// --design, --switch, --oversubscription, --oversubscribed-tier, --copper-gpu-leaf,
// --management-links. Resolve with spec::make_network_design(opt) (or resolve_network below).
#include <CLI/CLI.hpp>

#include "railsim/cost/catalog.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/spec/network.hpp"

namespace railsim::cli {

using NetworkOptions = spec::NetworkOptions;

// with_design = false leaves out --design (for `compare`, which builds every design).
void add_network_options(CLI::App& cmd, NetworkOptions& opt, bool with_design = true);

// Validates the options and loads the switch; errors name the option (exit 2).
spec::NetworkDesign resolve_network(const NetworkOptions& opt);

// How a bill of materials is priced: --catalog and --switch-counting (design and compare).
struct CostOptions {
  std::string catalog = cost::kDefaultCatalog;
  std::string counting = "whole";
};
void add_cost_options(CLI::App& cmd, CostOptions& opt);

struct ResolvedCost {
  cost::Catalog catalog;
  cost::SwitchCounting counting;
};
// Loads the catalog and parses the counting rule; errors name the option (exit 2).
ResolvedCost resolve_cost(const CostOptions& opt);

}  // namespace railsim::cli
