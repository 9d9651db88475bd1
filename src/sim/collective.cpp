#include "railsim/sim/collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "phases.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/perf/expansion.hpp"
#include "transfers.hpp"

namespace railsim::sim {

using namespace detail;

CollectiveResult simulate_collective(const SimNetwork& net, const CollectiveRequest& req,
                                     const SimConfig& cfg, int busiest) {
  if (!(req.bytes > 0) || !std::isfinite(req.bytes))
    throw InputError("--bytes",
                     fmt::format("must be a positive finite number of bytes, got {}", req.bytes));
  if (cfg.chunks < 1) throw InputError("--chunks", fmt::format("must be >= 1, got {}", cfg.chunks));
  for (const auto& g : req.groups)
    for (auto gpu : g)
      if (gpu < 0 || gpu >= net.cluster.gpus)
        throw InputError("group", fmt::format("GPU {} is outside the cluster of {} GPUs", gpu,
                                              net.cluster.gpus));
  CollectiveResult out;
  Accumulator acc(net);
  using perf::CollectiveOp;
  switch (req.op) {
    case CollectiveOp::all_to_all:
      if (req.algorithm == perf::Algorithm::rail_then_domain)
        rail_domain_alltoall(net, cfg, req, out, acc);
      else
        alltoall_phase(net, cfg, req.groups, req.bytes, out, acc);
      break;
    case CollectiveOp::send_recv:
      p2p_phase(net, cfg, req.groups, req.bytes, out, acc);
      break;
    case CollectiveOp::all_reduce:
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      reduction_collective(net, cfg, req, out, acc);
      break;
  }
  acc.finish(out, busiest);
  return out;
}

CollectiveResult simulate_alltoallv(const SimNetwork& net, const std::vector<Group>& groups,
                                    const std::vector<AllToAllV>& phases, const SimConfig& cfg,
                                    int busiest) {
  if (cfg.chunks < 1) throw InputError("--chunks", fmt::format("must be >= 1, got {}", cfg.chunks));
  for (const auto& g : groups)
    for (auto gpu : g)
      if (gpu < 0 || gpu >= net.cluster.gpus)
        throw InputError("group", fmt::format("GPU {} is outside the cluster of {} GPUs", gpu,
                                              net.cluster.gpus));
  CollectiveResult out;
  Accumulator acc(net);
  for (const auto& a : phases) alltoallv_phase(net, cfg, groups, a, out, acc);
  acc.finish(out, busiest);
  return out;
}

topo::Path transfer_path(const SimNetwork& net, const SimConfig& cfg, std::int64_t src,
                         std::int64_t dst) {
  if (cfg.routing != spec::Routing::ecmp)
    throw std::logic_error("transfer_path: only ECMP paths are fixed per transfer");
  topo::Path out;
  if (src == dst) return out;
  const std::uint64_t h = flow_hash(src, dst, cfg.seed);
  if (!needs_forwarding(net, src, dst)) {
    net.route(src, dst, h, -1, out);
    return out;
  }
  const std::int64_t mid = topo::forwarding_peer(net.cluster, cfg.forwarding, src, dst);
  net.route(src, mid, h, -1, out);
  net.route(mid, dst, mix(h), -1, out);
  return out;
}

namespace {
// 1e-4, 2.5e-5, 0.01: the short form a tolerance is written in.
std::string short_number(double x) {
  if (x >= 1e-3) return fmt::format("{:g}", x);
  const int e = static_cast<int>(std::floor(std::log10(x) + 1e-9));
  return fmt::format("{:g}e{}", x / std::pow(10.0, e), e);
}
}  // namespace

std::string describe_batching(double t) {
  if (t <= kExactBatchTolerance)
    return "exact (an event ends only the flows that finish at its time)";
  const std::string measured =
      t == kDefaultBatchTolerance
          ? fmt::format("; measured at most {} on docs/sim.md's collectives",
                        short_number(kDefaultBatchError))
          : "";
  return fmt::format(
      "batch tolerance {0}: flows finishing within {0} of the run of each other end in one "
      "event, the completion time within about {0} of exact{1}",
      short_number(t), measured);
}

SimConfig sim_config(const spec::NetworkDesign& d) {
  SimConfig cfg;
  cfg.routing = d.routing;
  cfg.seed = d.ecmp_seed;
  cfg.mode = d.forwarding;
  cfg.forwarding = d.forward_via;
  cfg.chunks = d.forwarding_chunks;
  cfg.port_balance = d.port_balance;
  cfg.connections = d.connections;
  return cfg;
}

std::vector<Group> groups_all(const spec::Cluster& c) {
  Group g(static_cast<std::size_t>(c.gpus));
  for (std::int64_t i = 0; i < c.gpus; ++i) g[static_cast<std::size_t>(i)] = i;
  return {std::move(g)};
}

std::vector<Group> groups_rails(const spec::Cluster& c) {
  std::vector<Group> out(static_cast<std::size_t>(c.hb_domain));
  for (std::int64_t r = 0; r < c.hb_domain; ++r)
    for (std::int64_t d = 0; d < c.domains(); ++d)
      out[static_cast<std::size_t>(r)].push_back(c.gpu_at(d, r));
  return out;
}

std::vector<Group> groups_domains(const spec::Cluster& c) {
  std::vector<Group> out(static_cast<std::size_t>(c.domains()));
  for (std::int64_t d = 0; d < c.domains(); ++d)
    for (std::int64_t r = 0; r < c.hb_domain; ++r)
      out[static_cast<std::size_t>(d)].push_back(c.gpu_at(d, r));
  return out;
}

std::vector<Group> groups_of_axis(const perf::Placement& p, perf::Axis a) {
  const std::int64_t n = p.axis_size(a), count = p.group_count(a);
  std::vector<Group> out(static_cast<std::size_t>(count));
  for (std::int64_t g = 0; g < count; ++g) {
    auto& grp = out[static_cast<std::size_t>(g)];
    grp.reserve(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) grp.push_back(p.gpu_of(p.rank_in_group(a, g, i)));
  }
  return out;
}

ScheduleResult simulate_schedule(const SimNetwork& net, const perf::CommSchedule& s,
                                 const perf::Placement& p, const SimConfig& cfg) {
  ScheduleResult out;
  for (const auto& op : s) {
    ScheduleOpResult r;
    r.op = op;
    if (p.axis_size(op.axis) > 1 && op.bytes > 0) {
      CollectiveRequest req;
      req.op = op.op;
      req.algorithm = op.algorithm;
      req.bytes = op.bytes;
      req.routing = op.routing;
      req.groups = groups_of_axis(p, op.axis);
      if (op.op == perf::CollectiveOp::send_recv && op.phase == perf::Phase::backward)
        for (auto& g : req.groups) std::reverse(g.begin(), g.end());  // gradients flow back
      r.detail = simulate_collective(net, req, cfg, 3);
      r.time_s = r.detail.completion_time_s;
    }
    r.total_s = r.time_s * op.count;
    out.total_s += r.total_s;
    out.ops.push_back(std::move(r));
  }
  return out;
}

}  // namespace railsim::sim
