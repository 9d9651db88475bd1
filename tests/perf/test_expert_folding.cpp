// MoE parallel folding (--etp below tp; Megatron-Core's expert_tensor_parallel_size, Liu et al.
// 2025): the expert layers run split over fewer ranks than the TP group (none at etp 1) and their
// expert-parallel group may span the TP ranks. Placement, memory, the CommSchedule, the search
// and the bad-input errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "../common/small_network.hpp"
#include "railsim/core/error.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/spec/stack.hpp"
#include "test_perf_common.hpp"

namespace railsim {
namespace {

using perf::Axis;

perf::Training folding_training(std::int64_t batch) {
  return spec::make_training(batch, 1024, spec::load_stack("nemo-perf-2025"), spec::Dtype::bf16);
}

perf::Strategy moe_strategy(std::int64_t tp, std::int64_t dp, std::int64_t ep, std::int64_t etp) {
  perf::Strategy s;
  s.tp = tp;
  s.dp = dp;
  s.ep = ep;
  s.etp = etp;
  s.sp = tp > 1;
  return s;
}

// The members of every group of an axis, as GPU sets.
std::set<std::set<std::int64_t>> groups(const perf::Placement& pl, Axis a) {
  std::set<std::set<std::int64_t>> out;
  for (std::int64_t g = 0; g < pl.group_count(a); ++g) {
    std::set<std::int64_t> members;
    for (std::int64_t i = 0; i < pl.axis_size(a); ++i)
      members.insert(pl.gpu_of(pl.rank_in_group(a, g, i)));
    out.insert(members);
  }
  return out;
}

TEST(ExpertFolding, FoldedExpertGroupsAreConsecutiveRanksAcrossTheTpRanks) {
  const spec::Cluster c = test::cluster("H100-SXM", 16, 8);
  // tp 4, dp 4, ep 4. Unfolded, the EP group is one rank of every TP group: {0, 4, 8, 12}, and
  // there is no expert-data parallelism. Folded, it is four consecutive ranks, {0, 1, 2, 3}, and
  // the expert-data-parallel group the ranks 4 apart.
  perf::Degrees d{4, 1, 4, 4, 1, 0, 0};
  const perf::Placement unfolded(c, d);
  EXPECT_EQ(unfolded.axis_stride(Axis::ep), 4);
  EXPECT_EQ(unfolded.axis_size(Axis::edp), 1);
  EXPECT_TRUE(groups(unfolded, Axis::ep).count({0, 4, 8, 12}));
  d.etp = 1;
  const perf::Placement folded(c, d);
  EXPECT_EQ(folded.axis_stride(Axis::ep), 1);
  EXPECT_EQ(folded.axis_size(Axis::ep), 4);
  EXPECT_EQ(folded.axis_size(Axis::edp), 4);
  EXPECT_EQ(folded.axis_stride(Axis::edp), 4);
  EXPECT_TRUE(groups(folded, Axis::ep).count({0, 1, 2, 3}));
  EXPECT_TRUE(groups(folded, Axis::edp).count({0, 4, 8, 12}));
  // The dense axes do not move.
  EXPECT_EQ(groups(folded, Axis::tp), groups(unfolded, Axis::tp));
  EXPECT_EQ(groups(folded, Axis::dp), groups(unfolded, Axis::dp));
  // EP 8 spans TP 2 x DP 4: allowed folded, refused unfolded (ep must divide dp).
  const perf::Degrees wide{2, 1, 8, 8, 1, 0, 1};
  const perf::Placement w(c, wide);
  EXPECT_EQ(w.shape(Axis::ep).size, 8);
  EXPECT_EQ(w.shape(Axis::ep).domains, 1);
  EXPECT_EQ(w.axis_size(Axis::edp), 2);
  perf::Degrees bad = wide;
  bad.etp = 0;
  bad.ep = 16;
  try {
    const perf::Placement p(c, bad);
    ADD_FAILURE() << "ep 16 over dp 8 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--ep");
  }
}

// Expert TP between 1 and tp (Megatron-Core's expert_tensor_parallel_size 2 under tp 4): the
// expert TP group is etp consecutive ranks inside a TP group, the EP group e ranks etp apart, the
// expert-data-parallel group the rest.
TEST(ExpertFolding, ExpertTpGroupsAreConsecutiveRanksInsideTheTpGroup) {
  const spec::Cluster c = test::cluster("H100-SXM", 16, 8);
  const perf::Degrees d{4, 1, 4, 4, 1, 0, 2};
  EXPECT_EQ(d.expert_tp(), 2);
  const perf::Placement pl(c, d);
  EXPECT_EQ(pl.axis_size(Axis::etp), 2);
  EXPECT_EQ(pl.axis_stride(Axis::etp), 1);
  EXPECT_EQ(pl.axis_stride(Axis::ep), 2);
  EXPECT_EQ(pl.axis_size(Axis::edp), 16 / (2 * 4));
  EXPECT_TRUE(groups(pl, Axis::etp).count({0, 1}));
  EXPECT_TRUE(groups(pl, Axis::etp).count({2, 3}));
  EXPECT_TRUE(groups(pl, Axis::ep).count({0, 2, 4, 6}));
  EXPECT_TRUE(groups(pl, Axis::edp).count({0, 8}));
  EXPECT_EQ(pl.shape(Axis::etp).domains, 1);
  // etp must divide tp, and etp x ep the tp x cp x dp ranks of a stage.
  for (const perf::Degrees bad :
       {perf::Degrees{4, 1, 4, 4, 1, 0, 3}, perf::Degrees{4, 1, 4, 16, 1, 0, 2}}) {
    try {
      const perf::Placement p(c, bad);
      ADD_FAILURE() << "etp " << bad.etp << " ep " << bad.ep << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), bad.etp == 3 ? "--etp" : "--ep");
    }
  }
}

