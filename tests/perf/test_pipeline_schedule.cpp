// Pipeline schedules besides 1F1B: ZB-H1 and ZB-V (Qi et al., Zero Bubble Pipeline Parallelism,
// ICLR 2024) and DualPipe (DeepSeek-V3 Technical Report, arXiv 2412.19437, Sec. 3.2.1, Table 2).
// The bubble follows each paper's formula in units of the stage's forward F, backward B and
// weight-gradient W; DualPipe doubles the weights and keeps p + 1 micro-batches in flight and hides
// the EP and PP communication behind the other micro-batch's computation.
#include <gtest/gtest.h>

#include "../common/error_of.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/search.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
Stack with_schedules() {
  Stack st;
  st.name = "test-schedules";
  st.knobs.zb_h1 = true;
  st.knobs.zb_v = true;
  st.knobs.dualpipe = true;
  return st;
}

Strategy gpt_strategy(PipelineSchedule sch) {
  Strategy s{.tp = 8, .pp = 8, .dp = 1, .recompute = Recompute::selective, .sp = true};
  s.schedule = sch;
  return s;
}
}  // namespace

// GPT-3 175B (96 layers, 12 per stage) on 64 A100, 32 micro-batches. A GEMM-dominated layer
// has F : B : W close to 1 : 2 : 1 (two backward GEMMs per forward one, W one of them), so ZB-H1
// leaves about (1 + 2 - 2) / 3 = 1/3 of 1F1B's bubble and DualPipe (p/2 - 1)(1 + 4 - 3) /
// ((p - 1) 3) = 2/7 at p = 8; attention and element-wise work sit in F and B only, which raises
// both shares a little. The busy time and ZB-H1's memory are 1F1B's.
TEST(PipelineSchedule, ZeroBubbleAndDualPipeShrinkTheBubbleByTheirFormulas) {
  Model m = load_model("GPT-3-175B");
  m.vocab = 1;  // no output-layer imbalance in the bubble entry
  const spec::Cluster c = test::cluster("A100-SXM-80GB", 64, 8, 200);
  const auto d = test::design(spec::DesignKind::rail_optimized);
  const Training tr = make_training(32, 2048, with_schedules());
  const IterationTime base = estimate(m, tr, gpt_strategy(PipelineSchedule::one_f_one_b), c, d);
  const IterationTime zb = estimate(m, tr, gpt_strategy(PipelineSchedule::zb_h1), c, d);
  const IterationTime dual = estimate(m, tr, gpt_strategy(PipelineSchedule::dualpipe), c, d);
  const double r_zb = zb.breakdown.bubble_s / base.breakdown.bubble_s;
  const double r_dual = dual.breakdown.bubble_s / base.breakdown.bubble_s;
  EXPECT_GT(r_zb, 1.0 / 3.0);
  EXPECT_LT(r_zb, 0.45);
  EXPECT_GT(r_dual, 2.0 / 7.0);
  EXPECT_LT(r_dual, 0.40);
  EXPECT_DOUBLE_EQ(zb.breakdown.compute_s, base.breakdown.compute_s);
  EXPECT_DOUBLE_EQ(zb.memory.total(), base.memory.total());
  EXPECT_LT(zb.iteration_time_s, base.iteration_time_s);
  for (const IterationTime* it : {&base, &zb, &dual})
    EXPECT_NEAR(it->breakdown.total(), it->iteration_time_s, 1e-9 * it->iteration_time_s);
}

