// Accuracy against measured Megatron-LM runs (Korthikanti et al. 2022, tests/data/
// megatron-korthikanti-2022.json): iteration time within 5% of every point and 3% on average,
// Figure 1 memory within 10%, with the A100 preset's efficiency constants (set once, never per
// case). The table is reproduced in docs/validation.md.
#include <gtest/gtest.h>

#include <cmath>

#include "../common/scratch.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/validation.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

TEST(Validation, IterationTimeKorthikanti2022) {
  const Json d = test::read_test_data("megatron-korthikanti-2022.json");
  const auto design = test::design(spec::DesignKind::rail_optimized);
  double sum = 0;
  int n = 0;
  for (const char* mode : {"full", "selective_sp"}) {
    for (const Json& row : d["models"]) {
      const KorthikantiRun r =
          korthikanti_run(d["common"], row, std::string(mode) == "selective_sp");
      const double measured = d["iteration_time_s"][mode][r.model.name].get<double>();
      const IterationTime it = estimate(r.model, r.tr, r.s, r.cluster, design);
      const double err = it.iteration_time_s / measured - 1.0;
      EXPECT_LT(std::fabs(err), 0.05) << r.model.name << " " << mode << ": " << it.iteration_time_s
                                      << " s vs " << measured << " s";
      EXPECT_NEAR(it.breakdown.total(), it.iteration_time_s, 1e-9 * it.iteration_time_s);
      sum += std::fabs(err);
      ++n;
    }
  }
  EXPECT_EQ(n, 8);
  EXPECT_LT(sum / n, 0.03);
}

TEST(Validation, MfuKorthikanti2022) {
  // The README's MFU of the selective_sp runs follows from the times; within 3 points.
  const Json d = test::read_test_data("megatron-korthikanti-2022.json");
  const auto design = test::design(spec::DesignKind::rail_optimized);
  for (const Json& row : d["models"]) {
    const KorthikantiRun r = korthikanti_run(d["common"], row, true);
    const IterationTime it = estimate(r.model, r.tr, r.s, r.cluster, design);
    EXPECT_NEAR(it.mfu, d["utilization_selective_sp"]["mfu"][r.model.name].get<double>(), 0.03)
        << r.model.name;
    EXPECT_NEAR(it.hfu, d["utilization_selective_sp"]["hfu"][r.model.name].get<double>(), 0.03)
        << r.model.name;
  }
}

TEST(Validation, MemoryFigure1) {
  const Json d = test::read_test_data("megatron-korthikanti-2022.json");
  const Json& mem = d["memory_gib_per_gpu"];
  for (const Json& row : d["models"]) {
    KorthikantiRun r = korthikanti_run(d["common"], row, true);
    const std::string name = r.model.name;
    MemoryUse sel = memory_use(r.model, r.tr, r.s);
    const double states =
        (sel.weights_bytes + sel.gradients_bytes + sel.optimizer_bytes) / units::kGiB;
    EXPECT_NEAR(states / mem["params_optimizer"][name].get<double>(), 1.0, 0.10) << name;
    EXPECT_NEAR(
        sel.activations_bytes / units::kGiB / mem["activations_selective_sp"][name].get<double>(),
        1.0, 0.10)
        << name;
    r.s.recompute = Recompute::none;
    r.s.sp = false;
    const MemoryUse base = memory_use(r.model, r.tr, r.s);
    EXPECT_NEAR(
        base.activations_bytes / units::kGiB / mem["activations_baseline"][name].get<double>(), 1.0,
        0.10)
        << name;
  }
}

TEST(Validation, RatiosImplyTheInterleaving) {
  // Figure 1 baseline activations / (L layers x s b h (10 + 24/t + 5 a s/(h t))) = 1 + (p-1)/(p v):
  // the measured/formula ratios 1.2917 (175B, p = 8) and 1.3238 (530B, p = 35) both give v = 3;
  // 22B (p = 1) and 1T give ratio 1 (v = 1), the interleaving the runs are modelled with.
  const Json d = test::read_test_data("megatron-korthikanti-2022.json");
  for (const Json& row : d["models"]) {
    const double s = 2048, b = row["micro_batch"].get<double>(), h = row["hidden"].get<double>();
    const double a = row["heads"].get<double>(), t = row["tp"].get<double>(),
                 p = row["pp"].get<double>();
    const double L = row["layers"].get<double>();
    const double formula = L * s * b * h * (10 + 24 / t + 5 * a * s / (h * t)) / units::kGiB;
    const double ratio =
        d["memory_gib_per_gpu"]["activations_baseline"][row["name"].get<std::string>()]
            .get<double>() /
        formula;
    const double v = static_cast<double>(korthikanti_interleave(row["name"].get<std::string>()));
    EXPECT_NEAR(ratio, v == 1 ? 1.0 : 1.0 + (p - 1) / (p * v), 0.002) << row["name"];
  }
}

TEST(Validation, ScaleOutHoldOut530B) {
  // Not used to set the constants: 530B on 2240 A100 with DP 8 (abstract: 54.2% MFU with
  // selective recompute + SP, 42.1% with full recompute); global batch 2240 (m = 280 per
  // pipeline as in the DP-1 run). Within 5% relative.
  const Json d = test::read_test_data("megatron-korthikanti-2022.json");
  const Json* row530 = nullptr;
  for (const Json& row : d["models"])
    if (row["name"] == "530B") row530 = &row;
  ASSERT_NE(row530, nullptr);
  const auto design = test::design(spec::DesignKind::rail_optimized);
  for (bool sel : {true, false}) {
    KorthikantiRun r = korthikanti_run(d["common"], *row530, sel);
    r.cluster = test::cluster("A100-SXM-80GB", 2240, 8, 200);
    r.s.dp = 8;
    r.tr.global_batch = 2240;
    const IterationTime it = estimate(r.model, r.tr, r.s, r.cluster, design);
    const double measured =
        d["scale_out_point"][sel ? "mfu_selective_sp" : "mfu_full"].get<double>();
    EXPECT_NEAR(it.mfu / measured, 1.0, 0.05) << (sel ? "selective_sp" : "full");
  }
}
