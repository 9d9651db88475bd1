// railsim: design and evaluate GPU-cluster networks for LLM training.
#include <fmt/format.h>

#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "commands.hpp"
#include "railsim/core/error.hpp"
#include "railsim/sweep/distributed.hpp"

namespace {
// Under an MPI launcher (mpirun -np 8 railsim sweep ...), `sweep` runs as many processes that
// meet the same errors and exit with the same status: only rank 0 prints them (and --help).
bool quiet = false;

// Every error leaves through here: one line, whatever the user's values held (a newline or an
// escape sequence is written as \n, \x1b, ...), and bounded in length (values echoed in messages
// are cut to 80 characters where they are built; this bounds the whole line).
int error(const std::string& msg, int code = 2) {
  if (quiet) return code;
  fmt::print(stderr, "railsim: {}\n", railsim::printable(msg, 2000));
  return code;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "sweep") {
    const auto launch = railsim::sweep::launched_by_mpi();
    quiet = launch && launch->rank > 0;
  }
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
  railsim::cli::add_completion_command(app);
  // An empty value ('--tp ""' or '--tp=') would be dropped silently by optional options and the
  // default used instead: refuse it for every option at once.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool empty_after_eq = arg.rfind("--", 0) == 0 && !arg.empty() && arg.back() == '=';
    if (arg.empty() || empty_after_eq) {
      const std::string option =
          empty_after_eq ? arg.substr(0, arg.size() - 1) : (i > 1 ? argv[i - 1] : "argument");
      return error("error: " + railsim::printable(option) +
                   ": empty value; give a value or leave the option out");
    }
  }
  // RAILSIM_THREADS=n caps oneTBB's worker threads for every command (each command's output is
  // the same for any n; the determinism tests run with several).
  std::optional<tbb::global_control> thread_cap;
  if (const char* env = std::getenv("RAILSIM_THREADS"); env != nullptr && *env != '\0') {
    const std::string_view v(env);
    long n = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size() || n < 1 || n > 4096)
      return error("error: RAILSIM_THREADS: got '" + railsim::printable(v) +
                   "', expected an integer from 1 to 4096 (or leave it unset: all cores)");
    thread_cap.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(n));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return quiet ? 0 : app.exit(e);  // --help, --version
  } catch (const CLI::ConversionError& e) {
    // CLI11 says "Could not convert: --seq = 1e300"; name the option first, like every other error.
    std::string msg = e.what();
    const std::string prefix = "Could not convert: ";
    if (msg.rfind(prefix, 0) == 0) {
      const std::string rest = msg.substr(prefix.size());
      const auto eq = rest.find(" = ");
      if (eq != std::string::npos)
        msg = rest.substr(0, eq) + ": cannot read '" + railsim::printable(rest.substr(eq + 3)) +
              "' as the expected type (see --help; integers must be written in full, in range)";
    }
    return error("error: " + msg);
  } catch (const CLI::RequiredError& e) {
    // No subcommand, or an unknown one (CLI11 says only "A subcommand is required"): name what
    // was given and list the commands.
    std::string commands;
    for (const CLI::App* sub : app.get_subcommands({}))
      commands += (commands.empty() ? "" : ", ") + sub->get_name();
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-')
      return error(fmt::format("error: unknown command '{}'; valid: {}",
                               railsim::printable(argv[1]), commands));
    if (app.get_subcommands().empty())
      return error(
          fmt::format("error: a command is required; valid: {} (railsim --help)", commands));
    return error(std::string("error: ") + e.what());
  } catch (const CLI::ParseError& e) {
    // CLI11's own messages span lines and quote what was typed.
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    return error("error: " + msg);
  } catch (const railsim::InputError& e) {
    return error(std::string("error: ") + e.what());
  } catch (const railsim::cli::CommandFailed& e) {
    std::fflush(stdout);
    return error(e.message, e.code);
  } catch (const std::system_error& e) {
    // fmt reports a failed write to stdout (a full disk, a closed pipe) this way.
    return error("error: stdout: cannot write the output (" + e.code().message() + ")");
  } catch (const std::exception& e) {
    return error(std::string("internal error: ") + e.what(), 1);
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    return error("error: stdout: cannot write the output");
  return 0;
}
