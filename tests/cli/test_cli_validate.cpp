#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using railsim::test::run_cli;
using Json = nlohmann::json;

TEST(CliValidate, PrintsEveryTableAndPasses) {
  const auto r = run_cli("validate");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  for (const char* s :
       {"Korthikanti", "Narayanan", "Llama 3", "NeMo", "175B selective + SP", "+3.5%", "-5.0%",
        "every tolerance of the 6 enforced tables holds", "Megatron-Core README",
        "hold-out table(s) of data miss the project's bar", "Error bands of estimate and plan"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  const auto j = run_cli("validate --json");
  ASSERT_EQ(j.code, 0) << j.err;
  const Json d = Json::parse(j.out);
  EXPECT_TRUE(d["all_within_tolerance"].get<bool>());
  ASSERT_GE(d["tables"].size(), 20u);
  // Three evidence levels for dense models, then three for mixture-of-experts models.
  ASSERT_EQ(d["error_bands"].size(), 6u);
  EXPECT_EQ(d["error_bands"][0]["models"], "dense");
  EXPECT_EQ(d["error_bands"][3]["models"], "moe");
  EXPECT_NEAR(d["tables"][2]["max_abs_error"].get<double>(), 0.100, 0.001);
  // Each table's lean, and the hold-outs taken together (all, dense, MoE), in text and JSON.
  int hold_outs = 0;
  for (const auto& t : d["tables"]) {
    EXPECT_TRUE(t["bias"].is_number()) << t["id"];
    EXPECT_TRUE(t["railsim_faster_on_average"].is_boolean()) << t["id"];
    for (const auto& p : t["points"]) hold_outs += !p["fit"].get<bool>() && !p["error"].is_null();
  }
  const Json& h = d["hold_outs"];
  EXPECT_EQ(h["all"]["runs"].get<int>(), hold_outs);
  EXPECT_EQ(h["dense"]["runs"].get<int>() + h["moe"]["runs"].get<int>(), hold_outs);
  EXPECT_GE(h["all"]["within_10"].get<double>(), h["all"]["within_5"].get<double>());
  EXPECT_NE(r.out.find(fmt::format("Hold-outs (every run outside the frozen fit set): {} runs "
                                   "with a figure, 0 without: mean |error| {:.1f}%",
                                   hold_outs, 100 * h["all"]["mean_abs_error"].get<double>())),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(railsim faster on average): misses the bar"), std::string::npos);
}

TEST(CliErrorBand, EstimateAndPlanCarryTheBand) {
  const std::string a100 =
      "--stack megatron-lm-2022 --gpu A100-SXM-80GB --gpus 64 --nic-gbps 200 --model "
      "Megatron-175B --batch 64 --tp 8 --pp 8 --interleave 3 --recompute selective --sp on";
  const auto e = run_cli("estimate " + a100 + " --json");
  ASSERT_EQ(e.code, 0) << e.err;
  const Json j = Json::parse(e.out);
  EXPECT_TRUE(j["error_band"]["validated"].get<bool>());
  // A100 on megatron-lm-2022: both measured, so the band of that evidence level, as validate
  // prints it.
  const Json bands = Json::parse(run_cli("validate --json").out)["error_bands"];
  EXPECT_EQ(j["error_band"]["evidence"], "GPU and stack measured");
  EXPECT_EQ(bands[0]["evidence"], "GPU and stack measured");
  EXPECT_DOUBLE_EQ(j["error_band"]["fraction"].get<double>(), bands[0]["fraction"].get<double>());
  EXPECT_GE(j["error_band"]["coverage"].get<double>(), 0.8);
  const auto human = run_cli("estimate " + a100);
  EXPECT_NE(
      human.out.find(fmt::format("error band +-{:.1f}%", 100 * bands[0]["fraction"].get<double>())),
      std::string::npos)
      << human.out;
  // GH200 has no measured runs: the wider band, flagged.
  const auto p =
      run_cli("plan --gpu GH200 --gpus 1024 --model GPT-3-175B --batch 512 --top 2 --json");
  ASSERT_EQ(p.code, 0) << p.err;
  const Json pj = Json::parse(p.out);
  for (const auto& plan : pj["plans"]) {
    EXPECT_FALSE(plan["error_band"]["validated"].get<bool>());
    // Never measured: the band of that evidence level.
    EXPECT_EQ(plan["error_band"]["evidence"], "GPU never measured");
    EXPECT_DOUBLE_EQ(plan["error_band"]["fraction"].get<double>(),
                     bands[2]["fraction"].get<double>());
  }
  // A mixture-of-experts model takes the band of the MoE hold-outs at its evidence level.
  const auto moe = run_cli("estimate --gpus 256 --model Mixtral-8x7B --tp 2 --ep 8 --json");
  ASSERT_EQ(moe.code, 0) << moe.err;
  const Json mj = Json::parse(moe.out)["error_band"];
  EXPECT_EQ(mj["models"], "moe");
  EXPECT_EQ(mj["evidence"], "GPU and stack measured");
  EXPECT_EQ(bands[3]["models"], "moe");
  EXPECT_DOUBLE_EQ(mj["fraction"].get<double>(), bands[3]["fraction"].get<double>());
  const auto ph = run_cli("plan --gpu GH200 --gpus 1024 --model GPT-3-175B --batch 512 --top 2");
  EXPECT_NE(ph.out.find(fmt::format("error band of every time: +-{:.1f}% (GPU never measured",
                                    100 * bands[2]["fraction"].get<double>())),
            std::string::npos)
      << ph.out;
}
