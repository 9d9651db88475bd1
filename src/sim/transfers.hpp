#pragma once
// Private to src/sim: how the simulator turns transfers into flows (the ECMP hash of a transfer,
// rail-only forwarding legs, pipelined chunks, merged flows, link classes and spraying bundles).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/hash.hpp"
#include "railsim/sim/collective.hpp"

namespace railsim::sim::detail {

inline std::uint64_t mix(std::uint64_t z) {
  return splitmix64(z);
}

// The ECMP hash of a transfer (and of its first leg when forwarded; the second leg's is mix(h)).
inline std::uint64_t flow_hash(std::int64_t src, std::int64_t dst, std::uint64_t seed) {
  return mix(static_cast<std::uint64_t>(src) * 0x100000001B3ull ^ static_cast<std::uint64_t>(dst) ^
             (seed != 0 ? mix(seed) : 0));
}

inline bool needs_forwarding(const SimNetwork& net, std::int64_t src, std::int64_t dst) {
  return net.rail_only && topo::needs_forwarding(net.cluster, src, dst);
}

// Turns transfers into flows: forwarding legs, pipelining chunks, merging of identical flows,
// (by_class) mapping channels onto one channel per link class, and (adaptive, spray: spreading)
// mapping switch-switch channels onto their bundles, which follow the network's channels in the
// workload.
class FlowBuilder {
 public:
  // two_phase: a barrier separates every first leg (and direct transfer of the same kind) from
  // every second leg (and direct transfer of the other kind); see ForwardingMode.
  FlowBuilder(const SimNetwork& net, const SimConfig& cfg, bool by_class, bool two_phase = false)
      : net_(net),
        cfg_(cfg),
        by_class_(by_class),
        two_phase_(two_phase && net.rail_only && cfg.mode == ForwardingMode::two_phase),
        spread_(cfg.routing != spec::Routing::ecmp && !by_class && !net.bundle_of.empty()) {
    if (by_class) {
      std::vector<double> cap(net.class_names.size(), 0.0);
      for (std::size_t c = 0; c < net.capacity_Bps.size(); ++c)
        cap[static_cast<std::size_t>(net.channel_class[c])] += net.capacity_Bps[c];
      for (double& x : cap) x = x > 0 ? x : 1.0;  // a class without channels carries nothing
      w_ = Workload(std::move(cap));
    } else if (spread_) {
      std::vector<double> cap = net.capacity_Bps;
      bundle_cap_ = bundle_capacities(net);
      for (double x : bundle_cap_) cap.push_back(x > 0 ? x : 1.0);  // no live member: unused
      w_ = Workload(std::move(cap));
    } else {
      w_ = Workload(net.capacity_Bps);
    }
  }

  // Simulates the finished workload. Spread (adaptive, spray), a bundle's bytes are handed back to
  // its member links in proportion to their capacities (spraying loads them evenly), each member at
  // the bundle's peak utilisation, so that the result has one entry per network channel.
  SimResult run(const EngineOptions& opt) {
    SimResult r = simulate(done(), opt);
    if (!spread_) return r;
    const std::size_t C = net_.capacity_Bps.size();
    for (std::size_t c = 0; c < C; ++c) {
      const std::int32_t b = net_.bundle_of[c];
      if (b < 0) continue;
      const auto u = static_cast<std::size_t>(b);
      r.channel_bytes[c] =
          bundle_cap_[u] > 0 ? r.channel_bytes[C + u] * net_.capacity_Bps[c] / bundle_cap_[u] : 0;
      r.channel_peak_utilisation[c] = r.channel_peak_utilisation[C + u];
    }
    r.channel_bytes.resize(C);
    r.channel_peak_utilisation.resize(C);
    return r;
  }

