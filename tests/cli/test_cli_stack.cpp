// --stack, --dtype and --flash-attention as a user gives them: listed and printed by `presets`,
// accepted the same way by every command that times a model, and refused on one line (exit 2,
// the option or JSON field named) when the stack lacks a knob or its file is malformed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "../common/read_csv.hpp"
#include "cli_runner.hpp"

using railsim::test::line_count;
using railsim::test::run_cli;

namespace {
void expect_error_prefix(const std::string& args, const std::string& prefix) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  EXPECT_EQ(line_count(r.err), 1) << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("railsim: error: " + prefix, 0), 0u)
      << args << ": expected 'railsim: error: " << prefix << "' in " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// A small Korthikanti-style run that every stack can time.
const char* kMegatron175Small =
    "--gpu A100-SXM-80GB --gpus 64 --nic-gbps 200 --model Megatron-175B --batch 64 --tp 8 --pp 8";
}  // namespace

TEST(CliStack, PresetsListsAndPrintsTheStacks) {
  const auto r = run_cli("presets stacks");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      "stacks: deepseek-v3-2024, fsdp-2024, llm-foundry-2023, maxtext-2024, megatron-core-2024, "
      "megatron-deepspeed-2022, megatron-lm-2021, megatron-lm-2022, meta-llama3-2024, "
      "nemo-perf-2025, torchtitan-2024\n");
  const auto p = run_cli("presets stacks megatron-lm-2021");
  ASSERT_EQ(p.code, 0) << p.err;
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["name"], "megatron-lm-2021");
  EXPECT_EQ(j["knobs"]["sequence_parallel"], false);
  EXPECT_EQ(j["defaults"]["recompute"], "full");
}

TEST(CliStack, DefaultIsMegatronCore2024WithFlashAttention) {
  const auto r = run_cli(std::string("estimate ") + kMegatron175Small + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stack"], "megatron-core-2024");
  EXPECT_EQ(j["flash_attention"], true);
  EXPECT_EQ(j["attention_kernel"], "fused");  // Transformer Engine's, not a PyTorch class
  EXPECT_EQ(j["strategy"]["recompute"], "selective");
  // The 2022 stack: unfused attention, so the same strategy is slower.
  const auto y22 =
      run_cli(std::string("estimate ") + kMegatron175Small + " --stack megatron-lm-2022 --json");
  ASSERT_EQ(y22.code, 0) << y22.err;
  const auto k = nlohmann::json::parse(y22.out);
  EXPECT_EQ(k["flash_attention"], false);
  EXPECT_GT(k["iteration_time_s"].get<double>(), j["iteration_time_s"].get<double>());
  // The 2021 stack's defaults: full recompute, no SP.
  const auto y21 =
      run_cli(std::string("estimate ") + kMegatron175Small + " --stack megatron-lm-2021 --json");
  ASSERT_EQ(y21.code, 0) << y21.err;
  const auto l = nlohmann::json::parse(y21.out);
  EXPECT_EQ(l["strategy"]["recompute"], "full");
  EXPECT_EQ(l["strategy"]["sp"], false);
}

TEST(CliStack, PlanNeverUsesAKnobTheStackLacks) {
  const auto r = run_cli(
      "plan --gpu A100-SXM-80GB --gpus 256 --nic-gbps 200 --model Megatron-175B --batch 256 "
      "--stack megatron-lm-2021 --top 20 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stack"], "megatron-lm-2021");
  ASSERT_FALSE(j["plans"].empty());
  for (const auto& p : j["plans"]) {
    const auto& s = p["strategy"];
    EXPECT_EQ(s["sp"], false);
    EXPECT_NE(s["recompute"], "selective");
    EXPECT_EQ(s["dist_opt"], false);
    EXPECT_EQ(s["dp_overlap"], false);
    EXPECT_EQ(96 % (s["pp"].get<int>() * s["interleave"].get<int>()), 0);
  }
}

