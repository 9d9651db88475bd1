// railsim fail goodput as a user runs it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"

using railsim::test::line_count;
using railsim::test::run_cli;

TEST(CliFail, GoodputJsonOfBothDesigns) {
  // Meta's stack stopped on a dead NIC: --pxn off for its 419 interruptions; rail_only below
  // runs with PXN (the default).
  auto r = run_cli("fail goodput --gpus 16384 --days 54 --trials 200 --seed 3 --json --pxn off");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["pxn"].get<bool>());
  EXPECT_EQ(j["network"]["routing"].get<std::string>(), "ecmp");
  EXPECT_EQ(j["seed"].get<int>(), 3);  // the Monte Carlo's seed
  EXPECT_EQ(j["gpus"].get<int>(), 16384);
  EXPECT_EQ(j["hb_domain"].get<int>(), 8);
  EXPECT_EQ(j["rates"].get<std::string>(), "llama3-meta-2024");
  ASSERT_EQ(j["designs"].size(), 2u);
  const auto& opt = j["designs"][0];
  const auto& only = j["designs"][1];
  EXPECT_EQ(opt["design"].get<std::string>(), "rail_optimized");
  EXPECT_EQ(only["design"].get<std::string>(), "rail_only");
  // Meta's 419 interruptions in 54 days, and more than 90% effective training time.
  EXPECT_NEAR(opt["interruptions"]["mean"].get<double>(), 419, 3 * std::sqrt(419.0 / 200) + 0.5);
  EXPECT_GT(opt["ettr"]["mean"].get<double>(), 0.9);
  EXPECT_NEAR(opt["checkpoint_interval_min"].get<double>(), 7.86, 0.01);
  EXPECT_TRUE(opt["checkpoint_interval_auto"].get<bool>());
  const auto with_pxn = run_cli(
      "fail goodput --gpus 16384 --days 54 --trials 200 --seed 3 --json --design rail_only");
  ASSERT_EQ(with_pxn.code, 0) << with_pxn.err;
  const auto pj = nlohmann::json::parse(with_pxn.out);
  EXPECT_TRUE(pj["pxn"].get<bool>());
  const auto& only_pxn = pj["designs"][0];
  EXPECT_LT(only_pxn["interruptions"]["mean"].get<double>(),
            opt["interruptions"]["mean"].get<double>());
  EXPECT_GT(only_pxn["degradations"]["mean"].get<double>(), 30);
  EXPECT_LT(only["network_cost_usd"].get<double>(), opt["network_cost_usd"].get<double>());
  EXPECT_EQ(opt["streams"].size(), 18u);
  const auto& h = opt["gpu_hours"];
  const double sum = h["productive"].get<double>() + h["checkpoint"].get<double>() +
                     h["rework"].get<double>() + h["restart"].get<double>() +
                     h["wait_for_repair"].get<double>() + h["degraded"].get<double>();
  EXPECT_NEAR(sum / h["wall"].get<double>(), 1.0, 1e-9);
}

