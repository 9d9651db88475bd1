// railsim: design and evaluate GPU-cluster networks for LLM training.
#include <fmt/format.h>
#include <signal.h>
#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "commands.hpp"
#include "railsim/command/command.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/core/version.hpp"
#include "railsim/spec/calculon.hpp"
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

// Warnings of the library (a Calculon file's unmapped fields) are held until the command succeeds
// and then printed, once each: a command that fails prints its one error line and nothing else.
std::mutex g_warnings_mutex;
std::vector<std::string> g_warnings;
void hold_warning(const std::string& line) {
  const std::lock_guard lock(g_warnings_mutex);
  if (std::find(g_warnings.begin(), g_warnings.end(), line) == g_warnings.end())
    g_warnings.push_back(line);
}
void print_warnings() {
  const std::lock_guard lock(g_warnings_mutex);
  if (quiet) return;
  for (const std::string& w : g_warnings)
    fmt::print(stderr, "railsim: warning: {}\n", railsim::printable(w, 2000));
}

// SIGINT, SIGTERM and SIGHUP ask the running command to stop (core/cancel.hpp): it unwinds within
// a fraction of a second, removing its temporary files and stopping gnuplot, and main ends the
// process by the same signal. A second signal does not wait: what is registered for clean-up is
// removed at once and the process ends.
extern "C" void on_signal(int sig) {
  if (railsim::cancel_requested()) {
    railsim::clean_up_now();
    ::signal(sig, SIG_DFL);
    ::raise(sig);  // delivered when this handler returns
    return;
  }
  railsim::request_cancel(sig);
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and writes go on; the work checks the flag
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // A signal ignored by whoever started railsim (nohup, a background job) stays ignored.
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

// No command, or an unknown one at any level (CLI11 says only "A subcommand is required"): name
// the word given and list the commands there are.
std::string missing_command(const CLI::App& app, int argc, char** argv, const std::string& what) {
  const CLI::App* parent = &app;
  int at = 1;  // the argument after the deepest command given
  for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().front();
    for (int i = at; i < argc; ++i)
      if (sub->check_name(argv[i])) {
        at = i + 1;
        break;
      }
    parent = sub;
  }
  std::string commands;
  for (const CLI::App* sub : parent->get_subcommands({}))
    commands += (commands.empty() ? "" : ", ") + sub->get_name();
  if (commands.empty()) return what;
  const std::string where = parent == &app ? "" : parent->get_name() + " ";
  if (at < argc && argv[at][0] != '-')
    return fmt::format("unknown {}command '{}'; valid: {}", where, railsim::printable(argv[at]),
                       commands);
  return fmt::format("a {}command is required; valid: {} (railsim {}--help)", where, commands,
                     where);
}

// The commands (paths such as "fail whatif") under `app` that have an option named `name`.
void commands_with(const CLI::App& app, const std::string& name, const std::string& path,
                   std::vector<std::string>& out) {
  for (const CLI::App* sub : app.get_subcommands({})) {
    const std::string here = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    if (sub->get_option_no_throw(name) != nullptr) out.push_back(here);
    commands_with(*sub, name, here, out);
  }
}

// CLI11 lists unexpected arguments last to first ("...not expected: 15e12 --train-tokens"). Name
// the first unknown option instead, and the commands that have it; or the first stray value.
std::string unexpected_arguments(const CLI::App& app, int argc, char** argv,
                                 const std::string& what) {
  // The deepest command given, from the chain CLI11 parsed (as missing_command reads it).
  const CLI::App* cmd = &app;
  std::string path;
  while (!cmd->get_subcommands().empty()) {
    cmd = cmd->get_subcommands().front();
    path += (path.empty() ? "" : " ") + cmd->get_name();
  }
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg.size() < 3) continue;  // command words, values, "--"
    arg = arg.substr(0, arg.find('='));
    if (cmd->get_option_no_throw(arg) != nullptr) continue;
    std::vector<std::string> others;
    commands_with(app, arg, "", others);
    const std::string shown = railsim::printable(arg);
    if (others.empty())
      return fmt::format("{}: railsim {} has no such option (railsim {} --help lists its options)",
                         shown, path, path);
    std::string list;
    for (std::size_t k = 0; k < others.size(); ++k)
      list += (k == 0 ? "" : k + 1 == others.size() ? " and " : ", ") + others[k];
    return fmt::format(
        "{}: railsim {} has no such option; {} {} it (railsim {} --help lists the "
        "options of {})",
        shown, path, list, others.size() == 1 ? "has" : "have", path, path);
  }
  // No unknown option: a stray value. CLI11 lists the extras last to first; name the first.
  const std::string prefix = "The following argument was not expected: ";
  const std::string prefixes = "The following arguments were not expected: ";
  std::string extras;
  if (what.rfind(prefix, 0) == 0) extras = what.substr(prefix.size());
  if (what.rfind(prefixes, 0) == 0) extras = what.substr(prefixes.size());
  if (!extras.empty()) {
    const std::string first = extras.substr(extras.rfind(' ') + 1);
    return fmt::format(
        "'{}': railsim {} takes no value here (a value goes right after its "
        "option; a list is written with commas)",
        railsim::printable(first), path);
  }
  return what;
}