TEST(CliStack, EveryTimingCommandTakesTheSoftwareOptions) {
  for (const std::string& cmd :
       {std::string("estimate ") + kMegatron175Small,
        std::string("plan ") + kMegatron175Small + " --top 1",
        std::string("traffic ") + kMegatron175Small,
        std::string("compare --gpus 64 --hb-domain 8 --model Megatron-175B --batch 64"),
        std::string("sweep --gpus 64 --hb-domain 8 --model Megatron-175B --batch 64")}) {
    const auto ok = run_cli(cmd + " --stack megatron-lm-2022 --dtype bf16 --flash-attention off");
    EXPECT_EQ(ok.code, 0) << cmd << "\n" << ok.err;
    expect_error_prefix(cmd + " --stack megatron-lm-2022 --flash-attention on",
                        "--flash-attention: stack megatron-lm-2022 has no flash attention");
    expect_error_prefix(cmd + " --stack megatron-lm-2022 --dtype fp8",
                        "--dtype: stack megatron-lm-2022 has no fp8");
    expect_error_prefix(cmd + " --stack megatron-9000", "--stack: unknown preset 'megatron-9000'");
  }
  const auto sim = run_cli(
      "sim --gpus 64 --hb-domain 8 --schedule --model Megatron-175B --batch 64 --tp 8 --pp 8 "
      "--stack megatron-lm-2022");
  EXPECT_EQ(sim.code, 0) << sim.err;
  expect_error_prefix(
      "sim --gpus 64 --hb-domain 8 --schedule --model Megatron-175B --batch 64 --tp 8 --pp 8 "
      "--stack megatron-lm-2021 --sp on",
      "--sp: stack megatron-lm-2021 has no sequence parallelism");
}

// Every table whose figures come from the time model states the software it assumed on every
// CSV row (and so in its JSON), and sweep and optimize say it to people: a reader of the file
// alone can tell a run with fp8, no flash attention and all-gathered K/V from the defaults.
TEST(CliStack, EveryCsvStatesTheSoftware) {
  const std::string software =
      " --stack megatron-core-2024 --dtype fp8 --flash-attention off --cp-comm all_gather";
  const std::string job = " --gpus 64 --hb-domain 8 --model Llama-3-8B --batch 64 --seq 8192";
  for (const std::string& cmd :
       {"plan --top 3" + job, "compare" + job, "sweep" + job,
        "optimize --min-mfu 0.01 --design rail_only --oversubscription 1" + job,
        "sim --schedule --tp 8 --cp 2" + job}) {
    const auto r = run_cli(cmd + software + " --csv");
    ASSERT_EQ(r.code, 0) << cmd << "\n" << r.err;
    const auto records = railsim::test::read_csv(r.out);
    ASSERT_GE(records.size(), 2u) << cmd << "\n" << r.out;
    const auto& header = records.front();
    const auto column = [&](const std::string& name) {
      const auto it = std::find(header.begin(), header.end(), name);
      EXPECT_NE(it, header.end()) << cmd << ": no column " << name;
      return static_cast<std::size_t>(it - header.begin());
    };
    const std::pair<const char*, const char*> expected[] = {{"stack", "megatron-core-2024"},
                                                            {"dtype", "fp8"},
                                                            {"flash_attention", "false"},
                                                            {"attention_kernel", "fused"},
                                                            {"compile", "false"},
                                                            {"ep_dispatch", "direct"},
                                                            {"ep_overlap", "false"},
                                                            {"fp8_output_layer", "false"},
                                                            {"cp_comm", "all_gather"},
                                                            {"fp8_casts", "fused"}};
    for (std::size_t row = 1; row < records.size(); ++row)
      for (const auto& [name, value] : expected) {
        const std::size_t c = column(name);
        ASSERT_LT(c, records[row].size()) << cmd;
        EXPECT_EQ(records[row][c], value) << cmd << ": row " << row << " " << name;
      }
  }
  // compare's software cell names the CP exchange exactly where the design's best plan splits the
  // sequence.
  const auto cmp = run_cli("compare --csv" + job);
  ASSERT_EQ(cmp.code, 0) << cmp.err;
  const auto rows = railsim::test::read_csv(cmp.out);
  ASSERT_EQ(rows.size(), 4u) << cmp.out;
  const auto at = [&](const char* name) {
    const auto it = std::find(rows[0].begin(), rows[0].end(), name);
    if (it == rows[0].end())
      throw std::runtime_error(std::string("compare --csv: no column ") + name);
    return static_cast<std::size_t>(it - rows[0].begin());
  };
  int with_cp = 0;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const bool cp = rows[r][at("best_plan")].find(" cp1 ") == std::string::npos;
    with_cp += cp ? 1 : 0;
    EXPECT_EQ(rows[r][at("perf_stack")], std::string("megatron-core-2024, bf16, flash attention") +
                                             (cp ? ", CP ring attention" : ""))
        << rows[r][at("best_plan")];
  }
  EXPECT_GT(with_cp, 0) << "no design's best plan uses CP here: the check above saw no CP cell";
  // The default stack's exchange is the ring (p2p); the text of sweep and optimize names it all.
  const auto sweep = run_cli("sweep" + job);
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("software: stack megatron-core-2024, bf16, flash attention on, "
                           "torch.compile off, EP dispatch direct, CP exchange p2p\n"),
            std::string::npos)
      << sweep.out;
  const auto opt =
      run_cli("optimize --min-mfu 0.01 --design rail_only --oversubscription 1" + job + software);
  ASSERT_EQ(opt.code, 0) << opt.err;
  EXPECT_NE(opt.out.find("software: stack megatron-core-2024, fp8, flash attention off, CP K/V "
                         "all-gathered before the attention\n"),
            std::string::npos)
      << opt.out;
}

