#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

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
        "hold-out table(s) of data miss the project's bar", "Error bands of estimate and plan",
        "The bands on runs they did not come from (each table left out in turn"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  const auto j = run_cli("validate --json");
  ASSERT_EQ(j.code, 0) << j.err;
  const Json d = Json::parse(j.out);
  EXPECT_TRUE(d["all_within_tolerance"].get<bool>());
  ASSERT_GE(d["tables"].size(), 20u);
  // Three evidence levels for each class: dense models in BF16, then in FP8 or narrower, then
  // mixture-of-experts models in BF16 and in FP8 or narrower.
  ASSERT_EQ(d["error_bands"].size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(d["error_bands"][i]["models"], i < 6 ? "dense" : "moe") << i;
    EXPECT_EQ(d["error_bands"][i]["precision"], i % 6 < 3 ? "bf16" : "fp8") << i;
  }
  EXPECT_NEAR(d["tables"][2]["max_abs_error"].get<double>(), 0.100, 0.001);
  // Each table's lean, and the hold-outs taken together (all, dense, MoE), in text and JSON.
  // Each run names the switch its fabric is built of, and its table each of them: Quantum-2
  // (QM9700), or Quantum-X800 (Q3400) for the runs whose 800G NICs its ports do not carry.
  int hold_outs = 0;
  for (const auto& t : d["tables"]) {
    EXPECT_TRUE(t["bias"].is_number()) << t["id"];
    EXPECT_TRUE(t["railsim_faster_on_average"].is_boolean()) << t["id"];
    const std::string switches = t["switch"].get<std::string>();
    for (const auto& p : t["points"]) {
      hold_outs += !p["fit"].get<bool>() && !p["error"].is_null();
      const std::string sw = p["switch"].get<std::string>();
      EXPECT_TRUE(sw == "QM9700" || sw == "Q3400") << p["run"] << ": " << sw;
      EXPECT_NE(switches.find(sw), std::string::npos) << t["id"] << ": " << switches;
    }
    if (t["id"] == "mlperf-v6-nvidia") {
      EXPECT_EQ(switches, "Q3400 and QM9700");
    }
    if (t["id"] == "mlperf-llama31-8b-nvidia") {
      EXPECT_EQ(switches, "Q3400");
    }
  }
  EXPECT_NE(r.out.find("switch Q3400 and QM9700, routing adaptive"), std::string::npos);
  const Json& h = d["hold_outs"];
  EXPECT_EQ(h["all"]["runs"].get<int>(), hold_outs);
  // The bands judged on the tables they did not come from: one entry per class, every hold-out
  // judged once, in the text as in JSON.
  const Json& check = d["error_band_check"];
  ASSERT_EQ(check.size(), 4u);
  int judged = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(check[i]["models"], d["error_bands"][3 * i]["models"]) << i;
    EXPECT_EQ(check[i]["precision"], d["error_bands"][3 * i]["precision"]) << i;
    judged += check[i]["runs"].get<int>();
  }
  EXPECT_EQ(judged, hold_outs);
  // Each class's runs by the evidence the other tables give them, adding up to its runs.
  for (const auto& c : check) {
    ASSERT_EQ(c["by_evidence"].size(), 3u);
    int runs = 0;
    for (const auto& l : c["by_evidence"]) runs += l["runs"].get<int>();
    EXPECT_EQ(runs, c["runs"].get<int>());
  }
  // The dense BF16 line, its levels with runs listed (a level no hold-out has is left out).
  std::string levels;
  for (const auto& l : check[0]["by_evidence"])
    if (l["runs"].get<int>() > 0)
      levels +=
          fmt::format("{}{} {} of {}", levels.empty() ? "" : ", ", l["evidence"].get<std::string>(),
                      l["inside"].get<int>(), l["runs"].get<int>());
  // Then the band of a GPU never measured, judged with each GPU left out in turn.
  const Json& fresh = check[0]["new_gpu"];
  EXPECT_EQ(fresh["runs"].get<int>(), check[0]["runs"].get<int>());
  EXPECT_NE(r.out.find(fmt::format(
                "  dense  BF16  {} runs, {:.0f}% inside (mean band +-{:.1f}%): {}; each GPU left "
                "out in turn, the band of a GPU never measured held {} of {} ({:.0f}%)\n",
                check[0]["runs"].get<int>(), 100 * check[0]["share_inside"].get<double>(),
                100 * check[0]["mean_fraction"].get<double>(), levels, fresh["inside"].get<int>(),
                fresh["runs"].get<int>(), 100 * fresh["share_inside"].get<double>())),
            std::string::npos)
      << r.out;
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
  // The basis says how this class's bands held on tables they did not come from, as validate's
  // check has it.
  // check's, at the band's own evidence level and for the class as a whole.
  const Json check = Json::parse(run_cli("validate --json").out)["error_band_check"][0];
  const Json& level = check["by_evidence"][0];
  ASSERT_EQ(level["evidence"], "GPU and stack measured");
  EXPECT_NE(
      j["error_band"]["basis"].get<std::string>().find(fmt::format(
          "; on tables they did not come from, this class's bands held {} of its {} "
          "hold-outs with this evidence ({:.0f}%) and {} of all {} ({:.0f}%) (the band of "
          "A100-SXM-80GB with megatron-lm-2022)",
          level["inside"].get<int>(), level["runs"].get<int>(),
          100.0 * level["inside"].get<int>() / level["runs"].get<int>(), check["inside"].get<int>(),
          check["runs"].get<int>(), 100 * check["share_inside"].get<double>())),
      std::string::npos)
      << j["error_band"]["basis"];
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
  // A mixture-of-experts model takes the band of the MoE hold-outs of its precision at its
  // evidence level: BF16 by default, FP8's with --dtype fp8 (far wider: validation.md, item 5).
  const std::string mixtral = "estimate --gpus 256 --model Mixtral-8x7B --tp 2 --ep 8 --json";
  const auto moe = run_cli(mixtral);
  ASSERT_EQ(moe.code, 0) << moe.err;
  const Json mj = Json::parse(moe.out)["error_band"];
  EXPECT_EQ(mj["models"], "moe");
  EXPECT_EQ(mj["precision"], "bf16");
  EXPECT_EQ(mj["evidence"], "GPU and stack measured");
  EXPECT_EQ(bands[6]["models"], "moe");
  EXPECT_DOUBLE_EQ(mj["fraction"].get<double>(), bands[6]["fraction"].get<double>());
  const auto moe8 = run_cli(mixtral + " --dtype fp8");
  ASSERT_EQ(moe8.code, 0) << moe8.err;
  const Json mj8 = Json::parse(moe8.out)["error_band"];
  EXPECT_EQ(mj8["precision"], "fp8");
  // The FP8 MoE hold-outs sit in two tables, each judged by the other's runs: the basis states
  // how few the bands held there, and judges none by a band of fewer than 5 runs.
  const std::string basis8 = mj8["basis"].get<std::string>();
  EXPECT_NE(basis8.find("on tables they did not come from, this class's bands held 18 of its 26 "
                        "hold-outs with this evidence (69%) and 20 of all 29 (69%)"),
            std::string::npos)
      << basis8;
  EXPECT_EQ(basis8.find("fewer than 5 runs"), std::string::npos) << basis8;
  EXPECT_DOUBLE_EQ(mj8["fraction"].get<double>(), bands[9]["fraction"].get<double>());
  EXPECT_GT(mj8["fraction"].get<double>(), mj["fraction"].get<double>());
  const auto ph = run_cli("plan --gpu GH200 --gpus 1024 --model GPT-3-175B --batch 512 --top 2");
  EXPECT_NE(ph.out.find(fmt::format("error band of every time: +-{:.1f}% (GPU never measured",
                                    100 * bands[2]["fraction"].get<double>())),
            std::string::npos)
      << ph.out;
}

