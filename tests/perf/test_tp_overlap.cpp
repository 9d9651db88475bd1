// TP communication overlapped with the GEMMs (the stack's tp_comm_overlap: Megatron-Core with
// Transformer Engine's userbuffers; docs/model.md section 6): what it hides, what stays exposed,
// what it costs, and when it does not apply.
#include <gtest/gtest.h>

#include "railsim/perf/iteration.hpp"
#include "railsim/spec/stack.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
// NeMo's Llama 3 70B recipe on 64 H100 (TP 4, PP 8, VP 5, DP 2, FP8), with or without overlap.
test::KnobCase llama70b() {
  test::KnobCase k{load_model("Llama-3-70B"),
                   test::cluster("H100-SXM", 64, 8),
                   test::megatron_core_strategy(4, 8, 2, 5),
                   &spec::StackKnobs::tp_comm_overlap,
                   128,
                   8192};
  k.dtype = Dtype::fp8;
  return k;
}
}  // namespace

TEST(TpOverlap, HidesMostOfTheCommunicationBehindTheGemms) {
  const test::KnobCase x = llama70b();
  const IterationTime off = x.run(false), on = x.run(true);
  // Without overlap nothing is hidden and nothing contends.
  EXPECT_EQ(off.breakdown.tp_hidden_s, 0.0);
  EXPECT_EQ(off.breakdown.tp_overlap_s, 0.0);
  // The collectives are the same: exposed + hidden = the whole communication.
  EXPECT_NEAR(on.breakdown.tp_comm_s + on.breakdown.tp_hidden_s, off.breakdown.tp_comm_s,
              1e-9 * off.breakdown.tp_comm_s);
  // Each all-gather or reduce-scatter of 8192 x 8192 bf16 in a domain of 4 (0.32 ms) is about as
  // long as the QKV and projection GEMMs and far shorter than the FFN's: most is hidden; the
  // reduce-scatters' last chunks and the attention GEMMs' shortfall stay exposed.
  EXPECT_LT(on.breakdown.tp_comm_s, 0.3 * off.breakdown.tp_comm_s);
  EXPECT_GT(on.breakdown.tp_comm_s, 0.05 * off.breakdown.tp_comm_s);
  // The SMs the reduce-scatters take slow the GEMMs: a cost, smaller than what is hidden.
  EXPECT_GT(on.breakdown.tp_overlap_s, 0.0);
  EXPECT_LT(on.breakdown.tp_overlap_s, 0.5 * on.breakdown.tp_hidden_s);
  EXPECT_DOUBLE_EQ(on.breakdown.compute_s, off.breakdown.compute_s);
  EXPECT_LT(on.iteration_time_s, off.iteration_time_s);
  EXPECT_NEAR(on.breakdown.total(), on.iteration_time_s, 1e-9 * on.iteration_time_s);
}

TEST(TpOverlap, CollectivesLongerThanTheirGemmsStayExposed) {
  // Llama 3 8B at TP 8: the attention GEMMs (QKV 768 columns, projection over 512) are shorter
  // than an all-gather or reduce-scatter of 8192 x 4096 in the domain, so a good part stays
  // exposed; the FFN's GEMMs still hide theirs.
  test::KnobCase x = llama70b();
  x.m = load_model("Llama-3-8B");
  x.s.tp = 8;
  x.s.pp = 1;
  x.s.dp = 8;
  x.s.interleave = 1;
  const IterationTime off = x.run(false), on = x.run(true);
  EXPECT_NEAR(on.breakdown.tp_comm_s + on.breakdown.tp_hidden_s, off.breakdown.tp_comm_s,
              1e-9 * off.breakdown.tp_comm_s);
  EXPECT_GT(on.breakdown.tp_comm_s, 0.2 * off.breakdown.tp_comm_s);
  EXPECT_GT(on.breakdown.tp_hidden_s, 0.2 * off.breakdown.tp_comm_s);
  // What is hidden is bounded by the GEMM time of the layers (all of compute at most).
  EXPECT_LT(on.breakdown.tp_hidden_s, on.breakdown.compute_s);
}

TEST(TpOverlap, OnlyInsideOneHbDomain) {
  // Userbuffers exchange chunks over NVLink: a TP group spread over HB domains (on the NIC) runs
  // its collectives exposed, as without the knob.
  const test::KnobCase x = llama70b();
  const IterationTime off = x.run(false, PlacementKind::tp_across_domains);
  const IterationTime on = x.run(true, PlacementKind::tp_across_domains);
  EXPECT_EQ(on.breakdown.tp_hidden_s, 0.0);
  EXPECT_EQ(on.breakdown.tp_overlap_s, 0.0);
  EXPECT_DOUBLE_EQ(on.iteration_time_s, off.iteration_time_s);
  EXPECT_GT(on.breakdown.tp_comm_s, 0.0);
}

TEST(TpOverlap, OnlyWithSequenceParallelismAndTensorParallelism) {
  test::KnobCase x = llama70b();
  x.s.sp = false;  // all-reduces: no userbuffers overlap in Megatron-Core
  const IterationTime no_sp = x.run(true);
  EXPECT_EQ(no_sp.breakdown.tp_hidden_s, 0.0);
  EXPECT_EQ(no_sp.breakdown.tp_overlap_s, 0.0);
  EXPECT_DOUBLE_EQ(no_sp.iteration_time_s, x.run(false).iteration_time_s);
  test::KnobCase y = llama70b();
  y.s.tp = 1;
  y.s.sp = false;
  y.s.dp = 8;
  y.s.recompute = Recompute::full;
  const IterationTime no_tp = y.run(true);
  EXPECT_EQ(no_tp.breakdown.tp_comm_s, 0.0);
  EXPECT_EQ(no_tp.breakdown.tp_hidden_s, 0.0);
}

TEST(TpOverlap, FullRecomputeOverlapsTheRecomputedForwardToo) {
  test::KnobCase x = llama70b();
  x.s.recompute = Recompute::full;
  const IterationTime off = x.run(false), on = x.run(true);
  EXPECT_NEAR(on.breakdown.tp_comm_s + on.breakdown.tp_hidden_s, off.breakdown.tp_comm_s,
              1e-9 * off.breakdown.tp_comm_s);
  test::KnobCase y = llama70b();
  const IterationTime sel = y.run(true);
  // The forward's collectives run again in the backward: 1.5x the collectives; the recomputed
  // forward's overlap adds to what is hidden and to what stays exposed, less than doubling each.
  EXPECT_NEAR((on.breakdown.tp_hidden_s + on.breakdown.tp_comm_s) /
                  (sel.breakdown.tp_hidden_s + sel.breakdown.tp_comm_s),
              1.5, 1e-9);
  EXPECT_GT(on.breakdown.tp_hidden_s, 1.1 * sel.breakdown.tp_hidden_s);
  EXPECT_LT(on.breakdown.tp_hidden_s, 2.0 * sel.breakdown.tp_hidden_s);
  EXPECT_GT(on.breakdown.tp_comm_s, 1.1 * sel.breakdown.tp_comm_s);
  EXPECT_LT(on.breakdown.tp_comm_s, 2.0 * sel.breakdown.tp_comm_s);
}