// Pipeline schedules: one the stack lacks, one that needs what the strategy lacks, an unknown name.
TEST(CliStack, APipelineScheduleIsCheckedAgainstTheStackAndTheStrategy) {
  const std::string ds =
      "--gpus 256 --gpu H800 --model DeepSeek-V3 --seq 4096 --dtype fp8 --tp 1 --ep 8 "
      "--micro-batch 1 --stack deepseek-v3-2024";
  expect_error_prefix(std::string("estimate ") + kMegatron175Small + " --pp-schedule dualpipe",
                      "--pp-schedule: stack megatron-core-2024 has no dualpipe schedule");
  expect_error_prefix(std::string("plan ") + kMegatron175Small + " --pp-schedule zb-h1",
                      "--pp-schedule: stack megatron-core-2024 has no zb-h1 schedule");
  expect_error_prefix(std::string("estimate ") + kMegatron175Small + " --pp-schedule zb-v",
                      "--pp-schedule: stack megatron-core-2024 has no zb-v schedule");
  expect_error_prefix(std::string("estimate ") + kMegatron175Small + " --pp-schedule zb-x",
                      "--pp-schedule: unknown pipeline schedule 'zb-x'");
  expect_error_prefix("estimate " + ds + " --batch 512 --pp 1 --pp-schedule dualpipe",
                      "--pp-schedule: dualpipe is a pipeline schedule: it needs pp > 1");
  expect_error_prefix("estimate " + ds + " --pp 2 --dp 128 --batch 384 --pp-schedule dualpipe",
                      "--pp-schedule: dualpipe needs an even pp and an even number of "
                      "micro-batches (pp = 2, 3 micro-batches)");
  const auto ok =
      run_cli("estimate " + ds + " --batch 512 --pp 16 --dp 16 --pp-schedule dualpipe --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"pp_schedule\": \"dualpipe\""), std::string::npos);
}