  Workload& workload() { return w_; }
  // Room for `flows` flows of up to `hops` channels each and as many dependencies, so that
  // building a phase of millions of flows never copies its arrays to grow them.
  void reserve(double flows, double hops) {
    const auto n = static_cast<std::size_t>(flows);
    w_.reserve(n, n * static_cast<std::size_t>(hops), n);
    dep_off_.reserve(n + 1);
    dep_ids_.reserve(n);
  }
  // The finished workload; the merging index is freed first (it is as large as the workload).
  const Workload& done() {
    index_ = {};
    dep_off_ = {};
    dep_ids_ = {};
    return w_;
  }
  // Bytes handed to the network by the senders of every transfer (forwarding legs once).
  double sent() const { return sent_; }

  // Returns the flow whose delivery completes the transfer (-1 when there is nothing to send).
  // That flow carries the transfer's latency (SimConfig::transfer_latency_s), once per transfer:
  // it is part of the flow's identity, so a forwarded transfer's first leg never merges with a
  // direct transfer's final flow on the same path and inherits its latency.
  FlowId transfer(std::int64_t src, std::int64_t dst, double bytes, std::span<const FlowId> after,
                  double weight = 1.0) {
    if ((++transfers_ & 0xffff) == 0) check_cancelled();  // millions of transfers: stop when asked
    if (src != dst && bytes > 0) sent_ += bytes * weight;
    return transfer_impl(src, dst, bytes, after, weight);
  }

 private:
  // How leg() builds a leg: kDetours spreads it over a degraded network's detours; kFinal makes
  // it the flow that completes its transfer (it carries the transfer's latency).
  enum LegFlags : unsigned { kDetours = 1, kFinal = 2 };

  FlowId transfer_impl(std::int64_t src, std::int64_t dst, double bytes,
                       std::span<const FlowId> after, double weight) {
    if (src == dst || bytes <= 0) return -1;
    const std::uint64_t h = flow_hash(src, dst, cfg_.seed);
    const bool fw = needs_forwarding(net_, src, dst);
    if (two_phase_) return transfer_two_phase(src, dst, bytes, h, fw, weight);
    if (!fw) return leg(src, dst, h, bytes, weight, after, kDetours | kFinal);
    const std::int64_t mid = topo::forwarding_peer(net_.cluster, cfg_.forwarding, src, dst);
    if (cfg_.mode != ForwardingMode::pipelined || cfg_.chunks <= 1) {  // two-phase: store here
      const FlowId f1 = leg(src, mid, h, bytes, weight, after, kDetours);
      const FlowId d1[1] = {f1};
      return leg(mid, dst, mix(h), bytes, weight, d1, kDetours | kFinal);
    }
    // Piece j's second leg waits for its first leg and for piece j-1's second leg; first legs
    // go one after another. Each piece takes one peer route (no detour spreading).
    const double piece = bytes / cfg_.chunks;
    FlowId prev1 = -1, prev2 = -1;
    for (int j = 0; j < cfg_.chunks; ++j) {
      const FlowId d0[1] = {prev1};
      const FlowId f1 = leg(src, mid, h, piece, weight, j == 0 ? after : d0, 0);
      const FlowId d2[2] = {f1, prev2};
      prev2 = leg(mid, dst, mix(h), piece, weight, std::span<const FlowId>(d2, prev2 < 0 ? 1 : 2),
                  j + 1 == cfg_.chunks ? kFinal : 0u);
      prev1 = f1;
    }
    return prev2;
  }

