#include "railsim/sim/flow_sim.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <string>

#include "railsim/core/cancel.hpp"

namespace railsim::sim {

Workload::Workload(std::vector<double> channel_capacity_Bps)
    : capacity_(std::move(channel_capacity_Bps)) {
  for (double c : capacity_)
    if (!(c > 0) || !std::isfinite(c))
      throw std::logic_error("Workload: channel capacities must be positive and finite");
}

void Workload::reserve(std::size_t flows, std::size_t path_entries, std::size_t dependencies) {
  deps_.reserve(dependencies);
  path_.reserve(path_entries);
  path_off_.reserve(flows + 1);
  bytes_.reserve(flows);
  weight_.reserve(flows);
}

FlowId Workload::add_flow(std::span<const ChannelId> path, double bytes, double weight,
                          double release_s) {
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw std::logic_error("Workload: flow bytes must be finite and >= 0");
  if (!(weight > 0) || !std::isfinite(weight))
    throw std::logic_error("Workload: flow weight must be finite and > 0");
  if (!(release_s >= 0) || !std::isfinite(release_s))
    throw std::logic_error("Workload: release time must be finite and >= 0");
  if (bytes_.size() >= static_cast<std::size_t>(std::numeric_limits<FlowId>::max()))
    throw std::logic_error("Workload: too many flows");
  for (ChannelId c : path)
    if (c < 0 || c >= channel_count()) throw std::logic_error("Workload: channel id out of range");
  if (path_.size() + path.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::logic_error("Workload: more than 2^32 channel entries");
  path_.insert(path_.end(), path.begin(), path.end());
  path_off_.push_back(static_cast<std::uint32_t>(path_.size()));
  bytes_.push_back(bytes);
  weight_.push_back(weight);
  if (release_s > 0) {
    release_.resize(bytes_.size(), 0.0);
    release_.back() = release_s;
  }
  return static_cast<FlowId>(bytes_.size() - 1);
}

void Workload::set_latency(FlowId f, double latency_s) {
  if (f < 0 || f >= flow_count() || !(latency_s >= 0) || !std::isfinite(latency_s))
    throw std::logic_error("Workload: bad latency");
  if (latency_.size() < bytes_.size()) latency_.resize(bytes_.size(), 0.0);
  latency_[static_cast<std::size_t>(f)] = latency_s;
}

void Workload::add_dependency(FlowId from, FlowId to) {
  if (from < 0 || from >= flow_count() || to < 0 || to >= flow_count() || from == to)
    throw std::logic_error("Workload: bad dependency");
  deps_.emplace_back(from, to);
}

double Workload::represented_flows() const {
  return std::accumulate(weight_.begin(), weight_.end(), 0.0);
}

namespace {

struct Dsu {
  std::vector<std::int32_t> p;
  explicit Dsu(std::int32_t n) : p(static_cast<std::size_t>(n)) {
    std::iota(p.begin(), p.end(), 0);
  }
  std::int32_t find(std::int32_t x) {
    while (p[static_cast<std::size_t>(x)] != x) {
      p[static_cast<std::size_t>(x)] = p[static_cast<std::size_t>(p[static_cast<std::size_t>(x)])];
      x = p[static_cast<std::size_t>(x)];
    }
    return x;
  }
  void unite(std::int32_t a, std::int32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) p[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
  }
};

// A component's flows in progress, in local arrays kept across events: a re-fill after flows
// end reuses the channel -> flow lists (ended flows are skipped; released flows wait on lists of
// their own) and rebuilds them only when more than half have ended or, at a whole re-fill, when
// the released flows' entries pass a quarter of the lists' (see refill). Local copies of paths,
// rates and remaining bytes keep the filling loops on contiguous memory.
template <class T>
using Vec = core::BigVector<T>;

// What a fill reads of a flow, together: a fill visits the flows of a channel's list, which lie
// anywhere in the component's arrays, so one cache line per visit instead of one per field.
// rate: 0 before the first fill and once ended, -1 while unfrozen during a fill; b1: the channel
// that froze it in the last fill, b2: another that saturated at the same level (-1: none; see
// repair); [pb, pe): its path in the component's copy of the paths (checked < 2^32).
struct alignas(32) FlowState {
  double rate = 0;
  double w = 1;
  ChannelId b1 = -1, b2 = -1;
  std::uint32_t pb = 0, pe = 0;
};
static_assert(sizeof(FlowState) == 32);

// Per channel, in one record so that a fill's update of a channel touches one cache line:
// residual capacity and unfrozen weight during a fill, an upper bound of its flows' rates, and
// the capacity its flows use.
struct alignas(32) ChanState {
  double capr = 0, load = 0, chmax = 0, used = 0;
};
static_assert(sizeof(ChanState) == 32);

struct Component {
  Vec<FlowId> flows;  // local -> global id
  Vec<FlowState> fs;
  Vec<ChannelId> paths;
  // fin: while rate > 0, the finishing time at that rate; otherwise the bytes left (see
  // remaining). A flow's state changes only when its rate does, so events cost what they
  // change, not what is in flight; one double holds both the bytes left and the finishing time.
  Vec<double> fin;
  Vec<std::pair<double, std::int32_t>> heap;  // (finish, local index), min first, lazy
  Vec<std::uint8_t> alive;
  Vec<ChannelId> channels;                   // channels the flows cross
  Vec<std::int64_t> start;                   // per channel (local index): its entries in by_channel
  Vec<std::int32_t> by_channel;              // local flow indices
  Vec<ChannelId> live;                       // scratch: channels still loaded during a fill
  Vec<FlowId> pending;                       // released since the last rebuild
  Vec<ChannelId> touched;                    // channels of flows ended since the last fill
  Vec<std::uint32_t> fmark;                  // per local flow: stamp of the last selection
  Vec<ChannelId> queue;                      // scratch: dirty channels
  Vec<std::pair<double, ChannelId>> chheap;  // scratch: channels by fair share
  // Flows released since the last rebuild join the local arrays at once; their channel entries
  // go to per-channel linked lists (head_ per channel, (flow, next) here) until the next rebuild.
  Vec<std::pair<std::int32_t, std::int32_t>> extra;
  std::size_t new_from = 0;  // local flows [new_from, size) were released in this event
  bool reindexed = false;    // rebuilt since the finishing-time heap was
  // After a whole re-fill every finishing time is new: the heap is left empty and the next
  // event scans the flows instead (see complete_finished) until a repair needs the heap.
  bool heapless = false;
  // The records as nodes of per-channel lists (node 2i: b1 of flow i, 2i + 1: b2), so that a
  // dirty channel visits only the flows that rely on it (heads in Engine::rhead_).
  Vec<std::int32_t> rnext, rprev;
  Vec<double> orig;                      // scratch: rate before the event, per flow of sel
  Vec<std::uint8_t> propagated;          // scratch: per flow of sel, channels made dirty
  Vec<ChannelId> vch;                    // scratch: record channels to check
  std::uint32_t tstamp = 0, vstamp = 0;  // counters for tmark_ and vmark_
  Vec<std::int32_t> sel;                 // scratch: flows re-filled (S)
  Vec<std::int32_t> rsel, rpos;          // scratch: flows of a repair's round, their places in sel
  Vec<ChannelId> uch;                    // scratch: channels whose allocation a repair changed
  std::size_t rwork = 0;                 // flows re-filled by the last repair, over its rounds
  std::uint32_t backoff = 0, skip = 0;   // events to re-fill whole without trying a repair
  Vec<ChannelId> tch;                    // scratch: their channels
  Vec<std::int64_t> tstart;
  Vec<std::int32_t> tby;
  std::size_t dead = 0;
  std::int64_t refilled = 0;  // flows re-filled, summed over fills
  double last_t = 0;
  // Flows ended since the last re-fill: their finishing times weighted by the capacity they
  // freed (rate x weight), and that capacity (see refill).
  double ended_tw = 0, ended_w = 0;
  double next_finish = std::numeric_limits<double>::infinity();
  std::uint32_t version = 0;
  std::uint32_t stamp = 0;
  bool dirty = false;
  // Closing: once every flow of the component has been released and none has a successor,
  // nothing else can change it or wait on it, and it runs its remaining events on its own.
  std::int64_t unreleased = 0;  // flows not yet released
  bool has_successors = false;
  // Whether the record lists follow b1 and b2. A whole re-fill sets b1 and b2 only (linking
  // each record into its channel's list is a few cache misses per flow, as much again as the
  // fill); the lists are rebuilt from them, in one pass, before the next repair needs them.
  bool records_live = true;
  std::int64_t own_events = 0;  // events run on its own
};

// Deliveries counted where they happen: the main event loop's, or a closed component's.
struct Tally {
  double completion_s = 0;
  std::int64_t delivered = 0;
};

struct FinishEvent {
  double t;
  std::int32_t comp;
  std::uint32_t version;
  bool operator>(const FinishEvent& o) const { return t != o.t ? t > o.t : comp > o.comp; }
};

class Engine {
 public:
  Engine(const Workload& w, const EngineOptions& opt) : w_(w), opt_(opt) {}

  SimResult run() {
    const std::int32_t F = w_.flow_count(), C = w_.channel_count();
    const auto uF = static_cast<std::size_t>(F), uC = static_cast<std::size_t>(C);
    res_.finish_s.assign(uF, 0.0);
    res_.channel_bytes.assign(uC, 0.0);
    res_.channel_peak_utilisation.assign(uC, 0.0);
    res_.flows_simulated = F;
    res_.flows_represented = w_.represented_flows();

    // Successors (CSR) and predecessor counts.
    npred_.assign(uF, 0);
    if (w_.dependencies().size() >= std::numeric_limits<std::uint32_t>::max())
      throw std::logic_error("simulate: more than 2^32 dependencies");
    succ_off_.assign(uF + 1, 0);
    for (auto [a, b] : w_.dependencies()) {
      ++succ_off_[static_cast<std::size_t>(a) + 1];
      ++npred_[static_cast<std::size_t>(b)];
    }
    std::partial_sum(succ_off_.begin(), succ_off_.end(), succ_off_.begin());
    succ_.resize(w_.dependencies().size());
    {
      Vec<std::uint32_t> pos(succ_off_.begin(), succ_off_.end() - 1);
      for (auto [a, b] : w_.dependencies())
        succ_[static_cast<std::size_t>(pos[static_cast<std::size_t>(a)]++)] = b;
    }

    // Components: channels joined by a flow belong together (static superset of the true
    // components at any time, so re-filling one is exact).
    Dsu dsu(C);
    for (FlowId f = 0; f < F; ++f) {
      auto p = w_.path(f);
      for (std::size_t i = 1; i < p.size(); ++i) dsu.unite(p[0], p[i]);
      for (ChannelId c : p)
        res_.channel_bytes[static_cast<std::size_t>(c)] += w_.bytes(f) * w_.weight(f);
    }
    for (std::size_t c = 0; c < uC; ++c)
      floor_s_ = std::max(floor_s_, res_.channel_bytes[c] / w_.capacity_Bps()[c]);
    Vec<std::int32_t> comp_of_root(uC, -1);
    std::int32_t ncomp = 0;
    comp_of_flow_.assign(uF, -1);
    for (FlowId f = 0; f < F; ++f) {
      auto p = w_.path(f);
      if (p.empty()) continue;
      auto r = static_cast<std::size_t>(dsu.find(p[0]));
      if (comp_of_root[r] < 0) comp_of_root[r] = ncomp++;
      comp_of_flow_[static_cast<std::size_t>(f)] = comp_of_root[r];
    }
    comps_.assign(static_cast<std::size_t>(ncomp), Component{});
    for (FlowId f = 0; f < F; ++f) {
      const auto uf = static_cast<std::size_t>(f);
      const std::int32_t k = comp_of_flow_[uf];
      if (k < 0) continue;
      auto& comp = comps_[static_cast<std::size_t>(k)];
      ++comp.unreleased;
      if (succ_off_[uf + 1] > succ_off_[uf]) comp.has_successors = true;
    }

    ch_.assign(uC, ChanState{});
    loc_.assign(uC, -1);
    head_.assign(uC, -1);
    tmark_.assign(uC, 0);
    vmark_.assign(uC, 0);
    rhead_.assign(uC, -1);
    vlevel_.assign(uC, 0.0);
    vkind_.assign(uC, 0);
    slev_.assign(uC, 0.0);
    lstamp_.assign(uC, 0);
    ustamp_.assign(uC, 0);
    omax_.assign(uC, 0.0);
    ostamp_.assign(uC, 0);
    tloc_.assign(uC, 0);
    stamp_.assign(uC, 0);

    for (FlowId f = 0; f < F; ++f)
      if (npred_[static_cast<std::size_t>(f)] == 0) push_release(w_.release_s(f), f);

    while (true) {
      while (!finishes_.empty() &&
             finishes_.top().version !=
                 comps_[static_cast<std::size_t>(finishes_.top().comp)].version)
        finishes_.pop();
      const double inf = std::numeric_limits<double>::infinity();
      const double t_rel = releases_.empty() ? inf : releases_.front().first;
      const double t_fin = finishes_.empty() ? inf : finishes_.top().t;
      const double now = std::min(t_rel, t_fin);
      if (now == inf) break;
      check_cancelled();
      const double until = horizon(now);
      bool progress = true;
      while (progress) {
        progress = false;
        std::size_t popped = 0;
        while (!releases_.empty() && releases_.front().first <= until) {
          // Past a 64th of a large heap popped in this event, the rest come out in one pass.
          if (releases_.size() >= kBulkReleases && ++popped > releases_.size() / 64) {
            release_due(until, now);
            progress = true;
            break;
          }
          const FlowId f = releases_.front().second;
          std::pop_heap(releases_.begin(), releases_.end(), std::greater<>());
          releases_.pop_back();
          release(f, now);
          progress = true;
        }
        while (!finishes_.empty() && finishes_.top().t <= until) {
          const FinishEvent e = finishes_.top();
          finishes_.pop();
          auto& comp = comps_[static_cast<std::size_t>(e.comp)];
          if (e.version != comp.version) continue;
          ++comp.version;  // consumed; the re-fill below posts the next one
          complete_finished(comp, until, main_);
          mark_dirty(e.comp);
          progress = true;
        }
      }
      if (releases_.empty() && releases_.capacity() > 65536) releases_ = {};
      refill_dirty(now);
      ++res_.events;
    }
    drain_closed();
    for (const auto& k : comps_) res_.refilled_flows += k.refilled;
    const std::int64_t delivered = main_.delivered;
    res_.completion_time_s = main_.completion_s;
    if (delivered != F)
      throw std::logic_error("simulate: " + std::to_string(F - delivered) +
                             " flows never completed (dependency cycle)");
    return std::move(res_);
  }

 private:
  // The end of the event at `now`: flows finishing within the batch tolerance of
  // max(now, floor_s_) end in it. floor_s_ is the busiest channel's bytes over its capacity, a
  // lower bound of the completion, so no flow moves by more than the tolerance times the
  // completion; without it, the events before floor_s_ would be as many as ln(floor_s_ / t) / T
  // for the first finishing time t (ours).
  double horizon(double now) const {
    return now + opt_.batch_tolerance * std::max({std::abs(now), floor_s_, 1e-12});
  }

  void mark_dirty(std::int32_t k) {
    auto& c = comps_[static_cast<std::size_t>(k)];
    if (!c.dirty) {
      c.dirty = true;
      dirty_.push_back(k);
    }
  }

  void deliver(FlowId f, double t_done, Tally& tally) {
    const auto uf = static_cast<std::size_t>(f);
    const double d =
        t_done + opt_.hop_latency_s * static_cast<double>(w_.path(f).size()) + w_.latency_s(f);
    res_.finish_s[uf] = d;
    tally.completion_s = std::max(tally.completion_s, d);
    ++tally.delivered;
    for (auto i = succ_off_[uf]; i < succ_off_[uf + 1]; ++i) {
      const FlowId s = succ_[static_cast<std::size_t>(i)];
      const auto us = static_cast<std::size_t>(s);
      // Until a flow is delivered, its finish_s holds the latest delivery of its predecessors.
      res_.finish_s[us] = std::max(res_.finish_s[us], d);
      if (--npred_[us] == 0) push_release(std::max(res_.finish_s[us], w_.release_s(s)), s);
    }
  }

  void release(FlowId f, double now) {
    const auto uf = static_cast<std::size_t>(f);
    const std::int32_t k = comp_of_flow_[uf];
    if (k >= 0) --comps_[static_cast<std::size_t>(k)].unreleased;
    if (k < 0 || w_.bytes(f) == 0) {
      deliver(f, now, main_);
      return;
    }
    comps_[static_cast<std::size_t>(k)].pending.push_back(f);
    mark_dirty(k);
  }

  static std::uint32_t path_offset(std::size_t n) {
    if (n > std::numeric_limits<std::uint32_t>::max())
      throw std::logic_error("simulate: more than 2^32 channel entries in one component");
    return static_cast<std::uint32_t>(n);
  }
  // Bytes left of local flow i at time `now` (fin is its finishing time while rate > 0).
  static double remaining(const Component& k, std::size_t i, double now) {
    return k.fs[i].rate > 0 ? std::max(0.0, (k.fin[i] - now) * k.fs[i].rate) : k.fin[i];
  }
  // After a fill gave local flow i its rate (fin held the bytes left): its finishing time.
  static void set_finish(Component& k, std::size_t i, double now) {
    if (k.fs[i].rate > 0) k.fin[i] = now + k.fin[i] / k.fs[i].rate;
  }
  // A flow's finishing time at its current rate (stored when the fill set the rate, so the
  // value is the same bit for bit each time).
  static double finish(const Component& k, std::size_t i) {
    return k.fs[i].rate > 0 ? k.fin[i] : std::numeric_limits<double>::infinity();
  }
  static void heap_push(Component& k, double t, std::int32_t i) {
    k.heap.emplace_back(t, i);
    std::push_heap(k.heap.begin(), k.heap.end(), std::greater<>());
  }
  static void heap_pop(Component& k) {
    std::pop_heap(k.heap.begin(), k.heap.end(), std::greater<>());
    k.heap.pop_back();
  }
  static bool heap_top_valid(const Component& k) {
    const auto [t, i] = k.heap.front();
    const auto ui = static_cast<std::size_t>(i);
    return k.alive[ui] && finish(k, ui) == t;
  }

  void complete_finished(Component& comp, double horizon, Tally& tally) {
    if (comp.heapless) {
      end_by_scan(comp, horizon, tally);
      return;
    }
    // A pop costs a walk down the heap at random; once an event has popped 1/256 of the flows in
    // progress (and at least 64: a small component pops cheaply), one sequential pass over them
    // ends the rest (their heap entries go stale).
    const std::size_t most = std::max<std::size_t>(64, (comp.flows.size() - comp.dead) / 256);
    std::size_t popped = 0;
    while (!comp.heap.empty() && comp.heap.front().first <= horizon) {
      if (++popped > most) {
        end_by_scan(comp, horizon, tally);
        return;
      }
      const bool valid = heap_top_valid(comp);
      const auto [t_end, li] = comp.heap.front();
      heap_pop(comp);
      if (valid) end_flow(comp, static_cast<std::size_t>(li), t_end, tally);
    }
  }

  // Ends every flow in progress that finishes by `horizon`, in one pass over the flows.
  void end_by_scan(Component& comp, double horizon, Tally& tally) {
    for (std::size_t i = 0; i < comp.flows.size(); ++i)
      if (comp.alive[i] && finish(comp, i) <= horizon) end_flow(comp, i, comp.fin[i], tally);
  }

  // Local flow i ends at t_end: its capacity freed, its records dropped, delivered.
  void end_flow(Component& comp, std::size_t i, double t_end, Tally& tally) {
    for (auto q = comp.fs[i].pb; q < comp.fs[i].pe; ++q) {
      const ChannelId c = comp.paths[static_cast<std::size_t>(q)];
      ch_[static_cast<std::size_t>(c)].used -= comp.fs[i].rate * comp.fs[i].w;
      if (opt_.incremental) comp.touched.push_back(c);
    }
    comp.ended_tw += t_end * comp.fs[i].rate * comp.fs[i].w;
    comp.ended_w += comp.fs[i].rate * comp.fs[i].w;
    comp.alive[i] = 0;
    comp.fs[i].rate = 0;
    if (opt_.incremental && comp.records_live) {
      unlink_rec(comp, static_cast<std::int32_t>(2 * i));
      unlink_rec(comp, static_cast<std::int32_t>(2 * i + 1));
    } else {
      comp.fs[i].b1 = comp.fs[i].b2 = -1;
    }
    ++comp.dead;
    deliver(comp.flows[i], t_end, tally);
  }

  void refill_dirty(double now) {
    if (dirty_.empty()) return;
    std::sort(dirty_.begin(), dirty_.end());
    res_.refills += static_cast<std::int64_t>(dirty_.size());
    if (dirty_.size() >= 4) {
      // A few large components (the rails of an all-to-all) among many small ones would share
      // one thread's range under the default partitioner.
      order_.assign(dirty_.begin(), dirty_.end());
      for_each_largest_first(order_, [&](std::size_t, Component& k) { refill(k, now); });
    } else {
      for (auto k : dirty_) refill(comps_[static_cast<std::size_t>(k)], now);
    }
    for (auto k : dirty_) {
      auto& c = comps_[static_cast<std::size_t>(k)];
      c.dirty = false;
      ++c.version;
      if (c.unreleased == 0 && !c.has_successors) {
        closed_.push_back(k);  // its stale event in finishes_ is skipped (version)
      } else if (c.next_finish < std::numeric_limits<double>::infinity()) {
        finishes_.push({c.next_finish, k, c.version});
      }
    }
    dirty_.clear();
  }

  // Sorts the components `ks` by their flows in progress or waiting, the largest first (ties by
  // id), and calls fn(j, component ks[j]) for each in parallel, one task each: components may
  // differ a lot in work.
  template <class Ks, class Fn>
  void for_each_largest_first(Ks& ks, Fn&& fn) {
    auto size = [&](std::int32_t k) {
      const auto& c = comps_[static_cast<std::size_t>(k)];
      return c.flows.size() - c.dead + c.pending.size();
    };
    std::sort(ks.begin(), ks.end(), [&](std::int32_t a, std::int32_t b) {
      const std::size_t na = size(a), nb = size(b);
      return na != nb ? na > nb : a < b;
    });
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, ks.size(), 1),
        [&](const tbb::blocked_range<std::size_t>& r) {
          for (std::size_t j = r.begin(); j != r.end(); ++j)
            fn(j, comps_[static_cast<std::size_t>(ks[j])]);
        },
        tbb::simple_partitioner());
  }

  // Runs every closed component to its end, in parallel: each is independent of everything
  // else, so its events are those the main loop would have run with it alone (the batching
  // horizon taken from its own next finish). The result does not depend on the threads.
  void drain_closed() {
    std::vector<Tally> tallies(closed_.size());
    for_each_largest_first(closed_, [&](std::size_t j, Component& k) {
      while (k.next_finish < std::numeric_limits<double>::infinity()) {
        check_cancelled();
        const double now = k.next_finish;
        complete_finished(k, horizon(now), tallies[j]);
        refill(k, now);
        ++k.own_events;
      }
    });
    for (std::size_t j = 0; j < closed_.size(); ++j) {
      main_.completion_s = std::max(main_.completion_s, tallies[j].completion_s);
      main_.delivered += tallies[j].delivered;
      res_.events += comps_[static_cast<std::size_t>(closed_[j])].own_events;
    }
    closed_.clear();
  }

  // Drops ended flows, appends released ones and rebuilds the channel -> flow lists.
  void rebuild(Component& k) {
    for (ChannelId c : k.channels) {
      loc_[static_cast<std::size_t>(c)] = -1;
      head_[static_cast<std::size_t>(c)] = -1;
      rhead_[static_cast<std::size_t>(c)] = -1;
    }
    k.extra.clear();
    std::size_t j = 0, pj = 0;
    for (std::size_t i = 0; i < k.flows.size(); ++i) {
      if (!k.alive[i]) continue;
      const auto b = k.fs[i].pb, e = k.fs[i].pe;
      k.flows[j] = k.flows[i];
      k.fin[j] = k.fin[i];
      k.fs[j] = k.fs[i];
      k.fs[j].pb = static_cast<std::uint32_t>(pj);
      for (auto q = b; q < e; ++q) k.paths[pj++] = k.paths[static_cast<std::size_t>(q)];
      k.fs[j].pe = static_cast<std::uint32_t>(pj);
      ++j;
    }
    k.flows.resize(j);
    k.fin.resize(j);
    k.fs.resize(j);
    k.paths.resize(pj);
    // Exact sizes: every flow may arrive here at once (an all-to-all), so growth by doubling
    // would hold up to twice the memory.
    {
      const std::size_t nf = j + k.pending.size();
      std::size_t np = pj;
      for (FlowId f : k.pending) np += w_.path(f).size();
      k.fin.reserve(nf);
      k.fs.reserve(nf);
      k.flows.reserve(nf);
      k.paths.reserve(np);
    }
    for (FlowId f : k.pending) push_flow(k, f);
    k.pending.clear();
    k.pending.shrink_to_fit();
    k.alive.assign(k.flows.size(), 1);
    k.fmark.assign(k.flows.size(), 0);
    // Records re-linked under the new local ids.
    check_record_ids(k);
    k.rnext.assign(2 * k.flows.size(), -1);
    k.rprev.assign(2 * k.flows.size(), -1);
    relink_records(k);
    k.new_from = j;  // the flows released since the last fill follow the survivors
    k.reindexed = true;
    k.dead = 0;
    // Channel -> flows (CSR). A channel belongs to one component only, so the component's own
    // stamp counter marks its channels even when components are rebuilt concurrently.
    const std::uint32_t cur = ++k.stamp;
    k.channels.clear();
    k.start.clear();
    for (ChannelId c : k.paths) {
      const auto uc = static_cast<std::size_t>(c);
      if (stamp_[uc] != cur) {
        stamp_[uc] = cur;
        loc_[uc] = static_cast<std::int32_t>(k.channels.size());
        k.channels.push_back(c);
        k.start.push_back(0);
      }
      ++k.start[static_cast<std::size_t>(loc_[uc])];
    }
    std::int64_t acc = 0;
    for (auto& x : k.start) {
      const auto n = x;
      x = acc;
      acc += n;
    }
    k.start.push_back(acc);
    Vec<std::int64_t> fill(k.start.begin(), k.start.end() - 1);
    k.by_channel.resize(static_cast<std::size_t>(acc));
    k.by_channel.shrink_to_fit();
    for (std::size_t i = 0; i < k.flows.size(); ++i)
      for (auto q = k.fs[i].pb; q < k.fs[i].pe; ++q)
        k.by_channel[static_cast<std::size_t>(fill[static_cast<std::size_t>(
            loc_[static_cast<std::size_t>(k.paths[static_cast<std::size_t>(q)])])]++)] =
            static_cast<std::int32_t>(i);
  }

  // Progressive filling (exact max-min fairness): raise the rates of the unfrozen flows (rate
  // -1) together; when a channel saturates, freeze the flows crossing it at the fair share.
  // ch_ (capr, load) holds each live channel's residual capacity and unfrozen weight; `loc` maps a
  // channel to its list in (start, by).
  void fill_levels(Component& k, std::size_t unfrozen, const std::int32_t* loc,
                   const std::int64_t* start, const std::int32_t* by) {
    FlowState* fs = k.fs.data();
    const ChannelId* paths = k.paths.data();
    ChanState* ch = ch_.data();
    while (unfrozen > 0) {
      double best = std::numeric_limits<double>::infinity();
      std::size_t m = 0;
      for (ChannelId c : k.live) {
        if (ch[c].load <= 0) continue;
        k.live[m++] = c;
        best = std::min(best, std::max(ch[c].capr, 0.0) / ch[c].load);
      }
      k.live.resize(m);
      if (m == 0) break;  // cannot happen: every unfrozen flow loads a live channel
      const double thr = best * (1 + 1e-12);
      for (ChannelId c : k.live) {
        if (ch[c].load <= 0 || std::max(ch[c].capr, 0.0) / ch[c].load > thr) continue;
        const auto li = static_cast<std::size_t>(loc[c]);
        const auto b = start[li], e = start[li + 1];
        for (auto q = b; q < e; ++q) {
          if (q + 16 < e)  // the flows of a list lie anywhere in the local arrays
            __builtin_prefetch(&fs[static_cast<std::size_t>(by[q + 16])]);
          const auto i = static_cast<std::size_t>(by[q]);
          if (fs[i].rate >= 0) continue;
          fs[i].rate = best;
          --unfrozen;
          const double wt = fs[i].w;
          for (auto r = fs[i].pb; r < fs[i].pe; ++r) {
            const auto c2 = paths[r];
            ch[c2].capr -= best * wt;
            ch[c2].load -= wt;
          }
        }
      }
    }
  }

  // With `extra`, the flows released since the last rebuild too (see freeze).
  void fill(Component& k, std::size_t unfrozen, const std::int32_t* loc, const std::int64_t* start,
            const std::int32_t* by, bool extra) {
    if (opt_.incremental)
      fill_by_heap(k, unfrozen, loc, start, by, extra);
    else
      fill_levels(k, unfrozen, loc, start, by);
  }

  // Freezes the unfrozen flows crossing channel c at `level` (see fill_levels): those of its list
  // in (loc, start, by) and, with `extra`, those released since the last rebuild (head_, extra).
  std::size_t freeze(Component& k, ChannelId c, double level, const std::int32_t* loc,
                     const std::int64_t* start, const std::int32_t* by, bool extra, ChanState* ch) {
    FlowState* fs = k.fs.data();
    const bool live = k.records_live;
    const ChannelId* paths = k.paths.data();
    std::size_t frozen = 0;
    double own = 0;
    auto visit = [&](std::size_t i) {
      FlowState& f = fs[i];
      if (f.rate >= 0) {
        // Frozen at this level by another channel: this one is a bottleneck too.
        if (f.rate == level && f.b2 < 0 && f.b1 != c && k.alive[i]) {
          if (live)
            link_rec(k, static_cast<std::int32_t>(2 * i + 1), c);
          else
            f.b2 = c;
        }
        return;
      }
      f.rate = level;
      if (live) {
        if (f.b1 != c) link_rec(k, static_cast<std::int32_t>(2 * i), c);
        unlink_rec(k, static_cast<std::int32_t>(2 * i + 1));
      } else {
        f.b1 = c;
        f.b2 = -1;
      }
      ++frozen;
      const double wt = f.w;
      for (auto r = f.pb; r < f.pe; ++r) {
        const auto c2 = paths[r];
        // Channel c itself is on every path of its list: its weight is summed here and taken
        // off once below, not through memory once per flow (a chain of dependent updates).
        if (c2 == c) {
          own += wt;
          continue;
        }
        ch[c2].capr -= level * wt;
        ch[c2].load -= wt;
        ch[c2].chmax = std::max(ch[c2].chmax, level);
      }
    };
    const auto li = static_cast<std::size_t>(loc[c]);
    const auto b = start[li], e = start[li + 1];
    for (auto q = b; q < e; ++q) {
      // The flows of a list lie anywhere in the local arrays: their state 32 entries ahead, and
      // their paths (whose offsets are then at hand) 16 ahead. A rail of millions of flows is
      // read from memory, not cache; 16 and 8 left part of the latency showing (nearly balanced
      // uneven dispatch, alternated runs: 2,048 GPUs 19.0-19.9 to 16.2-18.3 s user, 4,096 94 to
      // 85 s user; 48 and 24 no better).
      if (q + 32 < e) __builtin_prefetch(&fs[static_cast<std::size_t>(by[q + 32])]);
      if (q + 16 < e) __builtin_prefetch(&paths[fs[static_cast<std::size_t>(by[q + 16])].pb]);
      visit(static_cast<std::size_t>(by[q]));
    }
    if (extra) for_each_released(k, c, visit);
    if (frozen > 0) {
      ch[c].capr -= level * own;
      ch[c].load -= own;
      ch[c].chmax = std::max(ch[c].chmax, level);
    }
    return frozen;
  }

  // Progressive filling with the channels in a min-heap of fair shares (residual capacity over
  // unfrozen weight): the same levels as fill_levels, in O((P + C) log C) for P path entries of
  // the re-filled flows and C channels, instead of a pass over every live channel per level.
  // Freezing flows at the lowest share only raises the other channels' shares, so a heap entry
  // is a lower bound of its channel's share: a popped entry that is out of date goes back with
  // the current share; one that is up to date is the lowest.
  void fill_by_heap(Component& k, std::size_t unfrozen, const std::int32_t* loc,
                    const std::int64_t* start, const std::int32_t* by, bool extra) {
    ChanState* ch = ch_.data();
    auto& hp = k.chheap;
    hp.clear();
    for (ChannelId c : k.live)
      if (ch[c].load > 0) hp.emplace_back(std::max(ch[c].capr, 0.0) / ch[c].load, c);
    std::make_heap(hp.begin(), hp.end(), std::greater<>());
    auto pop = [&hp] {
      std::pop_heap(hp.begin(), hp.end(), std::greater<>());
      const auto top = hp.back();
      hp.pop_back();
      return top;
    };
    auto push = [&hp](double key, ChannelId c) {
      hp.emplace_back(key, c);
      std::push_heap(hp.begin(), hp.end(), std::greater<>());
    };
    while (unfrozen > 0 && !hp.empty()) {
      const auto [key, c] = pop();
      if (ch[c].load <= 0) continue;
      const double best = std::max(ch[c].capr, 0.0) / ch[c].load;
      if (best != key) {
        push(best, c);
        continue;
      }
      const double thr = best * (1 + 1e-12);
      unfrozen -= freeze(k, c, best, loc, start, by, extra, ch);
      while (unfrozen > 0 && !hp.empty() && hp.front().first <= thr) {
        const ChannelId c2 = pop().second;
        if (ch[c2].load <= 0) continue;
        const double share = std::max(ch[c2].capr, 0.0) / ch[c2].load;
        if (share > thr) {
          push(share, c2);
          continue;
        }
        unfrozen -= freeze(k, c2, best, loc, start, by, extra, ch);
      }
    }
  }

  // Calls fn(local flow) for every flow listed on channel c: the lists of the last rebuild, then
  // the flows released since.
  template <class Fn>
  void for_each_flow(const Component& k, ChannelId c, Fn&& fn) const {
    const auto uc = static_cast<std::size_t>(c);
    const std::int32_t li = loc_[uc];
    if (li >= 0 && static_cast<std::size_t>(li) + 1 < k.start.size())
      for (auto q = k.start[static_cast<std::size_t>(li)],
                e = k.start[static_cast<std::size_t>(li) + 1];
           q < e; ++q) {
        if (q + 16 < e)  // the flows of a list lie anywhere in the local arrays
          __builtin_prefetch(
              &k.fs[static_cast<std::size_t>(k.by_channel[static_cast<std::size_t>(q + 16)])].rate);
        fn(static_cast<std::size_t>(k.by_channel[static_cast<std::size_t>(q)]));
      }
    for_each_released(k, c, fn);
  }
  // Calls fn(local flow) for every flow released on channel c since the last rebuild.
  template <class Fn>
  void for_each_released(const Component& k, ChannelId c, Fn&& fn) const {
    for (std::int32_t e = head_[static_cast<std::size_t>(c)]; e >= 0;
         e = k.extra[static_cast<std::size_t>(e)].second)
      fn(static_cast<std::size_t>(k.extra[static_cast<std::size_t>(e)].first));
  }

  // Appends released flow f to the local arrays (rate 0 until filled, its bytes left in fin).
  void push_flow(Component& k, FlowId f) {
    FlowState st;
    st.w = w_.weight(f);
    st.pb = path_offset(k.paths.size());
    auto p = w_.path(f);
    k.paths.insert(k.paths.end(), p.begin(), p.end());
    st.pe = path_offset(k.paths.size());
    k.flows.push_back(f);
    k.fin.push_back(w_.bytes(f));
    k.fs.push_back(st);
  }

  // Released flows join the local arrays (rate 0 until filled) and the per-channel lists.
  void admit(Component& k) {
    k.new_from = k.flows.size();
    for (FlowId f : k.pending) {
      const auto i = static_cast<std::int32_t>(k.flows.size());
      push_flow(k, f);
      k.alive.push_back(1);
      k.fmark.push_back(0);
      for (int r = 0; r < 2; ++r) {
        k.rnext.push_back(-1);
        k.rprev.push_back(-1);
      }
      for (ChannelId c : w_.path(f)) {
        const auto uc = static_cast<std::size_t>(c);
        if (loc_[uc] < 0) {  // a channel new to the component: an empty list of its own
          loc_[uc] = static_cast<std::int32_t>(k.channels.size());
          k.channels.push_back(c);
          if (k.start.empty()) k.start.push_back(0);
          k.start.push_back(k.start.back());
        }
        k.extra.emplace_back(i, head_[uc]);
        head_[uc] = static_cast<std::int32_t>(k.extra.size() - 1);
      }
    }
    k.pending.clear();
    check_record_ids(k);
  }

  // Re-fills the flows of k.rsel on the capacity the others leave (their rates stay): releases
  // the selected flows' allocations, builds channel -> flow lists over them only and fills.
  void refill_selected(Component& k, double now) {
    const auto& cap = w_.capacity_Bps();
    const std::uint32_t cur = ++k.tstamp;
    k.tch.clear();
    k.tstart.clear();
    for (auto i : k.rsel) {
      const auto ui = static_cast<std::size_t>(i);
      for (auto q = k.fs[ui].pb; q < k.fs[ui].pe; ++q) {
        const auto uc = static_cast<std::size_t>(k.paths[static_cast<std::size_t>(q)]);
        ch_[uc].used -= k.fs[ui].rate * k.fs[ui].w;
        if (tmark_[uc] != cur) {
          tmark_[uc] = cur;
          tloc_[uc] = static_cast<std::int32_t>(k.tch.size());
          k.tch.push_back(static_cast<ChannelId>(uc));
          k.tstart.push_back(0);
          ch_[uc].load = 0;
          if (ustamp_[uc] != k.stamp) {  // channels changed by this repair, for the peaks
            ustamp_[uc] = k.stamp;
            k.uch.push_back(static_cast<ChannelId>(uc));
          }
        }
        ch_[uc].load += k.fs[ui].w;
        ++k.tstart[static_cast<std::size_t>(tloc_[uc])];
      }
      k.fin[ui] = remaining(k, ui, now);
      k.fs[ui].rate = -1.0;
    }
    std::int64_t acc = 0;
    for (auto& x : k.tstart) {
      const auto c = x;
      x = acc;
      acc += c;
    }
    k.tstart.push_back(acc);
    k.tby.resize(static_cast<std::size_t>(acc));
    for (auto i : k.rsel) {
      const auto ui = static_cast<std::size_t>(i);
      for (auto q = k.fs[ui].pb; q < k.fs[ui].pe; ++q) {
        const auto uc = static_cast<std::size_t>(k.paths[static_cast<std::size_t>(q)]);
        k.tby[static_cast<std::size_t>(k.tstart[static_cast<std::size_t>(tloc_[uc])]++)] = i;
      }
    }
    // tstart[j] now holds the end of list j; shift back to starts.
    for (std::size_t j = k.tch.size(); j > 0; --j) k.tstart[j] = k.tstart[j - 1];
    k.tstart[0] = 0;
    for (ChannelId c : k.tch) {
      const auto uc = static_cast<std::size_t>(c);
      ch_[uc].capr = cap[uc] - ch_[uc].used;
    }
    k.live.assign(k.tch.begin(), k.tch.end());
    fill(k, k.rsel.size(), tloc_.data(), k.tstart.data(), k.tby.data(), false);
    for (auto i : k.rsel) set_finish(k, static_cast<std::size_t>(i), now);
    for (ChannelId c : k.tch) {
      const auto uc = static_cast<std::size_t>(c);
      ch_[uc].used = cap[uc] - std::max(ch_[uc].capr, 0.0);
    }
  }

  // Selective re-fill after flows ended or were released (ours). An allocation is max-min fair
  // when every flow has a bottleneck: a saturated channel on which no flow is faster. Each fill
  // records, per flow, the channel that froze it and one more that saturated at the same level
  // (b1, b2). A channel is dirty when a flow on it ended, arrived or changed rate; records on a
  // dirty channel are void. S = the released flows and every flow left without a record; S is
  // re-filled on the capacity the others leave; a flow of S whose rate changed makes its
  // channels dirty; a flow outside S faster than a flow of S on the channel that froze it joins
  // S. Repeated until nothing changes: then every flow outside S keeps a bottleneck that nothing
  // touched, and every flow of S has one in the re-fill on which no flow is faster, so the
  // allocation is the max-min fair one (the unique allocation where every flow has a
  // bottleneck; Bertsekas and Gallager, Data Networks, 6.5.2). An event thus costs the lists of
  // the channels it touches and the flows it changes. Returns false when S grows beyond an
  // eighth of the flows in progress: a repair costs several times a whole fill per flow (its
  // lists are built for S, its records walked), so past that a whole re-fill is cheaper.
  // Measured (alternated runs, same results): half to an eighth took the exact 3,072-GPU
  // all-to-all from 116 s to 70 s wall and a skewed MoE combine at 2,048 GPUs (1e-4) from
  // 30-39 s to 21-25 s; a sixteenth was slower again.
  //
  // Rounds re-fill from the lowest level the flows joined since the last round can change
  // (ours). A flow j joining at rate r, whose path crosses no channel that froze a flow of S
  // below level L <= r, leaves the progressive filling of S with j below L as it was: each such
  // channel saturates at the same level (j is not on it), and any other channel has more room
  // below L than before (j takes x < r there instead of r). So the flows of S frozen below L
  // keep their rates, and re-filling only j and the flows of S at L or above, on the capacity
  // the rest leave, gives the fill of S with j. L = min(r, the lowest level of S's records on
  // j's path) (0 for a released flow); slev_ keeps per channel the lowest level a flow of S
  // was recorded at during this repair (a lower L only re-fills more).
  bool repair(Component& k, double now) {
    const std::uint32_t cur = ++k.stamp;
    k.sel.clear();
    k.orig.clear();
    k.queue.clear();
    k.propagated.clear();
    k.uch.clear();
    k.rwork = 0;
    const std::size_t limit = (k.flows.size() - k.dead) / 8;
    // Rounds that re-fill many flows again: once the flows re-filled over the rounds reach twice
    // that, a full re-fill (one pass over them) is cheaper than going on.
    bool ok = true;
    const double inf = std::numeric_limits<double>::infinity();
    double lowest = inf;     // lowest level of S the flows joined since the last round can change
    std::size_t filled = 0;  // sel[0, filled): flows of S re-filled in an earlier round
    auto add = [&](std::size_t i, double orig) {
      if (k.fmark[i] == cur) return;
      k.fmark[i] = cur;
      k.sel.push_back(static_cast<std::int32_t>(i));
      k.orig.push_back(orig);
      k.propagated.push_back(0);
      if (k.sel.size() > limit) ok = false;
      double lv = std::isnan(orig) ? 0.0 : orig;
      for (auto q = k.fs[i].pb; q < k.fs[i].pe && lv > 0; ++q) {
        const auto uc = static_cast<std::size_t>(k.paths[static_cast<std::size_t>(q)]);
        if (lstamp_[uc] == cur) lv = std::min(lv, slev_[uc]);
      }
      lowest = std::min(lowest, lv);
    };
    auto dirty = [&](ChannelId c) {
      const auto uc = static_cast<std::size_t>(c);
      if (stamp_[uc] == cur) return;
      stamp_[uc] = cur;
      k.queue.push_back(c);
    };
    for (std::size_t i = k.new_from; i < k.flows.size(); ++i)
      add(i, std::numeric_limits<double>::quiet_NaN());
    for (ChannelId c : k.touched) dirty(c);
    std::size_t qh = 0;
    while (ok) {
      // Void the records on newly dirty channels; flows left without one join S.
      for (; qh < k.queue.size() && ok; ++qh) {
        const ChannelId c = k.queue[qh];
        for (std::int32_t nd = rhead_[static_cast<std::size_t>(c)]; nd >= 0 && ok;) {
          const std::int32_t nx = k.rnext[static_cast<std::size_t>(nd)];
          const auto i = static_cast<std::size_t>(nd >> 1);
          if (k.fmark[i] != cur) {
            unlink_rec(k, nd);
            if (k.fs[i].b1 < 0 && k.fs[i].b2 < 0) add(i, k.fs[i].rate);
          }
          nd = nx;
        }
      }
      if (!ok) return false;
      if (filled == k.sel.size()) break;  // nothing joined: S is max-min fair
      // This round: the flows joined since the last one and the flows of S at or above the
      // lowest level they can change (a margin below it covers levels merged as ties).
      k.rpos.clear();
      k.rsel.clear();
      const double from = lowest * (1 - 1e-9);
      for (std::size_t j = 0; j < k.sel.size(); ++j)
        if (j >= filled || k.fs[static_cast<std::size_t>(k.sel[j])].rate >= from) {
          k.rpos.push_back(static_cast<std::int32_t>(j));
          k.rsel.push_back(k.sel[j]);
        }
      filled = k.sel.size();
      lowest = inf;
      k.rwork += k.rsel.size();
      if (k.rwork > 2 * limit) return false;
      refill_selected(k, now);
      // Changed rates make their channels dirty.
      for (auto j : k.rpos) {
        const auto uj = static_cast<std::size_t>(j);
        if (k.propagated[uj]) continue;
        const auto i = static_cast<std::size_t>(k.sel[uj]);
        const double o = k.orig[uj], r = k.fs[i].rate;
        if (o == r || std::abs(r - o) <= 1e-13 * std::max(r, o)) continue;
        k.propagated[uj] = 1;
        for (auto q = k.fs[i].pb; q < k.fs[i].pe; ++q) dirty(k.paths[static_cast<std::size_t>(q)]);
      }
      // The records of the round: a flow outside S faster than the level at which a record
      // channel saturated joins S (b1), or voids the record (b2).
      const std::uint32_t vcur = ++k.vstamp;
      k.vch.clear();
      for (auto i : k.rsel) {
        const auto ui = static_cast<std::size_t>(i);
        for (int r = 0; r < 2; ++r) {
          const ChannelId c = r == 0 ? k.fs[ui].b1 : k.fs[ui].b2;
          if (c < 0) continue;
          const auto uc = static_cast<std::size_t>(c);
          if (lstamp_[uc] != cur) {
            lstamp_[uc] = cur;
            slev_[uc] = k.fs[ui].rate;
          }
          slev_[uc] = std::min(slev_[uc], k.fs[ui].rate);
          if (vmark_[uc] != vcur) {
            vmark_[uc] = vcur;
            vlevel_[uc] = k.fs[ui].rate;
            vkind_[uc] = 0;
            k.vch.push_back(c);
          }
          vlevel_[uc] = std::min(vlevel_[uc], k.fs[ui].rate);
          if (r == 0) vkind_[uc] |= 1;
        }
      }
      bool voided = false;
      for (ChannelId c : k.vch) {
        const auto uc = static_cast<std::size_t>(c);
        const double lim = vlevel_[uc] * (1 + 1e-12);
        // ch_ (chmax) bounds every rate on the channel: no walk when no flow there can be faster.
        if (ch_[uc].chmax <= lim) continue;
        // An earlier walk in this repair bounds the flows still outside S (their rates stay).
        if (ostamp_[uc] == cur && omax_[uc] <= lim) continue;
        bool faster = false;
        double mx = 0, omx = 0;
        for_each_flow(k, c, [&](std::size_t i) {
          // Ended flows have rate 0: most flows need no look-up but their rate.
          const double r = k.fs[i].rate;
          mx = std::max(mx, r);
          if (!(r > lim)) {
            omx = std::max(omx, r);
            return;
          }
          if (k.fmark[i] == cur) return;
          faster = true;
          if (vkind_[uc] & 1)
            add(i, r);
          else
            omx = std::max(omx, r);
        });
        ch_[uc].chmax = mx;
        ostamp_[uc] = cur;
        omax_[uc] = std::max(omx, lim);
        if (faster && !(vkind_[uc] & 1)) {
          vkind_[uc] |= 2;
          voided = true;
        }
      }
      if (voided)
        for (auto i : k.rsel) {
          const auto ui = static_cast<std::size_t>(i);
          if (k.fs[ui].b2 >= 0 && (vkind_[static_cast<std::size_t>(k.fs[ui].b2)] & 2))
            unlink_rec(k, static_cast<std::int32_t>(2 * i + 1));
        }
      if (!ok) return false;
    }
    return ok;  // false when the released flows alone passed the limit
  }

  // Re-fills a component after flows ended or were released: selectively (repair) unless more
  // than an eighth of its flows would be re-filled or half are new, or the reference engine is
  // asked for; then every flow in progress (the lists rebuilt first when the rule below says so).
  // Once half have ended the arrays and lists are compacted first (rates kept).
  void refill(Component& k, double now) {
    // A batch of flows ending within the tolerance re-fills at the mean of their finishing times
    // weighted by the capacity each frees (ours): the capacity of those ending before it stays
    // idle until then, that of those ending after it is shared out early, and the two cancel to
    // first order. Re-filling at the first finishing time shared all of it out early: every
    // batch moved the flows that go on early, and on balanced traffic with spread ends the
    // completion came out early by about two times the tolerance (see docs/sim.md, Events).
    // Never before the component's last re-fill: its rates hold from there.
    if (centre_ && k.ended_w > 0) now = std::max(now, k.ended_tw / k.ended_w);
    now = std::max(now, k.last_t);
    k.ended_tw = k.ended_w = 0;
    k.last_t = now;
    k.next_finish = std::numeric_limits<double>::infinity();
    bool full = !opt_.incremental || 2 * k.pending.size() > k.flows.size() - k.dead;
    if (!full) {
      // Half ended: compact the arrays and lists (rates stay; released flows join as new).
      if (2 * k.dead > k.flows.size())
        rebuild(k);
      else if (!k.pending.empty())
        admit(k);
      if (k.skip > 0) {
        --k.skip;
        full = true;
      } else {
        if (!k.records_live) relink_records(k);
        full = !repair(k, now);
        // A repair that gives up costs about a full re-fill on top of the one that follows: once
        // repairs give up twice in a row, the next 1, 3, 7, ... 63 events of the component
        // re-fill it whole at once (a choice of cost only: both ways are exact).
        k.backoff = full ? std::min<std::uint32_t>(127, 2 * k.backoff + 1) : 0;
        k.skip = k.backoff / 2;
      }
    }
    if (full) {
      // A whole fill walks the flows released since the last rebuild on their per-channel lists
      // (ours): a rebuild costs about as much as the fill, and when second legs are released at
      // most events (a forwarded all-to-all) it came with nearly every whole re-fill. The lists
      // are rebuilt once half of the flows have ended or the released flows' channel entries
      // pass a quarter of the lists' (the reference engine rebuilds at every whole re-fill).
      std::size_t entries = k.extra.size();
      for (FlowId f : k.pending) entries += w_.path(f).size();
      if (!opt_.incremental || 2 * k.dead > k.flows.size() || 4 * entries > k.by_channel.size())
        rebuild(k);
      else if (!k.pending.empty())
        admit(k);
    }
    k.new_from = k.flows.size();
    k.touched.clear();
    const std::size_t n = k.flows.size();
    const auto& cap = w_.capacity_Bps();
    if (n == k.dead) return;
    if (full) {
      if (opt_.incremental) k.records_live = false;
      k.refilled += static_cast<std::int64_t>(n - k.dead);
      for (ChannelId c : k.channels) {
        ch_[static_cast<std::size_t>(c)].load = 0;
        ch_[static_cast<std::size_t>(c)].capr = cap[static_cast<std::size_t>(c)];
      }
      std::size_t unfrozen = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (!k.alive[i]) continue;
        k.fin[i] = remaining(k, i, now);
        k.fs[i].rate = -1.0;
        ++unfrozen;
        for (auto q = k.fs[i].pb; q < k.fs[i].pe; ++q)
          ch_[static_cast<std::size_t>(k.paths[static_cast<std::size_t>(q)])].load += k.fs[i].w;
      }
      k.live.assign(k.channels.begin(), k.channels.end());
      fill(k, unfrozen, loc_.data(), k.start.data(), k.by_channel.data(), true);
      double next = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < n; ++i)
        if (k.alive[i]) {
          set_finish(k, i, now);
          next = std::min(next, finish(k, i));
        }
      for (ChannelId c : k.channels) {
        const auto uc = static_cast<std::size_t>(c);
        ch_[uc].used = cap[uc] - std::max(ch_[uc].capr, 0.0);
        res_.channel_peak_utilisation[uc] =
            std::max(res_.channel_peak_utilisation[uc], ch_[uc].used / cap[uc]);
      }
      // Every finishing time changed: no heap until a repair needs one (see heapless).
      k.heapless = true;
      k.heap.clear();
      k.next_finish = next;
      trim_scratch(k);
      return;
    }
    k.refilled += static_cast<std::int64_t>(k.rwork);
    for (ChannelId c : k.uch) {
      const auto uc = static_cast<std::size_t>(c);
      res_.channel_peak_utilisation[uc] =
          std::max(res_.channel_peak_utilisation[uc], ch_[uc].used / cap[uc]);
    }
    // New finishing times of the re-filled flows (stale heap entries are skipped); the heap is
    // rebuilt from every flow when mostly stale, or when a whole re-fill left none.
    const double inf = std::numeric_limits<double>::infinity();
    // The heap is rebuilt once its stale entries would pass a quarter of the flows in progress,
    // into storage of exactly that size: pushes until the next rebuild never reallocate, so the
    // heap holds at most 1.25 entries per flow in progress (doubling would allow 2.5). The slack
    // of 16 stays small: an iteration's schedule runs tens of thousands of components at once
    // (every TP ring, every pipeline pair), and 1,024 entries each held 0.5 GB at 32,768 GPUs.
    const std::size_t room = (n - k.dead) + (n - k.dead) / 4 + 16;
    if (k.heapless || k.reindexed || k.heap.size() + k.sel.size() > room) {
      k.heapless = false;
      k.reindexed = false;
      k.heap.clear();
      if (k.heap.capacity() > room + room / 2 || k.heap.capacity() < room) {
        decltype(k.heap) fresh;
        fresh.reserve(room);
        k.heap.swap(fresh);
      }
      for (std::size_t i = 0; i < n; ++i)
        if (k.alive[i] && finish(k, i) < inf)
          k.heap.emplace_back(finish(k, i), static_cast<std::int32_t>(i));
      std::make_heap(k.heap.begin(), k.heap.end(), std::greater<>());
    } else {
      for (auto i : k.sel)
        if (finish(k, static_cast<std::size_t>(i)) < inf)
          heap_push(k, finish(k, static_cast<std::size_t>(i)), i);
    }
    while (!k.heap.empty() && !heap_top_valid(k)) heap_pop(k);
    k.next_finish = k.heap.empty() ? std::numeric_limits<double>::infinity() : k.heap.front().first;
    trim_scratch(k);
  }

  // A repair's scratch per flow (S and its rounds) may reach half of a component's flows; kept
  // between events by every component it would add about 20 bytes per flow to the peak, so
  // large scratch is freed after each re-fill (reallocating it costs little next to the event).
  static void trim_scratch(Component& k) {
    constexpr std::size_t keep = 1 << 16;
    auto trim = [](auto& v) {
      if (v.capacity() > keep) std::remove_reference_t<decltype(v)>{}.swap(v);
    };
    trim(k.sel);
    trim(k.orig);
    trim(k.propagated);
    trim(k.rsel);
    trim(k.rpos);
    trim(k.tby);
    trim(k.queue);
    trim(k.uch);
    trim(k.vch);
    trim(k.tch);
    trim(k.tstart);
    trim(k.live);
    trim(k.chheap);
  }

  const Workload& w_;
  EngineOptions opt_;
  // Batches re-fill at their centre (see refill) above the default tolerance, whose batches hold
  // only ties broken by rounding: its results stay those of the first finishing time.
  const bool centre_ = opt_.batch_tolerance > EngineOptions{}.batch_tolerance;
  double floor_s_ = 0;  // the busiest channel's bytes over its capacity (see horizon)
  SimResult res_;
  Vec<std::int32_t> npred_, comp_of_flow_, loc_, tloc_, head_;
  Vec<std::uint32_t> tmark_, vmark_;
  Vec<std::int32_t> rhead_;  // per channel: first record node on it (-1: none)
  // Record nodes 2i and 2i + 1 of local flow i must fit in 32 bits.
  static void check_record_ids(const Component& k) {
    if (k.flows.size() >= (std::size_t{1} << 30))
      throw std::logic_error("simulate: more than 2^30 flows in one component");
  }
  ChannelId* rec_ch(Component& k, std::int32_t node) {
    return (node & 1) ? &k.fs[static_cast<std::size_t>(node >> 1)].b2
                      : &k.fs[static_cast<std::size_t>(node >> 1)].b1;
  }
  // Every alive flow's records linked into their channels' lists again, from b1 and b2.
  void relink_records(Component& k) {
    for (ChannelId c : k.channels) rhead_[static_cast<std::size_t>(c)] = -1;
    for (std::size_t i = 0; i < k.flows.size(); ++i) {
      const ChannelId c1 = k.fs[i].b1, c2 = k.fs[i].b2;
      k.fs[i].b1 = k.fs[i].b2 = -1;
      if (!k.alive[i]) continue;
      if (c1 >= 0) link_rec(k, static_cast<std::int32_t>(2 * i), c1);
      if (c2 >= 0) link_rec(k, static_cast<std::int32_t>(2 * i + 1), c2);
    }
    k.records_live = true;
  }
  void unlink_rec(Component& k, std::int32_t node) {
    ChannelId* pc = rec_ch(k, node);
    if (*pc < 0) return;
    const auto un = static_cast<std::size_t>(node);
    const std::int32_t p = k.rprev[un], n = k.rnext[un];
    if (p >= 0)
      k.rnext[static_cast<std::size_t>(p)] = n;
    else
      rhead_[static_cast<std::size_t>(*pc)] = n;
    if (n >= 0) k.rprev[static_cast<std::size_t>(n)] = p;
    *pc = -1;
  }
  void link_rec(Component& k, std::int32_t node, ChannelId c) {
    unlink_rec(k, node);
    const auto un = static_cast<std::size_t>(node);
    const auto uc = static_cast<std::size_t>(c);
    *rec_ch(k, node) = c;
    k.rprev[un] = -1;
    k.rnext[un] = rhead_[uc];
    if (rhead_[uc] >= 0) k.rprev[static_cast<std::size_t>(rhead_[uc])] = node;
    rhead_[uc] = node;
  }
  Vec<double> vlevel_;
  Vec<std::uint8_t> vkind_;
  // Per channel, during a repair (valid when lstamp_ holds its stamp): the lowest level at which
  // a flow of S was recorded there; ustamp_: the channel is in the repair's uch.
  Vec<double> slev_;
  Vec<std::uint32_t> lstamp_, ustamp_;
  // Per channel, during a repair (valid when ostamp_ holds its stamp): an upper bound of the
  // rates of the flows on it that are outside S, set when its list is walked.
  Vec<double> omax_;
  Vec<std::uint32_t> ostamp_;
  Vec<std::uint32_t> succ_off_;  // checked < 2^32 dependencies
  Vec<FlowId> succ_;
  std::vector<Component> comps_;
  Vec<ChanState> ch_;  // per channel (see ChanState)
  Vec<std::uint32_t> stamp_;
  Vec<std::int32_t> dirty_;
  Vec<std::int32_t> order_;  // refill_dirty: the dirty components, the largest first
  // (release time, flow), min first; its storage is freed once a large batch has drained (an
  // all-to-all releases every flow at once).
  Vec<std::pair<double, FlowId>> releases_;
  // A heap of at least this many waiting releases gives its due ones out in one pass
  // (release_due) once an event has popped a 64th of it: a pass costs a few sequential
  // nanoseconds per entry, a pop a walk down the heap at random, so the pass never costs more
  // than the pops before it, and an event with few due releases still pops them.
  static constexpr std::size_t kBulkReleases = std::size_t{1} << 16;
  // Releases every flow due by `until`, in (time, flow) order, without a heap pop each: an
  // all-to-all releases all its flows at once, and popping millions from the heap one by one
  // cost a walk down it at random each. Flows these releases make due follow in the loop.
  void release_due(double until, double now) {
    Vec<std::pair<double, FlowId>> batch;
    batch.swap(releases_);
    const auto due = std::partition(batch.begin(), batch.end(),
                                    [until](const auto& e) { return e.first <= until; });
    releases_.assign(due, batch.end());
    std::make_heap(releases_.begin(), releases_.end(), std::greater<>());
    // The heap of an all-to-all's releases is in order already (equal times, rising ids).
    if (!std::is_sorted(batch.begin(), due)) std::sort(batch.begin(), due);
    for (auto it = batch.begin(); it != due; ++it) release(it->second, now);
  }
  void push_release(double t, FlowId f) {
    releases_.emplace_back(t, f);
    std::push_heap(releases_.begin(), releases_.end(), std::greater<>());
  }
  std::priority_queue<FinishEvent, Vec<FinishEvent>, std::greater<>> finishes_;
  Tally main_;
  std::vector<std::int32_t> closed_;  // closed components, to run on their own at the end
};

}  // namespace