// A user's stack that lists zb-v: estimate times it (a smaller bubble than 1F1B's, the schedule in
// the JSON), plan searches it, and what it cannot run is refused on one line naming the option.
TEST(CliStack, AUserStackWithZeroBubbleVTimesAndSearchesIt) {
  const std::string path = "/tmp/railsim_cli_zbv_" + std::to_string(::getpid()) + ".json";
  nlohmann::json j = nlohmann::json::parse(run_cli("presets stacks megatron-core-2024").out);
  j["name"] = "core-with-zb-v";
  j["knobs"]["pipeline_schedules"] = {"1f1b", "zb-v"};
  std::ofstream(path) << j.dump();
  const std::string base = std::string("estimate ") + kMegatron175Small + " --stack " + path +
                           " --dp 1 --micro-batch 1 --json";
  auto bubble = [&](const std::string& extra) {
    const auto r = run_cli(base + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    const auto out = nlohmann::json::parse(r.out);
    return std::make_pair(out.at("breakdown").at("bubble_s").get<double>(),
                          out.at("strategy").at("pp_schedule").get<std::string>());
  };
  const auto one = bubble("");
  const auto v = bubble(" --pp-schedule zb-v");
  EXPECT_EQ(one.second, "1f1b");
  EXPECT_EQ(v.second, "zb-v");
  EXPECT_GT(v.first, 0.0);
  EXPECT_LT(v.first, 0.5 * one.first);
  const auto plan = run_cli(std::string("plan ") + kMegatron175Small + " --stack " + path +
                            " --dp 1 --micro-batch 1 --interleave 1 --top 1 --json");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("\"pp_schedule\": \"zb-v\""), std::string::npos);
  // sim --schedule names the schedule and simulates its PP sends: the V crosses each pair of
  // stages twice per pass, 2 x 64 micro-batches.
  const std::string sim = std::string("sim --schedule ") + kMegatron175Small + " --stack " + path +
                          " --dp 1 --micro-batch 1 --pp-schedule zb-v";
  const auto text = run_cli(sim);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("tp 8 pp 8 dp 1 ep 1, zb-v schedule (the strategy given)"),
            std::string::npos)
      << text.out;
  const auto sj = nlohmann::json::parse(run_cli(sim + " --json").out);
  EXPECT_EQ(sj.at("strategy").at("pp_schedule"), "zb-v");
  int pp_ops = 0;
  for (const auto& op : sj.at("ops"))
    if (op.at("parallelism") == "pp") {
      ++pp_ops;
      EXPECT_DOUBLE_EQ(op.at("count").get<double>(), 128.0);
      EXPECT_NEAR(op.at("sim_over_analytic").get<double>(), 1.0, 0.01);
    }
  EXPECT_EQ(pp_ops, 2);
  expect_error_prefix(std::string("estimate ") + kMegatron175Small + " --stack " + path +
                          " --dp 1 --pp-schedule zb-v --interleave 2",
                      "--pp-schedule: zb-v runs without interleaving (interleave = 2; use 1)");
  expect_error_prefix(
      "estimate --gpu A100-SXM-80GB --gpus 64 --model Megatron-175B --batch 64 "
      "--tp 1 --pp 64 --dp 1 --stack " +
          path + " --pp-schedule zb-v",
      "--pp-schedule: zb-v cuts the model into 2 pp = 128 chunks but it has 96 "
      "layers (use pp <= 48)");
  std::remove(path.c_str());
}

// Llama 3 405B as Meta laid it out: 126 layers plus the embedding and the loss as 16 x 8 chunks of
// one (Dubey et al. 2024, Sec. 3.3.2). A stack that counts only layers refuses v = 8 and says
// which stack knob would take it; one that counts the embedding and the loss times it.
TEST(CliStack, InterleavingPastTheLayersNamesTheStackKnobThatAllowsIt) {
  const std::string base =
      "estimate --gpus 8192 --model Llama-3-405B --batch 2048 --seq 8192 --tp 8 --pp 16 "
      "--micro-batch 1";
  const std::string meta = base + " --interleave 8";
  expect_error_prefix(meta,
                      "--interleave: interleave = 8 makes pp x interleave = 128 model chunks, "
                      "more than the 126 layers of Llama-3-405B; stack megatron-core-2024 does "
                      "not count the embedding and the loss as a chunk each (a stack with "
                      "\"embedding_loss_chunks\": true does)");
  // Past layers + 2 (16 x 9 = 144 chunks) no stack can lay it out: the same error, no hint.
  expect_error_prefix(base + " --interleave 9",
                      "--interleave: interleave = 9 makes pp x interleave = 144 model chunks, "
                      "more than the 126 layers of Llama-3-405B");
  const auto r = run_cli(base + " --interleave 9");
  EXPECT_EQ(r.err.find("embedding_loss_chunks"), std::string::npos) << r.err;
  const auto ok = run_cli(meta + " --stack nemo-perf-2025 --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out).at("strategy").at("interleave").get<int>(), 8);
}

TEST(CliStack, HybridShardingIsNamedWhenItCannotRun) {
  const std::string l8 = "--gpus 64 --model Llama-3-8B --seq 8192 --batch 512 --tp 1";
  expect_error_prefix("estimate " + l8 + " --hsdp 8",
                      "--hsdp: stack megatron-core-2024 has no hybrid sharding");
  expect_error_prefix("plan " + l8 + " --hsdp 8",
                      "--hsdp: stack megatron-core-2024 has no hybrid sharding");
  expect_error_prefix("estimate " + l8 + " --stack fsdp-2024 --hsdp 6",
                      "--hsdp: the shard group of 6 must divide dp x cp = 64 x 1");
  expect_error_prefix("estimate " + l8 + " --stack fsdp-2024 --hsdp -1", "--hsdp:");
  const auto ok = run_cli("estimate " + l8 + " --stack fsdp-2024 --hsdp 8 --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"hsdp\": 8"), std::string::npos);
}

