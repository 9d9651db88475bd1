#pragma once
// The max-min fair flow engine behind sim::simulate (internal to src/sim). One Engine runs one
// Workload; its work is split by concept over these files:
//   flow_sim.cpp      simulate(), the run: successors, components and per-channel state from
//                     the workload, the event loop's start and end
//   flow_events.cpp   the event loop: releases, finishing times, deliveries, which components
//                     re-fill, closed components run on their own
//   flow_fill.cpp     re-filling a component: the choice between a whole re-fill and a repair,
//                     the local arrays and channel -> flow lists, progressive filling
//   flow_repair.cpp   the selective re-fill after a change: bottleneck records, repair rounds
// The Workload class itself is in flow_workload.cpp. docs/sim.md states the algorithm.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "railsim/core/big_vector.hpp"
#include "railsim/sim/flow_sim.hpp"

namespace railsim::sim::detail {

template <class T>
using Vec = core::BigVector<T>;

// Counts to CSR starts, in place: each entry becomes the sum of the counts before it, and the
// total (where the last list ends) is appended and returned.
inline std::int64_t counts_to_starts(Vec<std::int64_t>& v) {
  std::int64_t total = 0;
  for (auto& x : v) {
    const auto n = x;
    x = total;
    total += n;
  }
  v.push_back(total);
  return total;
}

// What a fill reads of a flow, together: a fill visits the flows of a channel's list, which lie
// anywhere in the component's arrays, so one cache line per visit instead of one per field.
struct alignas(32) FlowState {
  // B/s of each of its `weight` flows: 0 before the first fill and once ended, -1 while unfrozen
  // during a fill.
  double rate = 0;
  double weight = 1;  // identical flows it stands for (Workload::weight)
  // Channel that froze it in the last fill (-1: none); another channel that saturated at the
  // same level with it on (-1: none; see Engine::repair). Its two bottleneck records.
  ChannelId bottleneck = -1, co_bottleneck = -1;
  // Its path: [path_begin, path_end) in the component's copy of the paths (checked < 2^32).
  std::uint32_t path_begin = 0, path_end = 0;
};
static_assert(sizeof(FlowState) == 32);

// Per channel, in one record so that a fill's update of a channel touches one cache line.
struct alignas(32) ChannelState {
  double residual_Bps = 0;     // during a fill: capacity not yet given to frozen flows, B/s
  double unfrozen_weight = 0;  // during a fill: weight of its flows not yet frozen
  double max_rate_Bps = 0;     // an upper bound of its flows' rates (FlowState::rate), B/s
  double allocated_Bps = 0;    // capacity its flows use at their rates, B/s
};
static_assert(sizeof(ChannelState) == 32);

// A component's flows in progress, in local arrays kept across events: a re-fill after flows
// end reuses the channel -> flow lists (ended flows are skipped; released flows wait on lists of
// their own) and rebuilds them only when more than half have ended or, at a whole re-fill, when
// the released flows' entries pass a quarter of the lists' (see Engine::refill). Local copies of
// paths, rates and remaining bytes keep the filling loops on contiguous memory. Local flow i is
// its place in these arrays; a channel's local index is Engine::list_of_.
struct Component {
  Vec<FlowId> global_id;  // per local flow: its flow id in the workload
  Vec<FlowState> state;   // per local flow
  Vec<ChannelId> paths;   // the local flows' paths, one after another (FlowState::path_begin)
  // Per local flow: while its rate is > 0, its finishing time at that rate (s); otherwise the
  // bytes it has left (B; see Engine::remaining). A flow's entry changes only when its rate
  // does, so events cost what they change, not what is in flight.
  Vec<double> finish_or_bytes;
  // (finishing time s, local flow), min first, lazy: an entry whose flow has ended or changed
  // rate since is stale and skipped.
  Vec<std::pair<double, std::int32_t>> finish_heap;
  Vec<std::uint8_t> alive;       // per local flow: 1 until it ends
  Vec<ChannelId> channels;       // the channels its flows cross, by local index
  Vec<std::int64_t> list_start;  // per local channel: where its list starts in list_flows (+ end)
  Vec<std::int32_t> list_flows;  // local flows per channel (CSR), as of the last rebuild
  Vec<ChannelId> live_channels;  // scratch of a fill: channels that still carry unfrozen flows
  Vec<FlowId> released;          // flows released since the last re-fill (workload ids)
  Vec<ChannelId> touched_channels;  // channels of the flows ended since the last re-fill
  Vec<std::uint32_t> select_stamp;  // per local flow: the stamp of the last repair that chose it
  Vec<ChannelId> dirty_channels;    // scratch of a repair: its dirty channels, a queue
  Vec<std::pair<double, ChannelId>> share_heap;  // scratch of a fill: (fair share B/s, channel)
  // Flows released since the last rebuild join the local arrays at once; their channel entries
  // go to per-channel linked lists (heads in Engine::released_head_; (local flow, next entry)
  // here) until the next rebuild.
  Vec<std::pair<std::int32_t, std::int32_t>> released_entries;
  std::size_t first_new = 0;  // local flows [first_new, size) were released in this event
  bool renumbered = false;    // rebuilt (local flows renumbered) since finish_heap was built
  // After a whole re-fill every finishing time is new: the heap is left empty and the next
  // event scans the flows instead (see Engine::complete_finished) until a repair needs the heap.
  bool heapless = false;
  // The bottleneck records as nodes of per-channel doubly linked lists (node 2i: flow i's
  // bottleneck, 2i + 1: its co_bottleneck; heads in Engine::record_head_), so that a dirty
  // channel visits only the flows that rely on it.
  Vec<std::int32_t> record_next, record_prev;
  Vec<double> selected_old_rate;          // scratch of a repair: per flow of S, its rate before
  Vec<std::uint8_t> selected_propagated;  // scratch of a repair: per flow of S, channels dirtied
  Vec<ChannelId> check_channels;          // scratch of a repair: record channels to check
  std::uint32_t sub_stamp = 0;            // counter for Engine::sub_stamp_ (refill_selected)
  std::uint32_t check_stamp = 0;          // counter for Engine::check_stamp_ (check_round_records)
  Vec<std::int32_t> selected;             // scratch of a repair: the local flows of S
  Vec<std::int32_t> round_flows;          // scratch of a repair: the flows one round re-fills
  Vec<std::int32_t> round_pos;            // ... and their places in `selected`
  Vec<ChannelId> changed_channels;  // scratch of a repair: channels whose allocation it changed
  std::size_t repair_work = 0;      // flows re-filled by the last repair, over its rounds
  // A repair that gave up twice in a row makes the next events re-fill whole without trying:
  // backoff grows 1, 3, 7, ... 127 and whole_refills_left = backoff / 2 (see Engine::refill).
  std::uint32_t backoff = 0, whole_refills_left = 0;
  // Scratch of refill_selected: the channels of the flows it re-fills and their channel -> flow
  // lists (CSR: sub_start per channel, sub_flows the local flows).
  Vec<ChannelId> sub_channels;
  Vec<std::int64_t> sub_start;
  Vec<std::int32_t> sub_flows;
  std::size_t ended = 0;      // local flows that have ended since the last rebuild
  std::int64_t refilled = 0;  // flows given a new rate, summed over fills
  double last_refill_s = 0;   // time of its last re-fill: its rates hold from there
  // Flows ended since the last re-fill: their finishing times weighted by the capacity they
  // freed (s x B/s), and that capacity (B/s; see Engine::refill).
  double ended_time_rate = 0, ended_rate_Bps = 0;
  double next_finish_s = std::numeric_limits<double>::infinity();  // its next finishing time
  std::uint32_t version = 0;  // bumped at each re-fill and consumed event (FinishEvent)
  std::uint32_t stamp = 0;    // counter for Engine::channel_stamp_ and the repair's stamps
  bool dirty = false;         // queued for a re-fill at the end of the current event
  // Closing: once every flow of the component has been released and none has a successor,
  // nothing else can change it or wait on it, and it runs its remaining events on its own.
  std::int64_t unreleased = 0;  // flows not yet released
  bool has_successors = false;
  // Whether the record lists follow the records. A whole re-fill sets the records only (linking
  // each into its channel's list is a few cache misses per flow, as much again as the fill);
  // the lists are rebuilt from them, in one pass, before the next repair needs them.
  bool records_live = true;
  std::int64_t own_events = 0;  // events run on its own, once closed
};

// Deliveries counted where they happen: the main event loop's, or a closed component's.
struct Tally {
  double completion_s = 0;  // the latest delivery, s
  std::int64_t delivered = 0;
};

// A component's next finishing time, posted to the main loop; stale once its version moved on.
struct FinishEvent {
  double t;  // s
  std::int32_t comp;
  std::uint32_t version;
  bool operator>(const FinishEvent& o) const { return t != o.t ? t > o.t : comp > o.comp; }
};

// A repair's state between its steps (see Engine::repair).
struct RepairState {
  std::uint32_t stamp = 0;  // this repair's stamp (Component::stamp)
  std::size_t limit = 0;    // S may hold at most this many flows (an eighth of those in progress)
  bool ok = true;           // false once the repair gives up
  double lowest = std::numeric_limits<double>::infinity();  // see Engine::select_flow
  std::size_t filled = 0;  // selected[0, filled): flows of S re-filled in an earlier round
  std::size_t voided = 0;  // dirty_channels[0, voided): channels whose records are voided
};

class Engine {
 public:
  Engine(const Workload& w, const EngineOptions& opt) : workload_(w), options_(opt) {}
  SimResult run();  // flow_sim.cpp