// ZB-V on the same job: each GPU holds two half-stages in a V, so its chunk passes are half a
// stage's, and the ZB-V order (perf::zbv_idle) leaves about the last GPU's late start, (p - 1) F/2
// with F : B - W : W near 1 : 1 : 1, a sixth of 1F1B's bubble and half of ZB-H1's; attention and
// element-wise work in F and B raise it a little. Every GPU holds p micro-batches of its stage,
// 1F1B's peak; the V crosses each pair of neighbouring stages twice per pass: twice the PP bytes.
TEST(PipelineSchedule, ZeroBubbleVHalvesZeroBubbleH1sBubbleAtOneFOneBsPeakMemory) {
  Model m = load_model("GPT-3-175B");
  m.vocab = 1;
  const spec::Cluster c = test::cluster("A100-SXM-80GB", 64, 8, 200);
  const auto d = test::design(spec::DesignKind::rail_optimized);
  const Training tr = make_training(32, 2048, with_schedules());
  const Strategy one_s = gpt_strategy(PipelineSchedule::one_f_one_b);
  const Strategy v_s = gpt_strategy(PipelineSchedule::zb_v);
  const IterationTime base = estimate(m, tr, one_s, c, d);
  const IterationTime zb = estimate(m, tr, gpt_strategy(PipelineSchedule::zb_h1), c, d);
  const IterationTime v = estimate(m, tr, v_s, c, d);
  const double r_v = v.breakdown.bubble_s / base.breakdown.bubble_s;
  EXPECT_GT(r_v, 1.0 / 6.0);
  EXPECT_LT(r_v, 0.25);
  EXPECT_LT(v.breakdown.bubble_s, 0.7 * zb.breakdown.bubble_s);
  EXPECT_DOUBLE_EQ(v.breakdown.compute_s, base.breakdown.compute_s);
  EXPECT_DOUBLE_EQ(v.memory.total(), base.memory.total());
  EXPECT_NEAR(v.breakdown.pp_comm_s, 2.0 * base.breakdown.pp_comm_s,
              1e-9 * base.breakdown.pp_comm_s);
  EXPECT_LT(v.iteration_time_s, zb.iteration_time_s);
  EXPECT_NEAR(v.breakdown.total(), v.iteration_time_s, 1e-9 * v.iteration_time_s);
  const Placement pl(c, one_s.degrees());
  auto pp_bytes = [&](const Strategy& x) {
    double b = 0;
    for (const CommOp& op : build_comm_schedule(m, tr, x, pl))
      if (op.parallelism == Parallelism::pp) b += op_wire_bytes(op, pl);
    return b;
  };
  EXPECT_DOUBLE_EQ(pp_bytes(v_s), 2.0 * pp_bytes(one_s));
  // Its first GPU also holds the output layer: an untied one (Llama) adds its bf16 weights and
  // fp32 gradients there; a tied one (GPT-3, above) is the embedding itself.
  const Model llama = load_model("Llama-3-70B");  // 80 layers, untied, vocabulary 128,256
  const MemoryUse one_l = memory_use(llama, tr, one_s), v_l = memory_use(llama, tr, v_s);
  const double head = 128256.0 * 8192.0 / 8.0;  // parameters per GPU at tp 8
  EXPECT_NEAR(v_l.weights_bytes - one_l.weights_bytes, 2.0 * head, 1e-6 * head);
  EXPECT_NEAR(v_l.gradients_bytes - one_l.gradients_bytes, 4.0 * head, 1e-6 * head);
}