// compare's times carry the same band as estimate's, a column in CSV and JSON (empty where a
// design has no plan) and a note in the text that it bounds each time, not the difference.
TEST(CliErrorBand, CompareCarriesTheBandOfItsTimes) {
  const std::string job = "--gpus 4096 --model Mixtral-8x7B --batch 2048 --dtype fp8";
  const auto c = run_cli("compare " + job + " --json");
  ASSERT_EQ(c.code, 0) << c.err;
  const Json designs = Json::parse(c.out)["designs"];
  const auto e = run_cli("estimate " + job + " --tp 2 --ep 8 --json");
  ASSERT_EQ(e.code, 0) << e.err;
  const Json band = Json::parse(e.out)["error_band"];
  EXPECT_EQ(band["models"], "moe");
  EXPECT_EQ(band["precision"], "fp8");
  ASSERT_EQ(designs.size(), 3u);
  for (const Json& d : designs) {
    ASSERT_TRUE(d["best_iteration_time_s"].is_number()) << d;
    EXPECT_DOUBLE_EQ(d["error_band"].get<double>(), band["fraction"].get<double>());
  }
  const auto text = run_cli("compare " + job);
  EXPECT_NE(text.out.find(fmt::format("note: error band of each time +-{:.1f}% ({});",
                                      100 * band["fraction"].get<double>(),
                                      band["basis"].get<std::string>())),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("the band bounds each time, not their difference"), std::string::npos);
}

namespace {

// One's own table: two runs of TorchTitan's Table 1 (Llama 3.1 8B on 8 H100 96 GB, FSDP, per-op
// checkpointing, torch.compile, bf16 then float8), as a user would write them.
std::string own_table_text(const std::string& extra_row_field = "",
                           const std::string& bf16_rate = "6667") {
  return R"({"about": "two runs", "source": "TorchTitan benchmarks, Table 1",
    "table": {"id": "mine", "title": "My runs", "metric": "tokens_per_s_per_gpu",
              "max_tolerance": 0.1, "mean_tolerance": 0.05},
    "common": {"gpu": "H100-SXM-96GB", "stack": "torchtitan-2024", "hb_domain": 8,
               "nic_gbps": 400, "model": "Llama-3-8B", "gpus": 8, "global_batch": 16,
               "seq_len": 8192, "micro_batch": 2, "recompute": "op", "compile": true,
               "tp": 1, "pp": 1},
    "rows": [{"label": "bf16", "dtype": "bf16", "tokens_per_s_per_gpu": )" +
         bf16_rate + extra_row_field + R"(},
             {"label": "float8", "dtype": "fp8", "tokens_per_s_per_gpu": 8532}]})";
}

}  // namespace

