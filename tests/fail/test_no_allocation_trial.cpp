// The Monte Carlo's inner loop does not allocate: count heap allocations over whole trials.
#include <gtest/gtest.h>

#include "../common/count_allocations.hpp"
#include "railsim/fail/monte_carlo.hpp"
#include "test_fail_common.hpp"

using namespace railsim;
using namespace railsim::fail;

TEST(NoAllocation, TrialsOnBothDesignsAndPolicies) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 32768, 8);
  const spec::FailureRates rates = spec::load_failure_rates("llama3-meta-2024");
  for (auto kind : {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only}) {
    for (auto policy : {DegradedPolicy::swap_at_checkpoint, DegradedPolicy::until_repair}) {
      RunParams p;
      p.policy = policy;
      const FailureModel m = make_failure_model(c, test::fail_design(kind), rates, p);
      TrialWorkspace ws(m);
      const long before = test::allocation_count();
      std::int64_t events = 0;
      for (std::uint64_t t = 0; t < 20; ++t) events += simulate_trial(m, 1, t, ws).interruptions;
      EXPECT_EQ(test::allocation_count() - before, 0) << spec::to_string(kind);
      EXPECT_GT(events, 0);
    }
  }
}