TEST(CliStack, AKnobTheStackLacksIsNamed) {
  expect_error_prefix(
      std::string("plan ") + kMegatron175Small + " --stack megatron-lm-2021 --sp on",
      "--sp: stack megatron-lm-2021 has no sequence parallelism");
  expect_error_prefix(
      std::string("estimate ") + kMegatron175Small + " --stack megatron-lm-2021 --interleave 5",
      "--interleave: stack megatron-lm-2021 has no uneven stages");
  expect_error_prefix(
      std::string("plan ") + kMegatron175Small + " --stack megatron-lm-2021 --recompute selective",
      "--recompute: stack megatron-lm-2021 has no selective recompute");
  expect_error_prefix(
      std::string("estimate ") + kMegatron175Small + " --stack megatron-lm-2022 --dist-opt on",
      "--dist-opt: stack megatron-lm-2022 has no distributed optimizer");
  expect_error_prefix(std::string("plan ") + kMegatron175Small + " --stack fsdp-2024",
                      "--pp: stack fsdp-2024 has no pipeline parallelism");
  // What the stack does, given explicitly, is fine.
  EXPECT_EQ(
      run_cli(std::string("estimate ") + kMegatron175Small + " --stack megatron-lm-2021 --sp off")
          .code,
      0);
}

// The attention kernels a stack runs are said in text and JSON: LLM Foundry's Triton port of the
// first FlashAttention is a FlashAttention-1-class kernel (docs/model.md section 9).
TEST(CliStack, AttentionKernelClassIsSaid) {
  const std::string job =
      "estimate --gpu A100-SXM-80GB --gpus 8 --nic-gbps 200 --model MPT-7B --seq 16384 "
      "--batch 32 --tp 1 --pp 1 --micro-batch 4 --recompute full --stack llm-foundry-2023";
  const auto r = run_cli(job);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("software: stack llm-foundry-2023, bf16, flash attention on, "
                       "FlashAttention-1-class attention kernels\n"),
            std::string::npos)
      << r.out;
  const auto j = nlohmann::json::parse(run_cli(job + " --json").out);
  EXPECT_EQ(j["attention_kernel"].get<std::string>(), "fa1");
}

// torch.compile on TorchTitan: off by default, said in text and JSON; on fuses the element-wise
// kernels and is faster; a stack without it refuses it on one line.
TEST(CliStack, TorchCompileIsTorchTitansKnobAndIsSaid) {
  const std::string titan =
      "estimate --gpu A100-SXM-80GB --gpus 64 --nic-gbps 200 --model Llama-2-13B --seq 4096 "
      "--batch 128 --tp 1 --pp 1 --micro-batch 2 --recompute none --stack torchtitan-2024";
  const auto off = run_cli(titan);
  ASSERT_EQ(off.code, 0) << off.err;
  EXPECT_NE(off.out.find("software: stack torchtitan-2024, bf16, flash attention on, "
                         "FlashAttention-2-class attention kernels, "
                         "torch.compile off (eager element-wise kernels)\n"),
            std::string::npos)
      << off.out;
  const auto j_off = nlohmann::json::parse(run_cli(titan + " --json").out);
  const auto j_on = nlohmann::json::parse(run_cli(titan + " --compile on --json").out);
  EXPECT_EQ(j_off["attention_kernel"].get<std::string>(), "fa2");
  EXPECT_FALSE(j_off["compile"].get<bool>());
  EXPECT_EQ(j_off["elementwise_kernels"].get<std::string>(), "eager");
  EXPECT_TRUE(j_on["compile"].get<bool>());
  EXPECT_EQ(j_on["elementwise_kernels"].get<std::string>(), "fused");
  const double t_off = j_off["iteration_time_s"].get<double>();
  const double t_on = j_on["iteration_time_s"].get<double>();
  EXPECT_GT(t_off, 1.08 * t_on);  // 2.2 MB of element-wise traffic per token and layer, not 0.44
  const auto plan = run_cli(
      "plan --gpu A100-SXM-80GB --gpus 64 --nic-gbps 200 --model Llama-2-13B --seq 4096 "
      "--batch 128 --stack torchtitan-2024 --compile on --top 1");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("flash attention, FlashAttention-2-class attention kernels, "
                          "torch.compile on)"),
            std::string::npos)
      << plan.out;
  expect_error_prefix(std::string("estimate ") + kMegatron175Small + " --compile on",
                      "--compile: stack megatron-core-2024 has no torch.compile");
  expect_error_prefix(std::string("plan ") + kMegatron175Small + " --compile maybe",
                      "--compile: got 'maybe', expected on or off");
  // Off is what a stack without it does: accepted.
  EXPECT_EQ(run_cli(std::string("estimate ") + kMegatron175Small + " --compile off").code, 0);
}

