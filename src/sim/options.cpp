#include "railsim/sim/options.hpp"

#include <fmt/format.h>

#include "railsim/core/error.hpp"

namespace railsim::sim {

std::vector<Group> parse_groups(const std::string& g, const spec::Cluster& c,
                                const std::string& option) {
  if (g == "all") return groups_all(c);
  if (g == "rail") return groups_rails(c);
  if (g == "domain") return groups_domains(c);
  if (g == "rail0") return {groups_rails(c).front()};
  if (g == "domain0") return {groups_domains(c).front()};
  if (g == "pair") {
    if (c.gpus < 2) throw InputError(option, "pair needs at least 2 GPUs");
    return {{0, c.gpus - 1}};
  }
  throw InputError(option, fmt::format("unknown group '{}'; valid: all, rail, domain, rail0, "
                                       "domain0, pair",
                                       printable(g)));
}

perf::Algorithm parse_collective_algorithm(const std::string& s, perf::CollectiveOp op,
                                           const std::string& option) {
  if (op == perf::CollectiveOp::all_to_all) return perf::Algorithm::direct;
  if (op == perf::CollectiveOp::send_recv) return perf::Algorithm::p2p;
  const perf::Algorithm a = perf::parse_algorithm(s, option);
  if (a != perf::Algorithm::ring && a != perf::Algorithm::hierarchical)
    throw InputError(option,
                     fmt::format("{} is for {}; reductions run ring or hierarchical", printable(s),
                                 a == perf::Algorithm::direct ? "all_to_all" : "send_recv"));
  return a;
}

Aggregation parse_aggregation(const std::string& s, const std::string& option) {
  if (s == "auto") return Aggregation::automatic;
  if (s == "on") return Aggregation::on;
  if (s == "off") return Aggregation::off;
  throw InputError(option, fmt::format("unknown value '{}'; valid: auto, on, off", printable(s)));
}

}  // namespace railsim::sim
