#pragma once
// Each subcommand lives in its own file and registers itself here. No model logic in apps/:
// a command parses options, calls the library, prints.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "network_options.hpp"
#include "railsim/spec/cluster.hpp"

namespace railsim::cli {

// A command of the library's table (railsim/command/command.hpp), e.g. "estimate" or
// "fail goodput" (its group is added as needed).
void add_table_command(CLI::App& app, const std::string& path);

void add_presets_command(CLI::App& app);
void add_traffic_command(CLI::App& app);
void add_sim_command(CLI::App& app);
void add_fail_command(CLI::App& app);  // `fail goodput`
void add_optimize_command(CLI::App& app);
void add_completion_command(CLI::App& app);  // last: it walks the others
void add_report_command(CLI::App& app);      // the one-file HTML report
void add_validate_command(CLI::App& app);

// Lets the library's `sweep` reach the processes of this run (command/sweep_world.hpp): the ranks
// of the MPI job a launcher started, or this process alone. Called before the command line is
// parsed.
void install_sweep_world();

// Under an MPI launcher, `railsim sweep` runs on every rank; a rank whose command line fails
// before the sweep starts (an option CLI11 cannot parse) still meets the others in their first
// collective step, so that every rank stops with the lowest failing rank's message (naming the
// rank when it is not 0), which this returns for rank 0 to print. Outside MPI, or once the sweep
// has started (its own errors are agreed already), `message` as is.
std::string agree_on_startup_error(const std::string& message);

// Thrown by a command whose output is printed but whose check failed (validate): main prints
// "railsim: <message>" on stderr and exits with `code`.
struct CommandFailed {
  int code = 1;
  std::string message;
};

// The cluster options every command shares: --gpus, --gpu, --hb-domain, --nic-gbps, --hb-GBps,
// --nics-per-gpu.
void add_cluster_options(CLI::App& cmd, spec::ClusterOptions& opt);

// Parses an integer option given as text ("32768", or "1e12" which is then out of range) and
// throws InputError naming `option` and the valid range.
std::int64_t parse_integer_option(const std::string& option, const std::string& text,
                                  std::int64_t min, std::int64_t max);
// The network options (--design, --switch, --oversubscription, ...) are declared in
// network_options.hpp: add_network_options(cmd, opt) and resolve_network(opt).
// The model/training/strategy options (--model, --batch, --seq, --dtype, --tp, --pp, --dp, --ep,
// --micro-batch, --interleave, --recompute, --sp, --dist-opt, --dp-overlap, --placement) are in
// strategy_options.hpp: add_strategy_options(cmd, opt), resolve_strategy_inputs(opt) and
// resolve_strategy(inputs, cluster).

}  // namespace railsim::cli
