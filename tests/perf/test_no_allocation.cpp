// "No allocation in the evaluation": count heap allocations while one strategy is timed, once the
// contention model has seen its collectives (the search meets each op signature thousands of
// times; the first meeting builds its link-load census).
#include <gtest/gtest.h>

#include "../common/count_allocations.hpp"
#include "railsim/perf/iteration.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

TEST(NoAllocation, OneGpt1TStrategyOnEachDesign) {
  const Model m = load_model("GPT-1T");
  const Training tr{4096, 2048, Dtype::bf16};
  for (auto [gpu, k] : {std::pair{"H100-SXM", 8}, std::pair{"GH200", 256}}) {
    const spec::Cluster c = test::cluster(gpu, 32768, k);
    for (auto kind :
         {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only, spec::DesignKind::ideal}) {
      const EstimateContext ctx = make_context(m, tr, c, test::design(kind));
      Strategy s;
      s.tp = 8;
      s.pp = 32;
      s.dp = 128;
      s.interleave = 4;
      s.recompute = Recompute::selective;
      s.sp = true;
      s.dist_opt = true;
      s.dp_overlap = true;
      ASSERT_TRUE(is_valid(m, tr, s, c));
      const IterationTime first = estimate(ctx, s);  // builds the census of each op signature
      const long before = test::allocation_count();
      const IterationTime it = estimate(ctx, s);
      const long after = test::allocation_count();
      EXPECT_EQ(after - before, 0) << gpu;
      EXPECT_GT(it.iteration_time_s, 0.0);
      EXPECT_EQ(it.iteration_time_s, first.iteration_time_s);
    }
  }
}
