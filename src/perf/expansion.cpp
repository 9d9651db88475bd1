#include "railsim/perf/expansion.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace railsim::perf {

namespace {

[[noreturn]] void bad_pair(const CommOp& op) {
  // A schedule that pairs an operation with an algorithm that cannot carry it is a bug in its
  // producer, not bad user input.
  throw std::logic_error(fmt::format("{} cannot run with the {} algorithm", to_string(op.op),
                                     to_string(op.algorithm)));
}

double ring_factor(CollectiveOp op) {
  return op == CollectiveOp::all_reduce ? 2.0 : 1.0;
}

}  // namespace

PhasePlan phase_plan(const CommOp& op, const GroupShape& g) {
  PhasePlan pl;
  if (g.size < 2) return pl;
  const double B = op.bytes;
  auto add = [&pl](CollectiveOp o, Algorithm a, Scope s, std::int64_t n, double b) {
    pl.phases[static_cast<std::size_t>(pl.size++)] = {o, a, s, n, b};
  };
  switch (op.algorithm) {
    case Algorithm::p2p:
      if (op.op != CollectiveOp::send_recv) bad_pair(op);
      add(op.op, Algorithm::p2p, Scope::group, g.size, B);
      return pl;
    case Algorithm::direct:
      if (op.op == CollectiveOp::send_recv) bad_pair(op);
      add(op.op, Algorithm::direct, Scope::group, g.size, B);
      return pl;
    case Algorithm::rail_then_domain: {
      if (op.op != CollectiveOp::all_to_all) bad_pair(op);
      const std::int64_t p = g.per_domain, q = g.domains;
      if (!two_level(g)) {
        add(op.op, Algorithm::direct, Scope::group, g.size, B);
        return pl;
      }
      pl.hierarchical = true;
      // One copy per HB domain a token is routed to crosses the rail; inside the domain every
      // copy goes to its expert's GPU (comm_schedule.hpp).
      const double d = op.routing.top_k > 0
                           ? routed_domains(op.routing, q) / static_cast<double>(op.routing.top_k)
                           : 1.0;
      add(op.op, Algorithm::direct, Scope::along_rail, q, B * d);
      if (p > 1) add(op.op, Algorithm::direct, Scope::in_domain, p, B);
      return pl;
    }
    case Algorithm::ring:
    case Algorithm::hierarchical:
      break;
  }
  if (op.op == CollectiveOp::all_to_all || op.op == CollectiveOp::send_recv) bad_pair(op);
  const bool hier = op.algorithm == Algorithm::hierarchical && g.per_domain > 1 && g.domains > 1 &&
                    g.rail_aligned;
  if (!hier) {
    add(op.op, Algorithm::ring, Scope::group, g.size, B);
    return pl;
  }
  pl.hierarchical = true;
  const std::int64_t p = g.per_domain, q = g.domains;
  const double shard = B / static_cast<double>(p);
  switch (op.op) {
    case CollectiveOp::all_reduce:
      add(CollectiveOp::reduce_scatter, Algorithm::ring, Scope::in_domain, p, B);
      add(CollectiveOp::all_reduce, Algorithm::ring, Scope::along_rail, q, shard);
      add(CollectiveOp::all_gather, Algorithm::ring, Scope::in_domain, p, B);
      break;
    case CollectiveOp::reduce_scatter:
      add(CollectiveOp::reduce_scatter, Algorithm::ring, Scope::in_domain, p, B);
      add(CollectiveOp::reduce_scatter, Algorithm::ring, Scope::along_rail, q, shard);
      break;
    case CollectiveOp::all_gather:
      add(CollectiveOp::all_gather, Algorithm::ring, Scope::along_rail, q, shard);
      add(CollectiveOp::all_gather, Algorithm::ring, Scope::in_domain, p, B);
      break;
    default:
      bad_pair(op);
  }
  return pl;
}

std::int64_t ring_steps(const CollectivePhase& ph) {
  return static_cast<std::int64_t>(ring_factor(ph.op)) * (ph.members - 1);
}