  FlowId transfer_two_phase(std::int64_t src, std::int64_t dst, double bytes, std::uint64_t h,
                            bool fw, double weight) {
    const auto& c = net_.cluster;
    if (barrier_ < 0) {
      barrier_ = w_.add_flow({}, 0.0);
      dep_off_.push_back(static_cast<std::int64_t>(dep_ids_.size()));
    }
    const bool hb_first = cfg_.forwarding == topo::Forwarding::hb_first;
    const FlowId bar[1] = {barrier_};
    auto first = [&](FlowId f) {
      if (static_cast<std::size_t>(f) >= linked_.size())
        linked_.resize(static_cast<std::size_t>(f) + 1, 0);
      if (!linked_[static_cast<std::size_t>(f)]) {
        linked_[static_cast<std::size_t>(f)] = 1;
        w_.add_dependency(f, barrier_);
      }
      return f;
    };
    if (!fw) {
      // hb_first: the first phase is the NVLink shuffle of what changes rails; transfers inside
      // the domain run with the NIC phase (as the analytic model's max(intra / B_hb,
      // inter / B_nic) + cross / B_hb has it). rail_first: the rail transfers go first.
      const bool same_domain = c.domain_of(src) == c.domain_of(dst);
      if (!hb_first && !same_domain) return first(leg(src, dst, h, bytes, weight, {}, kFinal));
      return leg(src, dst, h, bytes, weight, bar, kFinal);
    }
    // The first leg carries a transfer latency too: the barrier ends a collective step of its
    // own (the analytic model's two latencies of a two-phase step, StepLoad::latency_steps).
    const std::int64_t mid = topo::forwarding_peer(c, cfg_.forwarding, src, dst);
    first(leg(src, mid, h, bytes, weight, {}, kFinal));
    return leg(mid, dst, mix(h), bytes, weight, bar, kFinal);
  }

  // One transfer from s to d: one flow on its route; or, when it leaves the HB domain from a
  // GPU with several NICs, an equal share on each NIC (NCCL spreads its channels over a GPU's
  // NICs); or, when the network spreads the pair over several detours (failures, `detours`), an
  // equal share on each. Shares are joined by an empty flow that waits for them all.
  FlowId leg(std::int64_t s, std::int64_t d, std::uint64_t h, double bytes, double weight,
             std::span<const FlowId> after, unsigned flags) {
    const int k = (flags & kDetours) && net_.spread && !by_class_ ? net_.spread(s, d) : 0;
    const int nics = by_class_ || k > 1 ? 1 : nic_shares(s, d);
    const bool final = flags & kFinal;
    // Connections hashed on their own (--port-balance hash): each takes its own ECMP path above
    // the leaf, on a one-port GPU too.
    const bool connections = !by_class_ && cfg_.port_balance == spec::PortBalance::hash &&
                             cfg_.connections > 1 &&
                             net_.cluster.domain_of(s) != net_.cluster.domain_of(d);
    if (k <= 1 && nics <= 1 && !connections) {
      route(s, d, h, -1, p1_);
      return add(p1_, bytes, weight, after, final);
    }
    // NIC ports whose edges are dead at either end (a lost plane or leaf) carry no share: the
    // transfer spreads over the live ones (NCCL's channels over the NICs left, a SuperNIC's
    // plane load balancing over the planes left).
    int live = nics;
    if (k <= 1 && net_.nic_alive) {
      live = 0;
      for (int j = 0; j < nics; ++j) live += net_.nic_alive(s, j) && net_.nic_alive(d, j) ? 1 : 0;
      if (live == 0) live = nics;  // none: the route picks (and reports no path)
    }
    const bool skip_dead = live < nics;
    if (k <= 1 && cfg_.port_balance == spec::PortBalance::hash)
      return hashed_ports(s, d, h, bytes, weight, after, final, nics, skip_dead);
    const int n = k > 1 ? k : nics;
    std::vector<FlowId> parts;
    parts.reserve(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      if (k > 1) {
        p1_.clear();
        net_.route_part(s, d, h, j, p1_);
        to_bundles(p1_);
      } else {
        if (skip_dead && !(net_.nic_alive(s, j) && net_.nic_alive(d, j))) continue;
        // Each NIC's share is its own connection (NCCL: one queue pair per channel), so ECMP
        // hashes it on its own.
        route(s, d, j == 0 ? h : mix(h + 0x5851F42D4C957F2Dull * static_cast<std::uint64_t>(j)), j,
              p1_);
      }
      parts.push_back(add(p1_, bytes / (k > 1 ? n : live), weight, after));
    }
    p1_.clear();
    return add(p1_, 0.0, weight, parts, final);
  }

