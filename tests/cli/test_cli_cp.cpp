// --cp on the commands with --tp: the strategy line and tables name cp when it is above 1, the
// traffic of its K/V all-gathers is its own row, and bad values end as one line naming --cp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"

using railsim::test::expect_input_error;
using railsim::test::explain_parts_add_up;
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
  // Without --cp nothing says cp but the stack's exchange, an assumption stated in every answer.
  const auto one = run_cli("estimate " + kLong + " --tp 8 --cp 1 --json");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out.find("\"cp\":"), std::string::npos);
  EXPECT_EQ(one.out.find("\"cp_comm_s"), std::string::npos);
  EXPECT_NE(one.out.find("\"cp_comm\": \"p2p\""), std::string::npos);
  const auto text1 = run_cli("estimate " + kLong + " --tp 8 --cp 1");
  EXPECT_EQ(text1.out.find("CP "), std::string::npos) << text1.out;
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

// --cp-comm: the stack's K/V exchange, stated in the software line and the JSON; ring attention
// (p2p, megatron-core-2024's) hides what the all-gathered form leaves on the attention's path.
TEST(CliCp, CpCommChoosesTheExchangeAndSaysSo) {
  const std::string est = "estimate " + kLong + " --tp 8 --cp 2";
  const auto ring = run_cli(est);
  ASSERT_EQ(ring.code, 0) << ring.err;
  EXPECT_NE(ring.out.find("CP ring attention (K/V passed around the ring under the attention)"),
            std::string::npos)
      << ring.out;
  EXPECT_NE(ring.out.find("cp hidden (not in total)"), std::string::npos) << ring.out;
  const auto ag = run_cli(est + " --cp-comm all_gather");
  ASSERT_EQ(ag.code, 0) << ag.err;
  EXPECT_NE(ag.out.find("CP K/V all-gathered before the attention"), std::string::npos) << ag.out;
  const auto jr = nlohmann::json::parse(run_cli(est + " --json").out);
  const auto ja = nlohmann::json::parse(run_cli(est + " --cp-comm all_gather --json").out);
  EXPECT_EQ(jr["cp_comm"], "p2p");
  EXPECT_EQ(ja["cp_comm"], "all_gather");
  // At 16K tokens on NVLink the ring's transfers hide behind the attention; the all-gathers
  // do not.
  EXPECT_EQ(jr["breakdown"]["cp_comm_s"].get<double>(), 0.0);
  EXPECT_GT(jr["cp_comm_hidden_s"].get<double>(), 0.0);
  EXPECT_GT(ja["breakdown"]["cp_comm_s"].get<double>(), 0.0);
  EXPECT_EQ(ja["cp_comm_hidden_s"].get<double>(), 0.0);
  EXPECT_LT(jr["iteration_time_s"].get<double>(), ja["iteration_time_s"].get<double>());
  // The ring passes K and V around again in the backward: traffic carries 3/2 of the bytes.
  const auto tr = nlohmann::json::parse(run_cli("traffic " + kLong + " --tp 8 --cp 2 --json").out);
  const auto ta = nlohmann::json::parse(
      run_cli("traffic " + kLong + " --tp 8 --cp 2 --cp-comm all_gather --json").out);
  EXPECT_EQ(tr["cp_comm"], "p2p");
  EXPECT_EQ(ta["cp_comm"], "all_gather");
  EXPECT_NEAR(tr["bytes_by_parallelism"]["cp"].get<double>(),
              1.5 * ta["bytes_by_parallelism"]["cp"].get<double>(),
              1e-9 * tr["bytes_by_parallelism"]["cp"].get<double>());
  // --explain's parts add up with the exposed exchanges among them.
  const auto ex = nlohmann::json::parse(
      run_cli("plan " + kLong + " --tp 8 --cp 2 --cp-comm all_gather --top 2 --explain --json")
          .out);
  EXPECT_EQ(explain_parts_add_up(ex), 3);
  EXPECT_TRUE(ex["explain"]["parts"][0].contains("cp_comm_s"));
  // Bad values and a ring on a stack without context parallelism: one line naming the option.
  expect_input_error(est + " --cp-comm ring", "--cp-comm",
                     "got 'ring', expected all_gather or p2p");
  expect_input_error(est + " --cp-comm p2p --stack megatron-lm-2022", "--cp-comm",
                     "p2p needs context parallelism, which stack megatron-lm-2022 does not have");
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
