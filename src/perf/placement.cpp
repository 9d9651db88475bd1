#include "railsim/perf/placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "railsim/core/error.hpp"

namespace railsim::perf {

std::string_view to_string(Axis a) {
  switch (a) {
    case Axis::tp:
      return "tp";
    case Axis::dp:
      return "dp";
    case Axis::pp:
      return "pp";
    case Axis::ep:
      return "ep";
    case Axis::edp:
      return "edp";
  }
  return "?";
}

std::string_view to_string(PlacementKind k) {
  switch (k) {
    case PlacementKind::rail_aligned:
      return "rail_aligned";
    case PlacementKind::tp_across_domains:
      return "tp_across_domains";
    case PlacementKind::shuffled:
      return "shuffled";
  }
  return "?";
}

PlacementKind parse_placement_kind(std::string_view s, const std::string& option) {
  for (auto k :
       {PlacementKind::rail_aligned, PlacementKind::tp_across_domains, PlacementKind::shuffled})
    if (s == to_string(k)) return k;
  throw InputError(option, fmt::format("unknown placement '{}'; valid: rail_aligned, "
                                       "tp_across_domains, shuffled",
                                       s));
}

namespace {
// splitmix64: a portable generator, so that a seed gives the same permutation everywhere.
std::uint64_t splitmix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

Placement::Placement(const spec::Cluster& cluster, Degrees d, PlacementKind kind,
                     std::uint64_t seed)
    : n_(cluster.gpus), k_(cluster.hb_domain), d_(d), kind_(kind) {
  if (d.tp < 1 || d.pp < 1 || d.dp < 1 || d.ep < 1)
    throw InputError("strategy", "parallel degrees must be >= 1");
  if (d.total() != n_)
    throw InputError("strategy",
                     fmt::format("tp x pp x dp = {} x {} x {} = {} but the cluster has {} "
                                 "GPUs",
                                 d.tp, d.pp, d.dp, d.total(), n_));
  if (d.dp % d.ep != 0)
    throw InputError("--ep",
                     fmt::format("ep = {} must divide dp = {} (expert parallelism is carved "
                                 "out of data parallelism)",
                                 d.ep, d.dp));
  if (kind == PlacementKind::shuffled) {
    auto perm = std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>(n_));
    std::iota(perm->begin(), perm->end(), 0);
    std::uint64_t state = seed;
    for (std::int64_t i = n_ - 1; i > 0; --i) {
      const auto j = static_cast<std::int64_t>(splitmix(state) % static_cast<std::uint64_t>(i + 1));
      std::swap((*perm)[i], (*perm)[j]);
    }
    perm_ = std::move(perm);
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
      return d_.dp;
    case Axis::pp:
      return d_.pp;
    case Axis::ep:
      return d_.ep;
    case Axis::edp:
      return d_.dp / d_.ep;
  }
  return 1;
}

std::int64_t Placement::axis_stride(Axis a) const {
  switch (a) {
    case Axis::tp:
      return 1;
    case Axis::dp:
      return d_.tp;
    case Axis::ep:
      return d_.tp;
    case Axis::edp:
      return d_.tp * d_.ep;
    case Axis::pp:
      return d_.tp * d_.dp;
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
  if (s % k == 0) {
    out.per_domain = 1;
    out.domains = n;
    out.rail_aligned = true;
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
  if (kind_ == PlacementKind::tp_across_domains) {
    // TP member i sits at i * (N / t) + rest; other axes move by s / t in GPU space.
    const std::int64_t gs = a == Axis::tp ? n_ / d_.tp : s / d_.tp;
    if (regular_shape(gs, n, k_, out)) return out;
  }
  // Irregular: look at group 0.
  std::vector<std::int64_t> gpus(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    gpus[static_cast<std::size_t>(i)] = gpu_of(rank_in_group(a, 0, i));
  std::sort(gpus.begin(), gpus.end(), [&](std::int64_t x, std::int64_t y) {
    return std::pair(x / k_, x % k_) < std::pair(y / k_, y % k_);
  });
  out.size = n;
  out.domains = 0;
  out.per_domain = 0;
  out.rail_aligned = true;
  std::vector<std::int64_t> first_rails, rails;
  for (std::size_t i = 0; i < gpus.size();) {
    std::size_t j = i;
    rails.clear();
    while (j < gpus.size() && gpus[j] / k_ == gpus[i] / k_) rails.push_back(gpus[j++] % k_);
    ++out.domains;
    out.per_domain =
        std::max<std::int64_t>(out.per_domain, static_cast<std::int64_t>(rails.size()));
    if (first_rails.empty())
      first_rails = rails;
    else if (rails != first_rails)
      out.rail_aligned = false;
    i = j;
  }
  if (out.domains * out.per_domain != n) out.rail_aligned = false;
  return out;
}

}  // namespace railsim::perf
