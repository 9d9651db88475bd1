#include "commands.hpp"
#include "railsim/core/error.hpp"

namespace railsim::cli {

// Placeholder until the command lands; registered so that --help lists it.
void add_design_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("design", "(not yet available)");
  cmd->callback([] { throw InputError("design", "this command is not implemented yet"); });
}

}  // namespace railsim::cli