TEST(CliFail, HumanTableAndTheSameResultsWithOneThread) {
  auto r = run_cli("fail goodput --gpus 4096 --trials 100 --tokens 1e12 --tokens-per-s 2e6");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"rail_optimized", "rail_only", "ETTR mean", "interruptions mean", "rework",
                        "waiting for repair", "degraded slowdown", "network cost",
                        "per effective GPU-hour", "days to train", "Young/Daly"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  auto a = run_cli("fail goodput --gpus 4096 --trials 100 --json --threads 1");
  auto b = run_cli("fail goodput --gpus 4096 --trials 100 --json --threads 2");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

// --tokens with --model and no --tokens-per-s: each design trains at its own best plan's
// throughput, the one `railsim plan` finds for that design; the days to train follow from it.
TEST(CliFail, TimeToTrainTakesEachDesignsThroughputFromItsPlan) {
  const std::string job = " --gpus 4096 --model GPT-3-175B --batch 1024 ";
  const auto r = run_cli("fail goodput" + job + "--tokens 3e11 --trials 50 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["designs"].size(), 2u);
  for (const auto& d : j["designs"]) {
    const std::string design = d["design"].get<std::string>();
    const auto plan = run_cli("plan" + job + "--design " + design + " --top 1 --json");
    ASSERT_EQ(plan.code, 0) << plan.err;
    const double tps = nlohmann::json::parse(plan.out)["plans"][0]["tokens_per_s"].get<double>();
    EXPECT_DOUBLE_EQ(d["tokens_per_s"].get<double>(), tps) << design;
    EXPECT_NE(d["tokens_per_s_from"].get<std::string>().find("best plan: tp"), std::string::npos);
    EXPECT_NEAR(d["time_to_train_days"]["ideal"].get<double>(), 3e11 / tps / 86400,
                1e-9 * d["time_to_train_days"]["ideal"].get<double>());
    EXPECT_GT(d["time_to_train_days"]["mean"].get<double>(),
              d["time_to_train_days"]["ideal"].get<double>());  // failures cost time
  }
  const auto text = run_cli("fail goodput" + job + "--tokens 3e11 --trials 50");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("tokens/s (best plan)"), std::string::npos) << text.out;
}

TEST(CliFail, UserRatesFileAndFixedRunParameters) {
  const std::string path = "/tmp/railsim_fail_rates_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream f(path);
    f << R"({"name": "mine", "classes": [
          {"name": "software", "scope": "job", "rate_per_unit_hour": 1e-5}]})";
  }
  auto r = run_cli("fail goodput --gpus 1024 --design rail_only --trials 50 --json --rates " +
                   path + " --checkpoint-interval-min 30 --restart-min 10 --detect-min 0");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["designs"].size(), 1u);
  const auto& d = j["designs"][0];
  EXPECT_DOUBLE_EQ(d["checkpoint_interval_min"].get<double>(), 30);
  EXPECT_FALSE(d["checkpoint_interval_auto"].get<bool>());
  EXPECT_DOUBLE_EQ(d["restart_min"].get<double>(), 10);
  EXPECT_EQ(d["spare_domains"].get<int>(), 0);  // software takes no domain
  {
    std::ofstream f(path);
    f << R"({"name": "mine", "classes": [
          {"name": "software", "scope": "job", "rate_per_unit_hour": 1e-5, "mtbf_h": 3}]})";
  }
  auto bad = run_cli("fail goodput --gpus 1024 --rates " + path);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("rates.classes[0].mtbf_h"), std::string::npos) << bad.err;
  std::remove(path.c_str());
}

TEST(CliFail, BadInputIsOneLineNamingTheOptionExit2) {
  const std::pair<const char*, const char*> cases[] = {
      {"fail goodput --trials 0", "--trials"},
      {"fail goodput --trials -5", "--trials"},
      {"fail goodput --days 0", "--days"},
      {"fail goodput --days nan", "--days"},
      {"fail goodput --days -3", "--days"},
      {"fail goodput --checkpoint-interval-min 0", "--checkpoint-interval-min"},
      {"fail goodput --checkpoint-write-s -1", "--checkpoint-write-s"},
      {"fail goodput --restart-min 0", "--restart-min"},
      {"fail goodput --detect-min nan", "--detect-min"},
      {"fail goodput --repair-h 0", "--repair-h"},
      {"fail goodput --spare-domains -1", "--spare-domains"},
      {"fail goodput --rates no-such-preset", "--rates"},
      {"fail goodput --design ideal", "--design"},
      {"fail goodput --design mesh", "--design"},
      {"fail goodput --degraded sometimes", "--degraded"},
      {"fail goodput --degraded-slowdown 0.5", "--degraded-slowdown"},
      {"fail goodput --comm-fraction -1", "--comm-fraction"},
      {"fail goodput --tokens 1e12", "--tokens-per-s"},
      {"fail goodput --tokens 1e12 --tokens-per-s 0", "--tokens-per-s"},
      {"fail goodput --tokens-per-s 2e6", "--tokens"},
      {"fail goodput --amortize-years 0", "--amortize-years"},
      {"fail goodput --gpus 0", "--gpus"},
      {"fail goodput --gpus 1001", "--hb-domain"},
  };
  railsim::test::expect_one_line_errors(cases);
  auto none = run_cli("fail");
  EXPECT_EQ(none.code, 2);
}

TEST(CliFail, ListedInHelpAndPresets) {
  auto help = run_cli("--help");
  EXPECT_NE(help.out.find("fail"), std::string::npos) << help.out;
  auto r = run_cli("presets failures");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "failures: llama3-meta-2024\n");
  auto all = run_cli("presets");
  EXPECT_NE(all.out.find("failures: llama3-meta-2024"), std::string::npos) << all.out;
}

