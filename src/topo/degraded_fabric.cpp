#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "failure_checks.hpp"
#include "railsim/core/error.hpp"
#include "railsim/topo/failures.hpp"
#include "route_hash.hpp"

namespace railsim::topo {

namespace {

using detail::kMaxLevels;
using detail::mix;

// The k-th of n equal-cost choices a flow tries: its hashed choice first, then the others in an
// order that starts at a second hash of the flow, so that the flows of a dead member spread over
// the live ones (as ECMP re-hashes over a group's live members) instead of all moving to the
// next member.
inline std::int64_t nth_choice(std::int64_t first, std::int64_t k, std::int64_t n,
                               std::uint64_t h) {
  if (k == 0 || n <= 1) return first;
  const auto off =
      static_cast<std::int64_t>(mix(h ^ 0xa5a5a5a5ULL) % static_cast<std::uint64_t>(n - 1));
  return (first + 1 + (off + k - 1) % (n - 1)) % n;
}

}  // namespace

using detail::check_failure;

DegradedFabric::DegradedFabric(const Fabric& f, const FailureSet& failures, bool pxn)
    : f_(&f),
      failures_(failures),
      pxn_(pxn),
      link_dead_(f.links.size(), 0),
      node_dead_(f.nodes.size(), 0) {
  const spec::Cluster& c = f.cluster;
  auto kill_gpu = [&](std::int64_t g) { node_dead_[static_cast<std::size_t>(g)] = 1; };
  std::set<std::pair<std::int64_t, int>> planes_dead;
  for (const Failure& x : failures_) {
    check_failure(x, f, "--fail");
    switch (x.kind) {
      case FailureKind::gpu:
        kill_gpu(x.index);
        break;
      case FailureKind::nic:
      case FailureKind::link:
        link_dead_[static_cast<std::size_t>(f.nic_link(x.index, x.nic))] = 1;
        break;
      case FailureKind::switch_:
        node_dead_[static_cast<std::size_t>(f.tier_node_base[static_cast<std::size_t>(x.tier)] +
                                            x.index)] = 1;
        break;
      case FailureKind::uplink:
        link_dead_[static_cast<std::size_t>(f.link_base[static_cast<std::size_t>(x.tier)] +
                                            x.index)] = 1;
        break;
      case FailureKind::domain:
        for (std::int64_t r = 0; r < c.hb_domain; ++r) kill_gpu(c.gpu_at(x.index, r));
        node_dead_[static_cast<std::size_t>(c.gpus + x.index)] = 1;
        break;
      case FailureKind::hb_plane:
        planes_dead.insert({x.index, x.nic});
        break;
      case FailureKind::plane: {
        // The plane's instances are consecutive (PlaneLayout::instance): every switch of theirs.
        const std::int64_t per = f.layout.instances / f.layout.planes;
        for (int t = 1; t <= f.tiers; ++t) {
          const std::int64_t n = f.plan.tiers[static_cast<std::size_t>(t - 1)].switches();
          const std::int64_t base =
              f.tier_node_base[static_cast<std::size_t>(t)] + x.index * per * n;
          std::fill_n(node_dead_.begin() + static_cast<std::ptrdiff_t>(base), per * n, 1);
        }
        break;
      }
    }
  }
  if (!planes_dead.empty()) {
    hb_factor_.assign(static_cast<std::size_t>(c.domains()), 1.0);
    const double P = c.gpu.hb_planes;
    for (const auto& [dom, plane] : planes_dead)
      hb_factor_[static_cast<std::size_t>(dom)] -= 1.0 / P;
    for (std::int64_t dom = 0; dom < c.domains(); ++dom)
      if (hb_factor_[static_cast<std::size_t>(dom)] < 0.5 / P) {
        hb_factor_[static_cast<std::size_t>(dom)] = 0;
        node_dead_[static_cast<std::size_t>(c.gpus + dom)] = 1;  // no plane left
      }
  }
  for (std::size_t l = 0; l < f.links.size(); ++l)
    if (node_dead_[static_cast<std::size_t>(f.links[l].a)] ||
        node_dead_[static_cast<std::size_t>(f.links[l].b)])
      link_dead_[l] = 1;
}

bool DegradedFabric::edge_alive(std::int64_t g, int nic) const {
  if (f_->layout.instances == 0 || !gpu_alive(g)) return false;
  return link_alive(f_->nic_link(g, nic)) && node_alive(f_->leaf_of(g, nic));
}

bool DegradedFabric::any_edge_alive(std::int64_t g) const {
  for (int n = 0; n < f_->nics_per_gpu(); ++n)
    if (edge_alive(g, n)) return true;
  return false;
}

bool DegradedFabric::hb_alive(std::int64_t g) const {
  return gpu_alive(g) && link_alive(f_->hb_link(g)) && node_alive(f_->hb_switch_of(g));
}

bool DegradedFabric::cut_off(std::int64_t g) const {
  if (!gpu_alive(g)) return true;
  if (f_->layout.instances == 0) return !hb_alive(g);
  if (any_edge_alive(g)) return false;
  if (!pxn_ || !hb_alive(g)) return true;
  const spec::Cluster& c = f_->cluster;
  const std::int64_t dom = c.domain_of(g);
  for (std::int64_t r = 0; r < c.hb_domain; ++r) {
    const std::int64_t p = c.gpu_at(dom, r);
    if (p != g && hb_alive(p) && any_edge_alive(p)) return false;
  }
  return true;
}

std::int64_t DegradedFabric::switch_node(int tier, std::int64_t inst, std::int64_t block,
                                         std::int64_t j) const {
  const ClosTier& ct = f_->plan.tiers[static_cast<std::size_t>(tier - 1)];
  return f_->tier_node_base[static_cast<std::size_t>(tier)] + inst * ct.switches() +
         block * ct.switches_per_block + j;
}

// Down from switch j of tier t+1 (block bd[t+1]) to the destination's level-t sub-block bd[t],
// and on to its leaf.
bool DegradedFabric::down(int t, const std::int64_t* bd, std::int64_t j, std::int64_t inst,
                          std::uint64_t h, Path& out) const {
  const ClosPlan& p = f_->plan;
  const ClosTier& lo = p.tiers[static_cast<std::size_t>(t - 1)];
  const ClosTier& hi = p.tiers[static_cast<std::size_t>(t)];
  h = mix(h + 0x100u + static_cast<std::uint64_t>(t));
  const std::int64_t i = bd[t] % hi.group;
  const std::int64_t n = hi.links_between(i, j);
  const std::int64_t first = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(n));
  const std::size_t mark = out.size();
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t port = hi.port_between(i, j, nth_choice(first, k, n, h));
    const std::int64_t link = f_->uplink(t, inst, bd[t], port);
    const std::int64_t j2 = port / lo.up_ports;
    if (!link_alive(link) || !node_alive(switch_node(t, inst, bd[t], j2))) continue;
    out.push_back(static_cast<std::int32_t>(2 * link + 1));
    if (t == 1 || down(t - 1, bd, j2, inst, h, out)) return true;
    out.resize(mark);
  }
  return false;
}

