// railsim optimize as a user runs it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using railsim::test::line_count;
using railsim::test::run_cli;

TEST(CliOptimize, PaperSettingsPickRailOnlyWithTheFewestTiers) {
  // GPT-1T on 32,768 GPUs, within 1% of rail-optimized, no oversubscription, perfect spreading
  // above the leaf (the paper's setting; by default each switch routes as its family does, so
  // InfiniBand candidates spread and Ethernet ones hash): rail-only, with 2 tiers on H100 (K=8)
  // and 1 on GH200 (K=256).
  for (auto [gpu, tiers] : {std::pair{"H100-SXM", 2}, std::pair{"GH200", 1}}) {
    auto r = run_cli(std::string("optimize --gpu ") + gpu +
                     " --within 1 --of rail_optimized --oversubscription 1 --routing adaptive "
                     "--json");
    ASSERT_EQ(r.code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    const auto& c = j["cheapest"];
    EXPECT_EQ(c["design"].get<std::string>(), "rail_only") << gpu;
    EXPECT_EQ(c["tiers"].get<int>(), tiers) << gpu;
    EXPECT_TRUE(c["meets_target"].get<bool>());
    EXPECT_EQ(c["binding_model"].get<std::string>(), "GPT-1T");
    EXPECT_NE(j["explain"].get<std::string>().find("cheapest network meeting the target"),
              std::string::npos);
  }
}

// Each candidate states its routing (each switch's own by default), and one line says when the
// answer changes under the contrasting routing: on 4,096 H100 within 1%, a 3:1 QM9700 rail_only
// network (InfiniBand: adaptive) by default, a 3:1 Ethernet one when every switch hashes (the
// 102.4T switch in its 256 x 400G mode: two tiers of 30 switches, rail_optimized).
TEST(CliOptimize, StatesItsRoutingAndWhenTheAnswerFlips) {
  auto r = run_cli("optimize --gpus 4096 --within 1 --of rail_optimized --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cheapest"]["switch"].get<std::string>(), "QM9700");
  EXPECT_EQ(j["cheapest"]["routing"].get<std::string>(), "adaptive");
  for (const auto& row : j["frontier"])
    EXPECT_EQ(row["routing"].get<std::string>(),
              row["switch"].get<std::string>() == "QM9700" || row["switch"] == "Q3400" ? "adaptive"
                                                                                       : "ecmp");
  const auto& f = j["routing_flip"];
  EXPECT_EQ(f["routing"].get<std::string>(), "ecmp");
  EXPECT_TRUE(f["flips"].get<bool>());
  EXPECT_EQ(f["cheapest"].get<std::string>(),
            "rail_optimized 3:1 K=8 400G x1 ETH-102.4T-128x800G ib-ndr-thirdparty-2024");
  auto text = run_cli("optimize --gpus 4096 --within 1 --of rail_optimized");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("note: the routing decides the network: under --routing ecmp the "
                          "cheapest meeting the target is rail_optimized 3:1 K=8 400G x1 "
                          "ETH-102.4T-128x800G"),
            std::string::npos)
      << text.out;
}

// Each model's times carry the band estimate and plan print for them: one entry per model in
// JSON (its kind and precision: Mixtral in FP8 gets the MoE FP8 band) and a note in the text.
TEST(CliOptimize, EachModelsTimesCarryTheirErrorBand) {
  const std::string args =
      "optimize --gpus 1024 --within 50 --switch QM9700 --design rail_only --oversubscription 1 "
      "--model GPT-3-175B --model Mixtral-8x7B --batch 1024 --dtype fp8";
  const auto r = run_cli(args + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto bands = nlohmann::json::parse(r.out)["error_bands"];
  ASSERT_EQ(bands.size(), 2u);
  EXPECT_EQ(bands[0]["model"], "GPT-3-175B");
  EXPECT_EQ(bands[0]["models"], "dense");
  EXPECT_EQ(bands[1]["model"], "Mixtral-8x7B");
  EXPECT_EQ(bands[1]["models"], "moe");
  for (const auto& b : bands) EXPECT_EQ(b["precision"], "fp8");
  EXPECT_GT(bands[1]["fraction"].get<double>(), bands[0]["fraction"].get<double>());
  const auto e = run_cli(
      "estimate --gpus 1024 --model Mixtral-8x7B --batch 1024 --dtype fp8 "
      "--tp 2 --ep 8 --json");
  ASSERT_EQ(e.code, 0) << e.err;
  const auto eb = nlohmann::json::parse(e.out)["error_band"];
  EXPECT_DOUBLE_EQ(bands[1]["fraction"].get<double>(), eb["fraction"].get<double>());
  EXPECT_EQ(bands[1]["basis"], eb["basis"]);
  const auto text = run_cli(args);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("note: Mixtral-8x7B's times carry an error band of +-"),
            std::string::npos)
      << text.out;
}

