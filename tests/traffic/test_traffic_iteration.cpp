// The traffic of one iteration as `railsim traffic` reports it: which strategy (the one given or
// the best plan's), and a matrix that carries the bytes the time model charges.
#include <gtest/gtest.h>

#include <string>

#include "railsim/core/error.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/traffic/iteration.hpp"

using namespace railsim;

namespace {

struct Case {
  perf::Model m = perf::load_model("Megatron-22B");
  perf::Training tr;
  spec::Cluster c = spec::make_cluster(spec::load_gpu("H100-SXM"), 64, 8, 400, 450, 1);
  spec::NetworkDesign d =
      spec::make_network_design(spec::DesignKind::rail_only, spec::load_switch("QM9700"));
  Case() {
    tr.global_batch = 4096;
    tr.seq_len = m.seq_len;
  }
};

perf::Strategy best_plan(const Case& s, const perf::StrategyPins& pins) {
  perf::PlanOptions po;
  po.pins = pins;
  po.top = 1;
  const perf::PlanResult r = perf::plan(perf::make_context(s.m, s.tr, s.c, s.d), po);
  EXPECT_FALSE(r.plans.empty());
  return r.plans.front().strategy;
}

}  // namespace

TEST(TrafficIteration, PinnedDegreesGiveTheDefaultStrategyOfThePins) {
  const Case s;
  perf::StrategyPins pins;
  pins.tp = 8;
  pins.pp = 2;
  const auto choice = traffic::choose_strategy(s.m, s.tr, pins, s.c, s.d, /*best=*/false);
  EXPECT_FALSE(choice.searched);
  EXPECT_EQ(choice.evaluated, 0);
  const perf::Strategy want = perf::default_strategy(s.m, s.tr, pins, s.c);
  EXPECT_EQ(choice.strategy.tp, 8);
  EXPECT_EQ(choice.strategy.pp, 2);
  EXPECT_EQ(choice.strategy.dp, want.dp);
  EXPECT_EQ(choice.strategy.micro_batch, want.micro_batch);
}

TEST(TrafficIteration, WithoutDegreesOrWithBestTheSearchChooses) {
  const Case s;
  const auto free = traffic::choose_strategy(s.m, s.tr, {}, s.c, s.d, /*best=*/false);
  EXPECT_TRUE(free.searched);
  EXPECT_GT(free.evaluated, 1);
  const perf::Strategy want = best_plan(s, {});
  EXPECT_EQ(perf::describe(free.strategy), perf::describe(want));
  // --best with a pin: the best plan that keeps it.
  perf::StrategyPins pins;
  pins.tp = 4;
  const auto best = traffic::choose_strategy(s.m, s.tr, pins, s.c, s.d, /*best=*/true);
  EXPECT_TRUE(best.searched);
  EXPECT_EQ(best.strategy.tp, 4);
  EXPECT_EQ(perf::describe(best.strategy), perf::describe(best_plan(s, pins)));
}

TEST(TrafficIteration, NoFeasiblePlanAsksForAStrategy) {
  Case s;
  s.m = perf::load_model("GPT-1T");
  s.tr.seq_len = s.m.seq_len;
  try {
    (void)traffic::choose_strategy(s.m, s.tr, {}, s.c, s.d, /*best=*/false);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--model");
    const std::string msg = e.message();
    EXPECT_NE(msg.find("no feasible strategy"), std::string::npos) << msg;
    EXPECT_NE(msg.find("; give --tp/--pp/--dp to see the traffic of a strategy anyway"),
              std::string::npos)
        << msg;
  }
}

TEST(TrafficIteration, MatrixCarriesTheWireBytesOfTheStrategyAsPlaced) {
  const Case s;
  perf::StrategyPins pins;
  pins.tp = 8;
  pins.pp = 2;
  const perf::Strategy st = traffic::choose_strategy(s.m, s.tr, pins, s.c, s.d, false).strategy;
  for (const auto kind : {perf::PlacementKind::rail_aligned, perf::PlacementKind::shuffled}) {
    const auto t = traffic::iteration_traffic(s.m, s.tr, st, s.c, s.d, kind, 7);
    const perf::Placement pl(s.c, st.degrees(), kind, 7);
    const perf::WireBytes want = perf::wire_bytes(perf::build_comm_schedule(s.m, s.tr, st, pl), pl);
    EXPECT_NEAR(t.summary.total_bytes, want.total(), 1e-9 * want.total());
    EXPECT_EQ(t.summary.design, spec::DesignKind::rail_only);
    EXPECT_EQ(t.matrix.gpus(), 64);
    EXPECT_GT(t.time.iteration_time_s, 0);
    EXPECT_DOUBLE_EQ(t.time.iteration_time_s,
                     perf::estimate(perf::make_context(s.m, s.tr, s.c, s.d, kind), st, pl,
                                    perf::build_comm_schedule(s.m, s.tr, st, pl))
                         .iteration_time_s);
  }
}
