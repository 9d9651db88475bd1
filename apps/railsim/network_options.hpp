#pragma once
// The network-design options shared by every command that builds or evaluates a network:
// --design, --switch, --oversubscription, --oversubscribed-tier, --copper-gpu-leaf,
// --management-links. Resolve with spec::make_network_design(opt) (or resolve_network below).
#include <CLI/CLI.hpp>

#include "railsim/spec/network.hpp"

namespace railsim::cli {

using NetworkOptions = spec::NetworkOptions;

// with_design = false leaves out --design (for `compare`, which builds every design).
void add_network_options(CLI::App& cmd, NetworkOptions& opt, bool with_design = true);

// Validates the options and loads the switch; errors name the option (exit 2).
spec::NetworkDesign resolve_network(const NetworkOptions& opt);

}  // namespace railsim::cli
