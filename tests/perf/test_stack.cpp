// Software stacks in the planner: validate() names a knob the stack lacks, the search never
// returns a strategy its stack cannot run (property test over random models and clusters), and
// the FSDP stack's full sharding has the schedule and memory of ZeRO-3.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "../common/error_of.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/tables.hpp"
#include "railsim/spec/preset.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;
using test::field_of;

namespace {
// What each stack can run, written out here independently of perf::validate.
bool runs_on(const Model& m, const Training& tr, const Strategy& s) {
  const spec::StackKnobs& k = tr.stack.knobs;
  if (s.pp > 1 && !k.pipeline) return false;
  if (s.interleave > 1 && !k.interleave) return false;
  if (!k.uneven_stages && (m.layers % s.pp != 0 || m.layers % (s.pp * s.interleave) != 0))
    return false;
  if (s.sp && !k.sequence_parallel) return false;
  if (s.recompute == Recompute::selective && !k.selective_recompute) return false;
  if (s.recompute == Recompute::op && !k.op_recompute) return false;
  if (s.recompute == Recompute::layer && !k.layer_recompute) return false;
  if (s.recompute == Recompute::qkv && !k.qkv_recompute) return false;
  if (s.dist_opt && k.distributed_optimizer == spec::Sharding::none) return false;
  if (s.dp_overlap && !k.dp_overlap) return false;
  if (tr.flash_attention && !k.flash_attention) return false;
  if (tr.dtype == Dtype::fp8 && !k.fp8) return false;
  if (s.schedule == PipelineSchedule::zb_h1 && (!k.zb_h1 || s.pp == 1 || s.interleave > 1))
    return false;
  if (s.schedule == PipelineSchedule::zb_v &&
      (!k.zb_v || s.pp == 1 || s.interleave > 1 || m.layers < 2 * s.pp))
    return false;
  if (s.schedule == PipelineSchedule::dualpipe &&
      (!k.dualpipe || s.pp % 2 != 0 || s.interleave > 1 || s.micro_batches(tr) % 2 != 0))
    return false;
  return true;
}

// The computation seconds of Llama 3 8B on 8 GPUs of `c` under `stack` (DP 8, one 8,192-token
// sequence per GPU, selective recompute): the job the attention-kernel tests compare across
// stacks whose only difference on it is the attention kernel.
double llama8b_compute_s(const Stack& st, const spec::Cluster& c) {
  Strategy s{.dp = 8};
  s.recompute = Recompute::selective;
  s.dist_opt = true;
  s.dp_overlap = true;
  return estimate(load_model("Llama-3-8B"), make_training(8, 8192, st, {}, {}, st.knobs.compile), s,
                  c, test::design(spec::DesignKind::rail_optimized))
      .breakdown.compute_s;
}
double llama8b_compute_s(const char* stack, const spec::Cluster& c) {
  return llama8b_compute_s(load_stack(stack), c);
}
}  // namespace

TEST(Stack, ValidateNamesTheKnobTheStackLacks) {
  const Model m175 = load_model("Megatron-175B");  // 96 layers
  const spec::Cluster c = test::cluster("A100-SXM-80GB", 64, 8, 200);
  const Training y21 = make_training(64, 2048, load_stack("megatron-lm-2021"));
  Strategy s{.tp = 8, .pp = 8, .dp = 1, .recompute = Recompute::full};
  s.interleave = 3;  // 96 = 8 x 3 x 4: runs
  EXPECT_EQ(field_of([&] { validate(m175, y21, s, c); }), "(no error)");
  s.interleave = 5;  // 40 does not divide 96
  EXPECT_EQ(field_of([&] { validate(m175, y21, s, c); }), "--interleave");
  s.interleave = 1;
  s.sp = true;
  EXPECT_EQ(field_of([&] { validate(m175, y21, s, c); }), "--sp");
  s.sp = false;
  s.recompute = Recompute::selective;
  EXPECT_EQ(field_of([&] { validate(m175, y21, s, c); }), "--recompute");
  s.recompute = Recompute::full;
  s.dp_overlap = true;
  EXPECT_EQ(field_of([&] { validate(m175, y21, s, c); }), "--dp-overlap");
  s.dp_overlap = false;
  s.dist_opt = true;
  EXPECT_EQ(field_of([&] { validate(m175, y21, s, c); }), "--dist-opt");
  // 126 layers on 16 stages: uneven, which megatron-core-2024 runs and megatron-lm-2022 does not.
  const Model l405 = load_model("Llama-3-405B");
  const spec::Cluster h = test::cluster("H100-SXM", 2048, 8);
  Strategy u{.tp = 8, .pp = 16, .dp = 16, .interleave = 2, .recompute = Recompute::selective};
  EXPECT_EQ(field_of([&] { validate(l405, make_training(2048, 8192, Stack{}), u, h); }),
            "(no error)");
  EXPECT_EQ(field_of([&] {
              validate(l405, make_training(2048, 8192, load_stack("megatron-lm-2022")), u, h);
            }),
            "--pp");
  EXPECT_EQ(
      field_of([&] { validate(l405, make_training(2048, 8192, load_stack("fsdp-2024")), u, h); }),
      "--pp");
  // A pinned knob the stack lacks is named before any search.
  StrategyPins pins;
  pins.sp = true;
  EXPECT_EQ(field_of([&] { check_pins(m175, y21, pins); }), "--sp");
  EXPECT_EQ(field_of([&] { (void)default_strategy(m175, y21, pins, c); }), "--sp");
  const PlanResult none =
      plan(make_context(m175, y21, c, test::design(spec::DesignKind::rail_only)),
           PlanOptions{pins, 1, 1});
  EXPECT_TRUE(none.plans.empty());
  EXPECT_EQ(explain_no_plan(none, m175, y21, pins, c).field(), "--sp");
}