 private:
  // --- the run (flow_sim.cpp) ---
  void build_successors();
  void measure_depth();
  void build_components();
  void size_channel_state();

  // --- the event loop (flow_events.cpp) ---
  void run_events();
  void run_event(double until, double now);
  double horizon(double now) const;
  void mark_component_dirty(std::int32_t k);
  void deliver(FlowId f, double t_done, Tally& tally);
  void release(FlowId f, double now);
  void release_due(double until, double now);
  void push_release(double t, FlowId f);
  void complete_finished(Component& comp, double horizon, Tally& tally);
  void end_by_scan(Component& comp, double horizon, Tally& tally);
  void end_flow(Component& comp, std::size_t i, double t_end, Tally& tally);
  void refill_dirty(double now);
  template <class Ks, class Fn>
  void for_each_largest_first(Ks& ks, Fn&& fn);
  void drain_closed();

  // --- re-filling a component (flow_fill.cpp) ---
  void refill(Component& k, double now);
  double refill_time(Component& k, double now);
  bool prepare_refill(Component& k, double now);
  void refill_whole(Component& k, double now);
  void rebuild(Component& k);
  void compact(Component& k);
  void index_channels(Component& k);
  void push_flow(Component& k, FlowId f);
  void admit(Component& k);
  void fill(Component& k, std::size_t unfrozen, const std::int32_t* loc, const std::int64_t* start,
            const std::int32_t* by, bool with_released);
  void fill_levels(Component& k, std::size_t unfrozen, const std::int32_t* loc,
                   const std::int64_t* start, const std::int32_t* by);
  void fill_by_heap(Component& k, std::size_t unfrozen, const std::int32_t* loc,
                    const std::int64_t* start, const std::int32_t* by, bool with_released);
  std::size_t freeze(Component& k, ChannelId c, double level, const std::int32_t* loc,
                     const std::int64_t* start, const std::int32_t* by, bool with_released,
                     ChannelState* ch);
  static void trim_scratch(Component& k);