// After a cancelled command has unwound: one line, then the process ends by the signal that
// stopped it, so that a shell or a parent process sees what happened (exit status 128 + signal).
int interrupted(const railsim::Cancelled& e) {
  std::fflush(stdout);
  const int sig = e.signal();
  error(fmt::format("interrupted by {}", sig == SIGINT    ? "SIGINT"
                                         : sig == SIGTERM ? "SIGTERM"
                                         : sig == SIGHUP  ? "SIGHUP"
                                                          : "a request"));
  if (sig > 0) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
  return 128 + (sig > 0 ? sig : SIGINT);
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
  app.set_version_flag("--version", "railsim " + std::string(railsim::version()));
  // Every command of the library's table (railsim/command/command.hpp), in --help order.
  for (const railsim::command::Command& c : railsim::command::commands())
    railsim::cli::add_table_command(app, c.path);
  railsim::cli::add_completion_command(app);
  // An empty value ('--tp ""' or '--tp=') would be dropped silently by optional options and the
  // default used instead: refuse it for every option at once, naming the option it was given to.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool empty_after_eq = arg.rfind("--", 0) == 0 && !arg.empty() && arg.back() == '=';
    if (arg.empty() || empty_after_eq) {
      std::string option = empty_after_eq ? arg.substr(0, arg.size() - 1) : "argument";
      for (int j = i - 1; !empty_after_eq && j >= 1; --j)
        if (argv[j][0] == '-') {  // the option whose values this one follows
          option = argv[j];
          break;
        }
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
    if (r.ec != std::errc() || r.ptr != v.data() + v.size() || n < 1 || n > railsim::kMaxThreads)
      return error(
          fmt::format("error: RAILSIM_THREADS: got '{}', expected an integer from 1 to {} "
                      "(or leave it unset: all cores)",
                      railsim::printable(v), railsim::kMaxThreads));
    thread_cap.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(n));
  }
  install_signal_handlers();
  railsim::spec::set_warning_sink(&hold_warning);
  railsim::cli::install_sweep_world();
  std::string failure;  // the error, without "railsim: error: "
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return quiet ? 0 : app.exit(e);  // --help, --version
  } catch (const CLI::ConversionError& e) {
    // CLI11 says "Could not convert: --seq = 1e300"; name the option first, like every other error.
    failure = e.what();
    const std::string prefix = "Could not convert: ";
    if (failure.rfind(prefix, 0) == 0) {
      const std::string rest = failure.substr(prefix.size());
      const auto eq = rest.find(" = ");
      if (eq != std::string::npos)
        failure = rest.substr(0, eq) + ": cannot read '" + railsim::printable(rest.substr(eq + 3)) +
                  "' as the expected type (see --help; integers must be written in full, in range)";
    }
  } catch (const CLI::RequiredError& e) {
    failure = missing_command(app, argc, argv, e.what());
  } catch (const CLI::ExtrasError& e) {
    failure = unexpected_arguments(app, argc, argv, e.what());
    for (char& c : failure)
      if (c == '\n') c = ' ';
  } catch (const CLI::ParseError& e) {
    // CLI11's own messages span lines and quote what was typed.
    failure = e.what();
    for (char& c : failure)
      if (c == '\n') c = ' ';
  } catch (const railsim::InputError& e) {
    failure = e.what();
  } catch (const railsim::Cancelled& e) {
    return interrupted(e);
  } catch (const railsim::command::Failed& e) {
    std::fflush(stdout);
    return error(e.message, e.code);
  } catch (const std::system_error& e) {
    // fmt reports a failed write to stdout (a full disk, a closed pipe) this way.
    failure = "stdout: cannot write the output (" + e.code().message() + ")";
  } catch (const std::exception& e) {
    return error(std::string("internal error: ") + e.what(), 1);
  }
  if (!failure.empty()) return error("error: " + railsim::cli::agree_on_startup_error(failure));
  std::fflush(stdout);
  print_warnings();
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    return error("error: stdout: cannot write the output");
  return 0;
}
