#pragma once
// The named choices of a simulated collective, parsed from text (the `railsim sim` options and
// the Python module's arguments): which groups run it, the reduction algorithm and aggregation
// (cross-rail forwarding is the network design's: spec::parse_forwarding_mode, parse_forward_via).
// Each throws InputError naming `option` with the valid values.
#include <string>
#include <vector>

#include "railsim/perf/comm_schedule.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/topo/fabric.hpp"

namespace railsim::sim {

// all (one group of every GPU), rail (every rail), domain (every HB domain), rail0, domain0,
// pair (the first and the last GPU).
std::vector<Group> parse_groups(const std::string& name, const spec::Cluster& c,
                                const std::string& option = "--group");
// The algorithm of `op`: all_to_all is always direct and send_recv p2p; reductions take ring or
// hierarchical.
perf::Algorithm parse_collective_algorithm(const std::string& s, perf::CollectiveOp op,
                                           const std::string& option = "--algorithm");
Aggregation parse_aggregation(const std::string& s, const std::string& option = "--aggregate");

}  // namespace railsim::sim
