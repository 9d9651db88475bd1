// The CommSchedule of a strategy and the bytes it puts on the wire (formulas in
// include/railsim/perf/comm_schedule.hpp), checked against numbers worked out by hand.
#include <gtest/gtest.h>

#include "../common/small_network.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/model.hpp"
#include "railsim/perf/strategy.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
// The dense small model of 8 layers with a vocabulary of 1000 and sequences of 128.
Model small_model() {
  Model m = test::small_model(false, 8);
  m.vocab = 1000;
  m.seq_len = 128;
  return m;
}

// The schedule of `s` for `m` on 64 A100 in HB domains of 8, a global batch of `batch`.
struct Scheduled {
  Placement pl;
  CommSchedule cs;
};
Scheduled schedule(const Model& m, std::int64_t batch, const Strategy& s) {
  const Training tr{batch, 128, Dtype::bf16};
  const spec::Cluster c = test::cluster("A100-SXM-80GB", 64, 8);
  validate(m, tr, s, c);
  const Placement pl(c, s.degrees());
  return {pl, build_comm_schedule(m, tr, s, pl)};
}

const CommOp* find(const CommSchedule& cs, CollectiveOp op, Axis axis, Phase ph) {
  for (const CommOp& o : cs)
    if (o.op == op && o.axis == axis && o.phase == ph) return &o;
  return nullptr;
}
}  // namespace

TEST(CommSchedule, OpsCountsAndAlgorithms) {
  // Micro-batches of 1: m = 16 / 8 = 2 micro-batches.
  const auto [pl, cs] = schedule(small_model(), 16, Strategy{.tp = 4, .pp = 2, .dp = 8});
  const double act = 128.0 * 1024 * 2;  // b s h bf16 bytes
  // TP: 2 all-reduces per layer per micro-batch per direction; 4 layers per stage, 2 micro-batches.
  const CommOp* f = find(cs, CollectiveOp::all_reduce, Axis::tp, Phase::forward);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->bytes, act);
  EXPECT_DOUBLE_EQ(f->count, 16.0);
  EXPECT_EQ(f->algorithm, Algorithm::ring);  // 4 members inside one HB domain
  // PP: activations scattered over TP (act / 4), once per micro-batch each way.
  const CommOp* p = find(cs, CollectiveOp::send_recv, Axis::pp, Phase::forward);
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->bytes, act / 4);
  EXPECT_DOUBLE_EQ(p->count, 2.0);
  EXPECT_DOUBLE_EQ(p->wrap_count, 0.0);
  // DP over 8 ranks of stride 4: 2 per domain in 4 domains, rail-aligned -> hierarchical.
  const CommOp* d = find(cs, CollectiveOp::all_reduce, Axis::dp, Phase::backward);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->algorithm, Algorithm::hierarchical);
  // fp32 gradients of the first stage's weights: 4 layers x (12 h^2 + 13 h) + V h, over tp = 4.
  const double params = (4.0 * (12.0 * 1024 * 1024 + 13.0 * 1024) + 1000.0 * 1024) / 4.0;
  EXPECT_DOUBLE_EQ(d->bytes, 4.0 * params);
}

TEST(CommSchedule, WireBytesFollowThePerAlgorithmFormulas) {
  // Interleaved twice: 2 micro-batches per pipeline, a multiple of pp = 2.
  const auto [pl, cs] =
      schedule(small_model(), 16,
               Strategy{.tp = 4, .pp = 2, .dp = 8, .interleave = 2, .sp = true, .dist_opt = true});
  const WireBytes w = wire_bytes(cs, pl);
  const double act = 128.0 * 1024 * 2;
  // SP: all-gather + reduce-scatter, 2 per layer per micro-batch per direction: (n-1) B per group
  // per op; 16 TP groups; 4 layers x 2 micro-batches x 2 = 16 of each per direction.
  EXPECT_DOUBLE_EQ(w.of(Parallelism::sp), 16.0 * (16 * 2 * 2) * 3.0 * act);
  EXPECT_DOUBLE_EQ(w.of(Parallelism::tp), 0.0);
  // PP: 32 pipelines of 2 stages; m v = 4 sends per pair per direction, plus m (v-1) = 2 wraps.
  EXPECT_DOUBLE_EQ(w.of(Parallelism::pp), 32.0 * (act / 4) * (4.0 * 1 + 2.0) * 2);
  // DP with the distributed optimizer: reduce-scatter of fp32 grads + all-gather of bf16 weights,
  // (n - 1) B each, 8 groups of 8.
  const double params = (4.0 * (12.0 * 1024 * 1024 + 13.0 * 1024) + 1000.0 * 1024) / 4.0;
  EXPECT_DOUBLE_EQ(w.of(Parallelism::dp), 8.0 * 7.0 * (4.0 + 2.0) * params);
  EXPECT_DOUBLE_EQ(w.total(),
                   w.of(Parallelism::sp) + w.of(Parallelism::pp) + w.of(Parallelism::dp));
}

TEST(CommSchedule, MoeAllToAllIsDirectOverTheExpertGroup) {
  Model m = small_model();
  m.experts = 8;
  m.top_k = 2;
  m.expert_ffn_hidden = 2048;
  m.moe_every = 2;
  m.capacity_factor = 1.25;
  // A batch of 32: one micro-batch per pipeline.
  const auto [pl, cs] =
      schedule(m, 32, Strategy{.tp = 2, .pp = 1, .dp = 32, .ep = 8, .micro_batch = 1});
  const CommOp* a = find(cs, CollectiveOp::all_to_all, Axis::ep, Phase::forward);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->algorithm, Algorithm::direct);
  // Tokens of a TP rank's sequence shard, each sent to top_k experts with capacity 1.25.
  EXPECT_DOUBLE_EQ(a->bytes, 128.0 / 2 * 2 * 1.25 * 1024 * 2);
  EXPECT_DOUBLE_EQ(a->count, 2.0 * 4 * 1);  // dispatch + combine, 4 MoE layers, 1 micro-batch
  // Expert gradients reduce over edp = dp / ep = 4.
  EXPECT_NE(find(cs, CollectiveOp::all_reduce, Axis::edp, Phase::backward), nullptr);
}

TEST(CommSchedule, HierarchicalOnlyWhenRailAligned) {
  EXPECT_EQ(reduction_algorithm(GroupShape{16, 8, 2, true}), Algorithm::hierarchical);
  EXPECT_EQ(reduction_algorithm(GroupShape{16, 8, 2, false}), Algorithm::ring);
  EXPECT_EQ(reduction_algorithm(GroupShape{8, 1, 8, true}), Algorithm::ring);
  EXPECT_EQ(reduction_algorithm(GroupShape{8, 8, 1, true}), Algorithm::ring);
}
