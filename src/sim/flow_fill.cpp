// Re-filling a component: the choice between a repair (flow_repair.cpp) and a whole re-fill,
// the component's local arrays and channel -> flow lists, and progressive filling (exact
// max-min fairness) with the channels in a heap of fair shares.
#include "flow_engine.hpp"

namespace railsim::sim::detail {

// Re-fills a component after flows ended or were released: selectively (repair) unless more
// than an eighth of its flows would be re-filled or half are new, or the reference engine is
// asked for; then every flow in progress (the lists rebuilt first when the rule in
// prepare_refill says so). Once half have ended the arrays and lists are compacted first (rates
// kept).
void Engine::refill(Component& k, double now) {
  now = refill_time(k, now);
  const bool full = prepare_refill(k, now);
  k.first_new = k.global_id.size();
  k.touched_channels.clear();
  if (k.global_id.size() == k.ended) return;
  if (full)
    refill_whole(k, now);
  else
    after_repair(k);
  trim_scratch(k);
}

// A batch of flows ending within the tolerance re-fills at the mean of their finishing times
// weighted by the capacity each frees (ours): the capacity of those ending before it stays
// idle until then, that of those ending after it is shared out early, and the two cancel to
// first order. Re-filling at the first finishing time shared all of it out early: every batch
// moved the flows that go on early, and on balanced traffic with spread ends the completion
// came out early by about two times the tolerance (see docs/sim.md, Events). Never before the
// component's last re-fill: its rates hold from there.
double Engine::refill_time(Component& k, double now) {
  if (centre_batches_ && k.ended_rate_Bps > 0)
    now = std::max(now, k.ended_time_rate / k.ended_rate_Bps);
  now = std::max(now, k.last_refill_s);
  k.ended_time_rate = k.ended_rate_Bps = 0;
  k.last_refill_s = now;
  k.next_finish_s = std::numeric_limits<double>::infinity();
  return now;
}

// Tries a repair when the rules allow one, and readies the lists for a whole re-fill otherwise.
// Returns whether the component is to be re-filled whole.
bool Engine::prepare_refill(Component& k, double now) {
  bool full = !options_.incremental || 2 * k.released.size() > k.global_id.size() - k.ended;
  if (!full) {
    // Half ended: compact the arrays and lists (rates stay; released flows join as new).
    if (2 * k.ended > k.global_id.size())
      rebuild(k);
    else if (!k.released.empty())
      admit(k);
    if (k.whole_refills_left > 0) {
      --k.whole_refills_left;
      full = true;
    } else {
      if (!k.records_live) relink_records(k);
      full = !repair(k, now);
      // A repair that gives up costs about a full re-fill on top of the one that follows: once
      // repairs give up twice in a row, the next 1, 3, 7, ... 63 events of the component
      // re-fill it whole at once (a choice of cost only: both ways are exact).
      k.backoff = full ? std::min<std::uint32_t>(127, 2 * k.backoff + 1) : 0;
      k.whole_refills_left = k.backoff / 2;
    }
  }
  if (full) {
    // A whole fill walks the flows released since the last rebuild on their per-channel lists
    // (ours): a rebuild costs about as much as the fill, and when second legs are released at
    // most events (a forwarded all-to-all) it came with nearly every whole re-fill. The lists
    // are rebuilt once half of the flows have ended or the released flows' channel entries
    // pass a quarter of the lists' (the reference engine rebuilds at every whole re-fill).
    std::size_t entries = k.released_entries.size();
    for (FlowId f : k.released) entries += workload_.path(f).size();
    if (!options_.incremental || 2 * k.ended > k.global_id.size() ||
        4 * entries > k.list_flows.size())
      rebuild(k);
    else if (!k.released.empty())
      admit(k);
  }
  return full;
}

// Every flow in progress re-filled on the component's whole capacity.
void Engine::refill_whole(Component& k, double now) {
  const std::size_t n = k.global_id.size();
  const auto& cap = workload_.capacity_Bps();
  if (options_.incremental) k.records_live = false;
  k.refilled += static_cast<std::int64_t>(n - k.ended);
  for (ChannelId c : k.channels) {
    channel_[static_cast<std::size_t>(c)].unfrozen_weight = 0;
    channel_[static_cast<std::size_t>(c)].residual_Bps = cap[static_cast<std::size_t>(c)];
  }
  std::size_t unfrozen = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!k.alive[i]) continue;
    k.finish_or_bytes[i] = remaining(k, i, now);
    k.state[i].rate = -1.0;
    ++unfrozen;
    for (auto q = k.state[i].path_begin; q < k.state[i].path_end; ++q)
      channel_[static_cast<std::size_t>(k.paths[static_cast<std::size_t>(q)])].unfrozen_weight +=
          k.state[i].weight;
  }
  k.live_channels.assign(k.channels.begin(), k.channels.end());
  fill(k, unfrozen, list_of_.data(), k.list_start.data(), k.list_flows.data(), true);
  double next = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i)
    if (k.alive[i]) {
      set_finish(k, i, now);
      next = std::min(next, finish(k, i));
    }
  for (ChannelId c : k.channels) {
    const auto uc = static_cast<std::size_t>(c);
    channel_[uc].allocated_Bps = cap[uc] - std::max(channel_[uc].residual_Bps, 0.0);
    result_.channel_peak_utilisation[uc] =
        std::max(result_.channel_peak_utilisation[uc], channel_[uc].allocated_Bps / cap[uc]);
  }
  // Every finishing time changed: no heap until a repair needs one (see heapless).
  k.heapless = true;
  k.finish_heap.clear();
  k.next_finish_s = next;
}

