#pragma once
// Collective requests for the simulator's tests.
#include <utility>
#include <vector>

#include "railsim/sim/collective.hpp"

namespace railsim::test {

// `op` of `bytes` per member over `groups`, by algorithm `a`.
inline sim::CollectiveRequest collective_request(perf::CollectiveOp op, double bytes,
                                                 std::vector<sim::Group> groups,
                                                 perf::Algorithm a = perf::Algorithm::ring) {
  sim::CollectiveRequest r;
  r.op = op;
  r.algorithm = a;
  r.bytes = bytes;
  r.groups = std::move(groups);
  return r;
}

}  // namespace railsim::test
