// The CommSchedule of a strategy and the bytes it puts on the wire (formulas in
// include/railsim/perf/comm_schedule.hpp), checked against numbers worked out by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <utility>
#include <vector>

#include "../common/small_network.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/expansion.hpp"
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

namespace {
// The expected distinct domains among a token's experts by enumeration: every choice of
// `per_token` of the `groups` groups, every top_k subset of their experts, equally likely; the
// experts dealt in order over q domains.
double enumerated_domains(int experts, int groups, int per_token, int top_k, int q) {
  const int g = experts / groups, e_dom = experts / q;
  double sum = 0, count = 0;
  for (unsigned gs = 0; gs < (1u << groups); ++gs) {
    if (std::popcount(gs) != per_token) continue;
    std::vector<int> pool;
    for (int x = 0; x < experts; ++x)
      if (gs >> (x / g) & 1u) pool.push_back(x);
    const auto n = static_cast<int>(pool.size());
    for (std::uint64_t pick = 0; pick < (std::uint64_t{1} << n); ++pick) {
      if (std::popcount(pick) != top_k) continue;
      std::uint64_t doms = 0;
      for (int i = 0; i < n; ++i)
        if (pick >> i & 1u) doms |= std::uint64_t{1} << (pool[static_cast<std::size_t>(i)] / e_dom);
      sum += std::popcount(doms);
      count += 1;
    }
  }
  return sum / count;
}
}  // namespace

// Group-limited routing: the closed form of routed_domains against every routing enumerated, on
// both nestings (groups inside domains, domains inside groups) and without a limit.
TEST(CommSchedule, RoutedDomainsEqualTheEnumeratedRoutings) {
  for (const int q : {1, 2, 4, 8, 16})
    for (const auto& [groups, per_token] :
         std::vector<std::pair<int, int>>{{1, 1}, {4, 4}, {4, 2}, {4, 1}, {2, 1}, {8, 3}}) {
      const int top_k = per_token * (16 / groups) >= 3 ? 3 : 2;
      SCOPED_TRACE(
          fmt::format("q {} groups {} per token {} top_k {}", q, groups, per_token, top_k));
      const ExpertRouting r{16, top_k, groups, per_token};
      EXPECT_NEAR(routed_domains(r, q), enumerated_domains(16, groups, per_token, top_k, q), 1e-12);
    }
  // DeepSeek-V3 on 8 nodes (256 experts in 8 groups, 4 per token, top 8): 3.63 of its at most 4
  // nodes, 8 (1 - (1 + C(96, 8) / C(128, 8)) / 2); 5.29 of 8 without the limit, 8 (1 - C(224, 8)
  // / C(256, 8)).
  EXPECT_NEAR(routed_domains({256, 8, 8, 4}, 8), 3.6290, 1e-4);
  EXPECT_NEAR(routed_domains({256, 8, 8, 8}, 8), 5.2947, 1e-4);
  // No routing information: every copy counts.
  EXPECT_EQ(routed_domains({}, 8), 0.0);
}

// The hierarchical dispatch's phases: one copy per routed HB domain along each rail (B d, d =
// routed domains / top_k), then every expert's copy inside the domain (B); a group that is not
// rail-aligned, or inside one domain, runs the direct exchange.
TEST(CommSchedule, RailThenDomainAllToAllSendsOneCopyPerDomainAlongTheRails) {
  CommOp op{CollectiveOp::all_to_all, Parallelism::ep, Axis::ep, Algorithm::rail_then_domain,
            Phase::forward,           1000.0,          1};
  op.routing = {256, 8, 8, 4};
  const PhasePlan two = phase_plan(op, GroupShape{64, 8, 8, true});
  ASSERT_EQ(two.size, 2);
  EXPECT_EQ(two.phases[0].scope, Scope::along_rail);
  EXPECT_EQ(two.phases[0].algorithm, Algorithm::direct);
  EXPECT_EQ(two.phases[0].members, 8);
  EXPECT_NEAR(two.phases[0].bytes, 1000.0 * routed_domains(op.routing, 8) / 8, 1e-9);
  EXPECT_EQ(two.phases[1].scope, Scope::in_domain);
  EXPECT_EQ(two.phases[1].members, 8);
  EXPECT_DOUBLE_EQ(two.phases[1].bytes, 1000.0);
  // One member per domain: the rail phase alone.
  const PhasePlan rail = phase_plan(op, GroupShape{8, 1, 8, true});
  ASSERT_EQ(rail.size, 1);
  EXPECT_EQ(rail.phases[0].scope, Scope::along_rail);
  for (const GroupShape g : {GroupShape{64, 8, 8, false}, GroupShape{8, 8, 1, true}}) {
    const PhasePlan flat = phase_plan(op, g);
    ASSERT_EQ(flat.size, 1);
    EXPECT_EQ(flat.phases[0].scope, Scope::group);
    EXPECT_EQ(flat.phases[0].algorithm, Algorithm::direct);
    EXPECT_DOUBLE_EQ(flat.phases[0].bytes, 1000.0);
  }
  // Only an all-to-all runs it.
  CommOp reduce = op;
  reduce.op = CollectiveOp::all_reduce;
  EXPECT_THROW((void)phase_plan(reduce, GroupShape{64, 8, 8, true}), std::logic_error);
}

TEST(CommSchedule, HierarchicalOnlyWhenRailAligned) {
  EXPECT_EQ(reduction_algorithm(GroupShape{16, 8, 2, true}), Algorithm::hierarchical);
  EXPECT_EQ(reduction_algorithm(GroupShape{16, 8, 2, false}), Algorithm::ring);
  EXPECT_EQ(reduction_algorithm(GroupShape{8, 1, 8, true}), Algorithm::ring);
  EXPECT_EQ(reduction_algorithm(GroupShape{8, 8, 1, true}), Algorithm::ring);
}