TEST(CliStack, HierarchicalEpDispatchIsSaidAndKeepsExpertTrafficOnTheRails) {
  // DeepSeek-V3 on 256 H800 (EP 64 over 8 nodes) under DeepSeek's stack: the software line, the
  // JSON and the communication table say how the all-to-all runs, and traffic finds none of its
  // bytes between rails.
  const std::string ds =
      "--gpus 256 --gpu H800 --switch QM9700 --model DeepSeek-V3 --batch 512 --seq 4096 --dtype "
      "fp8 --tp 1 --pp 4 --dp 64 --ep 64 --micro-batch 1 --stack deepseek-v3-2024";
  const auto est = run_cli("estimate " + ds);
  ASSERT_EQ(est.code, 0) << est.err;
  EXPECT_NE(est.out.find("software: stack deepseek-v3-2024, fp8, flash attention on, hierarchical "
                         "EP dispatch (rail, then HB domain)\n"),
            std::string::npos)
      << est.out;
  EXPECT_NE(est.out.find("all_to_all      ep    rail_then_domain"), std::string::npos) << est.out;
  const auto j = nlohmann::json::parse(run_cli("estimate " + ds + " --json").out);
  EXPECT_EQ(j["ep_dispatch"].get<std::string>(), "hierarchical");
  const auto tr = nlohmann::json::parse(run_cli("traffic " + ds + " --json").out);
  EXPECT_EQ(tr["ep_dispatch"].get<std::string>(), "hierarchical");
  EXPECT_EQ(tr["stack"].get<std::string>(), "deepseek-v3-2024");
  EXPECT_GT(tr["bytes"]["ep"]["same_rail"].get<double>(), 0.0);
  EXPECT_EQ(tr["bytes"]["ep"]["cross_rail"].get<double>(), 0.0);
  const auto text = run_cli("traffic " + ds);
  EXPECT_NE(text.out.find("software: stack deepseek-v3-2024, fp8, hierarchical EP dispatch"),
            std::string::npos)
      << text.out;
  // The direct dispatch of the default stack sends between rails and says nothing of it.
  const auto direct = nlohmann::json::parse(
      run_cli("estimate --gpus 256 --gpu H800 --switch QM9700 --model DeepSeek-V3 --batch 512 "
              "--seq 4096 --tp 1 --pp 4 --dp 64 --ep 64 --micro-batch 1 --json")
          .out);
  EXPECT_EQ(direct["ep_dispatch"].get<std::string>(), "direct");
  // --ep-dispatch sets it on any stack: the default stack with DeepSeek's dispatch.
  const auto chosen = nlohmann::json::parse(
      run_cli("estimate --gpus 256 --gpu H800 --switch QM9700 --model DeepSeek-V3 --batch 512 "
              "--seq 4096 --tp 1 --pp 4 --dp 64 --ep 64 --micro-batch 1 --ep-dispatch "
              "hierarchical --json")
          .out);
  EXPECT_EQ(chosen["ep_dispatch"].get<std::string>(), "hierarchical");
  EXPECT_LT(chosen["breakdown"]["ep_comm_s"].get<double>(),
            direct["breakdown"]["ep_comm_s"].get<double>());
  const auto overridden =
      nlohmann::json::parse(run_cli("estimate " + ds + " --ep-dispatch direct --json").out);
  EXPECT_EQ(overridden["ep_dispatch"].get<std::string>(), "direct");  // over the stack's default
  EXPECT_GT(overridden["breakdown"]["ep_comm_s"].get<double>(),
            j["breakdown"]["ep_comm_s"].get<double>());
  expect_error_prefix("estimate " + ds + " --ep-dispatch deepep",
                      "--ep-dispatch: got 'deepep', expected direct or hierarchical");
}

