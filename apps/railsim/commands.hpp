#pragma once
// The program's side of the commands: each command is the library's (railsim/command/), its
// options registered in CLI11 from the command's field table; no model logic in apps/.
#include <CLI/CLI.hpp>
#include <string>

namespace railsim::cli {

// A command of the library's table (railsim/command/command.hpp), e.g. "estimate" or
// "fail goodput" (its group is added as needed).
void add_table_command(CLI::App& app, const std::string& path);

void add_completion_command(CLI::App& app);  // last: it walks the others

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

}  // namespace railsim::cli
