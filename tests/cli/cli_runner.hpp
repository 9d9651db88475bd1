#pragma once
// Runs the railsim binary as a user would and captures exit code, stdout and stderr.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../common/read_csv.hpp"

namespace railsim::test {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `args` is appended to the binary path as shell words (quote them yourself when needed); `env`
// (shell assignments such as "PATH=/x") is put before the binary.
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  static int counter = 0;
  const std::string base =
      "/tmp/railsim_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string cmd = env + (env.empty() ? "" : " ") + RAILSIM_CLI_PATH + " " + args + " >" +
                          base + ".out 2>" + base + ".err </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

// Number of lines in s (a trailing newline does not start a new line).
inline int line_count(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  if (!s.empty() && s.back() != '\n') ++n;
  return n;
}

// Each (arguments, field) case: exit 2, one line on stderr, "railsim: error: <field>" in it.
template <class Cases>
void expect_one_line_errors(const Cases& cases) {
  for (const auto& [args, field] : cases) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(line_count(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(std::string("railsim: error: ") + field), std::string::npos)
        << args << "\n"
        << r.err;
  }
}

// A scratch file path of this test process (`prefix` names the test file, `name` the file).
inline std::string temp_path(const std::string& prefix, const std::string& name) {
  return "/tmp/railsim_" + prefix + "_" + std::to_string(::getpid()) + "_" + name;
}

// Writes `text` to temp_path(prefix, name) and returns the path.
inline std::string write_temp_file(const std::string& prefix, const std::string& name,
                                   const std::string& text) {
  const std::string path = temp_path(prefix, name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Exit 2, exactly one stderr line starting `railsim: error: <field>` and holding `detail`, and
// nothing on stdout.
inline void expect_input_error(const std::string& args, const std::string& field,
                               const std::string& detail) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  EXPECT_EQ(line_count(r.err), 1) << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("railsim: error: " + field, 0), 0u) << args << " -> " << r.err;
  EXPECT_NE(r.err.find(detail), std::string::npos) << args << " -> " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 200);
}

// Exit 2, exactly one stderr line starting `railsim: error: <field>: `, nothing on stdout; `env`
// is added to the program's environment.
inline void expect_field_error(const std::string& args, const std::string& field,
                               const std::string& env = "") {
  const CliResult r = run_cli(args, env);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  EXPECT_EQ(line_count(r.err), 1) << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("railsim: error: " + field + ": ", 0), 0u) << args << " -> " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 200);
}

// plan --explain's parts of every row add up to its iteration time, the parts only some plans
// have (context parallelism's exchanges, activation offload) among them; returns the rows.
inline int explain_parts_add_up(const nlohmann::json& plan_json) {
  int rows = 0;
  for (const nlohmann::json& row : plan_json["explain"]["parts"]) {
    double time = 0;
    for (const char* k : {"compute_s", "recompute_s", "tp_comm_s", "tp_overlap_s", "ep_comm_s",
                          "pp_comm_s", "dp_comm_s", "rail_forwarding_s", "bubble_s",
                          "pipeline_overhead_s", "optimizer_s", "cp_comm_s", "offload_s"})
      if (row.contains(k)) time += row[k].get<double>();
    EXPECT_NEAR(time, row["iteration_time_s"].get<double>(), 1e-9) << row["plan"];
    ++rows;
  }
  return rows;
}

}  // namespace railsim::test