// validate --table: one's own runs timed as the shipped ones (the same two runs in the shipped
// TorchTitan table get the same figures), each with the band estimate and plan print for it:
// the bf16 run without torch.compile inside (+10.7% against +-13.5%), the float8 one outside
// (+14.1%).
TEST(CliValidate, OwnRunsAreTimedWithTheBandTheyWouldBePrinted) {
  const std::string file = railsim::test::write_temp_file(
      "validate", "own.json", own_table_text(R"(, "compile": false)", "5762"));
  const auto r = run_cli("validate --json --table " + file);
  ASSERT_EQ(r.code, 0) << r.err;
  const Json d = Json::parse(r.out);
  const Json& own = d["own"];
  ASSERT_EQ(own["table"]["points"].size(), 2u);
  const Json* shipped = nullptr;
  for (const auto& t : d["tables"])
    if (t["id"] == "torchtitan-h100-2024") shipped = &t;
  ASSERT_NE(shipped, nullptr);
  auto shipped_point = [&](const std::string& run) {
    for (const auto& p : (*shipped)["points"])
      if (p["run"] == run) return p;
    return Json();
  };
  const Json bf16 = own["table"]["points"][0], fp8 = own["table"]["points"][1];
  EXPECT_DOUBLE_EQ(bf16["railsim"].get<double>(),
                   shipped_point("T1-8B-8g-FSDP")["railsim"].get<double>());
  EXPECT_DOUBLE_EQ(fp8["railsim"].get<double>(),
                   shipped_point("T1-8B-8g-FSDP-compile-fp8")["railsim"].get<double>());
  EXPECT_EQ(bf16["evidence"], "GPU and stack measured");
  EXPECT_DOUBLE_EQ(bf16["band"].get<double>(), d["error_bands"][0]["fraction"].get<double>());
  EXPECT_TRUE(bf16["inside_band"].get<bool>());
  EXPECT_FALSE(fp8["inside_band"].get<bool>());
  EXPECT_EQ(own["inside_band"].get<int>(), 1);
  EXPECT_EQ(own["hold_outs"]["runs"].get<int>(), 2);
  // One's own runs change no band and no shipped summary.
  const Json plain = Json::parse(run_cli("validate --json").out);
  EXPECT_EQ(plain["error_bands"], d["error_bands"]);
  EXPECT_EQ(plain["hold_outs"], d["hold_outs"]);
  const auto text = run_cli("validate --table " + file);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("Your runs: 2 runs with a figure, 0 without"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("1 of 2 inside the band estimate and plan print for them"),
            std::string::npos);
  EXPECT_NE(text.out.find("OUTSIDE (GPU and stack measured)"), std::string::npos);
}

// A misspelled field, a frozen fit, a count of 0 and an unknown preset: each one line naming the
// row's field, exit 2, nothing printed.
TEST(CliValidate, OwnTableBadInputNamesTheRowsField) {
  using railsim::test::expect_input_error;
  using railsim::test::write_temp_file;
  expect_input_error(
      "validate --table " +
          write_temp_file("validate", "typo.json", own_table_text(R"(, "tp_comm_overlaps": true)")),
      "--table", "rows[0].tp_comm_overlaps: unknown field");
  expect_input_error("validate --table " + write_temp_file("validate", "fit.json",
                                                           own_table_text(R"(, "fit": true)")),
                     "--table", "rows[0].fit: the fit set is frozen");
  expect_input_error("validate --table " +
                         write_temp_file("validate", "zero.json", own_table_text(R"(, "tp": 0)")),
                     "--table", "rows[0].tp: got 0");
  expect_input_error("validate --table " + write_temp_file("validate", "model.json",
                                                           own_table_text(R"(, "model": "L8")")),
                     "--table", "rows[0].model: unknown preset 'L8'");
  expect_input_error(
      "validate --table " + write_temp_file("validate", "metric.json", own_table_text("", "-1")),
      "--table", "rows[0].tokens_per_s_per_gpu: got -1");
  std::string bad_switch = own_table_text();
  bad_switch.replace(bad_switch.find(R"("mean_tolerance": 0.05)"), 22,
                     R"("mean_tolerance": 0.05, "switch": "QM9800")");
  expect_input_error("validate --table " + write_temp_file("validate", "switch.json", bad_switch),
                     "--table", "table.switch: unknown preset 'QM9800'");
  expect_input_error("validate --table /nonexistent/own.json", "--table", "cannot read");
}