// --ep-overlap: Megatron-Core's combined 1F1B, on the stack that has it; the software line, the
// JSON and the CSV say so; a stack without it, a pipelined plan without interleaving and a value
// other than on/off are refused with the option named.
TEST(CliStack, EpOverlapIsSaidAndRefusedWhereItCannotRun) {
  const std::string base =
      "--gpus 256 --gpu H100-SXM --switch QM9700 --routing adaptive --model Qwen3-235B-A22B "
      "--batch 2048 --seq 4096 --tp 2 --pp 8 --ep 32 --etp 1 --micro-batch 1 --ep-dispatch "
      "hierarchical";
  const std::string q = base + " --interleave 4 --stack nemo-perf-2025";
  const auto on = run_cli("estimate " + q + " --ep-overlap on");
  ASSERT_EQ(on.code, 0) << on.err;
  EXPECT_NE(on.out.find("EP all-to-all overlapped (combined 1F1B)"), std::string::npos) << on.out;
  const auto j_on = nlohmann::json::parse(run_cli("estimate " + q + " --ep-overlap on --json").out);
  const auto j_off = nlohmann::json::parse(run_cli("estimate " + q + " --json").out);
  EXPECT_TRUE(j_on["ep_overlap"].get<bool>());
  EXPECT_FALSE(j_off["ep_overlap"].get<bool>());
  EXPECT_LT(j_on["iteration_time_s"].get<double>(), j_off["iteration_time_s"].get<double>());
  EXPECT_LT(j_on["breakdown"]["ep_comm_s"].get<double>(),
            j_off["breakdown"]["ep_comm_s"].get<double>());
  expect_error_prefix("estimate " + base + " --interleave 4 --ep-overlap on",
                      "--ep-overlap: stack megatron-core-2024 has no combined 1F1B overlap");
  expect_error_prefix("estimate " + base + " --stack nemo-perf-2025 --ep-overlap on",
                      "--ep-overlap: combined 1F1B needs interleaving when pipelined (pp = 8");
  expect_error_prefix("estimate " + q + " --ep-overlap yes", "--ep-overlap:");
}

// --fp8-output-layer: Megatron-Core's fp8_output_proj, the output layer under MXFP8 on the stack
// that has it; said in the software line and the JSON, faster than the BF16 head; refused under
// another precision and on a stack without it, naming the option.
TEST(CliStack, Fp8OutputLayerIsSaidAndRefusedWhereItCannotRun) {
  const std::string base =
      "--gpus 64 --gpu GB300 --hb-domain 64 --nic-gbps 800 --switch Q3400 --model Llama-3-8B "
      "--batch 128 --seq 8192 --tp 1 --pp 1 --micro-batch 1";
  const std::string q = base + " --stack nemo-perf-2025 --dtype mxfp8";
  const auto on = run_cli("estimate " + q + " --fp8-output-layer on");
  ASSERT_EQ(on.code, 0) << on.err;
  EXPECT_NE(on.out.find("output layer in MXFP8"), std::string::npos) << on.out;
  const auto j_on =
      nlohmann::json::parse(run_cli("estimate " + q + " --fp8-output-layer on --json").out);
  const auto j_off = nlohmann::json::parse(run_cli("estimate " + q + " --json").out);
  EXPECT_TRUE(j_on["fp8_output_layer"].get<bool>());
  EXPECT_FALSE(j_off["fp8_output_layer"].get<bool>());
  EXPECT_LT(j_on["iteration_time_s"].get<double>(), j_off["iteration_time_s"].get<double>());
  expect_error_prefix("estimate " + base +
                          " --stack nemo-perf-2025 --dtype fp8 "
                          "--fp8-output-layer on",
                      "--fp8-output-layer: the output layer runs in MXFP8 only under MXFP8 "
                      "training (Megatron-Core's fp8_output_proj): got --dtype fp8");
  expect_error_prefix("estimate " + base + " --dtype fp8 --fp8-output-layer on",
                      "--fp8-output-layer: stack megatron-core-2024 runs the output layer in "
                      "BF16 only");
  expect_error_prefix("estimate " + q + " --fp8-output-layer yes", "--fp8-output-layer:");
}

