#include "phases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "railsim/core/cancel.hpp"
#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "transfers.hpp"

namespace railsim::sim::detail {

namespace {

EngineOptions engine_options(const SimConfig& cfg) {
  EngineOptions o;
  o.hop_latency_s = cfg.hop_latency_s;
  o.batch_tolerance = cfg.batch_tolerance;
  o.progress = cfg.progress;
  return o;
}

void record(CollectiveResult& out, Accumulator& acc, PhaseResult ph, const SimResult& r,
            bool by_class, double scale) {
  ph.flows_simulated = r.flows_simulated;
  ph.flows_represented = r.flows_represented * scale;
  ph.events = r.events;
  out.completion_time_s += ph.time_s;
  out.bytes_sent += ph.bytes_sent;
  out.flows_simulated += ph.flows_simulated;
  out.flows_represented += ph.flows_represented;
  acc.add(r, by_class, scale);
  out.phases.push_back(std::move(ph));
}

// Flows one transfer's leg through a NIC becomes: one per NIC, or one per connection when hashed
// (a one-port GPU's connections too), and their join; one when there is a single share.
double nic_flows(const spec::Cluster& c, const SimConfig& cfg) {
  const double shares = cfg.port_balance == spec::PortBalance::hash
                            ? static_cast<double>(std::max(cfg.connections, 1))
                            : static_cast<double>(c.nics_per_gpu);
  return shares > 1 ? shares + 1.0 : 1.0;
}

// Flows one transfer becomes (forwarding legs, pipelined chunks, NIC shares), for the limits
// below.
double flows_per_transfer(const SimNetwork& net, const SimConfig& cfg, std::int64_t s,
                          std::int64_t d) {
  const auto& c = net.cluster;
  if (c.domain_of(s) == c.domain_of(d)) return 1;
  if (!net.rail_only || c.rail_of(s) == c.rail_of(d)) return nic_flows(c, cfg);
  return (cfg.mode == ForwardingMode::pipelined && cfg.chunks > 1 ? cfg.chunks : 1.0) *
         (1.0 + nic_flows(c, cfg));
}

// A path crosses each link class at most once per leg: a bound of a flow's channel entries.
double link_classes(const SimNetwork& net) {
  return static_cast<double>(std::max<std::size_t>(net.class_names.size(), 2));
}

// Refuses a phase before it is built when its memory estimate exceeds --max-memory.
void check_memory(const SimNetwork& net, const SimConfig& cfg, double flows,
                  std::string_view what) {
  const double hops = link_classes(net);
  const double est = estimated_memory_bytes(flows, flows * hops, 2 * flows);
  if (est > cfg.max_memory_bytes)
    throw InputError("--max-memory",
                     fmt::format("{} of {:.0f} flows would need about {:.1f} GB (estimated), more "
                                 "than --max-memory {:.1f} GB; raise it, or use fewer GPUs{}",
                                 what, flows, est / 1e9, cfg.max_memory_bytes / 1e9,
                                 what == "an all-to-all" ? " or --aggregate on" : ""));
}

// One ring phase over several concurrent rings.
void ring_phase(const SimNetwork& net, const SimConfig& cfg, const std::vector<Group>& rings,
                std::int64_t steps, double bytes_per_step, const std::string& name,
                CollectiveResult& out, Accumulator& acc) {
  std::int64_t members = 0;
  double step_flows = 0;  // flows of one step: forwarding legs and chunks counted
  for (const auto& g : rings) {
    if (g.size() < 2) continue;
    members += static_cast<std::int64_t>(g.size());
    for (std::size_t i = 0; i < g.size(); ++i)
      step_flows += flows_per_transfer(net, cfg, g[i], g[(i + 1) % g.size()]);
  }
  if (members == 0 || steps <= 0 || bytes_per_step <= 0) return;
  if (step_flows > static_cast<double>(cfg.max_flows))
    throw InputError("--max-flows", fmt::format("one ring step has {:.0f} flows, more than "
                                                "--max-flows {}; raise it (memory grows with it)",
                                                step_flows, cfg.max_flows));
  const bool scaled =
      steps > 1 && step_flows * static_cast<double>(steps) > static_cast<double>(cfg.max_flows);
  const std::int64_t sim_steps = scaled ? 1 : steps;
  check_memory(net, cfg, step_flows * static_cast<double>(sim_steps), "a ring phase");
  FlowBuilder b(net, cfg, false);
  std::vector<FlowId> prev(static_cast<std::size_t>(members), -1), cur(prev.size(), -1);
  for (std::int64_t s = 0; s < sim_steps; ++s) {
    std::size_t base = 0;
    for (const auto& g : rings) {
      const std::size_t n = g.size();
      if (n < 2) continue;
      for (std::size_t i = 0; i < n; ++i) {
        const FlowId deps[2] = {prev[base + (i + n - 1) % n], prev[base + i]};
        cur[base + i] = b.transfer(g[i], g[(i + 1) % n], bytes_per_step,
                                   std::span<const FlowId>(deps, s == 0 ? 0 : 2));
      }
      base += n;
    }
    std::swap(prev, cur);
  }
  const SimResult r = b.run(engine_options(cfg));
  PhaseResult ph;
  ph.name = name;
  ph.steps = steps;
  ph.step_scaled = scaled;
  const double scale = scaled ? static_cast<double>(steps) : 1.0;
  ph.time_s = r.completion_time_s * scale;
  ph.bytes_sent = b.sent() * scale;
  record(out, acc, std::move(ph), r, false, scale);
}

bool is_whole_cluster(const SimNetwork& net, const std::vector<Group>& groups) {
  if (groups.size() != 1 || static_cast<std::int64_t>(groups[0].size()) != net.cluster.gpus)
    return false;
  for (std::size_t i = 0; i < groups[0].size(); ++i)
    if (groups[0][i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

// Flows of a direct all-to-all among `groups`, as the builder makes them (merging included; an
// upper bound for two-phase): a pair on different rails and domains of a rail-only design is
// forwarded through a peer. Store-and-forward: its first leg is the same flow as the direct
// transfer to that peer (merged), its second leg one more flow. Pipelined: `chunks` pieces per
// leg, first legs merged per source and peer (at most K-1 peers with hb_first, one per other
// domain with rail_first). Pairs on other rails and domains are counted per group from its
// members per domain and per rail: n(n-1) - same-domain pairs - same-rail pairs (a GPU is the
// only one of its domain and rail). On multi-NIC GPUs every leg through a NIC is split over them
// (nic_flows), counted for every pair: an upper bound.
// The pairs of group g on other rails and in other domains (forwarded on rail-only; 0 otherwise),
// counted from its members per domain and per rail (filled in by_domain and by_rail).
double forwarded_pairs(const SimNetwork& net, const Group& g,
                       std::unordered_map<std::int64_t, double>& by_domain,
                       std::unordered_map<std::int64_t, double>& by_rail) {
  by_domain.clear();
  by_rail.clear();
  if (!net.rail_only || g.size() < 2) return 0;
  for (auto gpu : g) {
    by_domain[net.cluster.domain_of(gpu)] += 1;
    by_rail[net.cluster.rail_of(gpu)] += 1;
  }
  const double n = static_cast<double>(g.size());
  double forwarded = n * (n - 1);
  for (const auto& [k, m] : by_domain) forwarded -= m * (m - 1);
  for (const auto& [k, m] : by_rail) forwarded -= m * (m - 1);
  return forwarded;
}

double alltoall_flows(const SimNetwork& net, const SimConfig& cfg,
                      const std::vector<Group>& groups) {
  const double pieces = cfg.mode == ForwardingMode::pipelined && cfg.chunks > 1 ? cfg.chunks : 1;
  double flows = 0;
  std::unordered_map<std::int64_t, double> by_domain, by_rail;
  for (const auto& g : groups) {
    const double n = static_cast<double>(g.size());
    const double pairs = n * (n - 1);
    const double forwarded = forwarded_pairs(net, g, by_domain, by_rail);
    const double peers = cfg.forwarding == topo::Forwarding::hb_first
                             ? static_cast<double>(by_rail.size()) - 1
                             : static_cast<double>(by_domain.size()) - 1;
    const double first_legs = std::min(forwarded, n * std::max(peers, 0.0));
    if (cfg.mode == ForwardingMode::pipelined)
      flows += pairs - forwarded + pieces * (forwarded + first_legs);
    else if (cfg.mode == ForwardingMode::two_phase && forwarded > 0)
      flows += pairs + first_legs + 1;  // + the barrier
    else
      flows += pairs;
  }
  return flows * nic_flows(net.cluster, cfg);
}

// Whether some transfer of the exchange is forwarded through an HB-domain peer (rail-only, a pair
// on other rails and in other domains; `v`: one with bytes to send, pair by pair). Only then does
// the two-phase barrier separate anything: an exchange that forwards nothing, such as the
// hierarchical all-to-all's rail and domain exchanges, runs at once, as perf::Census reads it.
bool forwards_any(const SimNetwork& net, const std::vector<Group>& groups,
                  const AllToAllV* v = nullptr) {
  if (!net.rail_only) return false;
  if (!v) {
    std::unordered_map<std::int64_t, double> by_domain, by_rail;
    for (const auto& g : groups)
      if (forwarded_pairs(net, g, by_domain, by_rail) > 0) return true;
    return false;
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& grp = groups[g];
    const std::size_t n = grp.size();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (i != j && (!v || v->pair_bytes[g][i * n + j] > 0) &&
            needs_forwarding(net, grp[i], grp[j]))
          return true;
  }
  return false;
}

}  // namespace

void alltoall_phase(const SimNetwork& net, const SimConfig& cfg, const std::vector<Group>& groups,
                    double bytes, CollectiveResult& out, Accumulator& acc) {
  const double flows = alltoall_flows(net, cfg, groups);
  if (flows == 0 || bytes <= 0) return;
  const bool whole = is_whole_cluster(net, groups);
  bool by_class = cfg.aggregate == Aggregation::on || (cfg.aggregate == Aggregation::automatic &&
                                                       flows > static_cast<double>(cfg.max_flows));
  if (by_class && !whole)
    throw InputError("--group", fmt::format("an all-to-all of {:.0f} flows is aggregated by link "
                                            "class only over all GPUs (--group all); use smaller "
                                            "groups or fewer GPUs",
                                            flows));
  if (!by_class && flows > static_cast<double>(cfg.max_flows))
    throw InputError("--aggregate", fmt::format("an all-to-all of {:.0f} flows exceeds --max-flows "
                                                "{}; use --aggregate auto/on, or raise --max-flows",
                                                flows, cfg.max_flows));
  if (!by_class) check_memory(net, cfg, flows, "an all-to-all");
  // Aggregated, the exchange is over every GPU: it forwards whenever domains and rails both
  // number more than one.
  const auto& c = net.cluster;
  const bool barrier =
      by_class ? net.rail_only && c.domains() > 1 && c.hb_domain > 1 : forwards_any(net, groups);
  FlowBuilder b(net, cfg, by_class, barrier);
  if (!by_class) b.reserve(flows, link_classes(net));
  if (by_class) {
    const auto& g = groups[0];
    const double n = static_cast<double>(g.size());
    for (std::size_t j = 1; j < g.size(); ++j) b.transfer(g[0], g[j], bytes / n, {}, n);
  } else {
    for (const auto& g : groups) {
      const double n = static_cast<double>(g.size());
      for (std::size_t i = 0; i < g.size(); ++i)
        for (std::size_t j = 0; j < g.size(); ++j)
          if (i != j) b.transfer(g[i], g[j], bytes / n, {});
    }
  }
  const SimResult r = b.run(engine_options(cfg));
  PhaseResult ph;
  ph.name = "all-to-all";
  ph.aggregated = by_class;
  ph.time_s = r.completion_time_s;
  ph.bytes_sent = b.sent();
  record(out, acc, std::move(ph), r, by_class, 1.0);
}

void alltoallv_phase(const SimNetwork& net, const SimConfig& cfg, const std::vector<Group>& groups,
                     const AllToAllV& a, CollectiveResult& out, Accumulator& acc) {
  if (a.pair_bytes.size() != groups.size())
    throw std::logic_error("alltoallv: one byte matrix per group expected");
  double flows = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::size_t n = groups[g].size();
    if (a.pair_bytes[g].size() != n * n)
      throw std::logic_error("alltoallv: a byte matrix is not n x n for its group");
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const double b = a.pair_bytes[g][i * n + j];
        if (!(b >= 0) || !std::isfinite(b))
          throw std::logic_error("alltoallv: a pair's bytes are negative or not finite");
        if (i != j && b > 0) flows += 1;
      }
  }
  if (cfg.aggregate == Aggregation::on)
    throw InputError("--aggregate",
                     "a skewed all-to-all is simulated flow by flow (its load is "
                     "not symmetric); use --aggregate auto or off");
  if (flows > static_cast<double>(cfg.max_flows))
    throw InputError("--max-flows",
                     fmt::format("a skewed all-to-all of {:.0f} transfers exceeds --max-flows {}; "
                                 "raise it, or use fewer GPUs or smaller groups",
                                 flows, cfg.max_flows));
  if (flows == 0) return;
  FlowBuilder b(net, cfg, false, forwards_any(net, groups, &a));
  b.reserve(flows, link_classes(net));  // one flow per transfer at least; legs grow the arrays
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& grp = groups[g];
    const std::size_t n = grp.size();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (i != j) b.transfer(grp[i], grp[j], a.pair_bytes[g][i * n + j], {});
  }
  const SimResult r = b.run(engine_options(cfg));
  PhaseResult ph;
  ph.name = a.name;
  ph.time_s = r.completion_time_s;
  ph.bytes_sent = b.sent();
  record(out, acc, std::move(ph), r, false, 1.0);
}

void p2p_phase(const SimNetwork& net, const SimConfig& cfg, const std::vector<Group>& groups,
               double bytes, CollectiveResult& out, Accumulator& acc) {
  double flows = 0;
  for (const auto& g : groups)
    for (std::size_t i = 0; i + 1 < g.size(); ++i)
      flows += flows_per_transfer(net, cfg, g[i], g[i + 1]);
  if (flows > static_cast<double>(cfg.max_flows))
    throw InputError("--max-flows", fmt::format("{:.0f} flows exceed --max-flows {}; raise it",
                                                flows, cfg.max_flows));
  check_memory(net, cfg, flows, "a send/recv phase");
  FlowBuilder b(net, cfg, false);
  bool any = false;
  for (const auto& g : groups)
    for (std::size_t i = 0; i + 1 < g.size(); ++i) {
      b.transfer(g[i], g[i + 1], bytes, {});
      any = true;
    }
  if (!any || bytes <= 0) return;
  const SimResult r = b.run(engine_options(cfg));
  PhaseResult ph;
  ph.name = "send-recv";
  ph.time_s = r.completion_time_s;
  ph.bytes_sent = b.sent();
  record(out, acc, std::move(ph), r, false, 1.0);
}

namespace {

std::string_view op_words(perf::CollectiveOp op) {
  switch (op) {
    case perf::CollectiveOp::all_reduce:
      return "all-reduce";
    case perf::CollectiveOp::all_gather:
      return "all-gather";
    case perf::CollectiveOp::reduce_scatter:
      return "reduce-scatter";
    default:
      return perf::to_string(op);
  }
}

std::string phase_name(const perf::CollectivePhase& ph) {
  switch (ph.scope) {
    case perf::Scope::in_domain:
      return fmt::format("{} in HB domain", op_words(ph.op));
    case perf::Scope::along_rail:
      return fmt::format("{} along rails", op_words(ph.op));
    case perf::Scope::group:
      break;
  }
  return fmt::format("ring {}", op_words(ph.op));
}

}  // namespace

namespace {
// perf's expansion of every group of the request (the one expansion perf and traffic use);
// returns the most phases a group has.
int expand_request(const SimNetwork& net, const CollectiveRequest& req,
                   std::vector<perf::GroupExpansion>& ex) {
  perf::CommOp op;
  op.op = req.op;
  op.algorithm = req.algorithm;
  op.bytes = req.bytes;
  op.routing = req.routing;
  ex.assign(req.groups.size(), {});
  std::vector<std::int64_t> scratch;
  int phases = 0;
  for (std::size_t i = 0; i < req.groups.size(); ++i) {
    perf::expand_members(op, req.groups[i], net.cluster.hb_domain, ex[i], scratch);
    phases = std::max(phases, ex[i].plan.size);
  }
  return phases;
}
}  // namespace

void rail_domain_alltoall(const SimNetwork& net, const SimConfig& cfg, const CollectiveRequest& req,
                          CollectiveResult& out, Accumulator& acc) {
  std::vector<perf::GroupExpansion> ex;
  const int phases = expand_request(net, req, ex);
  // In two exchanges only when every group can, alike (as perf reads the axis's shape);
  // otherwise every group exchanges directly.
  for (const auto& e : ex)
    if (!e.plan.hierarchical || e.plan.size != ex.front().plan.size ||
        e.plan.phases[0].members != ex.front().plan.phases[0].members) {
      alltoall_phase(net, cfg, req.groups, req.bytes, out, acc);
      return;
    }
  // Both phases at once: each token is forwarded over its domain as it arrives along the rail
  // (perf::collective_time takes the slower phase; the two load disjoint links).
  std::vector<Group> exchanges;
  AllToAllV a;
  a.name = phases == 2 ? "all-to-all along rails and in HB domains" : "all-to-all along rails";
  for (int ph = 0; ph < phases; ++ph)
    for (const auto& e : ex) {
      const perf::CollectivePhase& phase = e.plan.phases[static_cast<std::size_t>(ph)];
      const auto n = static_cast<std::size_t>(phase.members);
      for (std::int64_t r = 0; r < e.rings[static_cast<std::size_t>(ph)]; ++r) {
        const auto m = e.ring(ph, r);
        exchanges.emplace_back(m.begin(), m.end());
        std::vector<double> pairs(n * n, phase.bytes / static_cast<double>(n));
        for (std::size_t i = 0; i < n; ++i) pairs[i * n + i] = 0;
        a.pair_bytes.push_back(std::move(pairs));
      }
    }
  if (exchanges.empty()) return;
  // Flow by flow (the all-to-all-v's limits, named for this collective).
  double transfers = 0;
  for (const auto& g : exchanges)
    transfers += static_cast<double>(g.size()) * static_cast<double>(g.size() - 1);
  if (cfg.aggregate == Aggregation::on)
    throw InputError("--aggregate",
                     "the hierarchical all-to-all (rail_then_domain) is simulated flow by flow; "
                     "use --aggregate auto or off");
  if (transfers > static_cast<double>(cfg.max_flows))
    throw InputError(
        "--max-flows",
        fmt::format("a hierarchical all-to-all of {:.0f} transfers exceeds --max-flows "
                    "{}; raise it, or use fewer GPUs",
                    transfers, cfg.max_flows));
  alltoallv_phase(net, cfg, exchanges, a, out, acc);
}

// Reductions and gathers: perf's expansion of every group (perf/expansion.hpp), its phases run
// one after another, each phase's rings of every group concurrently.
void reduction_collective(const SimNetwork& net, const SimConfig& cfg, const CollectiveRequest& req,
                          CollectiveResult& out, Accumulator& acc) {
  if (req.algorithm != perf::Algorithm::ring && req.algorithm != perf::Algorithm::hierarchical)
    throw InputError("--algorithm",
                     fmt::format("{} cannot run with the {} algorithm; valid: "
                                 "ring, hierarchical",
                                 perf::to_string(req.op), perf::to_string(req.algorithm)));
  std::vector<perf::GroupExpansion> ex;
  const int phases = expand_request(net, req, ex);
  std::vector<Group> rings;
  for (int ph = 0; ph < phases; ++ph) {
    rings.clear();
    const perf::CollectivePhase* first = nullptr;
    for (const auto& e : ex) {
      if (e.plan.size <= ph) continue;
      if (!first) first = &e.plan.phases[static_cast<std::size_t>(ph)];
      for (std::int64_t r = 0; r < e.rings[static_cast<std::size_t>(ph)]; ++r) {
        const auto m = e.ring(ph, r);
        rings.emplace_back(m.begin(), m.end());
      }
    }
    // Groups of different sizes get the step count of the largest ring (the smaller idle).
    std::int64_t n = 0;
    for (const auto& g : rings) n = std::max<std::int64_t>(n, static_cast<std::int64_t>(g.size()));
    if (!first || n < 2) continue;
    perf::CollectivePhase widest = *first;
    widest.members = n;
    ring_phase(net, cfg, rings, perf::ring_steps(widest),
               first->bytes / static_cast<double>(first->members), phase_name(*first), out, acc);
  }
}

}  // namespace railsim::sim::detail
