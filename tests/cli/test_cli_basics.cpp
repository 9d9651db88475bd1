#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cli_runner.hpp"

using railsim::test::line_count;
using railsim::test::run_cli;

TEST(Cli, HelpListsEveryCommand) {
  auto r = run_cli("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* c : {"presets", "design", "compare", "estimate", "plan", "traffic", "sim"})
    EXPECT_NE(r.out.find(c), std::string::npos) << c;
}

TEST(Cli, PresetsListsShippedGpusAndSwitches) {
  auto r = run_cli("presets");
  EXPECT_EQ(r.code, 0);
  for (const char* p : {"A100-SXM-80GB", "H100-SXM", "H200", "GH200", "B200", "GB200", "QM9700",
                        "Q3400", "ETH-51.2T-64x800G", "ETH-51.2T-128x400G", "TH4-64x400G"})
    EXPECT_NE(r.out.find(p), std::string::npos) << p;
}

TEST(Cli, UnknownCommandIsOneLineExit2) {
  auto r = run_cli("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("railsim: error:"), std::string::npos);
}

TEST(Cli, PresetsRejectsUnknownKind) {
  auto r = run_cli("presets widgets");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
}

TEST(Cli, NumberBeyondDoubleInAJsonFileIsAnInputError) {
  const std::string path = "/tmp/railsim_test_overflow_gpu.json";
  {
    std::ofstream f(path);
    f << R"({"name": "x", "peak_bf16_tflops": 1e400})";
  }
  auto r = run_cli("design --gpu " + path);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--gpu"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("malformed JSON"), std::string::npos) << r.err;
  std::remove(path.c_str());
}

TEST(Cli, UnconvertibleOptionValueNamesTheOptionFirst) {
  auto r = run_cli("plan --gpus 512 --seq 1e300");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("railsim: error: --seq: cannot read '1e300'", 0), 0u) << r.err;
}

// No command, or an unknown one, names what was given and lists the commands (CLI11 alone says
// only "A subcommand is required").
TEST(CliBasics, UnknownOrMissingCommandListsTheCommands) {
  const auto unknown = run_cli("foo");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("unknown command 'foo'; valid: presets, design, compare, estimate, "
                             "plan, traffic, sim, fail"),
            std::string::npos)
      << unknown.err;
  const auto none = run_cli("");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("a command is required; valid: presets,"), std::string::npos) << none.err;
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1);
}
