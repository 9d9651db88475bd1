// --etp 1 (MoE parallel folding) on estimate, plan, traffic and sim: the strategy line, the plan
// table and the JSON say it, the expert all-to-all runs over consecutive ranks that span the TP
// ranks, and bad values end as one line naming the option, exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.hpp"

using railsim::test::expect_one_line_errors;
using railsim::test::run_cli;

namespace {
// NVIDIA's H100 layout of Qwen3-235B-A22B (Megatron-Bridge 26.02): TP 2, PP 8, VP 4, EP 32 over
// DP 16, on a smaller batch so that the searches stay short.
std::string qwen(int tp) {
  return "--model Qwen3-235B-A22B --gpus 256 --gpu H100-SXM --seq 4096 --batch 512 --stack "
         "nemo-perf-2025 --dtype fp8 --tp " +
         std::to_string(tp) + " --pp 8 --interleave 4 --micro-batch 1";
}
const std::string kQwen = qwen(2);

// `railsim estimate ARGS`: its strategy line contains `strategy`; then its JSON.
nlohmann::json estimate_printed(const std::string& args, const std::string& strategy) {
  const auto est = run_cli("estimate " + args);
  EXPECT_EQ(est.code, 0) << est.err;
  EXPECT_NE(est.out.find(strategy), std::string::npos) << est.out;
  return nlohmann::json::parse(run_cli("estimate " + args + " --json").out);
}
}  // namespace

TEST(CliEtp, FoldedExpertsAreEstimatedPlannedAndPrinted) {
  const auto j = estimate_printed(kQwen + " --ep 32 --etp 1", "tp 2 pp 8 dp 16 ep 32 etp 1,");
  EXPECT_EQ(j["strategy"]["etp"], 1);
  // The expert all-to-all: 32 consecutive ranks, 4 nodes of 8.
  bool a2a = false;
  for (const auto& op : j["comm"]) {
    if (op["parallelism"] != "ep") continue;
    a2a = true;
    EXPECT_EQ(op["group"]["size"], 32);
    EXPECT_EQ(op["group"]["per_domain"], 8);
    EXPECT_EQ(op["group"]["domains"], 4);
  }
  EXPECT_TRUE(a2a);
  // Unfolded, an ep of 8 leaves etp out of the JSON.
  const auto u = nlohmann::json::parse(run_cli("estimate " + kQwen + " --ep 8 --json").out);
  EXPECT_FALSE(u["strategy"].contains("etp"));
  // plan finds only folded layouts for ep 32, prints the etp column and reads its plan back.
  const auto plan = run_cli("plan " + kQwen + " --ep 32 --top 2 --json");
  ASSERT_EQ(plan.code, 0) << plan.err;
  const auto pj = nlohmann::json::parse(plan.out);
  ASSERT_FALSE(pj["plans"].empty());
  for (const auto& p : pj["plans"]) EXPECT_EQ(p["strategy"]["etp"], 1);
  const auto table = run_cli("plan " + kQwen + " --ep 32 --top 2");
  EXPECT_NE(table.out.find(" etp "), std::string::npos) << table.out;
  const auto against = run_cli("plan " + kQwen +
                               " --ep 32 --top 1 --against \"tp2 pp8 dp16 ep32 "
                               "etp1 mb1 v4 none\"");
  ASSERT_EQ(against.code, 0) << against.err;
  EXPECT_NE(against.out.find("etp1"), std::string::npos) << against.out;
}

TEST(CliEtp, BadFoldingIsOneLineNamingTheOption) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"estimate " + kQwen + " --ep 32 --etp 0", "--etp"},
      {"estimate " + kQwen + " --ep 32 --etp x", "--etp"},
      {"estimate " + kQwen + " --ep 32 --etp 99999999999", "--etp"},
      {"estimate --model Qwen3-235B-A22B --gpus 256 --gpu H100-SXM --tp 4 --ep 8 --etp 3 --stack "
       "nemo-perf-2025",
       "--etp: got 3, expected a divisor of tp = 4"},
      {"estimate --model Qwen3-235B-A22B --gpus 256 --gpu H100-SXM --tp 4 --ep 8 --etp 8 --stack "
       "nemo-perf-2025",
       "--etp: got 8, expected a divisor of tp = 4"},
      {"estimate --model Qwen3-235B-A22B --gpus 256 --gpu H100-SXM --tp 4 --pp 8 --ep 32 --etp 2 "
       "--stack "
       "nemo-perf-2025",
       "--ep: etp x ep = 2 x 32 must divide tp x cp x dp"},
      {"estimate --model Qwen3-235B-A22B --gpus 256 --gpu H100-SXM --tp 4 --ep 8 --etp 2",
       "--etp: stack megatron-core-2024 has no expert folding"},
      {"estimate " + kQwen + " --ep 32 --etp 1 --sp off", "--etp"},
      {"estimate " + kQwen + " --ep 64 --etp 1",
       "--ep: etp x ep = 1 x 64 must divide tp x cp x dp"},
      {"estimate " + kQwen + " --ep 32", "--ep: ep = 32 must divide dp = 16"},
      {"estimate --model Qwen3-235B-A22B --gpus 256 --gpu H100-SXM --tp 2 --ep 8 --etp 1",
       "--etp: stack megatron-core-2024 has no expert folding"},
      {"plan --model Qwen3-235B-A22B --gpus 256 --gpu H100-SXM --ep 8 --etp 1",
       "--etp: stack megatron-core-2024 has no expert folding"},
      {"estimate --model Llama-3-8B --gpus 64 --gpu H100-SXM --stack nemo-perf-2025 --etp 1",
       "--etp: etp = 1 folds the expert layers"},
      {"plan " + kQwen + " --against \"tp2 pp8 dp16 ep32 etp3\"", "--against"},
  };
  expect_one_line_errors(cases);
  // Unfolded, the error says how ep 32 could run.
  const auto r = run_cli("estimate " + kQwen + " --ep 32");
  EXPECT_NE(r.err.find("folded (--etp 1) it may span tp x cp x dp"), std::string::npos) << r.err;
}

// An expert TP size between 1 and tp: estimate prints and reports it, the routed copies'
// gathers run over groups of etp GPUs, and plan visits it where the stack folds.
TEST(CliEtp, ExpertTpBetweenOneAndTpIsEstimatedAndPlanned) {
  const std::string qwen4 = qwen(4);
  const auto j = estimate_printed(qwen4 + " --ep 16 --etp 2", "tp 4 pp 8 dp 8 ep 16 etp 2,");
  EXPECT_EQ(j["strategy"]["etp"], 2);
  int gathers = 0;
  for (const auto& op : j["comm"]) {
    if (op["axis"] != "etp") continue;
    ++gathers;
    EXPECT_EQ(op["parallelism"], "sp");
    EXPECT_EQ(op["group"]["size"], 2);
    // etp (T / t) top_k h bf16: 2 x 1,024 x 8 x 4,096 x 2 bytes.
    EXPECT_DOUBLE_EQ(op["bytes"].get<double>(), 2.0 * 1024 * 8 * 4096 * 2);
  }
  EXPECT_EQ(gathers, 4);  // all-gather and reduce-scatter, forward and backward
  const auto plan = run_cli("plan " + qwen4 + " --ep 16 --etp 2 --top 1 --json");
  ASSERT_EQ(plan.code, 0) << plan.err;
  const auto pj = nlohmann::json::parse(plan.out);
  ASSERT_EQ(pj["plans"].size(), 1u);
  EXPECT_EQ(pj["plans"][0]["strategy"]["etp"], 2);
}