// Up from switch j of tier t (block bs[t]) to tier t+1, and on to the top, then down.
bool DegradedFabric::up(int t, const std::int64_t* bs, const std::int64_t* bd, int top,
                        std::int64_t j, std::int64_t inst, std::uint64_t h, Path& out) const {
  const ClosPlan& p = f_->plan;
  const ClosTier& lo = p.tiers[static_cast<std::size_t>(t - 1)];
  const ClosTier& hi = p.tiers[static_cast<std::size_t>(t)];
  h = mix(h + static_cast<std::uint64_t>(t));
  const std::int64_t u = lo.up_ports;
  const std::int64_t first = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(u));
  const std::size_t mark = out.size();
  for (std::int64_t k = 0; k < u; ++k) {
    const std::int64_t port = j * u + nth_choice(first, k, u, h);
    const std::int64_t link = f_->uplink(t, inst, bs[t], port);
    const std::int64_t j2 = hi.switch_of(bs[t] % hi.group, port);
    if (!link_alive(link) || !node_alive(switch_node(t + 1, inst, bs[t + 1], j2))) continue;
    out.push_back(static_cast<std::int32_t>(2 * link));
    const bool ok =
        t + 1 == top ? down(t, bd, j2, inst, h, out) : up(t + 1, bs, bd, top, j2, inst, h, out);
    if (ok) return true;
    out.resize(mark);
  }
  return false;
}

bool DegradedFabric::clos_live(std::int64_t s, std::int64_t d, int nic, std::uint64_t h,
                               Path& out) const {
  if (!edge_alive(s, nic) || !edge_alive(d, nic)) return false;
  const Fabric& f = *f_;
  const ClosPlan& p = f.plan;
  const std::int64_t inst = f.layout.instance(f.cluster, s, nic);
  if (f.layout.instance(f.cluster, d, nic) != inst) return false;
  const std::size_t mark = out.size();
  out.push_back(2 * f.nic_link(s, nic));
  std::int64_t bs[kMaxLevels], bd[kMaxLevels];
  const int top = p.common_blocks(f.layout.leaf(p, f.cluster, s, nic),
                                  f.layout.leaf(p, f.cluster, d, nic), bs, bd);
  if (top > 1) {
    if (!up(1, bs, bd, top, 0, inst, h, out)) {
      out.resize(mark);
      return false;
    }
  }
  out.push_back(2 * f.nic_link(d, nic) + 1);
  return true;
}