  // Per-connection hashing over the NIC ports (spec::PortBalance::hash): the transfer as
  // cfg_.connections flows, connection i on the live port that its own hash picks (the port's
  // route then hashes it again at each switch under ecmp). Connections that land on the same
  // path merge into one flow of that weight.
  FlowId hashed_ports(std::int64_t s, std::int64_t d, std::uint64_t h, double bytes, double weight,
                      std::span<const FlowId> after, bool final, int nics, bool skip_dead) {
    ports_.clear();
    for (int j = 0; j < nics; ++j)
      if (!skip_dead || (net_.nic_alive(s, j) && net_.nic_alive(d, j))) ports_.push_back(j);
    const int C = std::max(cfg_.connections, 1);
    std::vector<FlowId> parts;
    parts.reserve(static_cast<std::size_t>(C));
    for (int i = 0; i < C; ++i) {
      const std::uint64_t hc =
          i == 0 ? h : mix(h + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i));
      const int j = ports_[static_cast<std::size_t>(mix(hc ^ 0xA0761D6478BD642Full) %
                                                    static_cast<std::uint64_t>(ports_.size()))];
      route(s, d, hc, j, p1_);
      parts.push_back(add(p1_, bytes / C, weight, after, final && C == 1));
    }
    if (C == 1) return parts.front();
    p1_.clear();
    return add(p1_, 0.0, weight, parts, final);
  }

  // NICs a transfer from s to d is split over: every NIC of s when it leaves the HB domain.
  int nic_shares(std::int64_t s, std::int64_t d) const {
    const auto& c = net_.cluster;
    return c.nics_per_gpu > 1 && c.domain_of(s) != c.domain_of(d) ? c.nics_per_gpu : 1;
  }

  void route(std::int64_t s, std::int64_t d, std::uint64_t h, int nic, topo::Path& out) {
    out.clear();
    net_.route(s, d, h, nic, out);
    if (by_class_) {
      for (auto& ch : out) ch = net_.channel_class[static_cast<std::size_t>(ch)];
      return;
    }
    to_bundles(out);
  }

  // Spreading: every switch-switch channel of a path replaced by its bundle. The bundles a route
  // crosses do not depend on which equal-cost uplinks the hash picked, so this is the path of the
  // whole sprayed transfer.
  void to_bundles(topo::Path& p) const {
    if (!spread_) return;
    const auto C = static_cast<std::int32_t>(net_.capacity_Bps.size());
    for (auto& ch : p) {
      const std::int32_t b = net_.bundle_of[static_cast<std::size_t>(ch)];
      if (b >= 0) ch = C + b;
    }
  }

  // A flow of `bytes` on path p after the flows `after`; `final`: it completes a transfer and
  // carries the transfer's latency. Identical flows (path, bytes, dependencies, latency) merge.
  FlowId add(const topo::Path& p, double bytes, double weight, std::span<const FlowId> after,
             bool final = false) {
    const double latency = final ? cfg_.transfer_latency_s : 0.0;
    deps_.clear();
    for (FlowId f : after)
      if (f >= 0) deps_.push_back(f);
    std::sort(deps_.begin(), deps_.end());
    deps_.erase(std::unique(deps_.begin(), deps_.end()), deps_.end());
    std::uint64_t key = mix(std::bit_cast<std::uint64_t>(bytes));
    for (auto c : p) key = mix(key ^ static_cast<std::uint64_t>(c));
    key = mix(key ^ 0xD1B54A32D192ED03ull);
    for (auto d : deps_) key = mix(key ^ static_cast<std::uint64_t>(d));
    if (latency > 0) key = mix(key ^ 0x2545F4914F6CDD1Dull);
    // Open addressing (linear probing) on the key's low 32 bits in the table of the path's first
    // channel; a slot holds (tag, flow).
    if (index_.empty()) index_.resize(static_cast<std::size_t>(w_.channel_count()) + 1);
    Table& t = index_[p.empty() ? index_.size() - 1 : static_cast<std::size_t>(p.front())];
    if (2 * (t.used + 1) > t.slots.size()) grow(t);
    const auto tag = static_cast<std::uint32_t>(key);
    const std::size_t mask = t.slots.size() - 1;
    std::size_t pos = tag & mask;
    for (; t.slots[pos].second >= 0; pos = (pos + 1) & mask) {
      if (t.slots[pos].first != tag) continue;
      const FlowId f = t.slots[pos].second;
      const auto fp = w_.path(f);
      const auto db = dep_off_[static_cast<std::size_t>(f)];
      const auto de = dep_off_[static_cast<std::size_t>(f) + 1];
      if (w_.bytes(f) == bytes && w_.latency_s(f) == latency &&
          std::equal(fp.begin(), fp.end(), p.begin(), p.end()) &&
          std::equal(dep_ids_.begin() + db, dep_ids_.begin() + de, deps_.begin(), deps_.end())) {
        w_.add_weight(f, weight);
        return f;
      }
    }
    check_flow_budget();
    const FlowId f = w_.add_flow(p, bytes, weight);
    if (latency > 0) w_.set_latency(f, latency);
    for (auto d : deps_) w_.add_dependency(d, f);
    dep_ids_.insert(dep_ids_.end(), deps_.begin(), deps_.end());
    dep_off_.push_back(static_cast<std::int64_t>(dep_ids_.size()));
    t.slots[pos] = {tag, f};
    ++t.used;
    return f;
  }