TEST(CliFail, WhatIfLeafOnBothDesigns) {
  // 1,024 H100 in domains of 8: rail_optimized is two tiers with 64-port leaves, each serving one
  // rail of 64 domains; rail_only is one 128-port switch per rail. PXN (the default on both)
  // forwards the dead leaf's rail through HB-domain peers; --pxn off cuts its domains off.
  auto off = run_cli("fail whatif --gpus 1024 --fail leaf:3 --sim off --json --pxn off");
  ASSERT_EQ(off.code, 0) << off.err;
  const auto jo = nlohmann::json::parse(off.out);
  EXPECT_FALSE(jo["designs"][0]["pxn"].get<bool>());
  EXPECT_EQ(jo["designs"][0]["gpus_cut_off"].get<int>(), 64);
  EXPECT_EQ(jo["designs"][0]["domains_lost"].get<int>(), 64);
  EXPECT_FALSE(jo["designs"][0]["runnable"].get<bool>());
  EXPECT_TRUE(jo["designs"][0]["degraded_s"].is_null());
  EXPECT_EQ(jo["designs"][1]["gpus_cut_off"].get<int>(), 128);
  auto r = run_cli("fail whatif --gpus 1024 --fail leaf:3 --sim off --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& opt = j["designs"][0];
  const auto& only = j["designs"][1];
  EXPECT_EQ(opt["design"].get<std::string>(), "rail_optimized");
  EXPECT_EQ(opt["tiers"].get<int>(), 2);
  EXPECT_TRUE(opt["pxn"].get<bool>());
  EXPECT_EQ(opt["gpus_cut_off"].get<int>(), 0);
  EXPECT_EQ(opt["domains_forwarding"].get<int>(), 64);
  EXPECT_TRUE(opt["runnable"].get<bool>());
  EXPECT_EQ(opt["routing"].get<std::string>(), "ecmp");
  // The same spares on both: fail goodput's auto spares under the default rates.
  EXPECT_EQ(opt["spare_domains"], only["spare_domains"]);
  EXPECT_TRUE(opt["spares_auto"].get<bool>());
  EXPECT_EQ(only["design"].get<std::string>(), "rail_only");
  EXPECT_EQ(only["tiers"].get<int>(), 1);
  EXPECT_EQ(only["gpus_cut_off"].get<int>(), 0);
  EXPECT_EQ(only["domains_forwarding"].get<int>(), 128);  // rail 3 of every domain
  EXPECT_DOUBLE_EQ(only["nic_load_factor"].get<double>(), 8.0 / 7.0);
  EXPECT_EQ(only["pairs"]["unreachable"].get<int>(), 0);
  EXPECT_GT(only["degraded_s"].get<double>(), only["healthy_s"].get<double>());
  EXPECT_EQ(only["capacity"][1]["tier"].get<std::string>(), "GPU-leaf");
  EXPECT_EQ(only["capacity"][1]["links_lost"].get<int>(), 128);
  EXPECT_TRUE(only["options"][0]["possible"].get<bool>());

  auto text = run_cli("fail whatif --gpus 1024 --fail leaf:3 --sim off");
  ASSERT_EQ(text.code, 0) << text.err;
  for (const char* s : {"GPUs dead / cut off", "0 / 64", "NIC load factor, worst domain", "1.1429",
                        "option: run degraded", "forwarded through"})
    EXPECT_NE(text.out.find(s), std::string::npos) << s << "\n" << text.out;
  auto a = run_cli("fail whatif --gpus 1024 --fail-random 5 --seed 3 --sim off --json");
  auto b = run_cli("fail whatif --gpus 1024 --fail-random 5 --seed 3 --sim off --json");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(nlohmann::json::parse(a.out)["designs"][0]["failures"].size(), 5u);
}

TEST(CliFail, WhatIfBadInput) {
  const std::pair<const char*, const char*> cases[] = {
      {"fail whatif --gpus 1024", "--fail"},
      {"fail whatif --gpus 1024 --fail leaf:99999", "--fail"},
      {"fail whatif --gpus 1024 --fail fan:1", "--fail"},
      {"fail whatif --gpus 1024 --fail gpu:-3", "--fail"},
      {"fail whatif --gpus 1024 --fail nic:1.7", "--fail"},
      {"fail whatif --gpus 16 --model Llama-3-8B --batch 16 --fail domain:0 --fail domain:1",
       "--fail"},
      {"fail whatif --gpus 1024 --fail leaf:1 --pxn maybe", "--pxn"},
      // Bounded before it starts: 10M trials of ~1,400 failure events each.
      {"fail goodput --gpus 32768 --trials 10000000", "--trials"},
      // A knob that cannot work, or one that needs --model, is refused, not ignored.
      {"fail whatif --gpus 1024 --fail nic:0 --tp 7", "--tp"},
      {"fail goodput --gpus 1024 --model GPT-3-175B --batch 1024 --tp 7", "--tp"},
      {"fail goodput --gpus 1024 --tp 8", "--tp"},
      {"fail goodput --gpus 1024 --batch 512", "--batch"},
      {"fail whatif --gpus 1024 --fail leaf:1 --sim sometimes", "--sim"},
      {"fail whatif --gpus 1024 --fail-random -1", "--fail-random"},
      {"fail whatif --gpus 1024 --fail-random 99999999", "--fail-random"},
      {"fail whatif --gpus 1024 --fail leaf:1 --spare-domains -2", "--spare-domains"},
      {"fail whatif --gpus 1024 --fail leaf:1 --design mesh", "--design"},
      {"fail whatif --gpus 1024 --fail leaf:1 --model nope", "--model"},
  };
  railsim::test::expect_one_line_errors(cases);
}

TEST(CliFail, GoodputEffectsFromTheFabricWithModel) {
  auto r = run_cli("fail goodput --gpus 1024 --trials 50 --model GPT-1T --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["effects"].get<std::string>().find("the Fabric"), std::string::npos);
  const auto& only = j["designs"][1];
  ASSERT_EQ(only["design"].get<std::string>(), "rail_only");
  bool nic = false;
  for (const auto& s : only["streams"])
    if (s["name"].get<std::string>() == "nic") {
      nic = true;
      EXPECT_FALSE(s["interrupts"].get<bool>());
      EXPECT_GT(s["slowdown"].get<double>(), 1.0);
      EXPECT_LT(s["slowdown"].get<double>(), 1.15);
    }
  EXPECT_TRUE(nic);
  EXPECT_FALSE(only["effect_notes"].empty());
  auto plain = run_cli("fail goodput --gpus 1024 --trials 50 --json");
  EXPECT_EQ(nlohmann::json::parse(plain.out)["effects"].get<std::string>(), "inputs");
  auto bad = run_cli("fail goodput --gpus 1024 --pxn auto");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("railsim: error: --pxn"), std::string::npos) << bad.err;
}

// whatif under --routing spray: a leaf's up bundle keeps its live uplinks. With 48 of leaf 0's
// 64 uplinks dead, the 16 left carry the plan's traffic: the simulated communication is the
// healthy one under spray, while ECMP's rerouted flows collide; with 63 dead, spraying slows too.
TEST(CliFail, WhatIfSimulatesSprayOverLiveUplinks) {
  auto comm = [](int dead, const std::string& routing) {
    std::string cmd =
        "fail whatif --gpus 1024 --design rail_optimized --sim on --json --routing " + routing;
    for (int i = 0; i < dead; ++i) cmd += " --fail uplink:1:" + std::to_string(i);
    const auto r = run_cli(cmd);
    EXPECT_EQ(r.code, 0) << r.err;
    const auto s = nlohmann::json::parse(r.out)["designs"][0]["simulated"];
    return std::make_pair(s["healthy_comm_s"].get<double>(), s["degraded_comm_s"].get<double>());
  };
  const auto [spray_h, spray_48] = comm(48, "spray");
  EXPECT_NEAR(spray_48 / spray_h, 1.0, 1e-9);
  const auto [ecmp_h, ecmp_48] = comm(48, "ecmp");
  EXPECT_GT(ecmp_48, ecmp_h * 1.01);
  EXPECT_LE(spray_h, ecmp_h);
  EXPECT_GT(comm(63, "spray").second, spray_h * 1.01);
  EXPECT_EQ(run_cli("fail whatif --gpus 1024 --routing sprayed").code, 2);
}