  // --- the selective re-fill (flow_repair.cpp) ---
  bool repair(Component& k, double now);
  void select_flow(Component& k, RepairState& s, std::size_t i, double old_rate);
  void dirty_channel(Component& k, RepairState& s, ChannelId c);
  void void_dirty_records(Component& k, RepairState& s);
  void select_round(Component& k, RepairState& s);
  void propagate_changes(Component& k, RepairState& s);
  void check_round_records(Component& k, RepairState& s);
  bool check_channel(Component& k, RepairState& s, ChannelId c);
  void refill_selected(Component& k, double now);
  void release_selected(Component& k, double now);
  void index_selected(Component& k);
  void after_repair(Component& k);
  void relink_records(Component& k);

  // --- small helpers, inline: the filling and event loops call them per flow ---
  static std::uint32_t path_offset(std::size_t n) {
    if (n > std::numeric_limits<std::uint32_t>::max())
      throw std::logic_error("simulate: more than 2^32 channel entries in one component");
    return static_cast<std::uint32_t>(n);
  }
  // Bytes left of local flow i at time `now` (finish_or_bytes is its finishing time while its
  // rate is > 0).
  static double remaining(const Component& k, std::size_t i, double now) {
    return k.state[i].rate > 0 ? std::max(0.0, (k.finish_or_bytes[i] - now) * k.state[i].rate)
                               : k.finish_or_bytes[i];
  }
  // After a fill gave local flow i its rate (finish_or_bytes held the bytes left): its
  // finishing time.
  static void set_finish(Component& k, std::size_t i, double now) {
    if (k.state[i].rate > 0) k.finish_or_bytes[i] = now + k.finish_or_bytes[i] / k.state[i].rate;
  }
  // A flow's finishing time at its current rate (stored when the fill set the rate, so the
  // value is the same bit for bit each time).
  static double finish(const Component& k, std::size_t i) {
    return k.state[i].rate > 0 ? k.finish_or_bytes[i] : std::numeric_limits<double>::infinity();
  }
  static void heap_push(Component& k, double t, std::int32_t i) {
    k.finish_heap.emplace_back(t, i);
    std::push_heap(k.finish_heap.begin(), k.finish_heap.end(), std::greater<>());
  }
  static void heap_pop(Component& k) {
    std::pop_heap(k.finish_heap.begin(), k.finish_heap.end(), std::greater<>());
    k.finish_heap.pop_back();
  }
  static bool heap_top_valid(const Component& k) {
    const auto [t, i] = k.finish_heap.front();
    const auto ui = static_cast<std::size_t>(i);
    return k.alive[ui] && finish(k, ui) == t;
  }