namespace {

// The NIC a pair uses: the one asked for (`want` >= 0) or else the hashed one, else the first
// whose edges are alive at both ends.
template <class Live>
int pick_nic(int nics, std::uint64_t h, Live live, int want = -1) {
  const int first = want >= 0  ? want % std::max(nics, 1)
                    : nics > 1 ? static_cast<int>(mix(h) % static_cast<std::uint64_t>(nics))
                               : 0;
  for (int k = 0; k < nics; ++k) {
    const int n = (first + k) % nics;
    if (live(n)) return n;
  }
  return first;
}

}  // namespace

bool DegradedFabric::detour_ends(std::int64_t src, std::int64_t dst, std::int64_t r,
                                 std::int64_t& x, std::int64_t& y) const {
  const spec::Cluster& c = f_->cluster;
  const bool rail_only = f_->layout.per_rail;
  const bool src_edge = any_edge_alive(src), dst_edge = any_edge_alive(dst);
  // rail_only: the detour rides rail r between the two domains. rail_optimized: a dead end
  // leaves through (or enters by) the peer on rail r; with both ends alive (the pair is cut
  // above its leaves) both ends move to rail r.
  const bool both = rail_only || (src_edge && dst_edge);
  x = both || !src_edge ? c.gpu_at(c.domain_of(src), r) : src;
  y = both || !dst_edge ? c.gpu_at(c.domain_of(dst), r) : dst;
  if (x == src && y == dst) return false;  // the direct route, which failed
  if (x != src && (!hb_alive(src) || !hb_alive(x))) return false;
  if (y != dst && (!hb_alive(dst) || !hb_alive(y))) return false;
  return true;
}

RouteStatus DegradedFabric::route(std::int64_t src, std::int64_t dst, std::uint64_t h, int choice,
                                  Path& out, int nic) const {
  if (src == dst) return RouteStatus::direct;
  const Fabric& f = *f_;
  const spec::Cluster& c = f.cluster;
  if (!gpu_alive(src) || !gpu_alive(dst)) return RouteStatus::none;
  auto hb = [&](std::int64_t a, std::int64_t b) {
    out.push_back(2 * f.hb_link(a));
    out.push_back(2 * f.hb_link(b) + 1);
  };
  const std::int64_t ds = c.domain_of(src), dd = c.domain_of(dst);
  if (ds == dd) {
    if (!hb_alive(src) || !hb_alive(dst)) return RouteStatus::none;
    hb(src, dst);
    return RouteStatus::direct;
  }
  if (f.layout.instances == 0) return RouteStatus::none;
  const int M = f.nics_per_gpu();
  const bool rail_only = f.layout.per_rail;
  auto clos = [&](std::int64_t a, std::int64_t b) {
    const int n = pick_nic(
        M, h, [&](int k) { return edge_alive(a, k) && edge_alive(b, k); }, nic);
    return clos_live(a, b, n, h, out);
  };
  // The design's own route: rail_only forwards a cross-rail pair through the source's domain
  // (the GPU on the destination's rail), as Fabric::route with Forwarding::hb_first.
  const std::size_t mark = out.size();
  if (rail_only && c.rail_of(src) != c.rail_of(dst)) {
    const std::int64_t w = forwarding_peer(c, Forwarding::hb_first, src, dst);
    if (hb_alive(src) && hb_alive(w)) {
      hb(src, w);
      if (clos(w, dst)) return RouteStatus::direct;
      out.resize(mark);
    }
  } else if (clos(src, dst)) {
    return RouteStatus::direct;
  }
  out.resize(mark);
  if (!pxn_) return RouteStatus::none;
  const int n = peer_choices(src, dst);
  if (n == 0) return RouteStatus::none;
  int want = ((choice % n) + n) % n;
  // Peers in rail order: the want-th rail whose detour is alive.
  for (std::int64_t r = 0; r < c.hb_domain; ++r) {
    std::int64_t x = 0, y = 0;
    if (!detour_ends(src, dst, r, x, y)) continue;
    if (x != src) hb(src, x);
    if (clos(x, y)) {
      if (want-- == 0) {
        if (y != dst) hb(y, dst);
        return RouteStatus::forwarded;
      }
    }
    out.resize(mark);
  }
  return RouteStatus::none;
}