// ZB-V's rules: 2 pp chunks of at least one layer, no interleaving (the V is its two chunks), a
// stack that has it, not under combined 1F1B, and up to kZbvMaxStages stages; each error names
// the option.
TEST(PipelineSchedule, ZeroBubbleVRefusesWhatItCannotRun) {
  const Model m = load_model("GPT-3-175B");
  const Training tr = make_training(32, 2048, with_schedules());
  Strategy s = gpt_strategy(PipelineSchedule::zb_v);
  EXPECT_EQ(test::error_of([&] { validate_stack(m, tr, s); }), "");
  Model shallow = m;
  shallow.layers = 12;
  EXPECT_EQ(test::error_of([&] { validate_stack(shallow, tr, s); }),
            "--pp-schedule: zb-v cuts the model into 2 pp = 16 chunks but it has 12 layers (use "
            "pp <= 6)");
  Model deep = m;
  deep.layers = 2000;
  Strategy deep_s = s;
  deep_s.pp = 600;
  EXPECT_EQ(test::error_of([&] { validate_stack(deep, tr, deep_s); }),
            "--pp-schedule: zb-v is timed up to pp 512 (pp = 600)");
  s.interleave = 2;
  EXPECT_EQ(test::error_of([&] { validate_stack(m, tr, s); }),
            "--pp-schedule: zb-v runs without interleaving (interleave = 2; use 1)");
  s.interleave = 1;
  Stack plain = with_schedules();
  plain.knobs.zb_v = false;
  EXPECT_EQ(test::error_of([&] { validate_stack(m, make_training(32, 2048, plain), s); }),
            "--pp-schedule: stack test-schedules has no zb-v schedule (use 1f1b)");
  const Model moe = load_model("Mixtral-8x7B");
  Stack overlap = with_schedules();
  overlap.knobs.ep_overlap = true;
  overlap.defaults.ep_overlap = true;
  Strategy moe_s{.tp = 1, .pp = 4, .dp = 64, .ep = 8};
  moe_s.schedule = PipelineSchedule::zb_v;
  EXPECT_EQ(test::error_of([&] {
              validate_stack(moe, make_training(512, 4096, overlap), moe_s);
            }).substr(0, 68),
            "--ep-overlap: combined 1F1B is a 1F1B schedule: it does not run with");
}

// The search visits ZB-V where the stack has it and the model has two layers per stage, and on
// this pipelined job ranks it first: the smallest bubble at 1F1B's memory.
TEST(PipelineSchedule, SearchRanksZeroBubbleVWhereTheStackHasIt) {
  const Model m = load_model("GPT-3-175B");
  const spec::Cluster c = test::cluster("A100-SXM-80GB", 64, 8, 200);
  Stack without = with_schedules();
  without.knobs.zb_v = false;
  PlanOptions po;
  po.threads = 1;
  po.pins = parse_plan_text("tp8 pp8 mb1 v1", "--against");
  const EstimateContext with_v = make_context(m, make_training(32, 2048, with_schedules()), c,
                                              test::design(spec::DesignKind::rail_optimized));
  const EstimateContext no_v = make_context(m, make_training(32, 2048, without), c,
                                            test::design(spec::DesignKind::rail_optimized));
  const PlanResult r = plan(with_v, po);
  ASSERT_FALSE(r.plans.empty());
  EXPECT_EQ(r.plans.front().strategy.schedule, PipelineSchedule::zb_v);
  EXPECT_GT(count_strategies(with_v, po.pins), count_strategies(no_v, po.pins));
  EXPECT_EQ(count_strategies(with_v, po.pins), r.evaluated);
}

// DualPipe's memory (DeepSeek-V3 report, Table 2): parameters 2x (each GPU holds the stage of
// both directions: weights and gradients twice, one optimizer state), activations of p + 1
// micro-batches against 1F1B's p.
TEST(PipelineSchedule, DualPipeHoldsTwoCopiesAndOneMoreMicroBatch) {
  const Model m = load_model("GPT-3-175B");  // 96 layers: 12 on every one of 8 stages
  const Training tr = make_training(64, 2048, with_schedules());
  Strategy s = gpt_strategy(PipelineSchedule::one_f_one_b);
  s.dp = 2;
  s.dist_opt = true;
  const MemoryUse one = memory_use(m, tr, s);
  s.schedule = PipelineSchedule::dualpipe;
  const MemoryUse dual = memory_use(m, tr, s);
  EXPECT_DOUBLE_EQ(dual.weights_bytes, 2.0 * one.weights_bytes);
  EXPECT_DOUBLE_EQ(dual.gradients_bytes, 2.0 * one.gradients_bytes);
  EXPECT_DOUBLE_EQ(dual.optimizer_bytes, one.optimizer_bytes);
  EXPECT_NEAR(dual.activations_bytes, 9.0 / 8.0 * one.activations_bytes,
              1e-9 * one.activations_bytes);
}