// Between the two ends the expert weights are split etp ways, the experts run etp T / t rows
// each, and the routed copies are all-gathered (and reduce-scattered) over the expert TP group
// after the dispatch: etp (T / t) top_k copies of h bf16 values per GPU, as Megatron-Core's
// all-to-all dispatcher does. Unfolded (etp = tp) the gather is top_k times the layer's b s h.
TEST(ExpertFolding, ExpertTpSplitsTheExpertsAndGathersTheDispatchedCopies) {
  const perf::Model m = test::small_model(true);
  const perf::Training tr = folding_training(64);
  const spec::Cluster c = test::cluster("H100-SXM", 16, 8);
  const perf::Strategy one = moe_strategy(4, 4, 4, 1), two = moe_strategy(4, 4, 4, 2),
                       whole = moe_strategy(4, 4, 4, 0);
  // Weights: E / ep = 4 experts per GPU per MoE layer, 2 bytes per parameter.
  const double x = 2.0 * static_cast<double>(m.moe_layers()) * 4.0 * m.expert_params();
  const double w1 = perf::memory_use(m, tr, one).weights_bytes;
  const double w2 = perf::memory_use(m, tr, two).weights_bytes;
  const double w4 = perf::memory_use(m, tr, whole).weights_bytes;
  EXPECT_NEAR(w1 - w2, x / 2, 1e-9 * x);
  EXPECT_NEAR(w2 - w4, x / 4, 1e-9 * x);
  // The gathers over the expert TP group, per micro-batch pass of the 12 MoE layers.
  const double mb = 64.0 / 4.0, tokens = 1024.0, h = 1024.0;
  auto etp_ops = [&](const perf::Strategy& s, double* bytes) {
    const perf::Placement pl(c, s.degrees());
    double n = 0;
    for (const perf::CommOp& op : perf::build_comm_schedule(m, tr, s, pl))
      if (op.axis == Axis::etp && op.phase == perf::Phase::forward &&
          op.op == perf::CollectiveOp::all_gather) {
        n += op.count;
        *bytes = op.bytes;
        EXPECT_EQ(op.parallelism, perf::Parallelism::sp);
      }
    return n;
  };
  double b2 = 0, b4 = 0, b1 = 0;
  EXPECT_DOUBLE_EQ(etp_ops(two, &b2), 12 * mb);
  EXPECT_DOUBLE_EQ(b2, tokens / 4 * 2 * 2 * h * 2);  // etp T / t top_k h, bf16
  EXPECT_DOUBLE_EQ(etp_ops(whole, &b4), 12 * mb);
  EXPECT_DOUBLE_EQ(b4, tokens * 2 * h * 2);  // top_k (2) times the layer's b s h
  EXPECT_DOUBLE_EQ(etp_ops(one, &b1), 0.0);
  // The same work however the experts are split; every layout runs.
  const spec::NetworkDesign net = test::design_spread(spec::DesignKind::rail_optimized);
  const perf::IterationTime t1 = perf::estimate(m, tr, one, c, net);
  const perf::IterationTime t2 = perf::estimate(m, tr, two, c, net);
  const perf::IterationTime t4 = perf::estimate(m, tr, whole, c, net);
  EXPECT_DOUBLE_EQ(t2.model_flops, t1.model_flops);
  EXPECT_DOUBLE_EQ(t2.model_flops, t4.model_flops);
  // The expert TP group's exposed gathers: TP time grows with etp (none at 1).
  EXPECT_LT(t1.breakdown.tp_comm_s, t2.breakdown.tp_comm_s);
  EXPECT_LT(t2.breakdown.tp_comm_s, t4.breakdown.tp_comm_s);
}

