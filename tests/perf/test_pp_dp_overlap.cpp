// Pipeline sends overlapped with the other direction's chunk step (the stack's pp_comm_overlap:
// Megatron-Core overlap_p2p_comm, interleaved pipelines only) and the DP reduction overlapped
// chunk by chunk with interleaving (docs/model.md section 6): what each hides, what stays exposed
// and when it does not apply.
#include <gtest/gtest.h>

#include "railsim/perf/iteration.hpp"
#include "railsim/spec/stack.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
// GPT-3 175B on 256 H100: TP 8, PP 8, DP 4, micro-batch 1, 64 sequences (16 micro-batches), with
// or without pp_comm_overlap.
const test::KnobCase& gpt175() {
  static const test::KnobCase k{load_model("GPT-3-175B"),
                                test::cluster("H100-SXM", 256, 8),
                                test::megatron_core_strategy(8, 8, 4, 4),
                                &spec::StackKnobs::pp_comm_overlap,
                                64,
                                2048};
  return k;
}

// gpt175() interleaved v times, with or without DP overlap.
IterationTime gpt175_run(bool pp_overlap, std::int64_t v, bool dp_overlap = true) {
  test::KnobCase x = gpt175();
  x.s.interleave = v;
  x.s.dp_overlap = dp_overlap;
  return x.run(pp_overlap);
}
}  // namespace

TEST(PpOverlap, HidesTheSendsOfTheBodyButNotTheFill) {
  const IterationTime off = gpt175_run(false, 4), on = gpt175_run(true, 4);
  EXPECT_EQ(off.breakdown.pp_hidden_s, 0.0);
  // The sends are the same: exposed + hidden = all of them; a 2048 x 12288 bf16 activation
  // (50 MB at 42.5 GB/s: 1.2 ms) is far shorter than a chunk step of 3 layers, so all of the
  // body's sends hide.
  EXPECT_GT(off.breakdown.pp_comm_s, 0.0);
  EXPECT_NEAR(on.breakdown.pp_comm_s + on.breakdown.pp_hidden_s, off.breakdown.pp_comm_s,
              1e-9 * off.breakdown.pp_comm_s);
  EXPECT_EQ(on.breakdown.pp_comm_s, 0.0);
  // The iteration saves exactly what is hidden; the fill and drain (bubble) keep their sends.
  EXPECT_NEAR(off.iteration_time_s - on.iteration_time_s, on.breakdown.pp_hidden_s,
              1e-9 * off.iteration_time_s);
  EXPECT_NEAR(on.breakdown.bubble_s, off.breakdown.bubble_s, 1e-9 * off.breakdown.bubble_s);
  EXPECT_NEAR(on.breakdown.pipeline_overhead_s, off.breakdown.pipeline_overhead_s, 1e-12);
  EXPECT_NEAR(on.breakdown.total(), on.iteration_time_s, 1e-9 * on.iteration_time_s);
}

TEST(PpOverlap, OnlyInterleavedPipelines) {
  // Megatron-Core (and NeMo) overlap the sends only with virtual pipelining.
  const IterationTime off = gpt175_run(false, 1), on = gpt175_run(true, 1);
  EXPECT_EQ(on.breakdown.pp_hidden_s, 0.0);
  EXPECT_DOUBLE_EQ(on.iteration_time_s, off.iteration_time_s);
  // A stack without the knob (Megatron-LM 2022) never hides them.
  const Training tr22 = make_training(64, 2048, load_stack("megatron-lm-2022"));
  Strategy s = gpt175().s;
  s.dist_opt = false;
  s.dp_overlap = false;
  const IterationTime y22 =
      estimate(gpt175().m, tr22, s, gpt175().c, test::design(spec::DesignKind::rail_optimized));
  EXPECT_EQ(y22.breakdown.pp_hidden_s, 0.0);
  EXPECT_GT(y22.breakdown.pp_comm_s, 0.0);
}

TEST(DpOverlap, InterleavingReducesChunkByChunk) {
  // Without overlap the whole reduce-scatter and all-gather are exposed, whatever v.
  const double all = gpt175_run(true, 1, false).breakdown.dp_comm_s;
  EXPECT_DOUBLE_EQ(gpt175_run(true, 4, false).breakdown.dp_comm_s, all);
  // With overlap and no interleaving the reduction hides behind the last backward but its last
  // bucket; with v chunks each chunk's reduction starts when its last backward ends, rounds of
  // min(m, p) backward steps before the end, so more hides: exposed never grows with v, never
  // falls under one layer's share (the last bucket) and never exceeds the whole.
  const double v1 = gpt175_run(true, 1).breakdown.dp_comm_s;
  const double v2 = gpt175_run(true, 2).breakdown.dp_comm_s;
  const double v4 = gpt175_run(true, 4).breakdown.dp_comm_s;
  const double layers_per_stage = 96.0 / 8.0;
  EXPECT_LT(v1, all);
  EXPECT_LE(v2, v1);
  EXPECT_LE(v4, v2);
  EXPECT_GE(v4, all / layers_per_stage * (1.0 - 1e-9) / 2.0);  // two collectives, one bucket each
  EXPECT_LT(v4, v1);
}