// Drops ended flows, appends released ones and rebuilds the channel -> flow lists.
void Engine::rebuild(Component& k) {
  compact(k);
  index_channels(k);
}

// The local arrays without the ended flows, then the released flows; the records re-linked
// under the new local ids.
void Engine::compact(Component& k) {
  for (ChannelId c : k.channels) {
    list_of_[static_cast<std::size_t>(c)] = -1;
    released_head_[static_cast<std::size_t>(c)] = -1;
    record_head_[static_cast<std::size_t>(c)] = -1;
  }
  k.released_entries.clear();
  std::size_t j = 0, pj = 0;
  for (std::size_t i = 0; i < k.global_id.size(); ++i) {
    if (!k.alive[i]) continue;
    const auto b = k.state[i].path_begin, e = k.state[i].path_end;
    k.global_id[j] = k.global_id[i];
    k.finish_or_bytes[j] = k.finish_or_bytes[i];
    k.state[j] = k.state[i];
    k.state[j].path_begin = static_cast<std::uint32_t>(pj);
    for (auto q = b; q < e; ++q) k.paths[pj++] = k.paths[static_cast<std::size_t>(q)];
    k.state[j].path_end = static_cast<std::uint32_t>(pj);
    ++j;
  }
  k.global_id.resize(j);
  k.finish_or_bytes.resize(j);
  k.state.resize(j);
  k.paths.resize(pj);
  // Exact sizes: every flow may arrive here at once (an all-to-all), so growth by doubling
  // would hold up to twice the memory.
  const std::size_t nf = j + k.released.size();
  std::size_t np = pj;
  for (FlowId f : k.released) np += workload_.path(f).size();
  k.finish_or_bytes.reserve(nf);
  k.state.reserve(nf);
  k.global_id.reserve(nf);
  k.paths.reserve(np);
  for (FlowId f : k.released) push_flow(k, f);
  k.released.clear();
  k.released.shrink_to_fit();
  k.alive.assign(k.global_id.size(), 1);
  k.select_stamp.assign(k.global_id.size(), 0);
  // Records re-linked under the new local ids.
  check_record_ids(k);
  k.record_next.assign(2 * k.global_id.size(), -1);
  k.record_prev.assign(2 * k.global_id.size(), -1);
  relink_records(k);
  k.first_new = j;  // the flows released since the last fill follow the survivors
  k.renumbered = true;
  k.ended = 0;
}

// Channel -> flows (CSR). A channel belongs to one component only, so the component's own
// stamp counter marks its channels even when components are rebuilt concurrently.
void Engine::index_channels(Component& k) {
  const std::uint32_t cur = ++k.stamp;
  k.channels.clear();
  k.list_start.clear();
  for (ChannelId c : k.paths) {
    const auto uc = static_cast<std::size_t>(c);
    if (channel_stamp_[uc] != cur) {
      channel_stamp_[uc] = cur;
      list_of_[uc] = static_cast<std::int32_t>(k.channels.size());
      k.channels.push_back(c);
      k.list_start.push_back(0);
    }
    ++k.list_start[static_cast<std::size_t>(list_of_[uc])];
  }
  const std::int64_t acc = counts_to_starts(k.list_start);
  Vec<std::int64_t> fill(k.list_start.begin(), k.list_start.end() - 1);
  k.list_flows.resize(static_cast<std::size_t>(acc));
  k.list_flows.shrink_to_fit();
  for (std::size_t i = 0; i < k.global_id.size(); ++i)
    for (auto q = k.state[i].path_begin; q < k.state[i].path_end; ++q)
      k.list_flows[static_cast<std::size_t>(fill[static_cast<std::size_t>(
          list_of_[static_cast<std::size_t>(k.paths[static_cast<std::size_t>(q)])])]++)] =
          static_cast<std::int32_t>(i);
}