// The structured placements' shapes of the folded axes agree with the groups themselves.
TEST(ExpertFolding, ShapesOfFoldedAxesMatchTheirGroups) {
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  for (perf::PlacementKind kind :
       {perf::PlacementKind::rail_aligned, perf::PlacementKind::tp_across_domains}) {
    for (std::int64_t etp : {1, 2})
      for (std::int64_t ep : {2, 4, 8, 16, 32}) {
        if (32 % (etp * ep) != 0) continue;
        const perf::Degrees d{4, 2, 8, ep, 1, 0, etp};
        const perf::Placement pl(c, d, kind);
        for (Axis a : {Axis::ep, Axis::edp, Axis::etp}) {
          SCOPED_TRACE(fmt::format("{} etp {} ep {} {}", perf::to_string(kind), etp, ep,
                                   perf::to_string(a)));
          const perf::GroupShape sh = pl.shape(a);
          std::int64_t domains = 0, per_domain = 0;
          for (const auto& g : groups(pl, a)) {
            std::set<std::int64_t> ds;
            std::map<std::int64_t, std::int64_t> in;
            for (std::int64_t gpu : g) {
              ds.insert(gpu / c.hb_domain);
              ++in[gpu / c.hb_domain];
            }
            domains = std::max<std::int64_t>(domains, static_cast<std::int64_t>(ds.size()));
            for (const auto& [dom, n] : in) per_domain = std::max(per_domain, n);
          }
          EXPECT_EQ(sh.size, pl.axis_size(a));
          EXPECT_EQ(sh.domains, domains);
          EXPECT_EQ(sh.per_domain, per_domain);
        }
      }
  }
}

