#include "railsim/perf/placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <numeric>

#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/hash.hpp"

namespace railsim::perf {

namespace {
constexpr EnumNames<Axis, 9> kAxisNames{{{{Axis::tp, "tp"},
                                          {Axis::dp, "dp"},
                                          {Axis::pp, "pp"},
                                          {Axis::ep, "ep"},
                                          {Axis::edp, "edp"},
                                          {Axis::cp, "cp"},
                                          {Axis::dp_shard, "dp_shard"},
                                          {Axis::dp_replica, "dp_replica"},
                                          {Axis::etp, "etp"}}}};
constexpr EnumNames<PlacementKind, 3> kPlacementNames{
    {{{PlacementKind::rail_aligned, "rail_aligned"},
      {PlacementKind::tp_across_domains, "tp_across_domains"},
      {PlacementKind::shuffled, "shuffled"}}}};
}  // namespace

std::string_view to_string(Axis a) {
  return kAxisNames.name(a);
}

std::string_view to_string(PlacementKind k) {
  return kPlacementNames.name(k);
}

PlacementKind parse_placement_kind(std::string_view s, const std::string& option) {
  return kPlacementNames.parse(s, option, "placement");
}

namespace {}  // namespace

Placement::Placement(const spec::Cluster& cluster, Degrees d, PlacementKind kind,
                     std::uint64_t seed)
    : n_(cluster.gpus), k_(cluster.hb_domain), d_(d), kind_(kind) {
  if (d.tp < 1 || d.pp < 1 || d.dp < 1 || d.ep < 1 || d.cp < 1)
    throw InputError("strategy", "parallel degrees must be >= 1");
  if (d.total() != n_) {
    if (d.cp == 1)
      throw InputError("strategy",
                       fmt::format("tp x pp x dp = {} x {} x {} = {} but the cluster has {} "
                                   "GPUs",
                                   d.tp, d.pp, d.dp, d.total(), n_));
    throw InputError("strategy",
                     fmt::format("tp x cp x pp x dp = {} x {} x {} x {} = {} but the cluster has "
                                 "{} GPUs",
                                 d.tp, d.cp, d.pp, d.dp, d.total(), n_));
  }
  if (!d.etp_divides_tp())
    throw InputError("--etp", fmt::format("got {}, expected a divisor of tp = {}", d.etp, d.tp));
  if (d.expert_tp() < d.tp) {
    if (!d.folded_experts_tile())
      throw InputError("--ep", fmt::format("etp x ep = {} x {} must divide tp x cp x dp = {} "
                                           "(folded expert parallelism is carved out of them)",
                                           d.expert_tp(), d.ep, d.tp * d.cp * d.dp));
  } else if (d.dp % d.ep != 0) {
    throw InputError("--ep",
                     fmt::format("ep = {} must divide dp = {} (expert parallelism is carved "
                                 "out of data parallelism)",
                                 d.ep, d.dp));
  }
  if (kind == PlacementKind::shuffled) {
    auto perm = std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>(n_));
    std::iota(perm->begin(), perm->end(), 0);
    SplitMix64 stream(seed);
    for (std::int64_t i = n_ - 1; i > 0; --i) {
      const auto j = static_cast<std::int64_t>(stream.next() % static_cast<std::uint64_t>(i + 1));
      std::swap((*perm)[i], (*perm)[j]);
    }
    perm_ = std::move(perm);
    seed_ = seed;
  }
}

std::int64_t Placement::gpu_of(std::int64_t r) const {
  switch (kind_) {
    case PlacementKind::rail_aligned:
      return r;
    case PlacementKind::tp_across_domains:
      return (r % d_.tp) * (n_ / d_.tp) + r / d_.tp;
    case PlacementKind::shuffled:
      return (*perm_)[static_cast<std::size_t>(r)];
  }
  return r;
}

std::int64_t Placement::axis_size(Axis a) const {
  switch (a) {
    case Axis::tp:
      return d_.tp;
    case Axis::dp:
      return d_.dp * d_.cp;
    case Axis::pp:
      return d_.pp;
    case Axis::ep:
      return d_.ep;
    case Axis::edp:
      return d_.expert_dp();
    case Axis::cp:
      return d_.cp;
    case Axis::dp_shard:
      return d_.shard_size();
    case Axis::dp_replica:
      return d_.dp * d_.cp / d_.shard_size();
    case Axis::etp:
      return d_.expert_tp();
  }
  return 1;
}

std::int64_t Placement::axis_stride(Axis a) const {
  switch (a) {
    case Axis::tp:
    case Axis::etp:
      return 1;
    case Axis::dp:
    case Axis::cp:
    case Axis::dp_shard:
      return d_.tp;
    case Axis::ep:
      return d_.expert_tp();
    case Axis::edp:
      return d_.expert_tp() * d_.ep;
    case Axis::dp_replica:
      return d_.tp * d_.shard_size();
    case Axis::pp:
      return d_.tp * d_.cp * d_.dp;
  }
  return 1;
}

std::int64_t Placement::rank_in_group(Axis a, std::int64_t g, std::int64_t i) const {
  const std::int64_t s = axis_stride(a), n = axis_size(a);
  return (g % s) + (g / s) * s * n + i * s;
}

