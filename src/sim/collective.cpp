#include "railsim/sim/collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "railsim/core/cancel.hpp"
#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/hash.hpp"
#include "railsim/perf/expansion.hpp"

namespace railsim::sim {

namespace {

std::uint64_t mix(std::uint64_t z) {
  return splitmix64(z);
}

// The ECMP hash of a transfer (and of its first leg when forwarded; the second leg's is mix(h)).
std::uint64_t flow_hash(std::int64_t src, std::int64_t dst, std::uint64_t seed) {
  return mix(static_cast<std::uint64_t>(src) * 0x100000001B3ull ^ static_cast<std::uint64_t>(dst) ^
             (seed != 0 ? mix(seed) : 0));
}

bool needs_forwarding(const SimNetwork& net, std::int64_t src, std::int64_t dst) {
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
    const std::int64_t mid = topo::forwarding_peer(c, cfg_.forwarding, src, dst);
    first(leg(src, mid, h, bytes, weight, {}, 0));
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
    if (k <= 1 && nics <= 1) {
      route(s, d, h, -1, p1_);
      return add(p1_, bytes, weight, after, final);
    }
    const int n = k > 1 ? k : nics;
    std::vector<FlowId> parts;
    parts.reserve(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      if (k > 1) {
        p1_.clear();
        net_.route_part(s, d, h, j, p1_);
        to_bundles(p1_);
      } else {
        // Each NIC's share is its own connection (NCCL: one queue pair per channel), so ECMP
        // hashes it on its own.
        route(s, d, j == 0 ? h : mix(h + 0x5851F42D4C957F2Dull * static_cast<std::uint64_t>(j)), j,
              p1_);
      }
      parts.push_back(add(p1_, bytes / n, weight, after));
    }
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

// Per-channel (or per-class) statistics accumulated over the phases of a collective.
struct Accumulator {
  const SimNetwork& net;
  std::vector<double> ch_peak, ch_bytes, cls_peak, cls_bytes;
  bool any_flow_by_flow = false;
  explicit Accumulator(const SimNetwork& n)
      : net(n),
        ch_peak(n.capacity_Bps.size(), 0.0),
        ch_bytes(n.capacity_Bps.size(), 0.0),
        cls_peak(n.class_names.size(), 0.0),
        cls_bytes(n.class_names.size(), 0.0) {}

  void add(const SimResult& r, bool by_class, double scale) {
    if (by_class) {
      for (std::size_t k = 0; k < cls_peak.size(); ++k) {
        cls_peak[k] = std::max(cls_peak[k], r.channel_peak_utilisation[k]);
        cls_bytes[k] += r.channel_bytes[k] * scale;
      }
      return;
    }
    any_flow_by_flow = true;
    for (std::size_t c = 0; c < ch_peak.size(); ++c) {
      ch_peak[c] = std::max(ch_peak[c], r.channel_peak_utilisation[c]);
      ch_bytes[c] += r.channel_bytes[c] * scale;
      const auto k = static_cast<std::size_t>(net.channel_class[c]);
      cls_peak[k] = std::max(cls_peak[k], r.channel_peak_utilisation[c]);
      cls_bytes[k] += r.channel_bytes[c] * scale;
    }
  }

  void finish(CollectiveResult& out, int busiest) const {
    for (std::size_t k = 0; k < cls_peak.size(); ++k)
      if (cls_bytes[k] > 0) out.tiers.push_back({net.class_names[k], cls_peak[k], cls_bytes[k]});
    std::vector<std::int32_t> idx;
    auto better = [](double pa, double ba, double pb, double bb) {
      return pa != pb ? pa > pb : ba > bb;
    };
    if (any_flow_by_flow) {
      for (std::size_t c = 0; c < ch_peak.size(); ++c)
        if (ch_bytes[c] > 0) idx.push_back(static_cast<std::int32_t>(c));
      const auto n =
          std::min<std::size_t>(idx.size(), static_cast<std::size_t>(std::max(busiest, 0)));
      std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(),
                        [&](std::int32_t a, std::int32_t b) {
                          const auto ua = static_cast<std::size_t>(a),
                                     ub = static_cast<std::size_t>(b);
                          if (ch_peak[ua] != ch_peak[ub] || ch_bytes[ua] != ch_bytes[ub])
                            return better(ch_peak[ua], ch_bytes[ua], ch_peak[ub], ch_bytes[ub]);
                          return a < b;
                        });
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<std::size_t>(idx[i]);
        out.busiest.push_back({net.describe ? net.describe(idx[i]) : fmt::format("channel {}", c),
                               ch_peak[c], ch_bytes[c]});
      }
    } else {
      for (std::size_t k = 0; k < cls_peak.size(); ++k)
        if (cls_bytes[k] > 0) idx.push_back(static_cast<std::int32_t>(k));
      std::stable_sort(idx.begin(), idx.end(), [&](std::int32_t a, std::int32_t b) {
        const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
        return better(cls_peak[ua], cls_bytes[ua], cls_peak[ub], cls_bytes[ub]);
      });
      for (std::size_t i = 0; i < idx.size() && static_cast<int>(i) < busiest; ++i) {
        const auto k = static_cast<std::size_t>(idx[i]);
        out.busiest.push_back(
            {"all " + net.class_names[k] + " (class average)", cls_peak[k], cls_bytes[k]});
      }
    }
  }
};

EngineOptions engine_options(const SimConfig& cfg) {
  EngineOptions o;
  o.hop_latency_s = cfg.hop_latency_s;
  o.batch_tolerance = cfg.batch_tolerance;
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

// Flows one transfer's leg through a NIC becomes: one per NIC and their join on a multi-NIC GPU.
double nic_flows(const spec::Cluster& c) {
  return c.nics_per_gpu > 1 ? c.nics_per_gpu + 1.0 : 1.0;
}

// Flows one transfer becomes (forwarding legs, pipelined chunks, NIC shares), for the limits
// below.
double flows_per_transfer(const SimNetwork& net, const SimConfig& cfg, std::int64_t s,
                          std::int64_t d) {
  const auto& c = net.cluster;
  if (c.domain_of(s) == c.domain_of(d)) return 1;
  if (!net.rail_only || c.rail_of(s) == c.rail_of(d)) return nic_flows(c);
  return (cfg.mode == ForwardingMode::pipelined && cfg.chunks > 1 ? cfg.chunks : 1.0) *
         (1.0 + nic_flows(c));
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
double alltoall_flows(const SimNetwork& net, const SimConfig& cfg,
                      const std::vector<Group>& groups) {
  const auto& c = net.cluster;
  const double pieces = cfg.mode == ForwardingMode::pipelined && cfg.chunks > 1 ? cfg.chunks : 1;
  double flows = 0;
  std::unordered_map<std::int64_t, double> by_domain, by_rail;
  for (const auto& g : groups) {
    const double n = static_cast<double>(g.size());
    const double pairs = n * (n - 1);
    double forwarded = 0;
    if (net.rail_only && g.size() > 1) {
      by_domain.clear();
      by_rail.clear();
      for (auto gpu : g) {
        by_domain[c.domain_of(gpu)] += 1;
        by_rail[c.rail_of(gpu)] += 1;
      }
      forwarded = pairs;
      for (const auto& [k, m] : by_domain) forwarded -= m * (m - 1);
      for (const auto& [k, m] : by_rail) forwarded -= m * (m - 1);
    }
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
  return flows * nic_flows(c);
}

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
  FlowBuilder b(net, cfg, by_class, true);
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
  FlowBuilder b(net, cfg, false, true);
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

// Reductions and gathers: perf's expansion of every group (perf/expansion.hpp), its phases run
// one after another, each phase's rings of every group concurrently.
void reduction_collective(const SimNetwork& net, const SimConfig& cfg, const CollectiveRequest& req,
                          CollectiveResult& out, Accumulator& acc) {
  if (req.algorithm != perf::Algorithm::ring && req.algorithm != perf::Algorithm::hierarchical)
    throw InputError("--algorithm",
                     fmt::format("{} cannot run with the {} algorithm; valid: "
                                 "ring, hierarchical",
                                 perf::to_string(req.op), perf::to_string(req.algorithm)));
  perf::CommOp op;
  op.op = req.op;
  op.algorithm = req.algorithm;
  op.bytes = req.bytes;
  std::vector<perf::GroupExpansion> ex(req.groups.size());
  std::vector<std::int64_t> scratch;
  int phases = 0;
  for (std::size_t i = 0; i < req.groups.size(); ++i) {
    perf::expand_members(op, req.groups[i], net.cluster.hb_domain, ex[i], scratch);
    phases = std::max(phases, ex[i].plan.size);
  }
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

}  // namespace

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

SimConfig sim_config(const spec::NetworkDesign& d) {
  SimConfig cfg;
  cfg.routing = d.routing;
  cfg.seed = d.ecmp_seed;
  cfg.mode = d.forwarding;
  cfg.forwarding = d.forward_via;
  cfg.chunks = d.forwarding_chunks;
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