TEST(Stack, DefaultStrategyTakesTheStackDefaults) {
  const Model m = load_model("GPT-3-175B");
  const spec::Cluster c = test::cluster("H100-SXM", 1024, 8);
  const Strategy core = default_strategy(m, make_training(1024, 2048, Stack{}), {}, c);
  EXPECT_EQ(core.recompute, Recompute::selective);
  EXPECT_TRUE(core.sp && core.dist_opt && core.dp_overlap);
  const Strategy y21 =
      default_strategy(m, make_training(1024, 2048, load_stack("megatron-lm-2021")), {}, c);
  EXPECT_EQ(y21.recompute, Recompute::full);
  EXPECT_FALSE(y21.sp || y21.dist_opt || y21.dp_overlap);
}

TEST(Stack, PlannerNeverReturnsAStrategyItsStackCannotRun) {
  std::mt19937_64 rng(20240613);
  const std::vector<std::string> stacks = spec::preset_names("stacks");
  const std::vector<std::int64_t> heads = {8, 12, 16, 24, 32, 48, 64, 96};
  auto pick = [&](auto lo, auto hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  std::int64_t returned = 0, pipelined = 0, interleaved = 0, dualpipe = 0, per_op_or_layer = 0;
  for (int trial = 0; trial < 160; ++trial) {
    Model m;
    m.name = "random";
    m.layers = pick(1, 100);
    m.heads = heads[static_cast<std::size_t>(pick(0, 7))];
    m.kv_heads = m.heads;
    m.hidden = m.heads * 128;
    m.ffn_hidden = 4 * m.hidden;
    m.vocab = 51200;
    m.seq_len = 2048;
    if (pick(0, 3) == 0) {
      m.experts = 8;
      m.top_k = 2;
      m.expert_ffn_hidden = m.ffn_hidden;
      m.moe_every = 2;
      if (m.layers < 2) m.layers = 2;
    }
    const std::int64_t k = pick(0, 1) ? 8 : 4;
    const spec::Cluster c = test::cluster("H100-SXM", k * pick(1, 64), k);
    const spec::Stack st =
        load_stack(stacks[static_cast<std::size_t>(pick(0, std::ssize(stacks) - 1))]);
    const std::optional<Dtype> dtype =
        st.knobs.fp8 && pick(0, 1) ? std::optional(Dtype::fp8) : std::nullopt;
    const Training tr = make_training(std::int64_t{64} << pick(0, 5), 2048, st, dtype);
    const auto kind = static_cast<spec::DesignKind>(pick(0, 2));
    PlanOptions po;
    po.top = 25;
    po.threads = 1;
    const PlanResult r = plan(make_context(m, tr, c, test::design(kind)), po);
    for (const Plan& p : r.plans) {
      ++returned;
      pipelined += p.strategy.pp > 1;
      interleaved += p.strategy.interleave > 1;
      dualpipe += p.strategy.schedule == PipelineSchedule::dualpipe;
      per_op_or_layer +=
          p.strategy.recompute == Recompute::op || p.strategy.recompute == Recompute::layer;
      EXPECT_TRUE(runs_on(m, tr, p.strategy))
          << st.name << ": " << describe(p.strategy) << " (" << m.layers << " layers)";
      EXPECT_NO_THROW(validate(m, tr, p.strategy, c));
      EXPECT_FALSE(std::isnan(p.time.iteration_time_s));
    }
  }
  // Not vacuous: plans came back, some of them pipelined and interleaved.
  EXPECT_GT(returned, 1000);
  EXPECT_GT(pipelined, 50);
  EXPECT_GT(interleaved, 10);
  EXPECT_GT(dualpipe, 10);
  EXPECT_GT(per_op_or_layer, 10);
}

TEST(Stack, FsdpShardsEverythingAndGathersPerMicroBatch) {
  const Model m = load_model("Llama-3-8B");
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  const Training fsdp = make_training(256, 8192, load_stack("fsdp-2024"));
  const Training core = make_training(256, 8192, Stack{});
  Strategy s{.tp = 8, .dp = 8};
  s.micro_batch = 2;  // m = 256 / (8 x 2) = 16 micro-batches
  s.recompute = Recompute::selective;
  s.sp = true;
  s.dist_opt = true;
  s.dp_overlap = true;
  validate(m, fsdp, s, c);
  const Placement pl(c, s.degrees(), PlacementKind::rail_aligned);
  const CommSchedule zero3 = build_comm_schedule(m, fsdp, s, pl);
  const CommSchedule zero1 = build_comm_schedule(m, core, s, pl);
  // ZeRO-1's reduce-scatter carries the fp32 gradients of this GPU's weights: 4 P bytes.
  double p_gpu = 0;
  for (const CommOp& op : zero1)
    if (op.parallelism == Parallelism::dp && op.op == CollectiveOp::reduce_scatter)
      p_gpu = op.bytes / 4.0;
  ASSERT_GT(p_gpu, 0);
  int gathers = 0, scatters = 0;
  for (const CommOp& op : zero3) {
    if (op.parallelism != Parallelism::dp) continue;
    EXPECT_DOUBLE_EQ(op.count, 16.0);
    if (op.op == CollectiveOp::all_gather) {
      ++gathers;
      EXPECT_DOUBLE_EQ(op.bytes, 2.0 * p_gpu);
    } else {
      ++scatters;
      EXPECT_EQ(op.op, CollectiveOp::reduce_scatter);
      EXPECT_EQ(op.phase, Phase::backward);
      EXPECT_DOUBLE_EQ(op.bytes, 4.0 * p_gpu);
    }
  }
  EXPECT_EQ(gathers, 2);  // before the forward and before the backward
  EXPECT_EQ(scatters, 1);
  // Memory: 16 bytes per parameter over dp (fp32 weights, fp32 gradients, Adam's moments: no
  // persistent bf16 copy), plus two gathered units (bf16 weights and fp32 gradients, 6 bytes per
  // parameter) of the largest of a layer and the embedding.
  const double emb = static_cast<double>(m.vocab * m.hidden) * 2 / 8;  // untied: 2 V h / t
  const double layer = (p_gpu - emb) / static_cast<double>(m.layers);
  const double unit = std::max(layer, emb);
  const MemoryUse mem = memory_use(m, fsdp, s);
  EXPECT_NEAR(mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes,
              16.0 * p_gpu / 8.0 + 12.0 * unit, 1e-6 * p_gpu);
  const MemoryUse mem1 = memory_use(m, core, s);
  EXPECT_NEAR(mem1.weights_bytes + mem1.gradients_bytes + mem1.optimizer_bytes,
              6.0 * p_gpu + 12.0 * p_gpu / 8.0, 1e-6 * p_gpu);
  // The time model sees the per-micro-batch gathers: more DP bytes than ZeRO-1.
  EXPECT_GT(wire_bytes(zero3, pl).total(), wire_bytes(zero1, pl).total());
  const IterationTime it = estimate(m, fsdp, s, c, test::design(spec::DesignKind::rail_only));
  EXPECT_NEAR(it.breakdown.total(), it.iteration_time_s, 1e-9 * it.iteration_time_s);
}

// ZeRO-2 (a stack whose distributed optimizer shards "gradients"): the weights stay whole, the
// gradients are reduce-scattered after every micro-batch's backward into an fp32 shard, and the
// updated weights are all-gathered once after the step. Memory: 2 bytes of bf16 weights per
// parameter, 16 over dp (fp32 gradient shard and Adam's 12), two units of gradients in flight.
TEST(Stack, ZeroTwoShardsGradientsAndReducesPerMicroBatch) {
  const Model m = load_model("Llama-3-8B");
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  Stack zero2_stack;
  zero2_stack.name = "zero2";
  zero2_stack.knobs.distributed_optimizer = spec::Sharding::gradients;
  const Training zero2 = make_training(256, 8192, zero2_stack);
  const Training core = make_training(256, 8192, Stack{});
  Strategy s = test::megatron_core_strategy(8, 1, 8, 1);
  s.micro_batch = 2;  // m = 16 micro-batches
  validate(m, zero2, s, c);
  const Placement pl(c, s.degrees(), PlacementKind::rail_aligned);
  double p_gpu = 0;
  for (const CommOp& op : build_comm_schedule(m, core, s, pl))
    if (op.parallelism == Parallelism::dp && op.op == CollectiveOp::reduce_scatter)
      p_gpu = op.bytes / 4.0;
  ASSERT_GT(p_gpu, 0);
  int gathers = 0, scatters = 0;
  for (const CommOp& op : build_comm_schedule(m, zero2, s, pl)) {
    if (op.parallelism != Parallelism::dp) continue;
    if (op.op == CollectiveOp::reduce_scatter) {
      ++scatters;
      EXPECT_EQ(op.phase, Phase::backward);
      EXPECT_DOUBLE_EQ(op.count, 16.0);
      EXPECT_DOUBLE_EQ(op.bytes, 4.0 * p_gpu);
    } else {
      ++gathers;
      EXPECT_EQ(op.op, CollectiveOp::all_gather);
      EXPECT_EQ(op.phase, Phase::optimizer);
      EXPECT_DOUBLE_EQ(op.count, 1.0);
      EXPECT_DOUBLE_EQ(op.bytes, 2.0 * p_gpu);
    }
  }
  EXPECT_EQ(gathers, 1);
  EXPECT_EQ(scatters, 1);
  const double emb = static_cast<double>(m.vocab * m.hidden) * 2 / 8;
  const double unit = std::max((p_gpu - emb) / static_cast<double>(m.layers), emb);
  const MemoryUse mem = memory_use(m, zero2, s);
  EXPECT_NEAR(mem.weights_bytes, 2.0 * p_gpu, 1e-6 * p_gpu);
  EXPECT_NEAR(mem.gradients_bytes + mem.optimizer_bytes, 16.0 * p_gpu / 8.0 + 8.0 * unit,
              1e-6 * p_gpu);
  EXPECT_DOUBLE_EQ(mem.activations_bytes, memory_use(m, core, s).activations_bytes);
  const IterationTime it = estimate(m, zero2, s, c, test::design(spec::DesignKind::rail_only));
  EXPECT_NEAR(it.breakdown.total(), it.iteration_time_s, 1e-9 * it.iteration_time_s);
}

TEST(Stack, FsdpSearchKeepsOneStage) {
  const Model m = load_model("Llama-3-70B");
  const spec::Cluster c = test::cluster("H100-SXM", 256, 8);
  const Training tr = make_training(512, 8192, load_stack("fsdp-2024"));
  PlanOptions po;
  po.top = 20;
  const PlanResult r = plan(make_context(m, tr, c, test::design(spec::DesignKind::rail_only)), po);
  ASSERT_FALSE(r.plans.empty());
  for (const Plan& p : r.plans) EXPECT_EQ(p.strategy.pp, 1);
  // 70B with 18 bytes per parameter is 1.26 TB: only full sharding fits it on one stage.
  EXPECT_TRUE(r.plans.front().strategy.dist_opt);
}

// A bf16 gradient buffer (NVIDIA's performance recipes): the DP reduce-scatter carries 2 bytes per
// parameter instead of 4, and memory follows Megatron-LM's table for the distributed optimizer:
// 2 + 2 + 16/d bytes per parameter at the step against 2 + 4 + 12/d. The 4/d of the bf16 buffer's
// fp32 copy exist only during the step, when the activations are freed: the peak holds the larger
// of the two, not their sum.
TEST(Stack, Bf16GradientsHalveTheReductionAndFollowMegatronsMemoryTable) {
  const Model m = load_model("Llama-3-8B");
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  const Training fp32 = make_training(256, 8192, Stack{});
  const Training bf16 = make_training(256, 8192, load_stack("nemo-perf-2025"));
  Strategy s{.tp = 8, .dp = 8};
  s.recompute = Recompute::selective;
  s.sp = true;
  s.dist_opt = true;
  s.dp_overlap = true;
  const Placement pl(c, s.degrees(), PlacementKind::rail_aligned);
  auto rs_bytes = [&](const Training& tr) {
    for (const CommOp& op : build_comm_schedule(m, tr, s, pl))
      if (op.parallelism == Parallelism::dp && op.op == CollectiveOp::reduce_scatter)
        return op.bytes;
    return 0.0;
  };
  EXPECT_DOUBLE_EQ(rs_bytes(bf16), rs_bytes(fp32) / 2.0);
  const double p = rs_bytes(fp32) / 4.0;  // parameters per GPU
  const MemoryUse a = memory_use(m, fp32, s), b = memory_use(m, bf16, s);
  EXPECT_NEAR(a.weights_bytes + a.gradients_bytes + a.optimizer_bytes, (6.0 + 12.0 / 8.0) * p,
              1e-6 * p);
  EXPECT_NEAR(b.weights_bytes + b.gradients_bytes + b.optimizer_bytes + b.step_bytes,
              (4.0 + 16.0 / 8.0) * p, 1e-6 * p);
  EXPECT_NEAR(b.step_bytes, 4.0 / 8.0 * p, 1e-6 * p);
  EXPECT_DOUBLE_EQ(a.step_bytes, 0.0);  // fp32 gradients: the optimizer steps on the buffer itself
  EXPECT_DOUBLE_EQ(a.activations_bytes, b.activations_bytes);
  ASSERT_GT(b.activations_bytes, b.step_bytes);
  EXPECT_DOUBLE_EQ(b.total(), b.weights_bytes + b.gradients_bytes + b.optimizer_bytes +
                                  b.activations_bytes + b.reserved_bytes);
  // With the activations smaller than the copy (one micro-batch of 256 tokens, full recompute),
  // the copy is the peak's second part instead.
  Strategy f = s;
  f.recompute = Recompute::full;
  const MemoryUse small = memory_use(m, make_training(64, 256, load_stack("nemo-perf-2025")), f);
  ASSERT_LT(small.activations_bytes, small.step_bytes);
  EXPECT_DOUBLE_EQ(small.total(), small.weights_bytes + small.gradients_bytes +
                                      small.optimizer_bytes + small.step_bytes +
                                      small.reserved_bytes);
}

// FlashAttention-2-class kernels (PyTorch stacks) run attention at the GPU's flash_attention_fa2
// fraction: on H100 0.35 of peak against the fused kernels' 0.55, so the same strategy's
// attention core takes 0.55 / 0.35 as long; nothing else changes (TorchTitan under torch.compile,
// whose element-wise kernels are fused as fsdp-2024's).
TEST(Stack, Fa2AttentionRunsAtItsOwnFraction) {
  const spec::Cluster c = test::cluster("H100-SXM", 8, 8);
  ASSERT_DOUBLE_EQ(c.gpu.eff.flash_attention, 0.55);
  ASSERT_DOUBLE_EQ(c.gpu.eff.flash_attention_fa2, 0.35);
  // Only the attention core differs: forward 0.5 x 4 T s h / t FLOPs per layer (causal flash,
  // docs/model.md section 3) and 2.5 x that backward at 0.86 of the forward's rate, at the
  // kernel's fraction of the bf16 peak; one micro-batch of one 8,192-token sequence per GPU, 32
  // layers.
  const double seq = 8192, h = 4096;
  const double core_flops = (1.0 + 2.5 / 0.86) * 0.5 * 4.0 * seq * seq * h * 32.0;
  EXPECT_NEAR(llama8b_compute_s("torchtitan-2024", c) - llama8b_compute_s("fsdp-2024", c),
              core_flops / 989e12 * (1.0 / 0.35 - 1.0 / 0.55), 1e-9);
}

// FlashAttention-1-class kernels (LLM Foundry's Triton port) run at half the rate of the
// FlashAttention-2 class on the same GPU, forward and backward alike (Dao 2023: FlashAttention-2
// "around 2x" FlashAttention), unless the preset gives a fraction of its own: the same job on
// TorchTitan with its kernel set to fa1 takes the FA2-class attention core's time once more.
TEST(Stack, Fa1AttentionRunsAtHalfTheFa2ClassRate) {
  Stack fa1 = load_stack("torchtitan-2024");
  ASSERT_EQ(fa1.attention_kernel, spec::AttentionKernel::fa2);
  fa1.attention_kernel = spec::AttentionKernel::fa1;
  const double seq = 8192, h = 4096;
  const double fwd_flops = 0.5 * 4.0 * seq * seq * h * 32.0;  // causal, 32 layers
  // H100: FA2 class 0.35 forward, backward at 0.86 of it; FA1 class 0.175.
  spec::Cluster c = test::cluster("H100-SXM", 8, 8);
  ASSERT_EQ(c.gpu.eff.flash_attention_fa1, 0.0);
  const double fa2_core_s = (1.0 + 2.5 / 0.86) * fwd_flops / (989e12 * 0.35);
  EXPECT_NEAR(llama8b_compute_s(fa1, c) - llama8b_compute_s("torchtitan-2024", c), fa2_core_s,
              1e-9);
  // A preset's own FA1-class fraction replaces the half.
  c.gpu.eff.flash_attention_fa1 = 0.25;
  EXPECT_NEAR(llama8b_compute_s(fa1, c) - llama8b_compute_s("torchtitan-2024", c),
              fa2_core_s * (0.35 / 0.25 - 1.0), 1e-9);
  // B200's measured FA2-class forward and backward (0.166, 0.133 of 2,250 TFLOP/s): both halve.
  const spec::Cluster b = test::cluster("B200", 8, 8);
  const double b200_fa2_core_s =
      fwd_flops / (2250e12 * 0.166) + 2.5 * fwd_flops / (2250e12 * 0.133);
  EXPECT_NEAR(llama8b_compute_s(fa1, b) - llama8b_compute_s("torchtitan-2024", b), b200_fa2_core_s,
              1e-9);
  // A100 gives no FA2-class fraction: its flash_attention (0.60) is the class's, halved.
  const spec::Cluster a = test::cluster("A100-SXM-80GB", 8, 8);
  ASSERT_EQ(a.gpu.eff.flash_attention_fa2, 0.0);
  EXPECT_NEAR(llama8b_compute_s(fa1, a) - llama8b_compute_s("torchtitan-2024", a),
              (1.0 + 2.5 / 0.86) * fwd_flops / (312e12 * 0.60), 1e-9);
}

// A preset that measured its attention's backward runs it at that fraction, for each kernel: on
// B200 cuDNN's 0.521 forward and 0.419 backward, PyTorch's FlashAttention-2 0.166 and 0.133 (of
// 2,250 TFLOP/s; NVIDIA's cuDNN frontend SDPA benchmark), not 0.86 of the forward's rate. The
// same job on TorchTitan (FA2) and on fsdp-2024 (fused) then differs by exactly the two kernels'
// forward and backward times.
TEST(Stack, MeasuredAttentionBackwardRunsAtItsOwnFraction) {
  const spec::Cluster c = test::cluster("B200", 8, 8);
  ASSERT_DOUBLE_EQ(c.gpu.eff.flash_attention, 0.521);
  ASSERT_DOUBLE_EQ(c.gpu.eff.flash_attention_bwd, 0.419);
  ASSERT_DOUBLE_EQ(c.gpu.eff.flash_attention_fa2, 0.166);
  ASSERT_DOUBLE_EQ(c.gpu.eff.flash_attention_fa2_bwd, 0.133);
  const auto compute = [](const char* st, const spec::Cluster& cl) {
    return llama8b_compute_s(st, cl);
  };
  const double seq = 8192, h = 4096;
  const double fwd_flops = 0.5 * 4.0 * seq * seq * h * 32.0;  // causal, 32 layers
  const double peak = 2250e12;
  EXPECT_NEAR(compute("torchtitan-2024", c) - compute("fsdp-2024", c),
              fwd_flops / peak * (1.0 / 0.166 - 1.0 / 0.521) +
                  2.5 * fwd_flops / peak * (1.0 / 0.133 - 1.0 / 0.419),
              1e-9);
  // Without the backward fractions, 0.86 of each forward's rate, as on H100.
  spec::Cluster plain = c;
  plain.gpu.eff.flash_attention_bwd = 0;
  plain.gpu.eff.flash_attention_fa2_bwd = 0;
  EXPECT_NEAR(compute("torchtitan-2024", plain) - compute("fsdp-2024", plain),
              (1.0 + 2.5 / 0.86) * fwd_flops / peak * (1.0 / 0.166 - 1.0 / 0.521), 1e-9);
  EXPECT_NEAR(compute("fsdp-2024", c) - compute("fsdp-2024", plain),
              2.5 * fwd_flops / peak * (1.0 / 0.419 - 1.0 / (0.86 * 0.521)), 1e-9);
}

// FSDP under pipeline parallelism: PyTorch's pipeline stage turns FSDP's gradient sync and
// resharding off for every micro-batch and reduce-scatters once after the stage's last backward,
// and TorchTitan keeps the gathered weights across micro-batches. So the memory and the traffic
// are ZeRO-1's (Megatron's distributed optimizer): whole bf16 weights and fp32 gradients, the
// optimizer state sharded, one reduce-scatter (under no compute) and one all-gather per iteration;
// not ZeRO-3's two all-gathers per micro-batch, nor ZeRO-2's reduce-scatter per micro-batch.
TEST(Stack, FsdpWithPipelineAccumulatesWholeGradients) {
  const Model m = load_model("Llama-3-70B");
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  const Training titan = make_training(256, 8192, load_stack("torchtitan-2024"));
  Stack zero1_stack = load_stack("torchtitan-2024");
  zero1_stack.knobs.distributed_optimizer = spec::Sharding::optimizer;
  const Training zero1 = make_training(256, 8192, zero1_stack);
  Stack zero2_stack = load_stack("torchtitan-2024");
  zero2_stack.knobs.distributed_optimizer = spec::Sharding::gradients;
  const Training zero2 = make_training(256, 8192, zero2_stack);
  Strategy s = test::megatron_core_strategy(8, 4, 2, 1);
  validate(m, titan, s, c);
  const Placement pl(c, s.degrees(), PlacementKind::rail_aligned);
  int gathers = 0, scatters = 0;
  for (const CommOp& op : build_comm_schedule(m, titan, s, pl)) {
    if (op.parallelism != Parallelism::dp) continue;
    if (op.op == CollectiveOp::all_gather) {
      ++gathers;
      EXPECT_EQ(op.phase, Phase::optimizer);
      EXPECT_TRUE(op.overlappable);  // prefetched under the next forward
    }
    if (op.op == CollectiveOp::reduce_scatter) {
      ++scatters;
      EXPECT_DOUBLE_EQ(op.count, 1.0);
      EXPECT_FALSE(op.overlappable);  // after the stage's last backward
    }
  }
  EXPECT_EQ(gathers, 1);
  EXPECT_EQ(scatters, 1);
  const MemoryUse titan_mem = memory_use(m, titan, s);
  EXPECT_DOUBLE_EQ(titan_mem.total(), memory_use(m, zero1, s).total());
  EXPECT_DOUBLE_EQ(wire_bytes(build_comm_schedule(m, titan, s, pl), pl).total(),
                   wire_bytes(build_comm_schedule(m, zero1, s, pl), pl).total());
  // The whole fp32 gradients of the stage (4 bytes per bf16 weight's 2), more than ZeRO-2's shard
  // and its two layers in flight.
  EXPECT_NEAR(titan_mem.gradients_bytes / titan_mem.weights_bytes, 2.0, 1e-12);
  EXPECT_LT(memory_use(m, zero2, s).gradients_bytes, titan_mem.gradients_bytes);
  // Without pipelining the same stack is ZeRO-3: weights gathered per micro-batch.
  Strategy one = s;
  one.pp = 1;
  one.dp = 8;
  int gathers1 = 0;
  const Placement pl1(c, one.degrees(), PlacementKind::rail_aligned);
  for (const CommOp& op : build_comm_schedule(m, titan, one, pl1))
    gathers1 += op.parallelism == Parallelism::dp && op.op == CollectiveOp::all_gather;
  EXPECT_EQ(gathers1, 2);
}

// HSDP under pipelining: the reduce-scatter and the optimizer state stay in the shard group, and
// the fp32 gradient shards are all-reduced over the replicas once, after the last backward.
TEST(Stack, FsdpWithPipelineShardsOverTheHsdpGroup) {
  const Model m = load_model("Llama-3-70B");
  const spec::Cluster c = test::cluster("H100-SXM", 128, 8);
  const Training titan = make_training(256, 8192, load_stack("torchtitan-2024"));
  Strategy s = test::megatron_core_strategy(8, 4, 4, 1);
  s.hsdp = 2;
  validate(m, titan, s, c);
  const Placement pl(c, s.degrees(), PlacementKind::rail_aligned);
  int shard_scatters = 0, replica_reduces = 0;
  for (const CommOp& op : build_comm_schedule(m, titan, s, pl)) {
    if (op.parallelism != Parallelism::dp) continue;
    shard_scatters += op.axis == Axis::dp_shard && op.op == CollectiveOp::reduce_scatter;
    if (op.axis == Axis::dp_replica) {
      ++replica_reduces;
      EXPECT_EQ(op.op, CollectiveOp::all_reduce);
      EXPECT_FALSE(op.overlappable);
    }
  }
  EXPECT_EQ(shard_scatters, 1);
  EXPECT_EQ(replica_reduces, 1);
  // Adam's 12 bytes per parameter over the shard group of 2, not over dp = 4.
  Strategy whole = s;
  whole.hsdp = 0;
  EXPECT_NEAR(memory_use(m, titan, s).optimizer_bytes / memory_use(m, titan, whole).optimizer_bytes,
              2.0, 1e-12);
}

// Hybrid sharding (HSDP) on 64 GPUs of H100 with groups of 8 (one HB domain): the shard group is
// 8 consecutive DP ranks (stride tp), the replica group the 8 others (stride tp x 8); FSDP's
// gathers and reduce-scatters run in the shard group, the fp32 gradient shards (4 P / 8 bytes)
// are all-reduced over the replicas once per iteration; the persistent state is 16 bytes per
// parameter over 8 instead of over 64.
TEST(Stack, HybridShardingShardsInTheGroupAndReplicatesAcross) {
  const Model m = load_model("Llama-3-8B");
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  const Training tr = make_training(512, 8192, load_stack("fsdp-2024"));
  Strategy s{.tp = 1, .dp = 64};
  s.recompute = Recompute::selective;
  s.dist_opt = true;
  s.dp_overlap = true;
  const MemoryUse full = memory_use(m, tr, s);
  s.hsdp = 8;
  validate(m, tr, s, c);
  const Placement pl(c, s.degrees(), PlacementKind::rail_aligned);
  EXPECT_EQ(pl.axis_size(Axis::dp_shard), 8);
  EXPECT_EQ(pl.axis_stride(Axis::dp_shard), 1);
  EXPECT_EQ(pl.axis_size(Axis::dp_replica), 8);
  EXPECT_EQ(pl.axis_stride(Axis::dp_replica), 8);
  EXPECT_EQ(pl.shape(Axis::dp_shard).domains, 1);  // inside one HB domain
  double p_gpu = 0, replica_bytes = 0;
  int shard_ops = 0, replica_ops = 0;
  for (const CommOp& op : build_comm_schedule(m, tr, s, pl)) {
    if (op.parallelism != Parallelism::dp) continue;
    if (op.axis == Axis::dp_shard) {
      ++shard_ops;
      EXPECT_DOUBLE_EQ(op.count, 8.0);  // 512 / 64 micro-batches
      if (op.op == CollectiveOp::reduce_scatter) p_gpu = op.bytes / 4.0;
    } else {
      ++replica_ops;
      EXPECT_EQ(op.axis, Axis::dp_replica);
      EXPECT_EQ(op.op, CollectiveOp::all_reduce);
      EXPECT_DOUBLE_EQ(op.count, 1.0);
      replica_bytes = op.bytes;
    }
  }
  EXPECT_EQ(shard_ops, 3);  // all-gather forward and backward, reduce-scatter
  EXPECT_EQ(replica_ops, 1);
  ASSERT_GT(p_gpu, 0);
  EXPECT_DOUBLE_EQ(replica_bytes, 4.0 * p_gpu / 8.0);
  const MemoryUse hybrid = memory_use(m, tr, s);
  EXPECT_NEAR(hybrid.optimizer_bytes, full.optimizer_bytes * 64.0 / 8.0, 1e-6 * p_gpu);
  EXPECT_DOUBLE_EQ(hybrid.activations_bytes, full.activations_bytes);
}

// HSDP's knob is checked: a stack without it, a group that does not divide dp x cp, expert
// parallelism, no distributed optimizer; the planner visits the HB-domain-sized group.
TEST(Stack, HybridShardingIsCheckedAndSearched) {
  const Model m = load_model("Llama-3-8B");
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  const Training fsdp = make_training(512, 8192, load_stack("fsdp-2024"));
  const Training core = make_training(512, 8192, Stack{});
  Strategy s{.tp = 1, .dp = 64};
  s.dist_opt = true;
  s.hsdp = 8;
  EXPECT_EQ(field_of([&] { validate(m, core, s, c); }), "--hsdp");
  s.hsdp = 6;
  EXPECT_EQ(field_of([&] { validate(m, fsdp, s, c); }), "--hsdp");
  s.hsdp = 8;
  s.dist_opt = false;
  EXPECT_EQ(field_of([&] { validate(m, fsdp, s, c); }), "--hsdp");
  PlanOptions po;
  po.top = 1000;
  const PlanResult r =
      plan(make_context(m, fsdp, c, test::design(spec::DesignKind::rail_optimized)), po);
  int hybrid = 0;
  for (const Plan& p : r.plans) {
    if (p.strategy.hsdp == 0) continue;
    ++hybrid;
    EXPECT_LE(p.strategy.tp * p.strategy.hsdp, 8);
    EXPECT_EQ(p.strategy.dp * p.strategy.cp % p.strategy.hsdp, 0);
  }
  EXPECT_GT(hybrid, 0);
  // The plans table says which plans shard in groups (a column only then).
  const report::Table t = plans_table(r.plans, PlacementKind::rail_aligned);
  const auto named = [&](std::string_view n) {
    return std::any_of(t.columns.begin(), t.columns.end(),
                       [&](const report::Column& c) { return c.name == n; });
  };
  EXPECT_TRUE(named("hsdp"));
  EXPECT_FALSE(named("pp_schedule"));
}

// TorchTitan's Llama block without torch.compile runs each op as its own PyTorch kernel, RMSNorm
// and the rotary embedding in fp32 (docs/model.md section 3): per token and layer, Llama 2 13B
// (h 5,120, f 13,824, as many K and V heads as queries) moves 128 h + 10 f bytes forward and
// 240 h + 18 f backward through HBM, where the fused kernels move 22 h + 6 f and 1.25 x that.
// Nothing but that traffic differs between compile off and on.
TEST(Stack, EagerElementwiseKernelsMoveWhatTorchTitansOpsMove) {
  const Model m = load_model("Llama-2-13B");
  const spec::Cluster c = test::cluster("A100-SXM-80GB", 64, 8);
  Strategy s{.dp = 64, .micro_batch = 2, .recompute = Recompute::none};
  s.dist_opt = true;
  s.dp_overlap = true;
  const spec::NetworkDesign d = test::design(spec::DesignKind::rail_optimized);
  const Stack titan = load_stack("torchtitan-2024");
  ASSERT_TRUE(titan.eager_elementwise);
  ASSERT_FALSE(titan.defaults.compile);
  const Training eager = make_training(128, 4096, titan);
  const Training compiled = make_training(128, 4096, titan, {}, {}, true);
  EXPECT_FALSE(eager.compile);
  const IterationTime e = estimate(m, eager, s, c, d), f = estimate(m, compiled, s, c, d);
  const double h = 5120, ffn = 13824, T = 2 * 4096.0, L = 40;
  const double eager_bytes = (128 * h + 10 * ffn) + (240 * h + 18 * ffn);
  const double fused_bytes = 2.25 * (22 * h + 6 * ffn);
  const double hbm = c.gpu.hbm_bw_Bps * c.gpu.eff.hbm;
  EXPECT_NEAR(e.breakdown.compute_s - f.breakdown.compute_s,
              L * T * (eager_bytes - fused_bytes) / hbm, 1e-9);
  EXPECT_GT(e.breakdown.compute_s, 1.08 * f.breakdown.compute_s);  // 2.2 MB against 0.44 MB: +11%
  EXPECT_DOUBLE_EQ(e.breakdown.dp_comm_s, f.breakdown.dp_comm_s);
  // Grouped-query attention adds repeat_kv's copies of K and V (Llama 3 8B: 4 query heads per
  // K head): 2 k + 4 q + 2 v bytes per token each way, with q 4,096 and k = v = 1,024.
  const Model g = load_model("Llama-3-8B");
  const IterationTime ge = estimate(g, eager, s, c, d), gf = estimate(g, compiled, s, c, d);
  const double gh = 4096, kv = 1024, gf_n = 14336, gL = 32;
  const double g_eager = 2 * (84 * gh + 20 * (gh + kv) + (2 * kv + 4 * gh + 2 * kv) + 4 * gh) +
                         (196 - 84) * gh + 28 * gf_n;
  const double g_fused = 2.25 * (22 * gh + 6 * gf_n);
  EXPECT_NEAR(ge.breakdown.compute_s - gf.breakdown.compute_s, gL * T * (g_eager - g_fused) / hbm,
              1e-9);
  // A stack with fused kernels is the same with and without the flag it lacks.
  EXPECT_THROW(make_training(128, 4096, load_stack("megatron-core-2024"), {}, {}, true),
               InputError);
  Training no = make_training(128, 4096, load_stack("megatron-core-2024"));
  no.compile = true;  // built in code past make_training
  EXPECT_THROW(validate(m, no, s, c), InputError);
}

// torchao's float8 linears (torchtitan-2024, "fp8_casts": "separate") cast each GEMM operand in
// kernels of their own, which the element-wise time counts as torchao's roofline of a float8
// linear does (docs/model.md section 3). Llama 3 8B (h 4,096, K and V 1,024 wide, f 14,336, 32
// layers), 16,384 tokens per micro-batch, one micro-batch: compiled, 4 bytes per activation
// element (the inputs of wq|wk|wv, wo, w1|w3 and w2 forward; the output gradients of wq, wk, wv,
// wo, w1, w3 and w2 backward) and 8 per weight element (5 forward, 3 backward); eager, 6 bytes and
// the shared inputs cast once per linear. Nothing else moves, and nothing at all in bf16.
TEST(Stack, TorchaoFp8CastsMoveWhatItsRooflineCounts) {
  const Model m = load_model("Llama-3-8B");
  const spec::Cluster c = test::cluster("H100-SXM", 8, 8);
  const spec::NetworkDesign d = test::design(spec::DesignKind::rail_optimized);
  Stack separate = load_stack("torchtitan-2024");
  ASSERT_TRUE(separate.fp8_separate_casts);
  Stack fused = separate;
  fused.fp8_separate_casts = false;
  Strategy s{.dp = 8, .micro_batch = 2, .recompute = Recompute::none};
  s.dist_opt = true;
  s.dp_overlap = true;
  const double h = 4096, kv = 1024, f = 14336, L = 32, T = 2 * 8192.0;
  // A layer's weights, h (h + 2 kv + h) + 3 h f and its norms' 2 h.
  const double W = m.attention_params() + m.dense_ffn_params();
  EXPECT_DOUBLE_EQ(W, h * (h + 2 * kv + h) + 3 * h * f + 2 * h);
  const double hbm = c.gpu.hbm_bw_Bps * c.gpu.eff.hbm;
  const auto cast_s = [&](const Stack& st, bool compile, const Strategy& x, spec::Dtype dt) {
    const Training tr = make_training(16, 8192, st, dt, {}, compile);
    return estimate(m, tr, x, c, d).breakdown;
  };
  const auto diff = [&](bool compile, const Strategy& x) {
    const Breakdown a = cast_s(separate, compile, x, Dtype::fp8),
                    b = cast_s(fused, compile, x, Dtype::fp8);
    return std::pair{a.compute_s - b.compute_s, a.recompute_s - b.recompute_s};
  };
  const double fwd_c = 4 * T * (h + h + h + f) + 5 * W;
  const double bwd_c = 4 * T * ((h + 2 * kv) + h + 2 * f + h) + 3 * W;
  EXPECT_NEAR(diff(true, s).first, L * (fwd_c + bwd_c) / hbm, 1e-9);
  EXPECT_DOUBLE_EQ(diff(true, s).second, 0.0);
  // 6.3 GB per layer, the figure docs/model.md states, as the model charges it.
  EXPECT_NEAR(diff(true, s).first * hbm / L / 1e9, 6.31, 0.01);
  const double fwd_e = 6 * T * (3 * h + h + 2 * h + f) + 5 * W;
  const double bwd_e = 6 * T * ((h + 2 * kv) + h + 2 * f + h) + 3 * W;
  EXPECT_NEAR(diff(false, s).first, L * (fwd_e + bwd_e) / hbm, 1e-9);
  // Full recomputation runs the forward's casts again.
  Strategy full = s;
  full.recompute = Recompute::full;
  EXPECT_NEAR(diff(true, full).second, L * fwd_c / hbm, 1e-9);
  // Per-op checkpointing keeps the absolute maxima (TorchTitan's list has max) and runs the casts
  // again: compiled, the forward's less the weights' maximum pass; eager, less the activations'
  // too (2 bytes per element).
  Strategy op = s;
  op.recompute = Recompute::op;
  EXPECT_NEAR(diff(true, op).second, L * (fwd_c - 2 * W) / hbm, 1e-9);
  EXPECT_NEAR(diff(false, op).second, L * (fwd_e - 2 * W - 2 * T * (3 * h + h + 2 * h + f)) / hbm,
              1e-9);
  // Sequence parallelism over TP 2: the column-parallel inputs cast on their shard (3 bytes per
  // element compiled) and their column-major copy transposed after the fp8 all-gather (2 bytes).
  Strategy sp = s;
  sp.tp = 2;
  sp.dp = 4;
  sp.sp = true;
  const double t = 2;
  const double fwd_sp = 2 * T * h * (3 / t + 2) + 4 * T * (h / t + f / t) + 5 * W / t;
  const double bwd_sp = 4 * T * ((h + 2 * kv) / t + h + 2 * f / t + h) + 3 * W / t;
  EXPECT_NEAR(diff(true, sp).first, 2 * L * (fwd_sp + bwd_sp) / hbm, 1e-9);  // two micro-batches
  // bf16 casts nothing.
  EXPECT_DOUBLE_EQ(cast_s(separate, true, s, Dtype::bf16).compute_s,
                   cast_s(fused, true, s, Dtype::bf16).compute_s);
}

// Fully sharded weights outside the layers: PyTorch FSDP gathers the root module (the embedding
// and an untied output layer) as one unit, XLA each weight at its use. Llama 3 70B on one stage:
// the unit in use and the one prefetched are the two weights together (2 x 128,256 x 8,192) under
// torchtitan-2024 and the larger one alone under maxtext-2024, bf16 weights and fp32 gradients.
TEST(Stack, FsdpGathersTheRootModuleOrEachWeight) {
  const Model m = spec::load_model("Llama-3-70B");
  Strategy s{.tp = 1, .dp = 128, .micro_batch = 2, .recompute = Recompute::full};
  s.dist_opt = true;
  s.dp_overlap = true;
  const double vh = 128256.0 * 8192.0;
  const Training titan = make_training(256, 8192, spec::load_stack("torchtitan-2024"));
  const Training maxtext = make_training(256, 8192, spec::load_stack("maxtext-2024"));
  EXPECT_NEAR(memory_use(m, titan, s).weights_bytes, 2.0 * 2.0 * 2.0 * vh, 1.0);
  EXPECT_NEAR(memory_use(m, maxtext, s).weights_bytes, 2.0 * 2.0 * vh, 1.0);
  EXPECT_NEAR(memory_use(m, titan, s).gradients_bytes - memory_use(m, maxtext, s).gradients_bytes,
              2.0 * 4.0 * vh, 1.0);
}