  // Calls fn(local flow) for every flow listed on channel c: the lists of the last rebuild, then
  // the flows released since.
  template <class Fn>
  void for_each_flow(const Component& k, ChannelId c, Fn&& fn) const {
    const auto uc = static_cast<std::size_t>(c);
    const std::int32_t li = list_of_[uc];
    if (li >= 0 && static_cast<std::size_t>(li) + 1 < k.list_start.size())
      for (auto q = k.list_start[static_cast<std::size_t>(li)],
                e = k.list_start[static_cast<std::size_t>(li) + 1];
           q < e; ++q) {
        if (q + 16 < e)  // the flows of a list lie anywhere in the local arrays
          __builtin_prefetch(
              &k.state[static_cast<std::size_t>(k.list_flows[static_cast<std::size_t>(q + 16)])]
                   .rate);
        fn(static_cast<std::size_t>(k.list_flows[static_cast<std::size_t>(q)]));
      }
    for_each_released(k, c, fn);
  }
  // Calls fn(local flow) for every flow released on channel c since the last rebuild.
  template <class Fn>
  void for_each_released(const Component& k, ChannelId c, Fn&& fn) const {
    for (std::int32_t e = released_head_[static_cast<std::size_t>(c)]; e >= 0;
         e = k.released_entries[static_cast<std::size_t>(e)].second)
      fn(static_cast<std::size_t>(k.released_entries[static_cast<std::size_t>(e)].first));
  }

  // The bottleneck records' lists (node 2i: flow i's bottleneck, 2i + 1: its co_bottleneck).
  // Record nodes 2i and 2i + 1 of local flow i must fit in 32 bits.
  static void check_record_ids(const Component& k) {
    if (k.global_id.size() >= (std::size_t{1} << 30))
      throw std::logic_error("simulate: more than 2^30 flows in one component");
  }
  static ChannelId* record_channel(Component& k, std::int32_t node) {
    return (node & 1) ? &k.state[static_cast<std::size_t>(node >> 1)].co_bottleneck
                      : &k.state[static_cast<std::size_t>(node >> 1)].bottleneck;
  }
  void unlink_record(Component& k, std::int32_t node) {
    ChannelId* pc = record_channel(k, node);
    if (*pc < 0) return;
    const auto un = static_cast<std::size_t>(node);
    const std::int32_t p = k.record_prev[un], n = k.record_next[un];
    if (p >= 0)
      k.record_next[static_cast<std::size_t>(p)] = n;
    else
      record_head_[static_cast<std::size_t>(*pc)] = n;
    if (n >= 0) k.record_prev[static_cast<std::size_t>(n)] = p;
    *pc = -1;
  }
  void link_record(Component& k, std::int32_t node, ChannelId c) {
    unlink_record(k, node);
    const auto un = static_cast<std::size_t>(node);
    const auto uc = static_cast<std::size_t>(c);
    *record_channel(k, node) = c;
    k.record_prev[un] = -1;
    k.record_next[un] = record_head_[uc];
    if (record_head_[uc] >= 0) k.record_prev[static_cast<std::size_t>(record_head_[uc])] = node;
    record_head_[uc] = node;
  }