int DegradedFabric::peer_choices(std::int64_t src, std::int64_t dst) const {
  if (!pxn_ || src == dst) return 0;
  const Fabric& f = *f_;
  const spec::Cluster& c = f.cluster;
  if (f.layout.instances == 0 || !gpu_alive(src) || !gpu_alive(dst)) return 0;
  const std::int64_t ds = c.domain_of(src), dd = c.domain_of(dst);
  if (ds == dd) return 0;
  const bool rail_only = f.layout.per_rail;
  thread_local Path scratch;
  scratch.reserve(static_cast<std::size_t>(max_path_channels()));
  const int M = f.nics_per_gpu();
  std::uint64_t h = 0;
  // Not forwarded when the design's own route is alive.
  {
    scratch.clear();
    const std::int64_t a = rail_only ? forwarding_peer(c, Forwarding::hb_first, src, dst) : src;
    const bool hb_ok = a == src || (hb_alive(src) && hb_alive(a));
    const int n = pick_nic(M, h, [&](int k) { return edge_alive(a, k) && edge_alive(dst, k); });
    if (hb_ok && clos_live(a, dst, n, h, scratch)) return 0;
  }
  int count = 0;
  for (std::int64_t r = 0; r < c.hb_domain; ++r) {
    std::int64_t x = 0, y = 0;
    if (!detour_ends(src, dst, r, x, y)) continue;
    scratch.clear();
    const int n = pick_nic(M, h, [&](int k) { return edge_alive(x, k) && edge_alive(y, k); });
    if (clos_live(x, y, n, h, scratch)) ++count;
  }
  return count;
}

std::vector<TierCapacity> capacity_by_tier(const DegradedFabric& d) {
  const Fabric& f = d.fabric();
  std::vector<TierCapacity> out;
  std::map<std::pair<int, int>, std::size_t> at;  // (kind order, tier) -> index
  for (std::size_t l = 0; l < f.links.size(); ++l) {
    const Link& k = f.links[l];
    const int order = k.kind == LinkKind::hb ? 0 : k.kind == LinkKind::nic ? 1 : 2;
    const auto key = std::make_pair(order, order == 2 ? static_cast<int>(k.tier) : 0);
    auto [it, fresh] = at.try_emplace(key, out.size());
    if (fresh) out.push_back({link_tier_name(k.kind, k.tier)});
    TierCapacity& t = out[it->second];
    ++t.links;
    t.capacity_Bps += k.capacity_Bps;
    if (!d.link_alive(static_cast<std::int64_t>(l))) {
      ++t.links_lost;
      t.lost_Bps += k.capacity_Bps;
    } else if (k.kind == LinkKind::hb) {
      t.lost_Bps += k.capacity_Bps * (1.0 - d.hb_factor(f.cluster.domain_of(k.a)));
    }
  }
  std::vector<TierCapacity> sorted;
  for (const auto& [key, i] : at) sorted.push_back(out[i]);
  return sorted;
}

std::vector<double> degraded_uplink_ratio(const DegradedFabric& d,
                                          const std::vector<double>& healthy) {
  const Fabric& f = d.fabric();
  std::vector<double> r = healthy;
  for (int t = 1; t < f.tiers && static_cast<std::size_t>(t) < r.size(); ++t) {
    const ClosTier& lo = f.plan.tiers[static_cast<std::size_t>(t - 1)];
    const std::int64_t P = lo.up_ports_per_block();
    for (std::int64_t inst = 0; inst < f.layout.instances; ++inst) {
      const std::int64_t base = f.link_base[static_cast<std::size_t>(t)] + inst * lo.uplinks();
      for (std::int64_t b = 0; b < lo.blocks; ++b) {
        std::int64_t live = 0;
        bool any_switch = false;
        for (std::int64_t j = 0; j < lo.switches_per_block; ++j) {
          const std::int64_t node = f.tier_node_base[static_cast<std::size_t>(t)] +
                                    inst * lo.switches() + b * lo.switches_per_block + j;
          any_switch = any_switch || d.node_alive(node);
        }
        if (!any_switch) continue;
        for (std::int64_t q = 0; q < P; ++q) live += d.link_alive(base + b * P + q) ? 1 : 0;
        if (live == P) continue;
        const double ratio = live == 0 ? std::numeric_limits<double>::infinity()
                                       : healthy[static_cast<std::size_t>(t)] *
                                             static_cast<double>(P) / static_cast<double>(live);
        r[static_cast<std::size_t>(t)] = std::max(r[static_cast<std::size_t>(t)], ratio);
      }
    }
  }
  return r;
}

}  // namespace railsim::topo