TEST(ExpertFolding, FoldedExpertsAreWholeOnEveryGpu) {
  const perf::Model m = test::small_model(true);
  const perf::Training tr = folding_training(64);
  const perf::Strategy unfolded = moe_strategy(2, 8, 4, 0);
  perf::Strategy folded = unfolded;
  folded.etp = 1;
  ASSERT_TRUE(folded.folded());
  ASSERT_FALSE(unfolded.folded());
  // bf16 weights, no distributed optimizer, one stage: 2 bytes per parameter held. Each GPU holds
  // E / ep = 4 experts; unfolded half of each (t = 2), folded whole.
  const double expert_unfolded = static_cast<double>(m.moe_layers()) * 4.0 * m.expert_params() / 2;
  const double dw = perf::memory_use(m, tr, folded).weights_bytes -
                    perf::memory_use(m, tr, unfolded).weights_bytes;
  EXPECT_NEAR(dw, 2.0 * expert_unfolded, 1e-9 * expert_unfolded);
  // The model FLOPs are the same work, however it is split.
  const spec::Cluster c = test::cluster("H100-SXM", 16, 8);
  const spec::NetworkDesign net = test::design_spread(spec::DesignKind::rail_optimized);
  const perf::IterationTime a = perf::estimate(m, tr, unfolded, c, net);
  const perf::IterationTime b = perf::estimate(m, tr, folded, c, net);
  EXPECT_DOUBLE_EQ(a.model_flops, b.model_flops);
  EXPECT_GT(b.iteration_time_s, 0);
}

// An MoE layer sorts its tokens by expert and back through HBM (docs/model.md section 3): a GPU
// with T = 4,096 tokens of hidden 2,048, top 8, TP 2 unfolded (its own 2,048 tokens, 16,384
// copies; its experts run the TP group's 32,768 rows): permute and unpermute 16,384 rows, sort and
// unsort 32,768, each 8 KiB read and written; one local expert skips the sort; the backward reads
// the expert outputs once more (4 KiB per own copy).
TEST(ExpertFolding, TokenPermutationMovesEachRoutedRowThroughHbm) {
  const double row = 2.0 * 2048 * 2;
  const perf::MoePermutationBytes many = perf::moe_permutation_bytes(16384, 32768, 16, 2048);
  EXPECT_DOUBLE_EQ(many.fwd, 2 * 16384 * row + 2 * 32768 * row);
  EXPECT_DOUBLE_EQ(many.bwd, many.fwd + 16384 * 2048 * 2.0);
  const perf::MoePermutationBytes one = perf::moe_permutation_bytes(16384, 32768, 1, 2048);
  EXPECT_DOUBLE_EQ(one.fwd, 2 * 16384 * row);
  EXPECT_DOUBLE_EQ(one.bwd, one.fwd + 16384 * 2048 * 2.0);
  // Folded (etp 1) the experts run the GPU's own copies: the same rows every pass.
  const perf::MoePermutationBytes folded = perf::moe_permutation_bytes(16384, 16384, 16, 2048);
  EXPECT_DOUBLE_EQ(folded.fwd, 4 * 16384 * row);
}

TEST(ExpertFolding, FoldedMoeLayersKeepOnlyTheAttentionsSequenceParallelPair) {
  perf::Model m = test::small_model(true);
  m.moe_every = 2;  // 6 of the 12 layers are MoE
  const perf::Training tr = folding_training(64);
  const spec::Cluster c = test::cluster("H100-SXM", 16, 8);
  auto sp_count = [&](const perf::Model& model, const perf::Strategy& s) {
    const perf::Placement pl(c, s.degrees());
    double n = 0;
    for (const perf::CommOp& op : perf::build_comm_schedule(model, tr, s, pl))
      if (op.parallelism == perf::Parallelism::sp && op.phase == perf::Phase::forward &&
          op.op == perf::CollectiveOp::all_gather)
        n += op.count;
    return n;
  };
  const perf::Strategy unfolded = moe_strategy(2, 8, 4, 0);
  perf::Strategy folded = unfolded;
  folded.etp = 1;
  const double mb = 64.0 / 8.0;
  EXPECT_DOUBLE_EQ(sp_count(m, unfolded), 2.0 * 12 * mb);
  EXPECT_DOUBLE_EQ(sp_count(m, folded), (2.0 * 12 - 6) * mb);
  // Shared experts are split over the TP group: their MoE layers keep the FFN's pair.
  perf::Model shared = m;
  shared.shared_experts = 1;
  shared.shared_expert_ffn_hidden = 1024;
  EXPECT_DOUBLE_EQ(sp_count(shared, folded), 2.0 * 12 * mb);
  // The expert weights' gradients reduce over the tp x dp / ep others.
  const perf::Placement pl(c, folded.degrees());
  EXPECT_EQ(pl.axis_size(Axis::edp), 2 * 8 / 4);
}

