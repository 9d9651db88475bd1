// railsim estimate and railsim plan as a user runs them: JSON fields, accuracy on a measured run,
// and one-line errors naming the field (exit 2) for every kind of bad input.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using railsim::test::line_count;
using railsim::test::run_cli;

namespace {
// Korthikanti et al. 2022: 175B, selective recompute + SP on 64 A100, measured 13.75 s, on the
// software of the run (megatron-lm-2022: unfused attention).
const char* kMegatron175Selective =
    "--stack megatron-lm-2022 --gpu A100-SXM-80GB --gpus 64 --nic-gbps 200 --model Megatron-175B "
    "--batch 64 --tp 8 --pp 8 --interleave 3 --recompute selective --sp on";

void expect_error_naming(const std::string& args, const std::string& field) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  EXPECT_EQ(line_count(r.err), 1) << args << "\n" << r.err;
  EXPECT_NE(r.err.find("railsim: error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(field), std::string::npos)
      << args << ": expected '" << field << "' in " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

void expect_result_fields(const nlohmann::json& j) {
  for (const char* k : {"strategy", "feasible", "iteration_time_s", "memory_gib", "mfu",
                        "tokens_per_s", "breakdown"})
    EXPECT_TRUE(j.contains(k)) << k;
  for (const char* k : {"tp", "pp", "dp", "ep", "micro_batch", "interleave", "recompute", "sp",
                        "dist_opt", "dp_overlap"})
    EXPECT_TRUE(j["strategy"].contains(k)) << k;
  double sum = 0;
  for (auto& [k, v] : j["breakdown"].items()) sum += v.get<double>();
  EXPECT_NEAR(sum, j["iteration_time_s"].get<double>(), 1e-6 * sum);
}
}  // namespace

TEST(CliEstimate, JsonOfAMeasuredRun) {
  const auto r = run_cli(std::string("estimate ") + kMegatron175Selective + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_result_fields(j);
  EXPECT_NEAR(j["iteration_time_s"].get<double>() / 13.75, 1.0, 0.05);
  EXPECT_TRUE(j["feasible"].get<bool>());
  EXPECT_EQ(j["strategy"]["interleave"], 3);
  EXPECT_EQ(j["strategy"]["recompute"], "selective");
}

TEST(CliEstimate, HumanOutputNamesTheBreakdown) {
  const auto r = run_cli(std::string("estimate ") + kMegatron175Selective);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* w : {"iteration time", "MFU", "pipeline bubble", "tp/sp comm", "memory"})
    EXPECT_NE(r.out.find(w), std::string::npos) << w;
}

// Days to train N tokens at the iteration's throughput (tokens / tokens_per_s / 86,400 s).
TEST(CliEstimate, DaysToTrainATokenBudget) {
  const std::string gpt = "estimate --model GPT-1T --gpus 4096 --tp 8 --pp 16";
  const auto r = run_cli(gpt + " --train-tokens 1e12 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["train_tokens"].get<double>(), 1e12);
  // GPT-1T, batch 4,096 x 2,048 tokens: 8,388,608 tokens per iteration.
  const double tokens_per_s = 8'388'608.0 / j["iteration_time_s"].get<double>();
  EXPECT_NEAR(j["tokens_per_s"].get<double>(), tokens_per_s, 1e-9 * tokens_per_s);
  EXPECT_NEAR(j["train_days"].get<double>(), 1e12 / tokens_per_s / 86'400.0, 1e-9);
  EXPECT_GT(j["train_days"].get<double>(), 30.0);  // about 45 days at some 257,000 tokens/s
  EXPECT_LT(j["train_days"].get<double>(), 60.0);
  EXPECT_FALSE(nlohmann::json::parse(run_cli(gpt + " --json").out).contains("train_days"));
  const auto text = run_cli(gpt + " --train-tokens 15e12");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("time to train 15T tokens: "), std::string::npos) << text.out;
  for (const char* bad : {"0", "-1", "nan", "1e30", "many"})
    expect_error_naming(gpt + " --train-tokens " + bad, "--train-tokens");
}

TEST(CliEstimate, InfeasibleStrategyIsReportedNotAnError) {
  // 175B without recompute or SP needs ~112 GiB per GPU (Korthikanti et al. Figure 1, their
  // unfused attention: the megatron-lm-2022 stack).
  const auto r = run_cli(
      "estimate --stack megatron-lm-2022 --gpu A100-SXM-80GB --gpus 64 --nic-gbps 200 --model "
      "Megatron-175B --batch 64 --tp 8 --pp 8 --recompute none --sp off --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_GT(j["memory_gib"].get<double>(), 100.0);
}

TEST(CliPlan, JsonTopKSortedAndPinned) {
  const auto r = run_cli("plan --gpus 4096 --model GPT-1T --tp 8 --top 4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["plans"].size(), 4u);
  double prev = 0;
  for (const auto& p : j["plans"]) {
    expect_result_fields(p);
    EXPECT_EQ(p["strategy"]["tp"], 8);
    EXPECT_TRUE(p["feasible"].get<bool>());
    EXPECT_GE(p["iteration_time_s"].get<double>(), prev);
    prev = p["iteration_time_s"].get<double>();
  }
  EXPECT_GT(j["evaluated"].get<int>(), j["feasible"].get<int>());
}

TEST(CliPlan, CsvHasOneRowPerPlanWithTheJsonValues) {
  const auto csv = run_cli("plan --gpus 4096 --model GPT-1T --top 4 --csv");
  const auto json = run_cli("plan --gpus 4096 --model GPT-1T --top 4 --json");
  ASSERT_EQ(csv.code, 0) << csv.err;
  ASSERT_EQ(json.code, 0) << json.err;
  const auto rows = railsim::test::read_csv(csv.out);
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(rows.size(), 5u);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
  for (const char* k : {"rank", "tp", "pp", "dp", "iteration_time_s", "mfu", "memory_gib",
                        "tp_comm_s", "bubble_s", "recompute", "sp"})
    EXPECT_EQ(col.count(k), 1u) << k;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), rows[0].size());
    const auto& p = j["plans"][i - 1];
    EXPECT_EQ(p["rank"], i);
    EXPECT_EQ(std::stoll(rows[i][col["rank"]]), static_cast<long long>(i));
    EXPECT_EQ(std::stoll(rows[i][col["pp"]]), p["strategy"]["pp"].get<long long>());
    EXPECT_EQ(rows[i][col["recompute"]], p["strategy"]["recompute"].get<std::string>());
    EXPECT_EQ(rows[i][col["sp"]], p["strategy"]["sp"].get<bool>() ? "true" : "false");
    const double t = p["iteration_time_s"].get<double>();
    EXPECT_NEAR(std::stod(rows[i][col["iteration_time_s"]]), t, 1e-9 * t);
    const double tp = p["breakdown"]["tp_comm_s"].get<double>();
    EXPECT_NEAR(std::stod(rows[i][col["tp_comm_s"]]), tp, 1e-9 * tp);
  }
  expect_error_naming("plan --gpus 4096 --json --csv", "--csv");
}

TEST(CliPlan, HumanTableHasLabelsAndUnits) {
  const auto r = run_cli("plan --gpus 4096 --model GPT-1T --top 3");
  ASSERT_EQ(r.code, 0) << r.err;
  // summary, network and routing, header, 3 plans, the error band (no routing flip here)
  EXPECT_EQ(line_count(r.out), 7);
  EXPECT_NE(r.out.find("network: switch ETH-51.2T-128x400G, routing ecmp (Ethernet's default), "
                       "seed 0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("error band of every time: +-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hold-out runs of dense models in BF16 with this evidence; railsim "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" than measured on them on average; on tables they did not come from, "
                       "this class's bands held "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" hold-outs with this evidence ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("%) (the band of H100-SXM with megatron-core-2024))"), std::string::npos)
      << r.out;
  for (const char* s : {"strategies", "fit in memory", "recompute", "MFU", "memory", "tp comm",
                        "bubble", " GiB", " s", "%"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  for (const char* s : {"iteration_time_s", "tp_comm_s", "e-0", "e+"})
    EXPECT_EQ(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(CliPlan, SameOutputForOneAndTwoThreads) {
  const auto a = run_cli("plan --gpus 32768 --model GPT-1T --top 10 --threads 1 --json");
  const auto b = run_cli("plan --gpus 32768 --model GPT-1T --top 10 --threads 2 --json");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(CliPlan, NothingFits) {
  const auto r = run_cli("plan --model GPT-1T --gpus 8 --gpu A100-SXM-80GB");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no feasible strategy: the smallest memory need is "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("GiB per GPU, the GPU has 80.0 GiB"), std::string::npos) << r.err;
}

TEST(CliPlan, BatchThatNoDpDivides) {
  // 73,728 GB200 (NVL72) = 2^13 x 9 GPUs: every dp = N / (tp pp) is even or a multiple of 3, so
  // none divides 4097 = 17 x 241 sequences; the smallest is 73728 / (32 x 128) = 18.
  const auto r =
      run_cli("plan --gpu GB200 --gpus 73728 --hb-domain 72 --model GPT-1T --batch 4097");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--batch: no valid strategy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("smallest such dp on 73728 GPUs is 18"), std::string::npos) << r.err;
  // What would split: the nearest multiples of 18, and the nearest whole racks where a dp divides
  // 4097 (73,440 = 17 x 4,320 GPUs: tp 40 x pp 108 x dp 17).
  EXPECT_NE(r.err.find("a batch of 4086 or 4104 splits; or 73440 or 79560 GPUs (1020 or 1105 HB "
                       "domains of 72)"),
            std::string::npos)
      << r.err;
  for (const char* fix : {"--gpus 73728 --batch 4104", "--gpus 73440 --batch 4097"}) {
    const auto fixed =
        run_cli(std::string("plan --gpu GB200 --hb-domain 72 --model GPT-1T --top 1 ") + fix);
    EXPECT_EQ(fixed.code, 0) << fix << ": " << fixed.err;
  }
  const auto ok =
      run_cli("plan --gpu GB200 --gpus 73728 --hb-domain 72 --model GPT-1T --batch 9216");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST(CliPlanErrors, ImpossibleStrategies) {
  for (const char* cmd : {"estimate", "plan"}) {
    const std::string c = cmd;
    expect_error_naming(c + " --model GPT-1T --tp 3", "--tp");    // 160 heads
    expect_error_naming(c + " --model GPT-1T --pp 200", "--pp");  // 128 layers
    expect_error_naming(c + " --model GPT-1T --pp 3", "--pp");    // not a divisor
    expect_error_naming(c + " --model GPT-1T --gpus 1024 --tp 8 --pp 8 --dp 8",
                        "--dp");  // 512 != 1024
    expect_error_naming(c + " --model GPT-1T --gpus 1024 --tp 8 --pp 8 --batch 17", "--batch");
    expect_error_naming(c + " --model GPT-1T --ep 2", "--ep");  // dense model
    expect_error_naming(c + " --model GPT-1T --pp 1 --interleave 2", "--interleave");
    expect_error_naming(c + " --model Mixtral-8x7B --gpus 64 --tp 1 --pp 1 --ep 16",
                        "--ep");  // 8 experts
    expect_error_naming(c + " --gpu A100-SXM-80GB --dtype fp8", "--dtype");
    // Block-scaled precisions: a GPU without block-scaled tensor cores (Hopper), a stack without
    // the recipe, an unknown name.
    expect_error_naming(c + " --gpu H100-SXM --stack nemo-perf-2025 --dtype nvfp4", "--dtype");
    expect_error_naming(c + " --gpu H100-SXM --stack nemo-perf-2025 --dtype mxfp8", "--dtype");
    expect_error_naming(c + " --gpu B200 --dtype nvfp4", "--dtype");  // megatron-core-2024
    expect_error_naming(c + " --dtype fp4", "--dtype");
  }
}

TEST(CliPlanErrors, ZeroNegativeNanHugeAndUnknown) {
  for (const char* cmd : {"estimate", "plan"}) {
    const std::string c = cmd;
    expect_error_naming(c + " --tp 0", "--tp");
    expect_error_naming(c + " --pp -2", "--pp");
    expect_error_naming(c + " --tp nan", "--tp");
    expect_error_naming(c + " --dp 1e30", "--dp");
    expect_error_naming(c + " --micro-batch 0", "--micro-batch");
    expect_error_naming(c + " --batch 0", "--batch");
    expect_error_naming(c + " --batch -4096", "--batch");
    expect_error_naming(c + " --batch 99999999999999999999", "--batch");
    expect_error_naming(c + " --seq 0", "--seq");
    expect_error_naming(c + " --seq nan", "--seq");
    expect_error_naming(c + " --gpus 0", "--gpus");
    expect_error_naming(c + " --gpus 100000000000", "--gpus");
    expect_error_naming(c + " --nic-gbps nan", "--nic-gbps");
    expect_error_naming(c + " --nic-gbps -400", "--nic-gbps");
    expect_error_naming(c + " --nic-gbps 1e300", "--nic-gbps");
    expect_error_naming(c + " --hb-domain 0", "--hb-domain");
    expect_error_naming(c + " --recompute sometimes", "--recompute");
    expect_error_naming(c + " --sp maybe", "--sp");
    expect_error_naming(c + " --dist-opt 2", "--dist-opt");
    expect_error_naming(c + " --placement random", "--placement");
    expect_error_naming(c + " --model no-such-model", "--model");
    expect_error_naming(c + " --design mesh", "--design");
  }
  expect_error_naming("plan --top 0", "--top");
  expect_error_naming("plan --threads -1", "--threads");
}

TEST(CliPlanErrors, BadModelFile) {
  const std::string path = "/tmp/railsim_test_bad_model.json";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(R"({"name":"x","layers":4,"hidden":64,"heads":4,"vocab":-3,"seq_len":8})", f);
  std::fclose(f);
  expect_error_naming("estimate --model " + path, "model.vocab");
  std::remove(path.c_str());
}

TEST(CliComparePerf, BestPlanTimePerDesign) {
  // The README's main job: GPT-1T (4096 x 2048 tokens) on 32,768 GH200 (K=256) and H100 (K=8).
  const auto r = run_cli("compare --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, std::map<std::string, double>> t;  // gpu -> design -> seconds
  for (const auto& d : j["designs"]) {
    ASSERT_TRUE(d.contains("best_iteration_time_s")) << d.dump();
    ASSERT_TRUE(d["best_iteration_time_s"].is_number()) << d.dump();
    t[d["gpu"].get<std::string>()][d["design"].get<std::string>()] =
        d["best_iteration_time_s"].get<double>();
    EXPECT_NE(d["perf_model"].get<std::string>().find("GPT-1T"), std::string::npos);
  }
  ASSERT_EQ(t.size(), 2u);
  // Under the default ECMP (the default switch is Ethernet), the flows that climb above the leaf
  // collide (docs/model.md section 5): GH200's rail-only rails fit in one switch, so nothing of it
  // collides and it is faster (3.39 s against 3.62 s); H100's rail-only spines take two links
  // from each leaf where rail-optimized's take one, so its pipeline sends collide a little more
  // (4.52 s against 4.50 s). Within 7% either way.
  for (auto& [gpu, by] : t) {
    EXPECT_NEAR(by["rail_only"] / by["rail_optimized"], 1.0, 0.07) << gpu;
    EXPECT_LE(by["ideal"], by["rail_optimized"]) << gpu;
  }
  EXPECT_LT(t["GH200"]["rail_only"], t["GH200"]["rail_optimized"]);
  // With perfect spreading (the paper's setting) the two designs take the same time.
  const auto a = run_cli("compare --routing adaptive --json");
  ASSERT_EQ(a.code, 0) << a.err;
  std::map<std::string, std::map<std::string, double>> ta;
  const auto ja = nlohmann::json::parse(a.out);
  for (const auto& d : ja["designs"])
    ta[d["gpu"].get<std::string>()][d["design"].get<std::string>()] =
        d["best_iteration_time_s"].get<double>();
  ASSERT_EQ(ta.size(), 2u);
  for (auto& [gpu, by] : ta) EXPECT_NEAR(by["rail_only"] / by["rail_optimized"], 1.0, 1e-9) << gpu;
}

TEST(CliComparePerf, ModelAndBatchOptions) {
  const auto r = run_cli("compare --gpus 4096 --model Megatron-175B --batch 1024 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& d : j["designs"])
    EXPECT_NE(d["perf_model"].get<std::string>().find("Megatron-175B, 1024 x 2048"),
              std::string::npos);
  expect_error_naming("compare --batch 0", "--batch");
  expect_error_naming("compare --model nope", "--model");
  const auto n = run_cli("compare --no-perf --json");
  ASSERT_EQ(n.code, 0) << n.err;
  EXPECT_EQ(n.out.find("best_iteration_time_s"), std::string::npos);
}

TEST(CliEstimate, ModelPresetsAreListed) {
  const auto r = run_cli("presets models");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* m :
       {"Megatron-22B", "Megatron-175B", "Megatron-530B", "Megatron-1T", "GPT-1T", "GPT-3-175B",
        "Llama-3-8B", "Llama-3-70B", "Llama-3-405B", "Mixtral-8x7B", "MoE-1.2T"})
    EXPECT_NE(r.out.find(m), std::string::npos) << m;
}

TEST(CliEstimate, CommOpsShowWhyRailOnlyIsSlower) {
  // MoE-1.2T with tp 2, ep 32 on 4096 H100: the expert all-to-all spans 4 rails in 8 domains.
  // Forwarded two-phase (the paper's non-overlapped reading) with perfect spreading above the
  // leaf, rail-only pays the NVLink shuffle; NCCL's PXN (pipelined, the default) hides most of it.
  const std::string base =
      "estimate --gpus 4096 --model MoE-1.2T --tp 2 --pp 8 --ep 32 --dist-opt on --json "
      "--routing adaptive --forwarding two-phase --design ";
  const auto a = run_cli(base + "rail_optimized");
  const auto b = run_cli(base + "rail_only");
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_GT(jb["iteration_time_s"].get<double>(), ja["iteration_time_s"].get<double>());
  EXPECT_GT(jb["breakdown"]["rail_forwarding_s"].get<double>(), 0.0);
  int a2a = 0;
  for (const auto& op : jb["comm"]) {
    if (op["op"] != "all_to_all") continue;
    ++a2a;
    EXPECT_EQ(op["algorithm"], "direct");
    EXPECT_TRUE(op["cross_rail"].get<bool>());
    EXPECT_EQ(op["group"]["per_domain"], 4);
    EXPECT_EQ(op["group"]["domains"], 8);
    EXPECT_GT(op["forwarding_s"].get<double>(), 0.0);
  }
  EXPECT_EQ(a2a, 2);  // forward and backward
  for (const auto& op : ja["comm"]) EXPECT_EQ(op["forwarding_s"].get<double>(), 0.0);
  const auto pxn = run_cli(
      "estimate --gpus 4096 --model MoE-1.2T --tp 2 --pp 8 --ep 32 --dist-opt on --json "
      "--routing adaptive --design rail_only");
  ASSERT_EQ(pxn.code, 0) << pxn.err;
  const auto jp = nlohmann::json::parse(pxn.out);
  EXPECT_LT(jp["breakdown"]["rail_forwarding_s"].get<double>(),
            0.2 * jb["breakdown"]["rail_forwarding_s"].get<double>());
  EXPECT_LT(jp["iteration_time_s"].get<double>(), jb["iteration_time_s"].get<double>());
}

// plan --explain: the model's size and FLOPs, the MFU basis, and the winner against the
// runner-up part by part; every row's parts add up to its iteration time and memory.
TEST(CliPlan, ExplainComparesTheWinnerWithTheRunnerUpPartByPart) {
  const auto text = run_cli("plan --gpus 4096 --model MoE-1.2T --top 2 --explain");
  ASSERT_EQ(text.code, 0) << text.err;
  for (const char* s : {"B parameters", "active per token", "PFLOP per iteration",
                        "dense bf16 peak of the H100-SXM, 989 TFLOP/s", "why #1 beats #2",
                        "pipeline bubble", "pipeline steps", "#2 - #1", "optimizer state"})
    EXPECT_NE(text.out.find(s), std::string::npos) << s << "\n" << text.out;
  const auto json = run_cli("plan --gpus 4096 --model MoE-1.2T --top 2 --explain --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const nlohmann::json& e = j["explain"];
  EXPECT_GT(e["total_params"].get<double>(), e["active_params"].get<double>());  // MoE
  EXPECT_EQ(e["mtp_layers"].get<int>(), 0);
  EXPECT_EQ(e["mtp_params"].get<double>(), 0.0);
  // MFU = model FLOPs / (time x N x peak), the basis stated.
  EXPECT_NEAR(e["model_flops_per_iteration"].get<double>() /
                  (j["plans"][0]["iteration_time_s"].get<double>() * j["gpus"].get<double>() *
                   e["peak_flops_per_gpu"].get<double>()),
              j["plans"][0]["mfu"].get<double>(), 1e-12);
  ASSERT_EQ(e["parts"].size(), 3u);  // #1, #2, #2 - #1
  for (const nlohmann::json& row : e["parts"]) {
    double time = 0, memory = 0;
    for (const char* k :
         {"compute_s", "recompute_s", "tp_comm_s", "tp_overlap_s", "ep_comm_s", "pp_comm_s",
          "dp_comm_s", "rail_forwarding_s", "bubble_s", "pipeline_overhead_s", "optimizer_s"})
      time += row[k].get<double>();
    for (const char* k :
         {"weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "reserved_gib"})
      memory += row[k].get<double>();
    EXPECT_NEAR(time, row["iteration_time_s"].get<double>(), 1e-9) << row["plan"];
    EXPECT_NEAR(memory, row["memory_gib"].get<double>(), 1e-9) << row["plan"];
  }
  EXPECT_NEAR(e["parts"][2]["iteration_time_s"].get<double>(),
              j["plans"][1]["iteration_time_s"].get<double>() -
                  j["plans"][0]["iteration_time_s"].get<double>(),
              1e-12);
  EXPECT_GE(e["parts"][2]["iteration_time_s"].get<double>(), 0.0);  // #1 is the faster
}

// plan --explain lists the best plans of other shapes: none shares #1's tp, cp, pp, dp and ep,
// each is slower than #1 and says by how much.
TEST(CliPlan, ExplainListsTheBestPlansOfOtherShapes) {
  const auto json = run_cli("plan --gpus 1024 --model GPT-3-175B --top 3 --explain --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const nlohmann::json& shapes = j["explain"]["other_shapes"];
  ASSERT_EQ(shapes.size(), 3u);
  auto key = [](const nlohmann::json& s) {
    return std::vector<std::int64_t>{s["tp"].get<std::int64_t>(), s.value("cp", std::int64_t{1}),
                                     s["pp"].get<std::int64_t>(), s["dp"].get<std::int64_t>(),
                                     s["ep"].get<std::int64_t>()};
  };
  std::vector<std::vector<std::int64_t>> seen{key(j["plans"][0]["strategy"])};
  double last = j["plans"][0]["iteration_time_s"].get<double>();
  for (const auto& p : shapes) {
    const auto k = key(p["strategy"]);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), k), 0) << p.dump();
    seen.push_back(k);
    EXPECT_GE(p["iteration_time_s"].get<double>(), last);
    last = p["iteration_time_s"].get<double>();
    EXPECT_GE(p["vs_best_pct"].get<double>(), 0.0);
    EXPECT_NE(p["why"].get<std::string>().find("% slower ("), std::string::npos) << p["why"];
  }
  const auto text = run_cli("plan --gpus 1024 --model GPT-3-175B --top 3 --explain");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("the best plans of other shapes"), std::string::npos) << text.out;
}

// Meta's Llama 3 405B plan on 16,384 H100 (Dubey et al. 2024, Sec. 3.3.2: tp8 pp16 dp128, batch
// 2,048 at 8K tokens) against railsim's best: what decides between them, part by part; the
// user's plan as railsim prints plans, knobs it leaves out the stack's defaults.
TEST(CliPlan, AgainstExplainsTheUsersPlanAgainstTheBest) {
  const std::string base = "plan --gpus 16384 --model Llama-3-405B --batch 2048 --top 1 ";
  const auto json = run_cli(base + "--against 'tp8 pp16 dp128 v4' --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const nlohmann::json& a = j["against"];
  EXPECT_EQ(a["strategy"]["tp"], 8);
  EXPECT_EQ(a["strategy"]["pp"], 16);
  EXPECT_EQ(a["strategy"]["dp"], 128);
  EXPECT_EQ(a["strategy"]["interleave"], 4);
  EXPECT_NEAR(
      a["vs_best_pct"].get<double>(),
      100 * (a["iteration_time_s"].get<double>() / j["plans"][0]["iteration_time_s"].get<double>() -
             1),
      1e-9);
  EXPECT_GE(a["vs_best_pct"].get<double>(), 0.0);  // the search's best is no slower
  ASSERT_EQ(a["parts"].size(), 3u);                // best, yours, yours - best
  EXPECT_EQ(a["parts"][2]["plan"], "yours - best");
  // Four virtual stages do not fit (their warm-up holds more layers than 1F1B's): the fastest
  // plan of the same split of the GPUs that does, no faster than the best, within the HBM.
  ASSERT_FALSE(a["feasible"].get<bool>());
  const nlohmann::json& f = a["fits_instead"];
  ASSERT_TRUE(f.is_object()) << a.dump();
  EXPECT_EQ(f["strategy"]["tp"], 8);
  EXPECT_EQ(f["strategy"]["pp"], 16);
  EXPECT_EQ(f["strategy"]["dp"], 128);
  EXPECT_LE(f["memory_gib"].get<double>(), 80.0);
  EXPECT_GE(f["vs_best_pct"].get<double>(), 0.0);
  EXPECT_NEAR(
      f["vs_best_pct"].get<double>(),
      100 * (f["iteration_time_s"].get<double>() / j["plans"][0]["iteration_time_s"].get<double>() -
             1),
      1e-9);
  const auto oom = run_cli(base + "--against 'tp8 pp16 dp128 v4'");
  ASSERT_EQ(oom.code, 0) << oom.err;
  EXPECT_NE(oom.out.find("the fastest plan of its shape (tp8 pp16 dp128) that fits: tp8 pp16 "
                         "dp128; micro-batch "),
            std::string::npos)
      << oom.out;
  const auto text = run_cli(base + "--against 'tp8 pp16 dp128'");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("your plan, tp8 pp16 dp128; micro-batch 1, selective recompute"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("% slower ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("pipeline bubble +"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("the fastest plan of its shape"), std::string::npos) << text.out;
  // The best plan given as the user's, every knob as printed: it is the best plan.
  const nlohmann::json& b = j["plans"][0]["strategy"];
  const std::string best =
      "tp" + b["tp"].dump() + (b.contains("cp") ? " cp" + b["cp"].dump() : "") + " pp" +
      b["pp"].dump() + " dp" + b["dp"].dump() + " mb" + b["micro_batch"].dump() + " v" +
      b["interleave"].dump() + " " + b["recompute"].get<std::string>() +
      (b["sp"].get<bool>() ? " sp" : " no-sp") +
      (b["dist_opt"].get<bool>() ? " dopt" : " no-dopt") +
      (b["dp_overlap"].get<bool>() ? " ovl" : " no-ovl") +
      (b.contains("pp_schedule") ? " " + b["pp_schedule"].get<std::string>() : "");
  const auto same = run_cli(base + "--against '" + best + "'");
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find(": it is the best plan\n"), std::string::npos) << best << "\n"
                                                                         << same.out;
  railsim::test::expect_field_error(base + "--against 'tp3 pp16'", "--against");
  railsim::test::expect_field_error(base + "--against 'tp8 warp9'", "--against");
  railsim::test::expect_field_error(base + "--against ''", "--against");
}

// Time to train on plan: each plan's days for the tokens, its throughput's, in every format.
TEST(CliPlan, TrainTokensGivesEachPlansDays) {
  const auto r = run_cli("plan --gpus 1024 --top 3 --train-tokens 1e12 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["train_tokens"].get<double>(), 1e12);
  ASSERT_EQ(j["plans"].size(), 3u);
  for (const auto& p : j["plans"])
    EXPECT_NEAR(p["train_days"].get<double>(), 1e12 / p["tokens_per_s"].get<double>() / 86400.0,
                1e-9 * p["train_days"].get<double>());
  const auto csv = run_cli("plan --gpus 1024 --top 3 --train-tokens 1e12 --csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find("train_days"), std::string::npos);
  const auto text = run_cli("plan --gpus 1024 --top 1 --train-tokens 1e12");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("days to train: 1T tokens"), std::string::npos) << text.out;
  const auto bad = run_cli("plan --gpus 1024 --train-tokens -5");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(line_count(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("--train-tokens"), std::string::npos) << bad.err;
}

// A batch that divides badly is said, with the nearby batch that plans well: 18,432 GB200 in NVL72
// racks with the default 4,096 sequences plan pp72 (a third of the iteration in the bubble); 4,608
// splits as dp288. The suggestion is the plan `plan --batch 4608` finds, to the last digit; a
// plan with a small bubble gets no suggestion.
TEST(CliPlan, SaysWhenTheBatchDividesBadlyAndWhatPlansWell) {
  const std::string nvl72 = "plan --gpu GB200 --gpus 18432 --hb-domain 72 --nic-gbps 800 --top 1 ";
  const auto r = run_cli(nvl72 + "--json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["better_sizes"].empty()) << r.out;
  const auto& b = j["better_sizes"][0];
  EXPECT_EQ(b["batch"], 4608);
  EXPECT_EQ(b["job_gpus"], 18432);
  EXPECT_GT(b["gain"].get<double>(), 0.5);
  const auto at = run_cli(nvl72 + "--batch 4608 --json");
  ASSERT_EQ(at.code, 0) << at.err;
  const auto ja = nlohmann::json::parse(at.out);
  EXPECT_DOUBLE_EQ(b["iteration_time_s"].get<double>(),
                   ja["plans"][0]["iteration_time_s"].get<double>());
  EXPECT_TRUE(ja["better_sizes"].empty());  // 4,608 itself divides well
  const auto text = run_cli(nvl72);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("note: a batch of 4,608 (--batch 4608) trains "), std::string::npos)
      << text.out;
  const auto plain = run_cli("plan --top 1 --json");  // 32,768 H100, 4,096: pp16, a small bubble
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_TRUE(nlohmann::json::parse(plain.out)["better_sizes"].empty());
}

// A model that trains a multi-token-prediction module says so where --explain gives its size:
// DeepSeek-V3's one module, 11.61B weights of its own, timed but not in model FLOPs.
TEST(CliPlan, ExplainNamesTheMultiTokenPredictionModule) {
  const auto text = run_cli(
      "plan --gpus 256 --gpu H800 --model DeepSeek-V3 --seq 4096 --batch 1024 --dtype fp8 --top 2 "
      "--explain");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("and 1 multi-token-prediction module(s) of 11.61B on the last stage"),
            std::string::npos)
      << text.out;
  const auto json = run_cli(
      "plan --gpus 256 --gpu H800 --model DeepSeek-V3 --seq 4096 --batch 1024 --dtype fp8 --top 2 "
      "--explain --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json e = nlohmann::json::parse(json.out)["explain"];
  EXPECT_EQ(e["mtp_layers"].get<int>(), 1);
  EXPECT_NEAR(e["mtp_params"].get<double>() / 1e9, 11.61, 0.01);
}