// Appends released flow f to the local arrays (rate 0 until filled, its bytes left in
// finish_or_bytes).
void Engine::push_flow(Component& k, FlowId f) {
  FlowState st;
  st.weight = workload_.weight(f);
  st.path_begin = path_offset(k.paths.size());
  auto p = workload_.path(f);
  k.paths.insert(k.paths.end(), p.begin(), p.end());
  st.path_end = path_offset(k.paths.size());
  k.global_id.push_back(f);
  k.finish_or_bytes.push_back(workload_.bytes(f));
  k.state.push_back(st);
}

// Released flows join the local arrays (rate 0 until filled) and the per-channel lists.
void Engine::admit(Component& k) {
  k.first_new = k.global_id.size();
  for (FlowId f : k.released) {
    const auto i = static_cast<std::int32_t>(k.global_id.size());
    push_flow(k, f);
    k.alive.push_back(1);
    k.select_stamp.push_back(0);
    for (int r = 0; r < 2; ++r) {
      k.record_next.push_back(-1);
      k.record_prev.push_back(-1);
    }
    for (ChannelId c : workload_.path(f)) {
      const auto uc = static_cast<std::size_t>(c);
      if (list_of_[uc] < 0) {  // a channel new to the component: an empty list of its own
        list_of_[uc] = static_cast<std::int32_t>(k.channels.size());
        k.channels.push_back(c);
        if (k.list_start.empty()) k.list_start.push_back(0);
        k.list_start.push_back(k.list_start.back());
      }
      k.released_entries.emplace_back(i, released_head_[uc]);
      released_head_[uc] = static_cast<std::int32_t>(k.released_entries.size() - 1);
    }
  }
  k.released.clear();
  check_record_ids(k);
}

// Progressive filling of the unfrozen flows (rate -1) of k over the channels of
// k.live_channels, whose residual capacity and unfrozen weight are in channel_; `loc` maps a
// channel to its list in (start, by). With `with_released`, the flows released since the last
// rebuild too (see freeze).
void Engine::fill(Component& k, std::size_t unfrozen, const std::int32_t* loc,
                  const std::int64_t* start, const std::int32_t* by, bool with_released) {
  if (options_.incremental)
    fill_by_heap(k, unfrozen, loc, start, by, with_released);
  else
    fill_levels(k, unfrozen, loc, start, by);
}

// Progressive filling (exact max-min fairness): raise the rates of the unfrozen flows (rate
// -1) together; when a channel saturates, freeze the flows crossing it at the fair share.
// The reference engine's: a pass over every live channel per level.
void Engine::fill_levels(Component& k, std::size_t unfrozen, const std::int32_t* loc,
                         const std::int64_t* start, const std::int32_t* by) {
  FlowState* fs = k.state.data();
  const ChannelId* paths = k.paths.data();
  ChannelState* ch = channel_.data();
  while (unfrozen > 0) {
    double best = std::numeric_limits<double>::infinity();
    std::size_t m = 0;
    for (ChannelId c : k.live_channels) {
      if (ch[c].unfrozen_weight <= 0) continue;
      k.live_channels[m++] = c;
      best = std::min(best, std::max(ch[c].residual_Bps, 0.0) / ch[c].unfrozen_weight);
    }
    k.live_channels.resize(m);
    if (m == 0) break;  // cannot happen: every unfrozen flow loads a live channel
    const double thr = best * (1 + 1e-12);
    for (ChannelId c : k.live_channels) {
      if (ch[c].unfrozen_weight <= 0 ||
          std::max(ch[c].residual_Bps, 0.0) / ch[c].unfrozen_weight > thr)
        continue;
      const auto li = static_cast<std::size_t>(loc[c]);
      const auto b = start[li], e = start[li + 1];
      for (auto q = b; q < e; ++q) {
        if (q + 16 < e)  // the flows of a list lie anywhere in the local arrays
          __builtin_prefetch(&fs[static_cast<std::size_t>(by[q + 16])]);
        const auto i = static_cast<std::size_t>(by[q]);
        if (fs[i].rate >= 0) continue;
        fs[i].rate = best;
        --unfrozen;
        const double wt = fs[i].weight;
        for (auto r = fs[i].path_begin; r < fs[i].path_end; ++r) {
          const auto c2 = paths[r];
          ch[c2].residual_Bps -= best * wt;
          ch[c2].unfrozen_weight -= wt;
        }
      }
    }
  }
}

