// The selective re-fill of a component after flows ended or were released (a repair): the
// bottleneck records a fill leaves, the flows whose records a change voids, the rounds that
// re-fill them on the capacity the others leave, and the finishing-time heap after it.
#include <cmath>

#include "flow_engine.hpp"

namespace railsim::sim::detail {

// Selective re-fill after flows ended or were released (ours). An allocation is max-min fair
// when every flow has a bottleneck: a saturated channel on which no flow is faster. Each fill
// records, per flow, the channel that froze it and one more that saturated at the same level
// (bottleneck, co_bottleneck). A channel is dirty when a flow on it ended, arrived or changed
// rate; records on a dirty channel are void. S = the released flows and every flow left
// without a record; S is re-filled on the capacity the others leave; a flow of S whose rate
// changed makes its channels dirty; a flow outside S faster than a flow of S on the channel that
// froze it joins S. Repeated until nothing changes: then every flow outside S keeps a
// bottleneck that nothing touched, and every flow of S has one in the re-fill on which no flow
// is faster, so the allocation is the max-min fair one (the unique allocation where every flow
// has a bottleneck; Bertsekas and Gallager, Data Networks, 6.5.2). An event thus costs the
// lists of the channels it touches and the flows it changes. Returns false when S grows beyond
// an eighth of the flows in progress: a repair costs several times a whole fill per flow (its
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
// j's path) (0 for a released flow); lowest_level_ keeps per channel the lowest level a flow
// of S was recorded at during this repair (a lower L only re-fills more).
bool Engine::repair(Component& k, double now) {
  RepairState s;
  s.stamp = ++k.stamp;
  k.selected.clear();
  k.selected_old_rate.clear();
  k.dirty_channels.clear();
  k.selected_propagated.clear();
  k.changed_channels.clear();
  k.repair_work = 0;
  s.limit = (k.global_id.size() - k.ended) / 8;
  for (std::size_t i = k.first_new; i < k.global_id.size(); ++i)
    select_flow(k, s, i, std::numeric_limits<double>::quiet_NaN());
  for (ChannelId c : k.touched_channels) dirty_channel(k, s, c);
  while (s.ok) {
    void_dirty_records(k, s);
    if (!s.ok) return false;
    if (s.filled == k.selected.size()) break;  // nothing joined: S is max-min fair
    select_round(k, s);
    // Rounds that re-fill many flows again: once the flows re-filled over the rounds reach
    // twice the limit, a full re-fill (one pass over them) is cheaper than going on.
    k.repair_work += k.round_flows.size();
    if (k.repair_work > 2 * s.limit) return false;
    refill_selected(k, now);
    propagate_changes(k, s);
    check_round_records(k, s);
    if (!s.ok) return false;
  }
  return s.ok;  // false when the released flows alone passed the limit
}

// Local flow i joins S (once per repair) with its rate before the repair (NaN: released now),
// and lowers s.lowest to the lowest level it can change.
void Engine::select_flow(Component& k, RepairState& s, std::size_t i, double old_rate) {
  if (k.select_stamp[i] == s.stamp) return;
  k.select_stamp[i] = s.stamp;
  k.selected.push_back(static_cast<std::int32_t>(i));
  k.selected_old_rate.push_back(old_rate);
  k.selected_propagated.push_back(0);
  if (k.selected.size() > s.limit) s.ok = false;
  double lv = std::isnan(old_rate) ? 0.0 : old_rate;
  for (auto q = k.state[i].path_begin; q < k.state[i].path_end && lv > 0; ++q) {
    const auto uc = static_cast<std::size_t>(k.paths[static_cast<std::size_t>(q)]);
    if (lowest_level_stamp_[uc] == s.stamp) lv = std::min(lv, lowest_level_[uc]);
  }
  s.lowest = std::min(s.lowest, lv);
}

// Channel c is dirty (queued once per repair): the records on it are to be voided.
void Engine::dirty_channel(Component& k, RepairState& s, ChannelId c) {
  const auto uc = static_cast<std::size_t>(c);
  if (channel_stamp_[uc] == s.stamp) return;
  channel_stamp_[uc] = s.stamp;
  k.dirty_channels.push_back(c);
}

// Voids the records on the channels made dirty since the last call; flows left without one
// join S.
void Engine::void_dirty_records(Component& k, RepairState& s) {
  for (; s.voided < k.dirty_channels.size() && s.ok; ++s.voided) {
    const ChannelId c = k.dirty_channels[s.voided];
    for (std::int32_t nd = record_head_[static_cast<std::size_t>(c)]; nd >= 0 && s.ok;) {
      const std::int32_t nx = k.record_next[static_cast<std::size_t>(nd)];
      const auto i = static_cast<std::size_t>(nd >> 1);
      if (k.select_stamp[i] != s.stamp) {
        unlink_record(k, nd);
        if (k.state[i].bottleneck < 0 && k.state[i].co_bottleneck < 0)
          select_flow(k, s, i, k.state[i].rate);
      }
      nd = nx;
    }
  }
}

// This round: the flows joined since the last one and the flows of S at or above the lowest
// level they can change (a margin below it covers levels merged as ties).
void Engine::select_round(Component& k, RepairState& s) {
  k.round_pos.clear();
  k.round_flows.clear();
  const double from = s.lowest * (1 - 1e-9);
  for (std::size_t j = 0; j < k.selected.size(); ++j)
    if (j >= s.filled || k.state[static_cast<std::size_t>(k.selected[j])].rate >= from) {
      k.round_pos.push_back(static_cast<std::int32_t>(j));
      k.round_flows.push_back(k.selected[j]);
    }
  s.filled = k.selected.size();
  s.lowest = std::numeric_limits<double>::infinity();
}

// Changed rates make their channels dirty.
void Engine::propagate_changes(Component& k, RepairState& s) {
  for (auto j : k.round_pos) {
    const auto uj = static_cast<std::size_t>(j);
    if (k.selected_propagated[uj]) continue;
    const auto i = static_cast<std::size_t>(k.selected[uj]);
    const double o = k.selected_old_rate[uj], r = k.state[i].rate;
    if (o == r || std::abs(r - o) <= 1e-13 * std::max(r, o)) continue;
    k.selected_propagated[uj] = 1;
    for (auto q = k.state[i].path_begin; q < k.state[i].path_end; ++q)
      dirty_channel(k, s, k.paths[static_cast<std::size_t>(q)]);
  }
}

// The records of the round: a flow outside S faster than the level at which a record channel
// saturated joins S (bottleneck), or voids the record (co_bottleneck).
void Engine::check_round_records(Component& k, RepairState& s) {
  const std::uint32_t vcur = ++k.check_stamp;
  k.check_channels.clear();
  for (auto i : k.round_flows) {
    const auto ui = static_cast<std::size_t>(i);
    for (int r = 0; r < 2; ++r) {
      const ChannelId c = r == 0 ? k.state[ui].bottleneck : k.state[ui].co_bottleneck;
      if (c < 0) continue;
      const auto uc = static_cast<std::size_t>(c);
      if (lowest_level_stamp_[uc] != s.stamp) {
        lowest_level_stamp_[uc] = s.stamp;
        lowest_level_[uc] = k.state[ui].rate;
      }
      lowest_level_[uc] = std::min(lowest_level_[uc], k.state[ui].rate);
      if (check_stamp_[uc] != vcur) {
        check_stamp_[uc] = vcur;
        check_level_[uc] = k.state[ui].rate;
        check_kind_[uc] = 0;
        k.check_channels.push_back(c);
      }
      check_level_[uc] = std::min(check_level_[uc], k.state[ui].rate);
      if (r == 0) check_kind_[uc] |= 1;
    }
  }
  bool voided = false;
  for (ChannelId c : k.check_channels)
    if (check_channel(k, s, c)) voided = true;
  if (voided)
    for (auto i : k.round_flows) {
      const auto ui = static_cast<std::size_t>(i);
      if (k.state[ui].co_bottleneck >= 0 &&
          (check_kind_[static_cast<std::size_t>(k.state[ui].co_bottleneck)] & 2))
        unlink_record(k, static_cast<std::int32_t>(2 * i + 1));
    }
}

// Looks on record channel c for flows faster than the level at which it saturated: they join S
// when c is some flow's bottleneck; otherwise the co_bottleneck records on c are void (returns
// true, c marked with bit 1 of check_kind_).
bool Engine::check_channel(Component& k, RepairState& s, ChannelId c) {
  const auto uc = static_cast<std::size_t>(c);
  const double lim = check_level_[uc] * (1 + 1e-12);
  // max_rate_Bps bounds every rate on the channel: no walk when no flow there can be faster.
  if (channel_[uc].max_rate_Bps <= lim) return false;
  // An earlier walk in this repair bounds the flows still outside S (their rates stay).
  if (outside_max_stamp_[uc] == s.stamp && outside_max_[uc] <= lim) return false;
  bool faster = false;
  double mx = 0, omx = 0;
  for_each_flow(k, c, [&](std::size_t i) {
    // Ended flows have rate 0: most flows need no look-up but their rate.
    const double r = k.state[i].rate;
    mx = std::max(mx, r);
    if (!(r > lim)) {
      omx = std::max(omx, r);
      return;
    }
    if (k.select_stamp[i] == s.stamp) return;
    faster = true;
    if (check_kind_[uc] & 1)
      select_flow(k, s, i, r);
    else
      omx = std::max(omx, r);
  });
  channel_[uc].max_rate_Bps = mx;
  outside_max_stamp_[uc] = s.stamp;
  outside_max_[uc] = std::max(omx, lim);
  if (faster && !(check_kind_[uc] & 1)) {
    check_kind_[uc] |= 2;
    return true;
  }
  return false;
}

// Re-fills the flows of k.round_flows on the capacity the others leave (their rates stay):
// releases the selected flows' allocations, builds channel -> flow lists over them only and
// fills.
void Engine::refill_selected(Component& k, double now) {
  const auto& cap = workload_.capacity_Bps();
  release_selected(k, now);
  index_selected(k);
  for (ChannelId c : k.sub_channels) {
    const auto uc = static_cast<std::size_t>(c);
    channel_[uc].residual_Bps = cap[uc] - channel_[uc].allocated_Bps;
  }
  k.live_channels.assign(k.sub_channels.begin(), k.sub_channels.end());
  fill(k, k.round_flows.size(), sub_list_of_.data(), k.sub_start.data(), k.sub_flows.data(), false);
  for (auto i : k.round_flows) set_finish(k, static_cast<std::size_t>(i), now);
  for (ChannelId c : k.sub_channels) {
    const auto uc = static_cast<std::size_t>(c);
    channel_[uc].allocated_Bps = cap[uc] - std::max(channel_[uc].residual_Bps, 0.0);
  }
}

// The round's flows give back their allocations and become unfrozen (their bytes left in
// finish_or_bytes); their channels are numbered for the sub-lists (sub_list_of_) with the
// round's flows' weight as unfrozen weight, and counted in changed_channels once per repair.
void Engine::release_selected(Component& k, double now) {
  const std::uint32_t cur = ++k.sub_stamp;
  k.sub_channels.clear();
  k.sub_start.clear();
  for (auto i : k.round_flows) {
    const auto ui = static_cast<std::size_t>(i);
    for (auto q = k.state[ui].path_begin; q < k.state[ui].path_end; ++q) {
      const auto uc = static_cast<std::size_t>(k.paths[static_cast<std::size_t>(q)]);
      channel_[uc].allocated_Bps -= k.state[ui].rate * k.state[ui].weight;
      if (sub_stamp_[uc] != cur) {
        sub_stamp_[uc] = cur;
        sub_list_of_[uc] = static_cast<std::int32_t>(k.sub_channels.size());
        k.sub_channels.push_back(static_cast<ChannelId>(uc));
        k.sub_start.push_back(0);
        channel_[uc].unfrozen_weight = 0;
        if (changed_stamp_[uc] != k.stamp) {  // channels changed by this repair, for the peaks
          changed_stamp_[uc] = k.stamp;
          k.changed_channels.push_back(static_cast<ChannelId>(uc));
        }
      }
      channel_[uc].unfrozen_weight += k.state[ui].weight;
      ++k.sub_start[static_cast<std::size_t>(sub_list_of_[uc])];
    }
    k.finish_or_bytes[ui] = remaining(k, ui, now);
    k.state[ui].rate = -1.0;
  }
}

// The sub-lists (CSR): per channel of the round, the round's flows on it. sub_start holds the
// counts of release_selected on entry.
void Engine::index_selected(Component& k) {
  const std::int64_t acc = counts_to_starts(k.sub_start);
  k.sub_flows.resize(static_cast<std::size_t>(acc));
  for (auto i : k.round_flows) {
    const auto ui = static_cast<std::size_t>(i);
    for (auto q = k.state[ui].path_begin; q < k.state[ui].path_end; ++q) {
      const auto uc = static_cast<std::size_t>(k.paths[static_cast<std::size_t>(q)]);
      k.sub_flows[static_cast<std::size_t>(
          k.sub_start[static_cast<std::size_t>(sub_list_of_[uc])]++)] = i;
    }
  }
  // sub_start[j] now holds the end of list j; shift back to starts.
  for (std::size_t j = k.sub_channels.size(); j > 0; --j) k.sub_start[j] = k.sub_start[j - 1];
  k.sub_start[0] = 0;
}

// After a repair: the peaks of the channels it changed, and the new finishing times of the
// re-filled flows (stale heap entries are skipped); the heap is rebuilt from every flow when
// mostly stale, or when a whole re-fill left none.
void Engine::after_repair(Component& k) {
  const std::size_t n = k.global_id.size();
  const auto& cap = workload_.capacity_Bps();
  k.refilled += static_cast<std::int64_t>(k.repair_work);
  for (ChannelId c : k.changed_channels) {
    const auto uc = static_cast<std::size_t>(c);
    result_.channel_peak_utilisation[uc] =
        std::max(result_.channel_peak_utilisation[uc], channel_[uc].allocated_Bps / cap[uc]);
  }
  const double inf = std::numeric_limits<double>::infinity();
  // The heap is rebuilt once its stale entries would pass a quarter of the flows in progress,
  // into storage of exactly that size: pushes until the next rebuild never reallocate, so the
  // heap holds at most 1.25 entries per flow in progress (doubling would allow 2.5). The slack
  // of 16 stays small: an iteration's schedule runs tens of thousands of components at once
  // (every TP ring, every pipeline pair), and 1,024 entries each held 0.5 GB at 32,768 GPUs.
  const std::size_t room = (n - k.ended) + (n - k.ended) / 4 + 16;
  if (k.heapless || k.renumbered || k.finish_heap.size() + k.selected.size() > room) {
    k.heapless = false;
    k.renumbered = false;
    k.finish_heap.clear();
    if (k.finish_heap.capacity() > room + room / 2 || k.finish_heap.capacity() < room) {
      decltype(k.finish_heap) fresh;
      fresh.reserve(room);
      k.finish_heap.swap(fresh);
    }
    for (std::size_t i = 0; i < n; ++i)
      if (k.alive[i] && finish(k, i) < inf)
        k.finish_heap.emplace_back(finish(k, i), static_cast<std::int32_t>(i));
    std::make_heap(k.finish_heap.begin(), k.finish_heap.end(), std::greater<>());
  } else {
    for (auto i : k.selected)
      if (finish(k, static_cast<std::size_t>(i)) < inf)
        heap_push(k, finish(k, static_cast<std::size_t>(i)), i);
  }
  while (!k.finish_heap.empty() && !heap_top_valid(k)) heap_pop(k);
  k.next_finish_s = k.finish_heap.empty() ? inf : k.finish_heap.front().first;
}

// Every alive flow's records linked into their channels' lists again, from the records.
void Engine::relink_records(Component& k) {
  for (ChannelId c : k.channels) record_head_[static_cast<std::size_t>(c)] = -1;
  for (std::size_t i = 0; i < k.global_id.size(); ++i) {
    const ChannelId c1 = k.state[i].bottleneck, c2 = k.state[i].co_bottleneck;
    k.state[i].bottleneck = k.state[i].co_bottleneck = -1;
    if (!k.alive[i]) continue;
    if (c1 >= 0) link_record(k, static_cast<std::int32_t>(2 * i), c1);
    if (c2 >= 0) link_record(k, static_cast<std::int32_t>(2 * i + 1), c2);
  }
  k.records_live = true;
}

}  // namespace railsim::sim::detail