  // Work bounded before it is done: forwarding legs and pipelining chunks multiply the flows of
  // a phase (up to 2 x --chunks per transfer), so the flows actually built are counted against
  // --max-flows as they are added, and the phase is refused before the engine runs.
  void check_flow_budget() const {
    if (w_.flow_count() < cfg_.max_flows) return;
    const bool chunked =
        net_.rail_only && cfg_.mode == ForwardingMode::pipelined && cfg_.chunks > 1;
    if (chunked)
      throw InputError("--chunks", fmt::format("pipelined forwarding in {} chunks makes more than "
                                               "--max-flows {} flows in one phase; lower --chunks "
                                               "or raise --max-flows",
                                               cfg_.chunks, cfg_.max_flows));
    throw InputError("--max-flows", fmt::format("one phase needs more than --max-flows {} flows "
                                                "(forwarding legs included); raise it",
                                                cfg_.max_flows));
  }

  const SimNetwork& net_;
  const SimConfig& cfg_;
  bool by_class_, two_phase_, spread_;
  std::vector<double> bundle_cap_;  // spreading: capacity of each bundle
  FlowId barrier_ = -1;
  double sent_ = 0;
  std::uint64_t transfers_ = 0;
  std::vector<std::uint8_t> linked_;
  std::vector<int> ports_;  // hashed_ports: the live NIC ports of a transfer
  Workload w_;
  // Merging index: one table per channel, of the flows whose path starts there (the last table:
  // empty paths). Identical flows have the same first channel, and the flows added in a row
  // leave the same few GPUs, so their tables are in cache: one table over every flow cost a
  // cache miss per flow added. A table is a power of two of (low 32 bits of the flow's key,
  // flow id) slots, -1 when free, at most half full.
  struct Table {
    std::vector<std::pair<std::uint32_t, FlowId>> slots;
    std::size_t used = 0;
  };
  std::vector<Table> index_;
  static void grow(Table& t) {
    std::vector<std::pair<std::uint32_t, FlowId>> old(std::max<std::size_t>(8, 2 * t.slots.size()),
                                                      {0, -1});
    old.swap(t.slots);
    const std::size_t mask = t.slots.size() - 1;
    for (const auto& e : old) {
      if (e.second < 0) continue;
      std::size_t pos = e.first & mask;
      while (t.slots[pos].second >= 0) pos = (pos + 1) & mask;
      t.slots[pos] = e;
    }
  }
  core::BigVector<std::int64_t> dep_off_{0};
  core::BigVector<FlowId> dep_ids_;
  std::vector<FlowId> deps_;
  topo::Path p1_, p2_;
};

}  // namespace railsim::sim::detail
