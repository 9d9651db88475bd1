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

// --routing, --seed, --forwarding, --forward-via and --chunks (plan, compare, estimate, sim;
// optimize has its own copy): how flows pick among equal-cost uplinks, the ECMP hash's salt, and
// how rail-only forwards cross-rail transfers through the HB domain.
void add_routing_options(CLI::App& cmd, NetworkOptions& opt);
inline constexpr const char* kRoutingHelp =
    "Path choice above the leaf: ecmp (a hash per flow: flows may collide on one uplink; the "
    "analytic model charges the expected busiest link), adaptive (per-packet adaptive "
    "routing: InfiniBand AR, Spectrum-X) or spray (per-packet spraying): adaptive and spray "
    "spread a flow evenly over every equal-cost uplink, in the analytic model and in sim; auto: "
    "the switch's default, adaptive on InfiniBand (the subnet manager and NCCL enable it), ecmp "
    "on Ethernet";
inline constexpr const char* kSeedHelp =
    "Salt of the ECMP hash, 0 to 2^62 (0: the default hash; sim hashes with it, the analytic "
    "model takes the expectation over hashes; with spray it changes no switch path)";

// Validates the options and loads the switch; errors name the option (exit 2).
spec::NetworkDesign resolve_network(const NetworkOptions& opt);

}  // namespace railsim::cli