namespace {
// Shape of the GPU set {base + i * s : i < n} (GPU ids) in domains of k, for base = 0; nullopt
// when the groups do not tile domains regularly.
bool regular_shape(std::int64_t s, std::int64_t n, std::int64_t k, GroupShape& out) {
  out.size = n;
  out.domain_stride = 1;
  if (s % k == 0) {
    out.per_domain = 1;
    out.domains = n;
    out.rail_aligned = true;
    out.domain_stride = s / k;
    return true;
  }
  if (k % s != 0) return false;
  const std::int64_t m = k / s;  // members that fit in one domain
  if (n <= m) {
    if (m % n != 0) return false;
    out.per_domain = n;
    out.domains = 1;
    out.rail_aligned = true;
    return true;
  }
  if (n % m != 0) return false;
  out.per_domain = m;
  out.domains = n / m;
  out.rail_aligned = true;
  return true;
}
}  // namespace

GroupShape Placement::shape(Axis a) const {
  const std::int64_t n = axis_size(a), s = axis_stride(a);
  GroupShape out;
  if (kind_ == PlacementKind::rail_aligned && regular_shape(s, n, k_, out)) return out;
  // The expert TP group is the first etp members of a TP group: placed as TP's.
  const bool in_tp = a == Axis::tp || a == Axis::etp;
  if (kind_ == PlacementKind::tp_across_domains && (in_tp || s % d_.tp == 0)) {
    // TP member i sits at i * (N / t) + rest; other axes move by s / t in GPU space (a folded
    // expert axis, stride below t, mixes the two: the general path below).
    const std::int64_t gs = in_tp ? n_ / d_.tp : s / d_.tp;
    if (regular_shape(gs, n, k_, out)) return out;
  }
  // Irregular: the groups of one axis sit differently (e.g. groups of 3 on domains of 4). A
  // synchronous collective is paced by its slowest group, so the shape is the least local over
  // every group: most domains, most members in one domain, rail-aligned only if every group is.
  // Memoised per thread (the search meets the same irregular axes again and again).
  struct Entry {
    std::int64_t n = -1, k = 0, tp = 0, pp = 0, dp = 0, ep = 0, cp = 0, shard = 0, etp = 0;
    PlacementKind kind = PlacementKind::rail_aligned;
    Axis axis = Axis::tp;
    std::uint64_t seed = 0;  // a shuffled placement is a function of N and its seed
    GroupShape shape;
  };
  thread_local std::array<Entry, 32> cache;
  Entry& e = cache[static_cast<std::size_t>(
      (static_cast<std::uint64_t>(d_.tp) * 31 + static_cast<std::uint64_t>(d_.pp) * 7 +
       static_cast<std::uint64_t>(d_.dp) * 3 + static_cast<std::uint64_t>(d_.cp) * 11 +
       static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(kind_) * 5) %
      cache.size())];
  if (e.n == n_ && e.k == k_ && e.tp == d_.tp && e.pp == d_.pp && e.dp == d_.dp && e.ep == d_.ep &&
      e.cp == d_.cp && e.shard == d_.shard && e.etp == d_.expert_tp() && e.kind == kind_ &&
      e.axis == a && e.seed == seed_)
    return e.shape;
  out.size = n;
  out.domains = 0;
  out.per_domain = 0;
  out.rail_aligned = true;
  // Shuffled members are scattered over the cluster (as far apart as it allows); the irregular
  // structured groups sit on neighbouring domains.
  out.domain_stride = kind_ == PlacementKind::shuffled ? std::max<std::int64_t>(1, n_ / k_) : 1;
  std::vector<std::int64_t> gpus(static_cast<std::size_t>(n));
  std::vector<std::int64_t> first_rails, rails;
  for (std::int64_t g = 0; g < group_count(a); ++g) {
    for (std::int64_t i = 0; i < n; ++i)
      gpus[static_cast<std::size_t>(i)] = gpu_of(rank_in_group(a, g, i));
    std::sort(gpus.begin(), gpus.end());  // by (domain, local rank)
    std::int64_t domains = 0, per_domain = 0;
    first_rails.clear();
    bool aligned = true;
    for (std::size_t i = 0; i < gpus.size();) {
      std::size_t j = i;
      rails.clear();
      while (j < gpus.size() && gpus[j] / k_ == gpus[i] / k_) rails.push_back(gpus[j++] % k_);
      ++domains;
      per_domain = std::max<std::int64_t>(per_domain, static_cast<std::int64_t>(rails.size()));
      if (first_rails.empty())
        first_rails = rails;
      else if (rails != first_rails)
        aligned = false;
      i = j;
    }
    if (domains * per_domain != n) aligned = false;
    out.domains = std::max(out.domains, domains);
    out.per_domain = std::max(out.per_domain, per_domain);
    out.rail_aligned = out.rail_aligned && aligned;
  }
  e = {n_, k_, d_.tp, d_.pp, d_.dp, d_.ep, d_.cp, d_.shard, d_.expert_tp(), kind_, a, seed_, out};
  return out;
}

}  // namespace railsim::perf