TEST(CliOptimize, HumanAndCsv) {
  auto r = run_cli("optimize --gpus 1024 --within 10 --switch ETH-51.2T-128x400G,QM9700");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"cheapest network meeting the target", "frontier", "GPT-1T time"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  auto csv = run_cli("optimize --gpus 1024 --within 10 --all --csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  const auto rows = railsim::test::read_csv(csv.out);
  ASSERT_GT(rows.size(), 5u);
  EXPECT_EQ(rows[0][0], "rank");
}

// --all is honoured in every format: the JSON's "all" holds every candidate evaluated (the rows
// of --all --csv), the frontier among them; without --all there is no such key.
TEST(CliOptimize, AllIsHonouredInJson) {
  const std::string args = "optimize --gpus 1024 --within 50 --switch QM9700 --json";
  const auto with = run_cli(args + " --all");
  ASSERT_EQ(with.code, 0) << with.err;
  const nlohmann::json j = nlohmann::json::parse(with.out);
  ASSERT_TRUE(j.contains("all"));
  const auto csv = run_cli("optimize --gpus 1024 --within 50 --switch QM9700 --all --csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(j["all"].size() + 1, railsim::test::read_csv(csv.out).size());  // + the header
  EXPECT_GT(j["all"].size(), j["frontier"].size());
  const auto without = run_cli(args);
  ASSERT_EQ(without.code, 0) << without.err;
  EXPECT_FALSE(nlohmann::json::parse(without.out).contains("all"));
}

TEST(CliOptimize, BadInputIsOneLineExit2) {
  const std::pair<const char*, const char*> cases[] = {
      {"optimize --gpus 1024", "--within"},
      {"optimize --gpus 1024 --max-iteration-time 0.001", "--max-iteration-time"},
      {"optimize --gpus 1024 --within 5 --max-network-cost 1", "--max-network-cost"},
      {"optimize --gpus 1024 --within 5 --max-power 10", "--max-power"},
      {"optimize --gpus 1024 --within -1", "--within"},
      {"optimize --gpus 1024 --within 5 --of rail_only", "--of"},
      {"optimize --gpus 1024 --within 5 --design ideal", "--design"},
      {"optimize --gpus 1024 --within 5 --oversubscription 0.5", "--oversubscription"},
      {"optimize --gpus 1024 --within 5 --copper-gpu-leaf maybe", "--copper-gpu-leaf"},
      {"optimize --gpus 1024 --within 5 --hb-domain 7", "--switch"},
      {"optimize --gpus 1024 --within 5 --switch nope", "--switch"},
      {"optimize --gpus 1024 --within 5 --model nope", "--model"},
      {"optimize --gpus 1024 --tokens 1e12", "--days"},
      {"optimize --gpus 1024 --within 5 --json --csv", "--csv"},
  };
  railsim::test::expect_one_line_errors(cases);
}

TEST(CliOptimize, FrontierPlot) {
  const std::string path = "/tmp/railsim_optimize_" + std::to_string(::getpid()) + ".svg";
  auto r = run_cli("optimize --gpus 1024 --within 10 --plot " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = railsim::test::slurp(path);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("cheapest meeting the target"), std::string::npos);
  std::remove(path.c_str());
  auto bad = run_cli("optimize --gpus 1024 --within 10 --plot /tmp/x.gif");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("railsim: error: --plot"), std::string::npos) << bad.err;
}

// --train-tokens: each frontier network's days to train the tokens with each model's best plan
// (tokens over the plan's tokens per second), in every format; a bad count names the option before
// any search.
TEST(CliOptimize, TrainTokensGivesEachNetworksDays) {
  const auto r = run_cli(
      "optimize --gpus 4096 --within 1 --of rail_optimized --model GPT-3-175B --batch 1024 "
      "--train-tokens 3e11 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["frontier"].empty());
  for (const auto& row : j["frontier"]) {
    const double t = row["GPT-3-175B_iteration_time_s"].get<double>();
    EXPECT_NEAR(row["GPT-3-175B_train_days"].get<double>(), 3e11 / (1024.0 * 2048 / t) / 86400,
                1e-9 * row["GPT-3-175B_train_days"].get<double>());
  }
  const auto text = run_cli(
      "optimize --gpus 4096 --within 1 --of rail_optimized --model GPT-3-175B --batch 1024 "
      "--train-tokens 3e11");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("GPT-3-175B days"), std::string::npos) << text.out;
  railsim::test::expect_field_error("optimize --within 1 --train-tokens 0", "--train-tokens");
}