// DualPipe overlaps each micro-batch's all-to-all and PP sends with another micro-batch's
// computation: the PP sends leave the critical path, the EP time exposed is what exceeds the
// computation plus the 20 SMs' slowdown, less than 1F1B's whole all-to-all.
TEST(PipelineSchedule, DualPipeHidesTheAllToAllBehindTheOtherMicroBatch) {
  const Model m = load_model("Mixtral-8x7B");
  const spec::Cluster c = test::cluster("H100-SXM", 256, 8);
  const auto d = test::design_spread(spec::DesignKind::rail_only);
  const Training tr = make_training(512, 4096, with_schedules());
  Strategy s{.tp = 1, .pp = 4, .dp = 64, .ep = 8, .recompute = Recompute::selective};
  s.dist_opt = true;
  const IterationTime one = estimate(m, tr, s, c, d);
  s.schedule = PipelineSchedule::dualpipe;
  const IterationTime dual = estimate(m, tr, s, c, d);
  ASSERT_GT(one.breakdown.ep_comm_s, 0);
  ASSERT_GT(one.breakdown.pp_comm_s, 0);
  EXPECT_LT(dual.breakdown.ep_comm_s, one.breakdown.ep_comm_s);
  EXPECT_EQ(dual.breakdown.pp_comm_s, 0.0);
  EXPECT_GT(dual.breakdown.pp_hidden_s, 0.0);
  EXPECT_DOUBLE_EQ(dual.breakdown.compute_s, one.breakdown.compute_s);
  EXPECT_LT(dual.iteration_time_s, one.iteration_time_s);
  EXPECT_NEAR(dual.breakdown.total(), dual.iteration_time_s, 1e-9 * dual.iteration_time_s);
  // The communication is the same bytes: only the schedule changed.
  const Placement pl(c, s.degrees());
  EXPECT_DOUBLE_EQ(wire_bytes(build_comm_schedule(m, tr, s, pl), pl).total(), [&] {
    Strategy x = s;
    x.schedule = PipelineSchedule::one_f_one_b;
    return wire_bytes(build_comm_schedule(m, tr, x, pl), pl).total();
  }());
}

// fp8 dispatch (DeepSeek-V3 report, Sec. 3.3.3): under fp8 training one of each pass's two
// all-to-alls sends fp8 (1 byte), the other bf16: 3/4 of the bf16 bytes; under bf16, unchanged.
TEST(PipelineSchedule, Fp8DispatchSendsThreeQuartersOfTheBytes) {
  const Model m = load_model("Mixtral-8x7B");
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  Stack st = with_schedules();
  Strategy s{.tp = 1, .pp = 1, .dp = 64, .ep = 8};
  const Placement pl(c, s.degrees());
  auto ep_bytes = [&](const Stack& x, Dtype dt) {
    double b = 0;
    for (const CommOp& op : build_comm_schedule(m, make_training(512, 4096, x, dt), s, pl))
      if (op.parallelism == Parallelism::ep) b += op.bytes * op.count;
    return b;
  };
  const double bf16 = ep_bytes(st, Dtype::fp8);
  st.fp8_dispatch = true;
  EXPECT_DOUBLE_EQ(ep_bytes(st, Dtype::fp8), 0.75 * bf16);
  EXPECT_DOUBLE_EQ(ep_bytes(st, Dtype::bf16), bf16);
}

