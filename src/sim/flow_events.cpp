// The event loop: flows released (by time and by dependencies), flows finishing, deliveries,
// the components an event makes dirty re-filled (in parallel), closed components run on their
// own at the end.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <cmath>

#include "flow_engine.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/report/progress.hpp"

namespace railsim::sim::detail {

// Events in time order: at each, every release and finish due by its horizon, then the
// re-fill of the components they touched.
void Engine::run_events() {
  while (true) {
    while (!finishes_.empty() &&
           finishes_.top().version !=
               components_[static_cast<std::size_t>(finishes_.top().comp)].version)
      finishes_.pop();
    const double inf = std::numeric_limits<double>::infinity();
    const double t_rel = releases_.empty() ? inf : releases_.front().first;
    const double t_fin = finishes_.empty() ? inf : finishes_.top().t;
    const double now = std::min(t_rel, t_fin);
    if (now == inf) break;
    check_cancelled();
    run_event(horizon(now), now);
    if (releases_.empty() && releases_.capacity() > 65536) releases_ = {};
    refill_dirty(now);
    ++result_.events;
    if (options_.progress != nullptr)
      options_.progress->update(main_tally_.delivered, workload_.flow_count());
  }
}

// The releases and finishes of the event at `now`, up to `until`, until none is left (a
// delivery may release flows due in this event).
void Engine::run_event(double until, double now) {
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
      auto& comp = components_[static_cast<std::size_t>(e.comp)];
      if (e.version != comp.version) continue;
      ++comp.version;  // consumed; the re-fill below posts the next one
      complete_finished(comp, until, main_tally_);
      mark_component_dirty(e.comp);
      progress = true;
    }
  }
}

// The end of the event at `now`: flows finishing within the batch tolerance of
// max(now, floor_s_) end in it, and flows released by then (a delivery plus its latency) start
// in it. floor_s_ is the busiest channel's bytes over its capacity, a lower bound of the
// completion; without it, the events before floor_s_ would be as many as ln(floor_s_ / t) / T
// for the first finishing time t. An event moves the flows it ends, and the flows they release,
// by up to its width, and a chain of dependent flows carries each move on to the next: a ring
// of 510 steps at 1e-4 came out 2.5% early, each step started a hop latency soon. So the width
// is the tolerance over the longest chain's flows, and no delivery moves by more than the
// tolerance times the completion, however deep the chain (ours; docs/sim.md, Events). The exact
// default merges only ties broken by rounding and keeps its width.
double Engine::horizon(double now) const {
  const double width = options_.batch_tolerance * std::max({std::abs(now), floor_s_, 1e-12});
  return now + (centre_batches_ ? width / depth_ : width);
}

void Engine::mark_component_dirty(std::int32_t k) {
  auto& c = components_[static_cast<std::size_t>(k)];
  if (!c.dirty) {
    c.dirty = true;
    dirty_components_.push_back(k);
  }
}

void Engine::deliver(FlowId f, double t_done, Tally& tally) {
  const auto uf = static_cast<std::size_t>(f);
  const double d = t_done + options_.hop_latency_s * static_cast<double>(workload_.path(f).size()) +
                   workload_.latency_s(f);
  result_.finish_s[uf] = d;
  tally.completion_s = std::max(tally.completion_s, d);
  ++tally.delivered;
  for (auto i = succ_begin_[uf]; i < succ_begin_[uf + 1]; ++i) {
    const FlowId s = successors_[static_cast<std::size_t>(i)];
    const auto us = static_cast<std::size_t>(s);
    // Until a flow is delivered, its finish_s holds the latest delivery of its predecessors.
    result_.finish_s[us] = std::max(result_.finish_s[us], d);
    if (--preds_left_[us] == 0)
      push_release(std::max(result_.finish_s[us], workload_.release_s(s)), s);
  }
}

void Engine::release(FlowId f, double now) {
  const auto uf = static_cast<std::size_t>(f);
  const std::int32_t k = component_of_[uf];
  if (k >= 0) --components_[static_cast<std::size_t>(k)].unreleased;
  if (k < 0 || workload_.bytes(f) == 0) {
    deliver(f, now, main_tally_);
    return;
  }
  components_[static_cast<std::size_t>(k)].released.push_back(f);
  mark_component_dirty(k);
}