TEST(ExpertFolding, BadFoldingIsRefusedNamingTheKnob) {
  const perf::Model moe = test::small_model(true);
  const spec::Cluster c = test::cluster("H100-SXM", 16, 8);
  auto field = [&](const perf::Model& m, const perf::Training& tr, const perf::Strategy& s) {
    try {
      perf::validate(m, tr, s, c);
    } catch (const InputError& e) {
      return e.field() + ": " + e.message();
    }
    return std::string("accepted");
  };
  const perf::Training tr = folding_training(64);
  perf::Strategy s = moe_strategy(4, 4, 4, 3);  // etp 3 does not divide tp 4
  EXPECT_EQ(field(moe, tr, s).rfind("--etp: got 3, expected a divisor of tp = 4", 0), 0u)
      << field(moe, tr, s);
  s.etp = 2;
  EXPECT_EQ(field(moe, tr, s), "accepted");
  s.ep = 16;  // etp x ep = 32 > tp x dp = 16
  EXPECT_EQ(field(moe, tr, s).rfind("--ep: etp x ep = 2 x 16 must divide tp x cp x dp", 0), 0u)
      << field(moe, tr, s);
  s.ep = 4;
  s.etp = 1;
  EXPECT_EQ(field(moe, tr, s), "accepted");
  s.sp = false;
  EXPECT_EQ(field(moe, tr, s).rfind("--etp", 0), 0u);
  s.sp = true;
  const perf::Training mcore =
      spec::make_training(64, 1024, spec::load_stack("megatron-core-2024"), spec::Dtype::bf16);
  EXPECT_NE(field(moe, mcore, s).find("has no expert folding"), std::string::npos);
  EXPECT_NE(field(test::small_model(false), tr, moe_strategy(4, 4, 1, 1)).find("is dense"),
            std::string::npos);
  s.ep = 32;  // more than tp x dp = 16
  EXPECT_EQ(field(moe, tr, s).rfind("--ep: etp x ep = 1 x 32 must divide tp x cp x dp", 0), 0u);
  // Unfolded, ep 8 over dp 4 is refused with the way out named.
  EXPECT_NE(field(moe, tr, moe_strategy(4, 4, 8, 0)).find("--etp 1"), std::string::npos);
  // Hybrid sharding shards the dense group's state: with folded experts it is not modelled.
  perf::Training fsdp = tr;
  fsdp.stack.knobs.distributed_optimizer = spec::Sharding::full;
  fsdp.stack.knobs.hsdp = true;
  perf::Strategy h = moe_strategy(4, 4, 1, 1);
  h.dist_opt = true;
  h.hsdp = 2;
  EXPECT_EQ(field(moe, fsdp, h).rfind("--hsdp: hybrid sharding with folded experts", 0), 0u)
      << field(moe, fsdp, h);
  h.etp = 0;
  EXPECT_EQ(field(moe, fsdp, h), "accepted");
  // A pin of etp 1 on a stack without folding is refused before any search.
  perf::StrategyPins pins;
  pins.etp = 1;
  try {
    perf::check_pins(moe, mcore, pins);
    ADD_FAILURE() << "etp 1 pinned on megatron-core-2024 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--etp");
    EXPECT_NE(e.message().find("has no expert folding"), std::string::npos) << e.message();
  }
}