// torchtitan-2024's fp8 casts run as kernels of their own (torchao): said in the software line
// under fp8 and in the JSON always, charged only under fp8, and a stack file saying so without fp8
// GEMMs is refused naming the field.
TEST(CliStack, SeparateFp8CastsAreSaidAndCharged) {
  const std::string base =
      "--gpus 8 --gpu H100-SXM-96GB --hb-domain 8 --model Llama-3-8B --batch 16 --seq 8192 --tp 1 "
      "--pp 1 --micro-batch 2 --compile on --stack ";
  const auto fp8 = run_cli("estimate " + base + "torchtitan-2024 --dtype fp8");
  ASSERT_EQ(fp8.code, 0) << fp8.err;
  EXPECT_NE(fp8.out.find("fp8 casts in kernels of their own (torchao)"), std::string::npos)
      << fp8.out;
  const auto bf16 = run_cli("estimate " + base + "torchtitan-2024");
  EXPECT_EQ(bf16.out.find("fp8 casts"), std::string::npos) << bf16.out;
  const auto json = [&](const std::string& stack) {
    return nlohmann::json::parse(run_cli("estimate " + base + stack + " --dtype fp8 --json").out);
  };
  const auto titan = json("torchtitan-2024");
  EXPECT_EQ(titan["fp8_casts"], "separate");
  // The same stack with fused casts is faster, by the casts' element-wise time alone: 6.3 GB per
  // layer at 2.4 TB/s, 7% of this iteration (no recomputation).
  const std::string path = "/tmp/railsim_cli_casts_" + std::to_string(::getpid()) + ".json";
  nlohmann::json st = nlohmann::json::parse(run_cli("presets stacks torchtitan-2024").out);
  st["fp8_casts"] = "fused";
  std::ofstream(path) << st.dump();
  const auto fused = json(path);
  EXPECT_EQ(fused["fp8_casts"], "fused");
  EXPECT_NEAR(titan["iteration_time_s"].get<double>() / fused["iteration_time_s"].get<double>(),
              1.069, 0.005);
  st["fp8_casts"] = "separate";
  st["knobs"]["fp8"] = false;
  std::ofstream(path) << st.dump();
  expect_error_prefix("estimate " + base + path, "stack.fp8_casts: separate needs knobs.fp8: true");
  std::remove(path.c_str());
}

TEST(CliStack, MalformedStackFileNamesTheField) {
  const std::string path = "/tmp/railsim_cli_stack_" + std::to_string(::getpid()) + ".json";
  auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  const auto preset = nlohmann::json::parse(run_cli("presets stacks megatron-core-2024").out);
  nlohmann::json j = preset;
  j["knobs"].erase("fp8");
  write(j.dump());
  expect_error_prefix(std::string("estimate ") + kMegatron175Small + " --stack " + path,
                      "stack.knobs.fp8: missing required field");
  j = preset;
  j["knobs"]["tp_comm_overlap"] = "yes";
  write(j.dump());
  expect_error_prefix(std::string("estimate ") + kMegatron175Small + " --stack " + path,
                      "stack.knobs.tp_comm_overlap:");
  j = preset;
  j["knobs"]["pp_comm_overlap"] = 1;
  write(j.dump());
  expect_error_prefix(std::string("plan ") + kMegatron175Small + " --stack " + path,
                      "stack.knobs.pp_comm_overlap:");
  j = preset;
  j["knobs"]["interleave"] = false;  // the sends overlap only in interleaved pipelines
  write(j.dump());
  expect_error_prefix(std::string("estimate ") + kMegatron175Small + " --stack " + path,
                      "stack.knobs.pp_comm_overlap: true needs interleave: true");
  j = preset;
  j["knobs"]["uneven_stages"] = "yes";
  write(j.dump());
  expect_error_prefix(std::string("plan ") + kMegatron175Small + " --stack " + path,
                      "stack.knobs.uneven_stages:");
  j = preset;
  j["knobs"]["flash_attention"] = false;  // its default says on
  write(j.dump());
  expect_error_prefix(std::string("plan ") + kMegatron175Small + " --stack " + path,
                      "stack.defaults.flash_attention:");
  j = preset;
  j["name"] = "my-stack";
  j["knobs"]["sequence_parallel"] = false;
  j["knobs"]["tp_comm_overlap"] = false;  // it overlaps SP's collectives
  j["defaults"]["sp"] = false;
  write(j.dump());
  const auto ok =
      run_cli(std::string("estimate ") + kMegatron175Small + " --stack " + path + " --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["stack"], "my-stack");
  EXPECT_EQ(nlohmann::json::parse(ok.out)["strategy"]["sp"], false);
  std::remove(path.c_str());
}