// Releases every flow due by `until`, in (time, flow) order, without a heap pop each: an
// all-to-all releases all its flows at once, and popping millions from the heap one by one
// cost a walk down it at random each. Flows these releases make due follow in the loop.
void Engine::release_due(double until, double now) {
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

void Engine::push_release(double t, FlowId f) {
  releases_.emplace_back(t, f);
  std::push_heap(releases_.begin(), releases_.end(), std::greater<>());
}

void Engine::complete_finished(Component& comp, double horizon, Tally& tally) {
  if (comp.heapless) {
    end_by_scan(comp, horizon, tally);
    return;
  }
  // A pop costs a walk down the heap at random; once an event has popped 1/256 of the flows in
  // progress (and at least 64: a small component pops cheaply), one sequential pass over them
  // ends the rest (their heap entries go stale).
  const std::size_t most = std::max<std::size_t>(64, (comp.global_id.size() - comp.ended) / 256);
  std::size_t popped = 0;
  while (!comp.finish_heap.empty() && comp.finish_heap.front().first <= horizon) {
    if (++popped > most) {
      end_by_scan(comp, horizon, tally);
      return;
    }
    const bool valid = heap_top_valid(comp);
    const auto [t_end, li] = comp.finish_heap.front();
    heap_pop(comp);
    if (valid) end_flow(comp, static_cast<std::size_t>(li), t_end, tally);
  }
}

// Ends every flow in progress that finishes by `horizon`, in one pass over the flows.
void Engine::end_by_scan(Component& comp, double horizon, Tally& tally) {
  for (std::size_t i = 0; i < comp.global_id.size(); ++i)
    if (comp.alive[i] && finish(comp, i) <= horizon)
      end_flow(comp, i, comp.finish_or_bytes[i], tally);
}

// Local flow i ends at t_end: its capacity freed, its records dropped, delivered.
void Engine::end_flow(Component& comp, std::size_t i, double t_end, Tally& tally) {
  FlowState& f = comp.state[i];
  for (auto q = f.path_begin; q < f.path_end; ++q) {
    const ChannelId c = comp.paths[static_cast<std::size_t>(q)];
    channel_[static_cast<std::size_t>(c)].allocated_Bps -= f.rate * f.weight;
    if (options_.incremental) comp.touched_channels.push_back(c);
  }
  comp.ended_time_rate += t_end * f.rate * f.weight;
  comp.ended_rate_Bps += f.rate * f.weight;
  comp.alive[i] = 0;
  f.rate = 0;
  if (options_.incremental && comp.records_live) {
    unlink_record(comp, static_cast<std::int32_t>(2 * i));
    unlink_record(comp, static_cast<std::int32_t>(2 * i + 1));
  } else {
    f.bottleneck = f.co_bottleneck = -1;
  }
  ++comp.ended;
  deliver(comp.global_id[i], t_end, tally);
}

// Re-fills the components the event made dirty (in parallel when there are several) and posts
// their next finishing times, or sets them aside once closed.
void Engine::refill_dirty(double now) {
  if (dirty_components_.empty()) return;
  std::sort(dirty_components_.begin(), dirty_components_.end());
  result_.refills += static_cast<std::int64_t>(dirty_components_.size());
  if (dirty_components_.size() >= 4) {
    // A few large components (the rails of an all-to-all) among many small ones would share
    // one thread's range under the default partitioner.
    refill_order_.assign(dirty_components_.begin(), dirty_components_.end());
    for_each_largest_first(refill_order_, [&](std::size_t, Component& k) { refill(k, now); });
  } else {
    for (auto k : dirty_components_) refill(components_[static_cast<std::size_t>(k)], now);
  }
  for (auto k : dirty_components_) {
    auto& c = components_[static_cast<std::size_t>(k)];
    c.dirty = false;
    ++c.version;
    if (c.unreleased == 0 && !c.has_successors) {
      closed_.push_back(k);  // its stale event in finishes_ is skipped (version)
    } else if (c.next_finish_s < std::numeric_limits<double>::infinity()) {
      finishes_.push({c.next_finish_s, k, c.version});
    }
  }
  dirty_components_.clear();
}

// Sorts the components `ks` by their flows in progress or waiting, the largest first (ties by
// id), and calls fn(j, component ks[j]) for each in parallel, one task each: components may
// differ a lot in work.
template <class Ks, class Fn>
void Engine::for_each_largest_first(Ks& ks, Fn&& fn) {
  auto size = [&](std::int32_t k) {
    const auto& c = components_[static_cast<std::size_t>(k)];
    return c.global_id.size() - c.ended + c.released.size();
  };
  std::sort(ks.begin(), ks.end(), [&](std::int32_t a, std::int32_t b) {
    const std::size_t na = size(a), nb = size(b);
    return na != nb ? na > nb : a < b;
  });
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, ks.size(), 1),
      [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t j = r.begin(); j != r.end(); ++j)
          fn(j, components_[static_cast<std::size_t>(ks[j])]);
      },
      tbb::simple_partitioner());
}

// Runs every closed component to its end, in parallel: each is independent of everything
// else, so its events are those the main loop would have run with it alone (the batching
// horizon taken from its own next finish). The result does not depend on the threads.
void Engine::drain_closed() {
  std::vector<Tally> tallies(closed_.size());
  const std::int64_t flows = workload_.flow_count();
  for_each_largest_first(closed_, [&](std::size_t j, Component& k) {
    std::int64_t counted = 0;
    while (k.next_finish_s < std::numeric_limits<double>::infinity()) {
      check_cancelled();
      const double now = k.next_finish_s;
      complete_finished(k, horizon(now), tallies[j]);
      refill(k, now);
      ++k.own_events;
      if (options_.progress != nullptr) {
        const std::int64_t done =
            closed_delivered_.fetch_add(tallies[j].delivered - counted, std::memory_order_relaxed);
        counted = tallies[j].delivered;
        if (std::this_thread::get_id() == owner_)
          options_.progress->update(main_tally_.delivered + done, flows);
      }
    }
  });
  for (std::size_t j = 0; j < closed_.size(); ++j) {
    main_tally_.completion_s = std::max(main_tally_.completion_s, tallies[j].completion_s);
    main_tally_.delivered += tallies[j].delivered;
    result_.events += components_[static_cast<std::size_t>(closed_[j])].own_events;
  }
  closed_.clear();
}

}  // namespace railsim::sim::detail