  // --- the run's inputs and output ---
  const Workload& workload_;
  EngineOptions options_;
  // Batches re-fill at their centre (see refill) above the default tolerance, whose batches hold
  // only ties broken by rounding: its results stay those of the first finishing time.
  const bool centre_batches_ = options_.batch_tolerance > EngineOptions{}.batch_tolerance;
  // The busiest channel's bytes over its capacity, s: a lower bound of the completion (see
  // horizon).
  double floor_s_ = 0;
  // Flows in the longest chain of dependent flows (1 without dependencies): the tolerance is
  // shared among its links (see horizon).
  double depth_ = 1;
  // Progress (options_.progress): closed components' deliveries, counted by the threads that run
  // them; only the thread that started the run draws.
  std::atomic<std::int64_t> closed_delivered_{0};
  std::thread::id owner_ = std::this_thread::get_id();
  SimResult result_;

  // --- per flow of the workload ---
  Vec<std::int32_t> preds_left_;    // predecessors not yet delivered
  Vec<std::int32_t> component_of_;  // its component (-1: an empty path)
  // Its successors (the flows that wait on it): successors_[succ_begin_[f], succ_begin_[f + 1])
  // (checked < 2^32 dependencies).
  Vec<std::uint32_t> succ_begin_;
  Vec<FlowId> successors_;

  // --- per channel of the workload (each belongs to one component, whose re-fill alone
  // writes them, so components re-fill in parallel) ---
  Vec<ChannelState> channel_;
  Vec<std::int32_t> list_of_;         // its local index in its component's lists (-1: none yet)
  Vec<std::int32_t> released_head_;   // first of its Component::released_entries (-1: none)
  Vec<std::int32_t> record_head_;     // first record node on it (-1: none)
  Vec<std::uint32_t> channel_stamp_;  // Component::stamp when rebuild or a repair last saw it
  // refill_selected: its local index in the sub-lists, valid when sub_stamp_ holds the
  // component's sub_stamp.
  Vec<std::int32_t> sub_list_of_;
  Vec<std::uint32_t> sub_stamp_;
  // check_round_records, valid when check_stamp_ holds the component's check_stamp: the lowest
  // rate (B/s, FlowState::rate) of a round's flows recorded on it, and whether one of them has it
  // as bottleneck (bit 0) or had its co_bottleneck voided there (bit 1).
  Vec<std::uint32_t> check_stamp_;
  Vec<double> check_level_;
  Vec<std::uint8_t> check_kind_;
  // During a repair, valid when lowest_level_stamp_ holds its stamp: the lowest level (B/s,
  // FlowState::rate) at which a flow of S was recorded on it. changed_stamp_: it is in the
  // repair's changed_channels.
  Vec<double> lowest_level_;
  Vec<std::uint32_t> lowest_level_stamp_, changed_stamp_;
  // During a repair, valid when outside_max_stamp_ holds its stamp: an upper bound of the rates
  // (B/s, FlowState::rate) of the flows on it outside S, set when its list is walked.
  Vec<double> outside_max_;
  Vec<std::uint32_t> outside_max_stamp_;

  // --- the event loop ---
  std::vector<Component> components_;
  Vec<std::int32_t> dirty_components_;  // to re-fill at the end of the current event
  Vec<std::int32_t> refill_order_;      // refill_dirty: the dirty components, the largest first
  // (release time s, flow), min first; its storage is freed once a large batch has drained (an
  // all-to-all releases every flow at once).
  Vec<std::pair<double, FlowId>> releases_;
  // A heap of at least this many waiting releases gives its due ones out in one pass
  // (release_due) once an event has popped a 64th of it: a pass costs a few sequential
  // nanoseconds per entry, a pop a walk down the heap at random, so the pass never costs more
  // than the pops before it, and an event with few due releases still pops them.
  static constexpr std::size_t kBulkReleases = std::size_t{1} << 16;
  std::priority_queue<FinishEvent, Vec<FinishEvent>, std::greater<>> finishes_;
  Tally main_tally_;                  // the deliveries of the main loop
  std::vector<std::int32_t> closed_;  // closed components, to run on their own at the end
};

}  // namespace railsim::sim::detail
