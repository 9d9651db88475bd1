// The JSON documents of estimate and plan (perf/report.hpp), the one writer the CLI and the Python
// module share: every field carries the value of the computation it reports.
#include <gtest/gtest.h>

#include "railsim/core/json.hpp"
#include "railsim/perf/report.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/spec/stack.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
// A Megatron-LM run on A100s: the model, batch = GPUs, the 2022 stack, 8 GPUs per HB domain.
struct MegatronRun {
  MegatronRun(const std::string& model, std::int64_t gpus, spec::DesignKind kind)
      : m(load_model(model)),
        tr(spec::make_training(gpus, 2048, spec::load_stack("megatron-lm-2022", "stack"))),
        c(test::cluster("A100-SXM-80GB", gpus, 8)),
        d(test::design(kind)) {}
  Model m;
  Training tr;
  spec::Cluster c;
  spec::NetworkDesign d;
};
}  // namespace

TEST(Documents, EstimateCarriesTheEstimateTheRunAndTheTimedSchedule) {
  const MegatronRun run("Megatron-175B", 64, spec::DesignKind::rail_only);
  const auto& [m, tr, c, d] = run;
  StrategyPins pins;
  pins.tp = 8;
  pins.pp = 8;
  const Strategy s = default_strategy(m, tr, pins, c);
  const IterationTime it = estimate(m, tr, s, c, d);
  const Json j = estimate_document(m, tr, s, c, d);
  EXPECT_EQ(j.at("iteration_time_s").get<double>(), it.iteration_time_s);
  EXPECT_EQ(j.at("model"), "Megatron-175B");
  EXPECT_EQ(j.at("gpus"), 64);
  EXPECT_EQ(j.at("gpu"), "A100-SXM-80GB");
  EXPECT_EQ(j.at("hb_domain"), 8);
  EXPECT_EQ(j.at("design"), "rail_only");
  EXPECT_EQ(j.at("global_batch"), 64);
  EXPECT_EQ(j.at("seq_len"), 2048);
  EXPECT_EQ(j.at("stack"), "megatron-lm-2022");
  EXPECT_EQ(j.at("dtype"), "bf16");
  EXPECT_EQ(j.at("strategy"), to_json(s));
  // The error band is the one of this GPU and stack, around this time.
  EXPECT_EQ(j.at("error_band"),
            to_json(error_band("A100-SXM-80GB", "megatron-lm-2022"), it.iteration_time_s));
  // "comm" lists the schedule that was timed: one entry per op, tensor and pipeline ops present.
  const Placement pl(c, s.degrees());
  const CommSchedule cs = build_comm_schedule(m, tr, s, pl);
  ASSERT_TRUE(j.at("comm").is_array());
  EXPECT_EQ(j.at("comm").size(), static_cast<std::size_t>(cs.size));
  EXPECT_EQ(j.at("comm"), comm_to_json(cs, pl, make_network_model(c, d)));
}

TEST(Documents, EstimateOfAnInvalidStrategyIsAnInputError) {
  const MegatronRun run("Megatron-22B", 8, spec::DesignKind::rail_optimized);
  const auto& [m, tr, c, d] = run;
  Strategy s;
  s.tp = 3;  // divides neither the heads nor the GPUs
  s.pp = 1;
  s.dp = 1;
  EXPECT_THROW(estimate_document(m, tr, s, c, d), InputError);
}

TEST(Documents, PlanRanksThePlansBestFirstWithTheirBands) {
  const MegatronRun run("Megatron-22B", 256, spec::DesignKind::rail_optimized);
  const auto& [m, tr, c, d] = run;
  PlanOptions po;
  po.top = 3;
  const PlanResult r = plan(make_context(m, tr, c, d), po);
  ASSERT_EQ(r.plans.size(), 3u);
  const Json j = plan_document(m, tr, c, d, r);
  EXPECT_EQ(j.at("evaluated"), r.evaluated);
  EXPECT_EQ(j.at("feasible"), r.feasible);
  EXPECT_EQ(j.at("model"), "Megatron-22B");
  EXPECT_EQ(j.at("design"), "rail_optimized");
  EXPECT_EQ(j.at("gpus"), 256);
  const ErrorBand band = error_band("A100-SXM-80GB", "megatron-lm-2022");
  ASSERT_EQ(j.at("plans").size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const Json& p = j.at("plans")[i];
    EXPECT_EQ(p.at("rank"), i + 1);
    EXPECT_EQ(p.at("iteration_time_s").get<double>(), r.plans[i].time.iteration_time_s);
    EXPECT_EQ(p.at("error_band"), to_json(band, r.plans[i].time.iteration_time_s));
    if (i > 0) {
      EXPECT_LE(j.at("plans")[i - 1].at("iteration_time_s").get<double>(),
                p.at("iteration_time_s").get<double>());
    }
  }
  // The run's fields are those of estimate's document.
  for (const char* k : {"model", "gpus", "gpu", "hb_domain", "design", "global_batch", "seq_len",
                        "stack", "dtype", "flash_attention"})
    EXPECT_EQ(j.at(k), run_json(m, tr, c, d).at(k)) << k;
}
