// --offload-layers on estimate and plan: the strategy line, breakdown and JSON say it, the plan
// table gains its column, and Megatron-Core's conditions and bad values end as one line naming
// the option (or the GPU file's field), exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.hpp"

using railsim::test::expect_one_line_errors;
using railsim::test::explain_parts_add_up;
using railsim::test::run_cli;
using railsim::test::write_temp_file;

namespace {
const std::string k70 =
    "--model Llama-3-70B --gpus 64 --gpu H100-SXM --seq 8192 --batch 128 --tp 8 --pp 1";
}  // namespace

TEST(CliOffload, EstimateAndPlanSayWhatIsOffloaded) {
  const auto none = run_cli("estimate " + k70 + " --recompute none --json");
  ASSERT_EQ(none.code, 0) << none.err;
  const auto est = run_cli("estimate " + k70 + " --recompute none --offload-layers 40");
  ASSERT_EQ(est.code, 0) << est.err;
  EXPECT_NE(est.out.find("dp-overlap on, offload-layers 40"), std::string::npos) << est.out;
  EXPECT_NE(est.out.find("activation offload"), std::string::npos) << est.out;
  EXPECT_NE(est.out.find("offloaded to its 256 GiB of host memory (fits)"), std::string::npos)
      << est.out;
  const auto j = nlohmann::json::parse(
      run_cli("estimate " + k70 + " --recompute none --offload-layers 40 --json").out);
  const auto j0 = nlohmann::json::parse(none.out);
  EXPECT_EQ(j["strategy"]["offload_layers"], 40);
  EXPECT_FALSE(j0["strategy"].contains("offload_layers"));
  EXPECT_GT(j["breakdown"]["offload_s"].get<double>(), 0.0);
  EXPECT_FALSE(j0["breakdown"].contains("offload_s"));
  EXPECT_LT(j["memory_gib"].get<double>(), 80.0);
  EXPECT_GT(j["memory"]["host_gib"].get<double>(), 0.0);
  EXPECT_FALSE(j0["memory"].contains("host_gib"));
  EXPECT_GT(j0["memory_gib"].get<double>(), 80.0);
  EXPECT_NEAR(j["iteration_time_s"].get<double>() - j0["iteration_time_s"].get<double>(),
              j["breakdown"]["offload_s"].get<double>(), 1e-6);
  const auto plan = run_cli("plan " + k70 + " --offload-layers 40 --top 2");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find(" offload "), std::string::npos) << plan.out;
  const auto csv = run_cli("plan " + k70 + " --offload-layers 40 --top 2 --csv");
  EXPECT_NE(csv.out.find("offload_layers"), std::string::npos) << csv.out;
  const auto ex = nlohmann::json::parse(
      run_cli("plan " + k70 + " --offload-layers 40 --top 2 --explain --json").out);
  EXPECT_EQ(explain_parts_add_up(ex), 3);
  EXPECT_TRUE(ex["explain"]["parts"][0].contains("offload_s"));
  // auto: the fewest layers that make each strategy fit; without it, no plan offloads.
  const auto autoj =
      nlohmann::json::parse(run_cli("plan " + k70 + " --offload-layers auto --top 1 --json").out);
  EXPECT_GT(autoj["plans"][0]["strategy"]["offload_layers"].get<int>(), 0);
  const auto plain = nlohmann::json::parse(run_cli("plan " + k70 + " --top 1 --json").out);
  EXPECT_FALSE(plain["plans"][0]["strategy"].contains("offload_layers"));
}

TEST(CliOffload, BadOffloadIsOneLineNamingTheOption) {
  const std::string bad_gpu = write_temp_file(
      "cli_offload", "gpu.json",
      R"({"name": "g", "peak_bf16_tflops": 989, "hbm_gib": 80, "hbm_gbytes_per_s": 3350,)"
      R"( "hb_gbytes_per_s_per_direction": 450, "default_hb_domain": 8, "nic_gbps": 400,)"
      R"( "host_gbytes_per_s_per_direction": -64})");
  const std::string text_gpu = write_temp_file(
      "cli_offload", "gpu_text.json",
      R"({"name": "g", "peak_bf16_tflops": 989, "hbm_gib": 80, "hbm_gbytes_per_s": 3350,)"
      R"( "hb_gbytes_per_s_per_direction": 450, "default_hb_domain": 8, "nic_gbps": 400,)"
      R"( "host_gbytes_per_s_per_direction": "fast"})");
  const std::string no_host = write_temp_file(
      "cli_offload", "gpu_no_host.json",
      R"({"name": "g", "peak_bf16_tflops": 989, "hbm_gib": 80, "hbm_gbytes_per_s": 3350,)"
      R"( "hb_gbytes_per_s_per_direction": 450, "default_hb_domain": 8, "nic_gbps": 400})");
  const std::string small_host = write_temp_file(
      "cli_offload", "gpu_small_host.json",
      R"({"name": "g", "peak_bf16_tflops": 989, "hbm_gib": 80, "hbm_gbytes_per_s": 3350,)"
      R"( "hb_gbytes_per_s_per_direction": 450, "default_hb_domain": 8, "nic_gbps": 400,)"
      R"( "host_gbytes_per_s_per_direction": 64, "host_memory_gib": 0.5})");
  const std::string no_gpu =
      "--model Llama-3-70B --gpus 64 --seq 8192 --batch 128 --tp 8 --pp 1 --recompute none";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"estimate " + k70 + " --recompute none --offload-layers 80", "--offload-layers"},
      {"estimate " + k70 + " --recompute none --offload-layers -3", "--offload-layers"},
      {"estimate " + k70 + " --recompute none --offload-layers many", "--offload-layers"},
      {"estimate " + k70 + " --recompute none --offload-layers auto", "--offload-layers"},
      {"estimate " + k70 + " --recompute none --offload-layers 99999999999", "--offload-layers"},
      {"estimate " + k70 + " --recompute selective --offload-layers 8", "--offload-layers"},
      {"estimate " + k70 + " --recompute none --offload-layers 8 --stack torchtitan-2024",
       "--offload-layers"},
      {"estimate --model Llama-3-70B --gpus 64 --gpu H100-SXM --tp 8 --pp 2 --recompute none "
       "--offload-layers 8",
       "--offload-layers"},
      {"estimate " + no_gpu + " --offload-layers 8 --gpu " + no_host, "--offload-layers"},
      {"plan " + k70 + " --offload-layers 8 --stack torchtitan-2024", "--offload-layers"},
      // The GPU file's errors name its field.
      {"estimate " + no_gpu + " --gpu " + bad_gpu, "gpu.host_gbytes_per_s_per_direction"},
      {"estimate " + no_gpu + " --gpu " + text_gpu, "gpu.host_gbytes_per_s_per_direction"},
      {"estimate " + no_gpu + " --gpu " + small_host, "gpu.host_memory_gib"},
  };
  expect_one_line_errors(cases);
}