double estimated_memory_bytes(double flows, double path_entries, double dependencies) {
  // Per flow: workload 20 B (bytes, weight, 32-bit path offset), engine 20 B (delivery time,
  // component, predecessor count, 32-bit successor offset), component state 61 B (local id, path
  // offset, weight, bytes left or finishing time, rate, alive, mark, two bottleneck records and
  // their list links), 16-20 B in the finishing-time heap, 16 B in the release heap while
  // waiting; the builder's merging index (24 B) is freed before the engine runs. Per channel
  // entry: workload, component copy and channel lists 12 B; per dependency: 8 B in the workload
  // and 4 B in the successor lists. 165 B per flow and 70 MB (the program, the fabric and its
  // routes) fit the peaks measured on the rail-only all-to-all (docs/sim.md): 3.77 GB at 4,096
  // GPUs (16.77M flows, 3.75 channel entries and 0.87 dependencies each; estimated 3.77 GB) and
  // 0.98 GB at 2,048 GPUs (4.19M flows, 3.51 and 0.87; estimated 0.98 GB).
  return 70e6 + 165.0 * flows + 12.0 * path_entries + 12.0 * dependencies;
}

SimResult simulate(const Workload& w, const EngineOptions& opt) {
  if (!(opt.hop_latency_s >= 0) || !std::isfinite(opt.hop_latency_s))
    throw std::logic_error("simulate: hop latency must be finite and >= 0");
  Engine e(w, opt);
  return e.run();
}

}  // namespace railsim::sim
