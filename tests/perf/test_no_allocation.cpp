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
  for (auto [gpu, k] : {std::pair{"H100-SXM", 8}, std::pair{"GH200", 256}}) {
    for (auto kind :
         {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only, spec::DesignKind::ideal}) {
      const test::Setting g("GPT-1T", 4096, gpu, 32768, k, kind);
      const Strategy s = test::megatron_core_strategy(8, 32, 128, 4);
      ASSERT_TRUE(is_valid(g.m, g.tr, s, g.c));
      const IterationTime first = estimate(g.ctx, s);  // builds the census of each op signature
      const long before = test::allocation_count();
      const IterationTime it = estimate(g.ctx, s);
      const long after = test::allocation_count();
      EXPECT_EQ(after - before, 0) << gpu;
      EXPECT_GT(it.iteration_time_s, 0.0);
      EXPECT_EQ(it.iteration_time_s, first.iteration_time_s);
    }
  }
}