double ring_bytes_per_member(const CollectivePhase& ph) {
  const double n = static_cast<double>(ph.members);
  return ring_factor(ph.op) * (n - 1.0) / n * ph.bytes;
}

void expand_members(const CommOp& op, std::span<const std::int64_t> m, std::int64_t k,
                    GroupExpansion& out, std::vector<std::int64_t>& scratch) {
  const auto n = static_cast<std::int64_t>(m.size());
  out.gpus.clear();
  out.rings = {};
  out.offset = {};
  GroupShape shape;
  shape.size = n;
  if ((op.algorithm == Algorithm::hierarchical || op.algorithm == Algorithm::rail_then_domain) &&
      n > 1) {
    // Members ordered by (HB domain, local rank), i.e. by GPU id: the j-th member of each domain
    // sits on the same rail when the group is rail-aligned.
    scratch.assign(m.begin(), m.end());
    std::sort(scratch.begin(), scratch.end());
    std::int64_t p = 1;
    while (p < n && scratch[static_cast<std::size_t>(p)] / k == scratch[0] / k) ++p;
    bool aligned = n % p == 0;
    for (std::int64_t s = 0; aligned && s < n; s += p) {
      const auto dom = scratch[static_cast<std::size_t>(s)] / k;
      if (s + p < n && scratch[static_cast<std::size_t>(s + p)] / k == dom) aligned = false;
      for (std::int64_t j = 0; aligned && j < p; ++j) {
        const auto gpu = scratch[static_cast<std::size_t>(s + j)];
        aligned = gpu / k == dom && gpu % k == scratch[static_cast<std::size_t>(j)] % k;
      }
    }
    shape.per_domain = aligned ? p : n;
    shape.domains = aligned ? n / p : 1;
    shape.rail_aligned = aligned;
  } else {
    shape.per_domain = 1;
    shape.domains = n;
  }
  out.plan = phase_plan(op, shape);
  for (int i = 0; i < out.plan.size; ++i) {
    const CollectivePhase& ph = out.plan.phases[static_cast<std::size_t>(i)];
    out.offset[static_cast<std::size_t>(i)] = out.gpus.size();
    const std::int64_t p = shape.per_domain, q = shape.domains;
    switch (ph.scope) {
      case Scope::group:
        out.rings[static_cast<std::size_t>(i)] = 1;
        out.gpus.insert(out.gpus.end(), m.begin(), m.end());
        break;
      case Scope::in_domain:
        out.rings[static_cast<std::size_t>(i)] = q;
        out.gpus.insert(out.gpus.end(), scratch.begin(), scratch.begin() + n);
        break;
      case Scope::along_rail:
        out.rings[static_cast<std::size_t>(i)] = p;
        for (std::int64_t j = 0; j < p; ++j)
          for (std::int64_t d = 0; d < q; ++d)
            out.gpus.push_back(scratch[static_cast<std::size_t>(d * p + j)]);
        break;
    }
  }
}

bool two_level(const GroupShape& g) {
  return g.rail_aligned && g.domains >= 2 && g.per_domain * g.domains == g.size;
}

void expand_group(const CommOp& op, const Placement& pl, std::int64_t group, GroupExpansion& out,
                  std::vector<std::int64_t>& scratch) {
  const std::int64_t n = pl.axis_size(op.axis);
  out.members.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    out.members[static_cast<std::size_t>(i)] = pl.gpu_of(pl.rank_in_group(op.axis, group, i));
  // The hierarchical all-to-all runs along the rails only when every group of the axis can (the
  // axis's shape, as the time model reads it); otherwise every group exchanges directly.
  if (op.algorithm == Algorithm::rail_then_domain && !two_level(pl.shape(op.axis))) {
    CommOp direct = op;
    direct.algorithm = Algorithm::direct;
    expand_members(direct, out.members, pl.hb_domain(), out, scratch);
    return;
  }
  expand_members(op, out.members, pl.hb_domain(), out, scratch);
}

}  // namespace railsim::perf