// Freezes the unfrozen flows crossing channel c at `level` (see fill_levels): those of its list
// in (loc, start, by) and, with `with_released`, those released since the last rebuild
// (released_head_, released_entries). Sets their bottleneck records. Returns how many it froze.
std::size_t Engine::freeze(Component& k, ChannelId c, double level, const std::int32_t* loc,
                           const std::int64_t* start, const std::int32_t* by, bool with_released,
                           ChannelState* ch) {
  FlowState* fs = k.state.data();
  const bool records_live = k.records_live;
  const ChannelId* paths = k.paths.data();
  std::size_t frozen = 0;
  double own = 0;
  auto visit = [&](std::size_t i) {
    FlowState& f = fs[i];
    if (f.rate >= 0) {
      // Frozen at this level by another channel: this one is a bottleneck too.
      if (f.rate == level && f.co_bottleneck < 0 && f.bottleneck != c && k.alive[i]) {
        if (records_live)
          link_record(k, static_cast<std::int32_t>(2 * i + 1), c);
        else
          f.co_bottleneck = c;
      }
      return;
    }
    f.rate = level;
    if (records_live) {
      if (f.bottleneck != c) link_record(k, static_cast<std::int32_t>(2 * i), c);
      unlink_record(k, static_cast<std::int32_t>(2 * i + 1));
    } else {
      f.bottleneck = c;
      f.co_bottleneck = -1;
    }
    ++frozen;
    const double wt = f.weight;
    for (auto r = f.path_begin; r < f.path_end; ++r) {
      const auto c2 = paths[r];
      // Channel c itself is on every path of its list: its weight is summed here and taken
      // off once below, not through memory once per flow (a chain of dependent updates).
      if (c2 == c) {
        own += wt;
        continue;
      }
      ch[c2].residual_Bps -= level * wt;
      ch[c2].unfrozen_weight -= wt;
      ch[c2].max_rate_Bps = std::max(ch[c2].max_rate_Bps, level);
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
    if (q + 16 < e) __builtin_prefetch(&paths[fs[static_cast<std::size_t>(by[q + 16])].path_begin]);
    visit(static_cast<std::size_t>(by[q]));
  }
  if (with_released) for_each_released(k, c, visit);
  if (frozen > 0) {
    ch[c].residual_Bps -= level * own;
    ch[c].unfrozen_weight -= own;
    ch[c].max_rate_Bps = std::max(ch[c].max_rate_Bps, level);
  }
  return frozen;
}

// Progressive filling with the channels in a min-heap of fair shares (residual capacity over
// unfrozen weight): the same levels as fill_levels, in O((P + C) log C) for P path entries of
// the re-filled flows and C channels, instead of a pass over every live channel per level.
// Freezing flows at the lowest share only raises the other channels' shares, so a heap entry
// is a lower bound of its channel's share: a popped entry that is out of date goes back with
// the current share; one that is up to date is the lowest.
void Engine::fill_by_heap(Component& k, std::size_t unfrozen, const std::int32_t* loc,
                          const std::int64_t* start, const std::int32_t* by, bool with_released) {
  ChannelState* ch = channel_.data();
  auto& hp = k.share_heap;
  hp.clear();
  for (ChannelId c : k.live_channels)
    if (ch[c].unfrozen_weight > 0)
      hp.emplace_back(std::max(ch[c].residual_Bps, 0.0) / ch[c].unfrozen_weight, c);
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
  auto share = [ch](ChannelId c) {
    return std::max(ch[c].residual_Bps, 0.0) / ch[c].unfrozen_weight;
  };
  while (unfrozen > 0 && !hp.empty()) {
    const auto [key, c] = pop();
    if (ch[c].unfrozen_weight <= 0) continue;
    const double best = share(c);
    if (best != key) {
      push(best, c);
      continue;
    }
    // Every channel whose share is within rounding of the lowest saturates at the same level.
    const double thr = best * (1 + 1e-12);
    unfrozen -= freeze(k, c, best, loc, start, by, with_released, ch);
    while (unfrozen > 0 && !hp.empty() && hp.front().first <= thr) {
      const ChannelId c2 = pop().second;
      if (ch[c2].unfrozen_weight <= 0) continue;
      const double s2 = share(c2);
      if (s2 > thr) {
        push(s2, c2);
        continue;
      }
      unfrozen -= freeze(k, c2, best, loc, start, by, with_released, ch);
    }
  }
}

// A repair's scratch per flow (S and its rounds) may reach half of a component's flows; kept
// between events by every component it would add about 20 bytes per flow to the peak, so
// large scratch is freed after each re-fill (reallocating it costs little next to the event).
void Engine::trim_scratch(Component& k) {
  constexpr std::size_t keep = 1 << 16;
  auto trim = [](auto& v) {
    if (v.capacity() > keep) std::remove_reference_t<decltype(v)>{}.swap(v);
  };
  trim(k.selected);
  trim(k.selected_old_rate);
  trim(k.selected_propagated);
  trim(k.round_flows);
  trim(k.round_pos);
  trim(k.sub_flows);
  trim(k.dirty_channels);
  trim(k.changed_channels);
  trim(k.check_channels);
  trim(k.sub_channels);
  trim(k.sub_start);
  trim(k.live_channels);
  trim(k.share_heap);
}

}  // namespace railsim::sim::detail
