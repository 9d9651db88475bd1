// railsim sim as a user runs it.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"

using railsim::test::line_count;
using railsim::test::run_cli;

TEST(CliSim, RingAllReduceOnOneRailJsonMatchesClosedForm) {
  // H100 preset: NIC 400 Gb/s = 50 GB/s; 8 GPUs on one leaf; 2 hops of 0.5 us per step. Against
  // a closed form: exact, not the default batch tolerance.
  auto r = run_cli("sim --gpus 64 --group rail0 --bytes 1GB --exact --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const double closed = 14 * (1e9 / 8 / 50e9 + 2 * 0.5e-6);
  EXPECT_NEAR(j["completion_time_s"].get<double>() / closed, 1.0, 0.02);
  EXPECT_EQ(j["groups"].get<int>(), 1);
}

TEST(CliSim, HumanOutputShowsTimeTiersAndBusiestLinks) {
  auto r = run_cli("sim --gpus 128 --collective alltoall --design rail_only --bytes 256MB");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s :
       {"completion time", "per link class", "HB up", "GPU-leaf up", "busiest links",
        "routing ecmp (Ethernet's default), seed 0; rail-only forwarding pipelined "
        "via hb_first, 8 chunks (NCCL's PXN)"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

// Against a closed form: exact, not the default batch tolerance.
TEST(CliSim, PipelinedForwardingIsNoSlowerThanStoreAndForward) {
  auto store = run_cli(
      "sim --gpus 64 --hb-domain 8 --hb-GBps 100 --collective alltoall --design "
      "rail_only --exact --json --forwarding two-phase");
  auto piped = run_cli(
      "sim --gpus 64 --hb-domain 8 --hb-GBps 100 --collective alltoall --design "
      "rail_only --exact --json --forwarding pipelined --chunks 16");
  ASSERT_EQ(store.code, 0) << store.err;
  ASSERT_EQ(piped.code, 0) << piped.err;
  const double ts = nlohmann::json::parse(store.out)["completion_time_s"].get<double>();
  const double tp = nlohmann::json::parse(piped.out)["completion_time_s"].get<double>();
  // Two-phase: the cross-rail shuffle 49/64 S / B_hb, then max(7/64 S / B_hb, (N-K)/N S / B_nic)
  // with S = 1 GB, plus latency.
  EXPECT_NEAR(ts / (49.0 / 64.0 * 1e9 / 100e9 + 56.0 / 64.0 * 1e9 / 50e9), 1.0, 0.02);
  EXPECT_LT(tp, ts);
}

// The simulated ops against the model's: exact, not the default batch tolerance.
TEST(CliSim, ScheduleCsvHasTheJsonOpsValues) {
  const char* cmd =
      "sim --schedule --gpus 64 --model Megatron-22B --tp 4 --dp 16 --dist-opt on --sp on "
      "--batch 64 --exact";
  auto csv = run_cli(std::string(cmd) + " --csv");
  auto json = run_cli(std::string(cmd) + " --json");
  ASSERT_EQ(csv.code, 0) << csv.err;
  ASSERT_EQ(json.code, 0) << json.err;
  const auto rows = railsim::test::read_csv(csv.out);
  const auto ops = nlohmann::json::parse(json.out)["ops"];
  ASSERT_EQ(rows.size(), ops.size() + 1);
  std::size_t ratio = rows[0].size();
  for (std::size_t i = 0; i < rows[0].size(); ++i)
    if (rows[0][i] == "sim_over_analytic") ratio = i;
  ASSERT_LT(ratio, rows[0].size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    ASSERT_EQ(rows[i + 1].size(), rows[0].size());
    EXPECT_DOUBLE_EQ(std::stod(rows[i + 1][ratio]), ops[i]["sim_over_analytic"].get<double>());
    // Hierarchical reduce-scatter and all-gather are simulated as such: like the model.
    EXPECT_NEAR(std::stod(rows[i + 1][ratio]), 1.0, 0.01) << rows[i + 1][1];
  }
  EXPECT_EQ(run_cli(std::string(cmd) + " --csv --json").code, 2);
  EXPECT_EQ(run_cli("sim --gpus 64 --csv").code, 2);
}

TEST(CliSim, ScheduleComparesWithTheAnalyticModel) {
  auto r = run_cli(
      "sim --schedule --gpus 1024 --model MoE-1.2T --tp 8 --pp 8 --ep 16 --design "
      "rail_only --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["completion_time_s"].get<double>() / j["analytic_time_s"].get<double>(), 1.0, 0.01);
  EXPECT_GE(j["ops"].size(), 4u);
}

TEST(CliSim, BadInputIsOneLineNamingTheFieldExit2) {
  const std::pair<const char*, const char*> cases[] = {
      {"sim --gpus 64 --bytes -5", "--bytes"},
      {"sim --gpus 64 --bytes 1XB", "--bytes"},
      {"sim --gpus 64 --bytes nan", "--bytes"},
      {"sim --gpus 64 --bytes 1e30", "--bytes"},
      {"sim --gpus 64 --collective broadcast", "--collective"},
      {"sim --gpus 64 --group racks", "--group"},
      {"sim --gpus 64 --chunks 0", "--chunks"},
      {"sim --gpus 64 --forwarding fast", "--forwarding"},
      {"sim --gpus 64 --forward-via spine", "--forward-via"},
      {"sim --gpus 64 --algorithm tree", "--algorithm"},
      {"sim --gpus 64 --hop-latency-us -1", "--hop-latency-us"},
      {"sim --gpus 64 --aggregate maybe", "--aggregate"},
      {"sim --gpus 0", "--gpus"},
      {"sim --gpus 64 --design mesh", "--design"},
      {"sim --gpus 64 --tp 8", "--schedule"},
      {"sim --gpus 4096 --collective alltoall --group rail --max-flows 1000", "--group"},
      {"sim --gpus 8192 --collective alltoall --aggregate off", "--aggregate"},
      {"sim --gpus 8192 --max-flows 1000", "--max-flows"},
      {"sim --gpus 64 --max-flows 5", "--max-flows"},
      {"sim --gpus 64 --batch-tolerance 0.5", "--batch-tolerance"},
      {"sim --gpus 64 --max-memory 0", "--max-memory"},
      {"sim --gpus 64 --max-memory lots", "--max-memory"},
      {"sim --gpus 64 --max-memory -1GB", "--max-memory"},
  };
  for (auto [args, field] : cases) {
    auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_EQ(line_count(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("railsim: error:"), std::string::npos) << args;
    EXPECT_NE(r.err.find(field), std::string::npos) << args << "\n" << r.err;
  }
}

TEST(CliSim, SkewedMoeAllToAllReportsItsBytesAndBothPhases) {
  auto r = run_cli(
      "sim --gpus 64 --collective alltoall --skew zipf:1.2 --experts 128 --topk 8 --tokens 512 "
      "--max-domains 2 --bytes-per-token 7168 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& m = j["moe"];
  EXPECT_EQ(m["skew"], "zipf");
  EXPECT_DOUBLE_EQ(m["dispatch_bytes"].get<double>(), 64.0 * 512 * 8 * 7168);
  EXPECT_LE(m["domains_per_token"].get<double>(), 2.0);
  EXPECT_GT(m["max_in_over_mean"].get<double>(), 1.5);
  ASSERT_EQ(j["phases"].size(), 2u);
  EXPECT_EQ(j["phases"][0]["name"], "dispatch");
  EXPECT_EQ(j["phases"][1]["name"], "combine");
  EXPECT_NEAR(j["completion_time_s"].get<double>(),
              j["phases"][0]["time_s"].get<double>() + j["phases"][1]["time_s"].get<double>(),
              1e-12);
  // The human form states the imbalance.
  auto h = run_cli(
      "sim --gpus 64 --collective alltoall --skew zipf:1.2 --experts 128 --tokens 512 "
      "--design rail_only");
  ASSERT_EQ(h.code, 0) << h.err;
  for (const char* s :
       {"MoE all-to-all (both)", "Zipf s=1.2", "busiest receiver", "dispatch", "combine"})
    EXPECT_NE(h.out.find(s), std::string::npos) << s << "\n" << h.out;
}

TEST(CliSim, PairMatrixFileSetsTheBytesPerPair) {
  // 16 GPUs: only GPU 0 -> GPU 15 carries bytes; 16 x 100 tokens x 8 x 1 kB in all.
  const std::string path = "/tmp/railsim_cli_pairs_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream f(path);
    f << "[";
    for (int i = 0; i < 16; ++i) {
      f << (i ? ",[" : "[");
      for (int k = 0; k < 16; ++k) f << (k ? "," : "") << (i == 0 && k == 15 ? 1 : 0);
      f << "]";
    }
    f << "]";
  }
  auto r = run_cli("sim --gpus 16 --collective alltoall --pair-matrix " + path +
                   " --tokens 100 --bytes-per-token 1000 --moe-phase dispatch --json "
                   "--hop-latency-us 0");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["moe"]["dispatch_bytes"].get<double>(), 16.0 * 100 * 8 * 1000);
  // One transfer of 12.8 MB from domain 0 to domain 1 over a 400 Gb/s NIC.
  EXPECT_NEAR(j["completion_time_s"].get<double>(), 12.8e6 / 50e9, 1e-12);
  auto wrong = run_cli("sim --gpus 32 --collective alltoall --pair-matrix " + path);
  EXPECT_EQ(wrong.code, 2);
  EXPECT_EQ(line_count(wrong.err), 1) << wrong.err;
  EXPECT_NE(wrong.err.find("railsim: error: --pair-matrix: the matrix has 16 rows"),
            std::string::npos)
      << wrong.err;
  std::remove(path.c_str());
}

TEST(CliSim, BadMoeOptionsAreOneLineErrors) {
  const std::string ragged = "/tmp/railsim_cli_ragged_" + std::to_string(::getpid()) + ".json";
  std::ofstream(ragged) << "[[1, 2], [3]]";
  const std::string weights = "/tmp/railsim_cli_weights_" + std::to_string(::getpid()) + ".json";
  std::ofstream(weights) << "[1, 2, 3]";
  const std::pair<std::string, const char*> cases[] = {
      {"sim --gpus 64 --collective alltoall --skew zipf:-1", "--skew"},
      {"sim --gpus 64 --collective alltoall --skew zipf:9", "--skew"},
      {"sim --gpus 64 --collective alltoall --skew zipf:x", "--skew"},
      {"sim --gpus 64 --collective alltoall --skew lognormal", "--skew"},
      {"sim --gpus 64 --collective alltoall --topk 300 --experts 256", "--topk"},
      {"sim --gpus 64 --collective alltoall --topk 0", "--topk"},
      {"sim --gpus 64 --collective alltoall --experts 32", "--experts"},
      {"sim --gpus 64 --collective alltoall --tokens 0", "--tokens"},
      // Bounded before it starts: 10M tokens x top-8 x 64 GPUs is 5e9 routed copies.
      {"sim --gpus 64 --collective alltoall --skew zipf:1 --tokens 10000000", "--tokens"},
      {"sim --gpus 64 --collective alltoall --max-domains -1", "--max-domains"},
      {"sim --gpus 64 --collective alltoall --experts 64 --topk 16 --max-domains 1",
       "--max-domains"},
      {"sim --gpus 64 --collective alltoall --moe-phase both-ways", "--moe-phase"},
      {"sim --gpus 64 --collective alltoall --bytes 1GB --bytes-per-token 7KB",
       "--bytes-per-token"},
      {"sim --gpus 64 --collective alltoall --pair-matrix " + ragged, "--pair-matrix"},
      {"sim --gpus 64 --collective alltoall --pair-matrix /nonexistent.json", "--pair-matrix"},
      {"sim --gpus 64 --collective alltoall --expert-weights " + weights, "--expert-weights"},
      {"sim --gpus 64 --collective alltoall --skew zipf:1 --expert-weights " + weights,
       "--expert-weights"},
      {"sim --gpus 64 --skew zipf:1", "--collective"},
      {"sim --gpus 64 --schedule --model MoE-1.2T --skew zipf:1", "--skew"},
      {"sim --gpus 4096 --collective alltoall --experts 4096", "--max-flows"},
      {"sim --gpus 64 --collective alltoall --skew zipf:1 --aggregate on", "--aggregate"},
  };
  railsim::test::expect_one_line_errors(cases);
  std::remove(ragged.c_str());
  std::remove(weights.c_str());
}

// A simulation whose estimated memory exceeds --max-memory is refused before it starts: one
// line naming the option, with the estimate, exit 2, and no time spent building 16.7M flows
// (store-and-forward: the default pipelined forwarding makes 2 x 8 flows of a forwarded pair).
TEST(CliSim, MaxMemoryRefusesAnOversizedSimulationUpFront) {
  auto r = run_cli(
      "sim --gpus 4096 --design rail_only --collective alltoall --forwarding store --aggregate off "
      "--max-flows 100000000 --max-memory 1GB");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--max-memory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GB (estimated)"), std::string::npos) << r.err;
  // 16,773,120 pairs, one flow each (a forwarded pair's first leg is the direct transfer to
  // its peer).
  EXPECT_NE(r.err.find("16773120 flows"), std::string::npos) << r.err;
  // The same all-to-all within the default limit is not refused for memory (it is for its
  // flows beyond --max-flows 4,000,000).
  auto d = run_cli(
      "sim --gpus 4096 --design rail_only --collective alltoall --forwarding store --aggregate "
      "off");
  EXPECT_EQ(d.code, 2);
  EXPECT_NE(d.err.find("--aggregate"), std::string::npos) << d.err;
}

namespace {
// Same keys, strings, booleans and integers; reals to 1e-9 relative (the engine's sums round).
void expect_json_near(const nlohmann::json& got, const nlohmann::json& want,
                      const std::string& at = "") {
  if (want.is_number_float()) {
    ASSERT_TRUE(got.is_number()) << at;
    const double w = want.get<double>(), g = got.get<double>();
    EXPECT_NEAR(g, w, 1e-9 * std::abs(w)) << at;
    return;
  }
  ASSERT_EQ(got.type(), want.type()) << at;
  if (want.is_object()) {
    ASSERT_EQ(got.size(), want.size()) << at << "\n" << got.dump(2);
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(got.contains(it.key())) << at << "." << it.key();
      expect_json_near(got[it.key()], it.value(), at + "." + it.key());
    }
  } else if (want.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << at;
    for (std::size_t i = 0; i < want.size(); ++i)
      expect_json_near(got[i], want[i], at + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(got, want) << at;
  }
}
}  // namespace

// Spraying in sim: 96 GPUs (HB domain 1) on two QM9700 leaves of 48 at 3:1 (16 x 400G up each).
// In the all-to-all each leaf sends 48 x 48/96 GB = 24 GB over its 16 uplinks (800 GB/s): 30 ms,
// every uplink carrying 24/16 GB each way; hashed ECMP collides and is slower.
// The closed form is exact: the run is asked for exact (--exact), not the default tolerance.
TEST(CliSim, SprayAllToAllJsonIsTheBundleClosedForm) {
  const std::string cmd =
      "sim --gpus 96 --hb-domain 1 --switch QM9700 --oversubscription 3 --collective all_to_all "
      "--hop-latency-us 0 --top 0 --exact --json --routing ";
  const auto r = run_cli(cmd + "spray");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json want = nlohmann::json::parse(R"J({
    "algorithm": "direct", "busiest": [], "bytes": 1e9, "bytes_sent": 95e9, "chunks": 8,
    "batching": {"error_bound": 0.0, "exact": true, "tolerance": 1e-9,
                 "text": "exact (an event ends only the flows that finish at its time)"},
    "collective": "all_to_all", "completion_time_s": 0.03, "design": "rail_optimized",
    "efficiency": false, "flows_represented": 9120.0, "flows_simulated": 9120,
    "forward_via": "hb_first", "forwarding": "pipelined", "gpus": 96, "group": "all", "groups": 1,
    "hb_domain": 1, "hop_latency_s": 0.0,
    "phases": [{"aggregated": false, "events": 3, "flows_simulated": 9120, "name": "all-to-all",
                "step_scaled": false, "steps": 1, "time_s": 0.03}],
    "port_balance": "spray", "connections": 1, "routing": "spray", "seed": 0,
    "tiers": [
      {"bytes": 95e9, "name": "GPU-leaf up", "peak_utilisation": 1.0},
      {"bytes": 95e9, "name": "GPU-leaf down", "peak_utilisation": 1.0},
      {"bytes": 48e9, "name": "leaf-spine up", "peak_utilisation": 1.0},
      {"bytes": 48e9, "name": "leaf-spine down", "peak_utilisation": 1.0}]
  })J");
  expect_json_near(nlohmann::json::parse(r.out), want);
  const auto e = run_cli(cmd + "ecmp");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_GT(nlohmann::json::parse(e.out)["completion_time_s"].get<double>(), 0.03 * 1.1);
  // The seed salts ECMP's hash only: under spray it changes nothing here.
  const auto seeded = run_cli(cmd + "spray --seed 7");
  ASSERT_EQ(seeded.code, 0) << seeded.err;
  EXPECT_EQ(nlohmann::json::parse(seeded.out)["completion_time_s"],
            nlohmann::json::parse(r.out)["completion_time_s"]);
}

// sim --schedule under spray against estimate's model under spray (perfect spreading): every op
// within 1% on rail_optimized, where ECMP's pipeline sends collide (docs/sim.md).
TEST(CliSim, ScheduleUnderSprayMatchesTheModelOpByOp) {
  const std::string cmd =
      "sim --schedule --gpus 1024 --model MoE-1.2T --tp 8 --pp 8 --ep 16 --design "
      "rail_optimized --json --routing ";
  const auto r = run_cli(cmd + "spray");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["ops"].size(), 4u);
  for (const auto& op : j["ops"])
    EXPECT_NEAR(op["sim_over_analytic"].get<double>(), 1.0, 0.01) << op.dump();
  const auto e = nlohmann::json::parse(run_cli(cmd + "ecmp").out);
  EXPECT_GT(e["completion_time_s"].get<double>(), j["completion_time_s"].get<double>() * 1.01);
}

// --schedule with no degree given simulates the best plan (at 131,072 GPUs the strategy the
// defaults pinned used to need a dp that does not divide the batch); with degrees, that strategy.
TEST(CliSim, ScheduleSimulatesTheBestPlanUnlessAStrategyIsGiven) {
  auto r = run_cli("sim --schedule --gpus 1024 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["strategy_searched"].get<bool>());
  const auto plan = run_cli("plan --gpus 1024 --top 1 --json");
  ASSERT_EQ(plan.code, 0) << plan.err;
  const auto best = nlohmann::json::parse(plan.out)["plans"][0]["strategy"];
  for (const char* k : {"tp", "pp", "dp", "ep"}) EXPECT_EQ(j["strategy"][k], best[k]) << k;
  r = run_cli("sim --schedule --gpus 1024 --tp 8 --pp 8 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["strategy_searched"].get<bool>());
  EXPECT_EQ(j["strategy"]["tp"], 8);
  EXPECT_EQ(j["strategy"]["pp"], 8);
  r = run_cli("sim --schedule --gpus 1024");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(the best plan of "), std::string::npos) << r.out.substr(0, 300);
}