// The search tries folded layouts where the stack folds (and only there), counts them as it
// visits them, and a plan reads back as it prints.
TEST(ExpertFolding, SearchVisitsFoldedLayoutsOnStacksThatFold) {
  const perf::Model m = test::small_model(true);
  const spec::Cluster c = test::cluster("H100-SXM", 16, 8);
  const spec::NetworkDesign net = test::design_spread(spec::DesignKind::rail_optimized);
  for (const char* stack : {"nemo-perf-2025", "megatron-core-2024"}) {
    SCOPED_TRACE(stack);
    const perf::Training tr =
        spec::make_training(64, 1024, spec::load_stack(stack), spec::Dtype::bf16);
    const perf::EstimateContext ctx = perf::make_context(m, tr, c, net);
    perf::PlanOptions opt;
    opt.top = 1000;
    opt.distinct_shapes = true;
    const perf::PlanResult r = perf::plan(ctx, opt);
    EXPECT_EQ(perf::count_strategies(ctx, {}), r.evaluated);
    EXPECT_GE(perf::estimate_candidates(ctx, {}), r.evaluated);
    int folded = 0, wide = 0;
    for (const perf::Plan& p : r.plans) {
      folded += p.strategy.folded();
      wide += p.strategy.folded() && p.strategy.dp % p.strategy.ep != 0;
      if (p.strategy.folded()) {
        EXPECT_TRUE(p.strategy.sp);
        EXPECT_EQ(p.strategy.expert_tp(), 1);  // sizes between 1 and tp only where pinned
      }
    }
    const bool folds = std::string(stack) == "nemo-perf-2025";
    EXPECT_EQ(folded > 0, folds);
    EXPECT_EQ(wide > 0, folds);  // EP across the TP ranks: only folded
  }
  {
    // A stack with hybrid sharding that also folds: the search never pairs the two.
    spec::Stack st = spec::load_stack("fsdp-2024");
    st.knobs.expert_folding = true;
    const perf::Training tr = spec::make_training(64, 1024, st, spec::Dtype::bf16);
    const perf::EstimateContext ctx = perf::make_context(m, tr, c, net);
    perf::PlanOptions opt;
    opt.top = 1000;
    const perf::PlanResult r = perf::plan(ctx, opt);
    EXPECT_EQ(perf::count_strategies(ctx, {}), r.evaluated);
    int folded = 0;
    for (const perf::Plan& p : r.plans) {
      folded += p.strategy.folded();
      EXPECT_FALSE(p.strategy.folded() && p.strategy.hsdp > 0);
    }
    EXPECT_GT(folded, 0);
  }
  {
    // A pinned size between 1 and tp is searched alone, and counted as it is visited.
    const perf::Training tr = folding_training(64);
    const perf::EstimateContext ctx = perf::make_context(m, tr, c, net);
    perf::PlanOptions opt;
    opt.top = 1000;
    opt.pins.tp = 4;
    opt.pins.etp = 2;
    const perf::PlanResult r = perf::plan(ctx, opt);
    EXPECT_EQ(perf::count_strategies(ctx, opt.pins), r.evaluated);
    ASSERT_FALSE(r.plans.empty());
    for (const perf::Plan& p : r.plans) EXPECT_EQ(p.strategy.expert_tp(), 2);
  }
  perf::Strategy s = moe_strategy(2, 8, 16, 1);
  const std::string text = perf::describe_degrees(s);
  EXPECT_EQ(text, "tp2 pp1 dp8 ep16 etp1");
  const perf::Training tr = folding_training(64);
  const perf::Strategy back = perf::plan_from_text(m, tr, text, c, "--against");
  EXPECT_TRUE(back.folded());
  EXPECT_EQ(back.ep, 16);
  // etp = tp reads as unfolded.
  EXPECT_FALSE(perf::plan_from_text(m, tr, "tp2 pp1 dp8 ep8 etp2", c, "--against").folded());
}

}  // namespace
}  // namespace railsim
