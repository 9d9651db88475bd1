// --cp on the commands with --tp: the strategy line and tables name cp when it is above 1, the
// traffic of its K/V all-gathers is its own row, and bad values end as one line naming --cp.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.hpp"

using railsim::test::expect_input_error;
using railsim::test::run_cli;

namespace {
const std::string kLong = "--model Llama-3-8B --gpus 64 --gpu H100-SXM --seq 16384 --batch 64";
}  // namespace

TEST(CliCp, EstimatePlanTrafficAndSimTakeCp) {
  const auto est = run_cli("estimate " + kLong + " --tp 8 --cp 2");
  ASSERT_EQ(est.code, 0) << est.err;
  EXPECT_NE(est.out.find("strategy: tp 8 cp 2 pp 1 dp 4"), std::string::npos) << est.out;
  EXPECT_NE(est.out.find("cp K/V comm"), std::string::npos);
  EXPECT_NE(est.out.find("cp   all_gather      cp"), std::string::npos) << est.out;
  const auto json = run_cli("estimate " + kLong + " --tp 8 --cp 2 --json");
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_NE(json.out.find("\"cp\": 2"), std::string::npos);
  EXPECT_NE(json.out.find("\"cp_comm_s\""), std::string::npos);
  // Without --cp nothing says cp.
  const auto one = run_cli("estimate " + kLong + " --tp 8 --cp 1 --json");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out.find("\"cp"), std::string::npos);
  const auto plan = run_cli("plan " + kLong + " --tp 8 --cp 4 --top 2");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("cp comm"), std::string::npos) << plan.out;
  const auto traffic = run_cli("traffic " + kLong + " --tp 8 --cp 2");
  ASSERT_EQ(traffic.code, 0) << traffic.err;
  EXPECT_NE(traffic.out.find("\ncp "), std::string::npos) << traffic.out;
  const auto sim = run_cli("sim " + kLong + " --tp 8 --cp 2 --schedule");
  EXPECT_EQ(sim.code, 0) << sim.err;
  EXPECT_NE(sim.out.find("tp 8 cp 2 pp 1"), std::string::npos) << sim.out.substr(0, 400);
}

TEST(CliCp, BadCpIsOneLineNamingTheOption) {
  expect_input_error("estimate " + kLong + " --tp 8 --cp 0", "--cp", "");
  expect_input_error(
      "estimate --model Llama-3-8B --gpus 64 --gpu H100-SXM --seq 12288 --tp 8 --cp 3", "--cp",
      "does not divide the 64 GPUs");
  expect_input_error("estimate " + kLong + " --tp 8 --cp 2 --dp 8", "--cp",
                     "tp x cp x pp x dp = 8 x 2 x 1 x 8 must equal the 64 GPUs");
  expect_input_error(
      "estimate --model Llama-3-8B --gpus 64 --gpu H100-SXM --seq 8190 --tp 8 --cp 2", "--cp",
      "not divisible by 2 x cp = 4");
  expect_input_error("estimate " + kLong + " --tp 8 --cp 2 --stack megatron-lm-2022", "--cp",
                     "stack megatron-lm-2022 has no context parallelism");
  expect_input_error("plan " + kLong + " --cp 2 --stack megatron-lm-2021", "--cp",
                     "has no context parallelism");
}
