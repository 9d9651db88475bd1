// railsim: design and evaluate GPU-cluster networks for LLM training.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <system_error>

#include "commands.hpp"
#include "railsim/core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "railsim: rail-only vs rail-optimized networks for LLM training clusters.\n"
      "Design networks and their bill of materials, estimate and plan training iterations,\n"
      "analyse traffic and simulate collectives. See README.md and docs/cli.md."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "railsim 0.1.0");
  railsim::cli::add_presets_command(app);
  railsim::cli::add_design_command(app);
  railsim::cli::add_compare_command(app);
  railsim::cli::add_estimate_command(app);
  railsim::cli::add_plan_command(app);
  railsim::cli::add_traffic_command(app);
  railsim::cli::add_sim_command(app);
  railsim::cli::add_fail_command(app);
  railsim::cli::add_sweep_command(app);
  railsim::cli::add_optimize_command(app);
  railsim::cli::add_report_command(app);
  railsim::cli::add_validate_command(app);
  // An empty value ('--tp ""' or '--tp=') would be dropped silently by optional options and the
  // default used instead: refuse it for every option at once.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool empty_after_eq = arg.rfind("--", 0) == 0 && !arg.empty() && arg.back() == '=';
    if (arg.empty() || empty_after_eq) {
      const std::string option =
          empty_after_eq ? arg.substr(0, arg.size() - 1) : (i > 1 ? argv[i - 1] : "argument");
      fmt::print(stderr, "railsim: error: {}: empty value; give a value or leave the option out\n",
                 option);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ConversionError& e) {
    // CLI11 says "Could not convert: --seq = 1e300"; name the option first, like every other error.
    std::string msg = e.what();
    const std::string prefix = "Could not convert: ";
    if (msg.rfind(prefix, 0) == 0) {
      const std::string rest = msg.substr(prefix.size());
      const auto eq = rest.find(" = ");
      if (eq != std::string::npos)
        msg = rest.substr(0, eq) + ": cannot read '" + rest.substr(eq + 3) +
              "' as the expected type (see --help; integers must be written in full, in range)";
    }
    fmt::print(stderr, "railsim: error: {}\n", msg);
    return 2;
  } catch (const CLI::RequiredError& e) {
    // No subcommand, or an unknown one (CLI11 says only "A subcommand is required"): name what
    // was given and list the commands.
    std::string commands;
    for (const CLI::App* sub : app.get_subcommands({}))
      commands += (commands.empty() ? "" : ", ") + sub->get_name();
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-')
      fmt::print(stderr, "railsim: error: unknown command '{}'; valid: {}\n", argv[1], commands);
    else if (app.get_subcommands().empty())
      fmt::print(stderr, "railsim: error: a command is required; valid: {} (railsim --help)\n",
                 commands);
    else
      fmt::print(stderr, "railsim: error: {}\n", e.what());
    return 2;
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    fmt::print(stderr, "railsim: error: {}\n", msg);
    return 2;
  } catch (const railsim::InputError& e) {
    fmt::print(stderr, "railsim: error: {}\n", e.what());
    return 2;
  } catch (const railsim::cli::CommandFailed& e) {
    std::fflush(stdout);
    fmt::print(stderr, "railsim: {}\n", e.message);
    return e.code;
  } catch (const std::system_error& e) {
    // fmt reports a failed write to stdout (a full disk, a closed pipe) this way.
    fmt::print(stderr, "railsim: error: stdout: cannot write the output ({})\n",
               e.code().message());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "railsim: internal error: {}\n", e.what());
    return 1;
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    fmt::print(stderr, "railsim: error: stdout: cannot write the output\n");
    return 2;
  }
  return 0;
}