// Megatron-Core's combined 1F1B (the stack's ep_overlap): each of a merged pair's four all-to-alls
// (a quarter of the time each) runs under one block of the other micro-batch and stays exposed
// where it outlasts that block; the warm-up forwards and cool-down backwards run alone; the
// all-to-all kernels take 20 of the SMs from the computation they run under.
TEST(CombinedOneFOneB, EachAllToAllHidesUnderItsBlockOfTheOtherMicroBatch) {
  Strategy s{.tp = 2, .pp = 8, .dp = 16, .ep = 32};
  s.interleave = 4;
  const CombinedPairCompute blocks{
      .fwd_attn = 1.0, .fwd_mlp = 2.0, .bwd_attn = 2.0, .bwd_mlp = 4.0};
  // 128 micro-batches of 4 chunks: the first stage's warm-up is 2 (8 - 1) + 3 x 8 = 38 chunks.
  const double paired = 1.0 - 38.0 / 512.0;
  const double sms = 132.0, share = 20.0 / (132.0 - 20.0);
  // 2 s of all-to-all: 0.5 s quarters, each shorter than its block: only the SMs are charged.
  EXPECT_NEAR(combined_1f1b_exposed(s, 128, 2.0, blocks, sms),
              paired * 2.0 * share + (1.0 - paired) * 2.0, 1e-12);
  // 8 s: 2 s quarters outlast the forward's attention block by 1 s; the rest hides.
  EXPECT_NEAR(combined_1f1b_exposed(s, 128, 8.0, blocks, sms),
              paired * (1.0 + 7.0 * share) + (1.0 - paired) * 8.0, 1e-12);
  // Without a pipeline only the first forward and the last backward run alone.
  Strategy flat{.tp = 2, .pp = 1, .dp = 128, .ep = 32};
  EXPECT_NEAR(combined_1f1b_exposed(flat, 16, 2.0, blocks, sms),
              (15.0 / 16.0) * 2.0 * share + (1.0 / 16.0) * 2.0, 1e-12);
  // As many warm-up chunks as chunks: nothing pairs.
  EXPECT_DOUBLE_EQ(combined_1f1b_exposed(s, 9, 2.0, blocks, sms), 2.0);
}

// Qwen3-235B-A22B on 256 H100 (TP 2, EP 32 over 4 nodes, PP 8, VP 4, DeepEP's dispatch), the
// layout of NVIDIA's Megatron-MoE-ModelZoo: combined 1F1B leaves the computation as it was and
// hides most of the all-to-all; it needs interleaving when pipelined and a stack that has it.
TEST(CombinedOneFOneB, HidesTheExpertAllToAllOfAPipelinedMoE) {
  const Model m = load_model("Qwen3-235B-A22B");
  const spec::Cluster c = test::cluster("H100-SXM", 256, 8);
  auto d = test::design(spec::DesignKind::rail_optimized);
  d.routing = spec::Routing::adaptive;
  Stack st = spec::load_stack("nemo-perf-2025");
  st.hierarchical_ep_dispatch = true;
  Strategy s{.tp = 2, .pp = 8, .dp = 16, .ep = 32, .recompute = Recompute::none, .sp = true};
  s.etp = 1;
  s.interleave = 4;
  s.dist_opt = true;
  s.dp_overlap = true;
  const IterationTime plain = estimate(m, make_training(2048, 4096, st), s, c, d);
  st.defaults.ep_overlap = true;
  const Training tr = make_training(2048, 4096, st);
  const IterationTime overlapped = estimate(m, tr, s, c, d);
  EXPECT_DOUBLE_EQ(overlapped.breakdown.compute_s, plain.breakdown.compute_s);
  EXPECT_GT(plain.breakdown.ep_comm_s, 6.0);
  EXPECT_LT(overlapped.breakdown.ep_comm_s, 0.3 * plain.breakdown.ep_comm_s);
  EXPECT_NEAR(overlapped.breakdown.total(), overlapped.iteration_time_s,
              1e-9 * overlapped.iteration_time_s);
  // The published pair: 19.7 s without, 17.6 s with (docs/validation.md): railsim 19.12 s and
  // 14.42 s, a gain of 4.7 s against the measured 2.1 s.
  EXPECT_NEAR(plain.iteration_time_s, 19.12, 0.05);
  EXPECT_NEAR(overlapped.iteration_time_s, 14.42, 0.05);
  // Pipelined without interleaving, Megatron-Core refuses it.
  s.interleave = 1;
  EXPECT_EQ(test::error_of([&] { validate(m, tr, s, c); }).substr(0, 55),
            "--ep-overlap: combined 1F1B needs interleaving when pip");
}
