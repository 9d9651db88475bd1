// Stopping the program: SIGINT, SIGTERM and SIGHUP stop any command within a fraction of a second
// (it checks between steps of its work), print one line, leave no temporary file or folder and no
// gnuplot behind, and end the process by the same signal. The waits below bound a hang (a run
// that ignores the signal), they time nothing: a stopped run ends long before them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.hpp"

namespace fs = std::filesystem;
using railsim::test::slurp;

namespace {

// A scratch folder of its own (removed at the end).
struct SignalScratch {
  fs::path dir;
  explicit SignalScratch(const std::string& name)
      : dir(fs::temp_directory_path() /
            ("railsim_signals_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~SignalScratch() { fs::remove_all(dir); }
  std::vector<std::string> entries(const fs::path& in) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(in)) out.push_back(e.path().filename().string());
    return out;
  }
};

// railsim with `args` as a child process, SIGINT and SIGTERM at their defaults (a shell running
// a background job would start it with SIGINT ignored), stdout and stderr to files, `env` added.
struct Child {
  pid_t pid = -1;
  std::string out, err;
  Child(const std::vector<std::string>& args, const fs::path& dir,
        const std::vector<std::string>& env = {}) {
    out = (dir / "stdout").string();
    err = (dir / "stderr").string();
    pid = ::fork();
    if (pid == 0) {
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, 1);
      ::dup2(e, 2);
      for (const auto& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
      std::vector<char*> argv{const_cast<char*>(RAILSIM_CLI_PATH)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(RAILSIM_CLI_PATH, argv.data());
      ::_exit(127);
    }
  }
  // Whether the child has its handler for `sig` in place (the SigCgt mask of /proc/<pid>/status):
  // a signal sent before that would end it by the default action, before railsim could print
  // anything, and a loaded machine (a sanitizer build under parallel tests) can take longer than
  // any fixed delay to get there.
  bool catches(int sig) const {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("SigCgt:", 0) == 0)
        return ((std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1u) != 0;
    return false;
  }
  // The wait status, or -1 if the child is still running after `limit` (it is then killed).
  int wait(std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
      if (::waitpid(pid, &status, WNOHANG) == pid) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
};

// Waits (at most 60 s) until `pred` holds.
template <class Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 6000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool process_gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

// Starts `args`, lets it work for `after` once its handlers are in place, sends `sig`, and checks
// that it ends by that signal with the one line.
void expect_stops(const std::vector<std::string>& args, int sig, const char* name,
                  std::chrono::milliseconds after) {
  SignalScratch s(std::string("stops_") + name);
  Child c(args, s.dir);
  ASSERT_TRUE(eventually([&] { return c.catches(sig); })) << "no handler for " << name;
  std::this_thread::sleep_for(after);
  ::kill(c.pid, sig);
  const int status = c.wait(std::chrono::seconds(60));
  ASSERT_NE(status, -1) << "still running 60 s after " << name;
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status) << ": " << slurp(c.err);
  EXPECT_EQ(WTERMSIG(status), sig);
  EXPECT_EQ(slurp(c.err), std::string("railsim: interrupted by ") + name + "\n");
  EXPECT_EQ(slurp(c.out), "");
}

}  // namespace

TEST(CliSignals, SigintStopsASimulation) {
  // A skewed MoE all-to-all of 1.9M tokens per GPU: about 20 s of routing and simulation.
  expect_stops({"sim", "--gpus", "64", "--collective", "alltoall", "--skew", "zipf:1", "--tokens",
                "1900000"},
               SIGINT, "SIGINT", std::chrono::milliseconds(1000));
}

TEST(CliSignals, SigtermStopsTheGoodputMonteCarlo) {
  // 1.4M trials at 32,768 GPUs: minutes of work.
  expect_stops({"fail", "goodput", "--trials", "1400000"}, SIGTERM, "SIGTERM",
               std::chrono::milliseconds(1000));
}

TEST(CliSignals, SighupStopsGoodputWithItsPlanEarlyOrLate) {
  // Whether it lands during the plan search or deep in the trials, the same ending.
  for (const int ms : {500, 1500}) {
    expect_stops({"fail", "goodput", "--trials", "1400000", "--model", "GPT-1T"}, SIGHUP, "SIGHUP",
                 std::chrono::milliseconds(ms));
  }
}

// gnuplot stand-in that never finishes: it writes its pid, then sleeps (exec: same pid).
fs::path slow_gnuplot(const fs::path& dir) {
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  const fs::path gp = bin / "gnuplot";
  std::ofstream(gp) << "#!/bin/sh\necho $$ > " << (dir / "gnuplot.pid").string()
                    << "\nexec sleep 600\n";
  fs::permissions(gp, fs::perms::owner_all);
  return bin;
}

TEST(CliSignals, AStoppedPlotLeavesNoTemporaryAndNoGnuplot) {
  // The sweep waits for gnuplot with its script in $TMPDIR/railsim-plot-*: SIGTERM to railsim
  // alone (not to its process group, as a terminal's Ctrl-C would) stops gnuplot too and removes
  // the folder; the picture is not written. Then the same with two signals in a row, the second
  // ending the process at once: what is registered for clean-up is removed by the handler.
  for (const int signals : {1, 2}) {
    SignalScratch s("plot" + std::to_string(signals));
    const fs::path tmp = s.dir / "tmp";
    fs::create_directories(tmp);
    const fs::path bin = slow_gnuplot(s.dir);
    const std::string path = "PATH=" + bin.string() + ":" + std::getenv("PATH");
    const std::string tmpdir = "TMPDIR=" + tmp.string();
    const fs::path picture = s.dir / "cost.svg";
    Child c({"sweep", "--no-perf", "--gpus", "1024,2048", "--plot", picture.string(), "--plot-x",
             "gpus", "--plot-y", "cost_usd"},
            s.dir, {path, tmpdir});
    const fs::path pidfile = s.dir / "gnuplot.pid";
    ASSERT_TRUE(eventually([&] { return fs::exists(pidfile) && fs::file_size(pidfile) > 0; }))
        << slurp(c.err);
    const pid_t gnuplot = std::stoi(slurp(pidfile.string()));
    ASSERT_EQ(s.entries(tmp).size(), 1u);  // railsim-plot-XXXXXX, with the script in it
    for (int i = 0; i < signals; ++i) ::kill(c.pid, SIGTERM);
    const int status = c.wait(std::chrono::seconds(60));
    ASSERT_NE(status, -1);
    ASSERT_TRUE(WIFSIGNALED(status)) << slurp(c.err);
    EXPECT_EQ(WTERMSIG(status), SIGTERM);
    EXPECT_TRUE(eventually([&] { return process_gone(gnuplot); })) << "gnuplot left running";
    EXPECT_TRUE(s.entries(tmp).empty()) << "left in TMPDIR: " << s.entries(tmp).front();
    EXPECT_FALSE(fs::exists(picture));
    if (!process_gone(gnuplot)) ::kill(gnuplot, SIGKILL);
  }
}

TEST(CliSignals, AStoppedExportLeavesNoTemporaryAndNoPartialFile) {
  // A 262,144-GPU graph (about 100 MB of JSON) stopped at several moments: building the graph,
  // writing the text, renaming. The folder then holds nothing, or the whole previous file.
  SignalScratch s("export");
  const fs::path folder = s.dir / "out";
  fs::create_directories(folder);
  const fs::path out = folder / "graph.json";
  std::ofstream(out) << "previous\n";
  for (const int ms : {200, 800, 1500, 2500}) {
    Child c({"design", "--gpus", "262144", "--export", "json", out.string()}, s.dir);
    ASSERT_TRUE(eventually([&] { return c.catches(SIGTERM); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    ::kill(c.pid, SIGTERM);
    const int status = c.wait(std::chrono::seconds(60));
    ASSERT_NE(status, -1);
    for (const auto& name : s.entries(folder))
      EXPECT_EQ(name, "graph.json") << "left behind after " << ms << " ms";
    const std::string text = slurp(out.string());
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(text, "previous\n") << "stopped after " << ms << " ms";
    } else {  // it finished first: the whole new graph
      EXPECT_EQ(WEXITSTATUS(status), 0);
      EXPECT_EQ(text.substr(text.size() - 3), "]}\n");
      std::ofstream(out) << "previous\n";
    }
  }
}
