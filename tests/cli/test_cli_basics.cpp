#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>

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
  for (const char* p :
       {"A100-SXM-80GB", "H100-SXM", "H200", "GH200", "B200", "GB200", "QM9700", "Q3400",
        "ETH-51.2T-64x800G", "ETH-51.2T-128x400G", "TH4-64x400G", "ETH-102.4T-128x800G",
        "ETH-102.4T-64x1.6T", "eth-800g-pluggable-2026", "eth-800g-lpo-2026", "eth-800g-cpo-2026",
        "eth-1.6t-pluggable-2026", "eth-1.6t-lpo-2026", "eth-1.6t-cpo-2026"})
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

// An option the command lacks is named first, with the commands that have it (CLI11 alone lists
// the extras last to first: "not expected: zipf:1 --skew"); a stray value is named too.
TEST(CliBasics, MisplacedOptionNamesTheCommandsThatHaveIt) {
  const std::pair<const char*, const char*> cases[] = {
      {"plan --skew zipf:1",
       "railsim: error: --skew: railsim plan has no such option; sim has it "
       "(railsim plan --help lists the options of plan)\n"},
      {"fail whatif --top=3",
       "railsim: error: --top: railsim fail whatif has no such option; plan and sim have it "
       "(railsim fail whatif --help lists the options of fail whatif)\n"},
      {"design --gpus 64 --no-such-thing 1",
       "railsim: error: --no-such-thing: railsim design has no such option (railsim design --help "
       "lists its options)\n"},
      {"plan --gpus 1024 5 6",
       "railsim: error: '5': railsim plan takes no value here (a value goes right after its "
       "option; a list is written with commas)\n"},
  };
  for (const auto& [args, expected] : cases) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err, expected) << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

// Empty values are refused for every option (an optional option would otherwise drop them and run
// on its default), on one line naming the option.
TEST(CliBasics, EmptyOptionValuesAreRefusedByName) {
  for (const char* args : {"estimate --gpus 64 --tp ''",
                           "estimate --gpus 64 --tp=", "design --nic-gbps ''", "plan --model ''"}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(line_count(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("empty value"), std::string::npos) << args << "\n" << r.err;
  }
}

// Bandwidths below the documented floor (1 Gb/s, 1 GB/s) would turn into infinite times: refused.
TEST(CliBasics, BandwidthsBelowTheFloorAreRefused) {
  const auto hb = run_cli("estimate --gpus 64 --hb-GBps 1e-308");
  EXPECT_EQ(hb.code, 2);
  EXPECT_NE(hb.err.find("--hb-GBps: got 1e-308, expected a number >= 1"), std::string::npos)
      << hb.err;
  EXPECT_EQ(run_cli("plan --gpus 64 --nic-gbps 5e-324").code, 2);
}

// A failed write of the output (a full disk) is exit 2 with one line naming stdout, not an
// internal error.
TEST(CliBasics, OutputToAFullDeviceIsAnErrorNamingStdout) {
  if (std::FILE* f = std::fopen("/dev/full", "w")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "no /dev/full";
  }
  const std::string err = "/tmp/railsim_full_" + std::to_string(::getpid()) + ".err";
  const std::string cmd =
      std::string(RAILSIM_CLI_PATH) + " compare --gpus 64 --no-perf >/dev/full 2>" + err;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  std::ifstream in(err);
  std::string line, all;
  int lines = 0;
  while (std::getline(in, line)) {
    all += line;
    ++lines;
  }
  std::remove(err.c_str());
  EXPECT_EQ(lines, 1) << all;
  EXPECT_NE(all.find("stdout: cannot write the output"), std::string::npos) << all;
}

// A preset's JSON can be printed as shipped and loaded back as a user file with the same figures.
TEST(Cli, PresetsShowsAPresetsJsonAndItLoadsAsAUserFile) {
  const auto shown = run_cli("presets gpus gb200");
  ASSERT_EQ(shown.code, 0) << shown.err;
  const auto j = nlohmann::json::parse(shown.out);
  EXPECT_EQ(j["name"], "GB200");
  EXPECT_EQ(j["default_hb_domain"], 72);
  const std::string path = "/tmp/railsim_preset_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream out(path);
    out << shown.out;
  }
  const auto from_file = run_cli("design --gpu " + path + " --gpus 1152 --json");
  const auto from_preset = run_cli("design --gpu GB200 --gpus 1152 --json");
  std::remove(path.c_str());
  ASSERT_EQ(from_preset.code, 0) << from_preset.err;
  EXPECT_EQ(from_file.code, from_preset.code) << from_file.err;
  EXPECT_GT(nlohmann::json::parse(from_preset.out)["cost_usd"].get<double>(), 0.0);
  EXPECT_EQ(nlohmann::json::parse(from_file.out)["cost_usd"],
            nlohmann::json::parse(from_preset.out)["cost_usd"]);
  const auto listed = run_cli("presets --json");
  ASSERT_EQ(listed.code, 0);
  EXPECT_EQ(nlohmann::json::parse(listed.out)["switches"].size(), 7u);
  const auto unknown = run_cli("presets switches QM9701");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("valid: ETH-102.4T-128x800G, ETH-102.4T-64x1.6T, ETH-51.2T-128x400G"),
            std::string::npos)
      << unknown.err;
  EXPECT_EQ(run_cli("presets all GB200").code, 2);
}
