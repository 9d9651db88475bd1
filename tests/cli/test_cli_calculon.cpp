// Calculon's application and system files given to --model and --gpu.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"

using railsim::test::line_count;
using railsim::test::run_cli;
using Json = nlohmann::json;

namespace {
const std::string kDir = std::string(RAILSIM_TEST_DATA_DIR) + "/calculon/";
}

TEST(CliCalculon, ModelFileTimesAsThePresetWithOneWarningLine) {
  const std::string strategy =
      " --gpu A100-SXM-80GB --gpus 64 --tp 8 --pp 8 --batch 64 --stack megatron-lm-2022 --json";
  const auto preset = run_cli("estimate --model Megatron-175B" + strategy);
  const auto calc = run_cli("estimate --model " + kDir + "models/megatron-175B.json" + strategy);
  ASSERT_EQ(preset.code, 0) << preset.err;
  ASSERT_EQ(calc.code, 0) << calc.err;
  const Json p = Json::parse(preset.out), c = Json::parse(calc.out);
  EXPECT_EQ(c["model"], "megatron-175B");
  EXPECT_EQ(c["iteration_time_s"], p["iteration_time_s"]);
  EXPECT_EQ(c["memory_gib"], p["memory_gib"]);
  EXPECT_EQ(line_count(calc.err), 1);
  EXPECT_NE(calc.err.find("railsim: warning: --model: megatron-175B.json read as a Calculon "
                          "application file; assumed: vocab 51200"),
            std::string::npos)
      << calc.err;
  EXPECT_TRUE(preset.err.empty()) << preset.err;
}

TEST(CliCalculon, SystemFileWarnsOnceNamingTheUnmappedFields) {
  // sweep loads the GPU at every point: still one line.
  const auto r =
      run_cli("sweep --gpu " + kDir + "systems/h100-sxm.json --gpus 1024,2048 --no-perf --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--gpu: h100-sxm.json read as a Calculon system file; not mapped: "
                       "matrix.float8.gflops_efficiency; assumed: attention efficiency 0.5"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Json::parse(r.out)["rows"].size(), 6u);  // 2 points x 3 designs
}

TEST(CliCalculon, BadFileIsExitTwoNamingTheField) {
  const std::string f = testing::TempDir() + "calculon_bad.json";
  {
    std::ofstream(f) << R"({"hidden": 4096, "feedforward": 16384, "seq_size": 2048,
                            "attn_heads": 32, "attn_size": 128, "num_blocks": 0})";
  }
  const auto r = run_cli("estimate --gpus 64 --model " + f);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("railsim: error: model.num_blocks: "), std::string::npos) << r.err;
  EXPECT_EQ(line_count(r.err), 1);
}
