// simulate(): the engine's run from a workload to its result (the state the event loop works
// on, built once: successor lists, components, per-channel state).
#include "railsim/sim/flow_sim.hpp"

#include <cmath>
#include <numeric>
#include <string>

#include "flow_engine.hpp"
#include "railsim/report/progress.hpp"

namespace railsim::sim {

namespace detail {

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

}  // namespace

SimResult Engine::run() {
  const std::int32_t F = workload_.flow_count(), C = workload_.channel_count();
  const auto uF = static_cast<std::size_t>(F), uC = static_cast<std::size_t>(C);
  result_.finish_s.assign(uF, 0.0);
  result_.channel_bytes.assign(uC, 0.0);
  result_.channel_peak_utilisation.assign(uC, 0.0);
  result_.flows_simulated = F;
  result_.flows_represented = workload_.represented_flows();
  build_successors();
  measure_depth();
  build_components();
  size_channel_state();
  for (FlowId f = 0; f < F; ++f)
    if (preds_left_[static_cast<std::size_t>(f)] == 0) push_release(workload_.release_s(f), f);
  run_events();
  drain_closed();
  // Closed components' flows are delivered by drain_closed, after the last event.
  if (options_.progress != nullptr)
    options_.progress->update(main_tally_.delivered, workload_.flow_count());
  for (const auto& k : components_) result_.refilled_flows += k.refilled;
  const std::int64_t delivered = main_tally_.delivered;
  result_.completion_time_s = main_tally_.completion_s;
  if (delivered != F)
    throw std::logic_error("simulate: " + std::to_string(F - delivered) +
                           " flows never completed (dependency cycle)");
  return std::move(result_);
}

// Successors (CSR) and predecessor counts.
void Engine::build_successors() {
  const auto uF = static_cast<std::size_t>(workload_.flow_count());
  preds_left_.assign(uF, 0);
  if (workload_.dependencies().size() >= std::numeric_limits<std::uint32_t>::max())
    throw std::logic_error("simulate: more than 2^32 dependencies");
  succ_begin_.assign(uF + 1, 0);
  for (auto [a, b] : workload_.dependencies()) {
    ++succ_begin_[static_cast<std::size_t>(a) + 1];
    ++preds_left_[static_cast<std::size_t>(b)];
  }
  std::partial_sum(succ_begin_.begin(), succ_begin_.end(), succ_begin_.begin());
  successors_.resize(workload_.dependencies().size());
  Vec<std::uint32_t> pos(succ_begin_.begin(), succ_begin_.end() - 1);
  for (auto [a, b] : workload_.dependencies())
    successors_[static_cast<std::size_t>(pos[static_cast<std::size_t>(a)]++)] = b;
}

// depth_: the flows in the longest chain of dependencies, by levels in topological order. The
// builders list a flow after those it waits on, so one pass in id order is the order; any other
// workload takes Kahn's queue.
void Engine::measure_depth() {
  if (workload_.dependencies().empty()) return;
  const auto uF = static_cast<std::size_t>(workload_.flow_count());
  Vec<std::int32_t> level(uF, 1);
  bool in_order = true;
  for (auto [a, b] : workload_.dependencies()) in_order = in_order && a < b;
  std::int32_t deepest = 1;
  const auto visit = [&](std::size_t f) {
    for (auto i = succ_begin_[f]; i < succ_begin_[f + 1]; ++i) {
      const auto s = static_cast<std::size_t>(successors_[static_cast<std::size_t>(i)]);
      level[s] = std::max(level[s], level[f] + 1);
      deepest = std::max(deepest, level[s]);
    }
  };
  if (in_order) {
    for (std::size_t f = 0; f < uF; ++f) visit(f);
  } else {
    Vec<std::int32_t> left(preds_left_.begin(), preds_left_.end());
    Vec<FlowId> queue;
    for (std::size_t f = 0; f < uF; ++f)
      if (left[f] == 0) queue.push_back(static_cast<FlowId>(f));
    for (std::size_t q = 0; q < queue.size(); ++q) {
      const auto f = static_cast<std::size_t>(queue[q]);
      visit(f);
      for (auto i = succ_begin_[f]; i < succ_begin_[f + 1]; ++i) {
        const FlowId s = successors_[static_cast<std::size_t>(i)];
        if (--left[static_cast<std::size_t>(s)] == 0) queue.push_back(s);
      }
    }
    // A cycle leaves flows unvisited; run() reports it.
  }
  depth_ = deepest;
}

// Components: channels joined by a flow belong together (static superset of the true
// components at any time, so re-filling one is exact). Also the bytes each channel carries and
// from them floor_s_.
void Engine::build_components() {
  const std::int32_t F = workload_.flow_count(), C = workload_.channel_count();
  const auto uF = static_cast<std::size_t>(F), uC = static_cast<std::size_t>(C);
  Dsu dsu(C);
  for (FlowId f = 0; f < F; ++f) {
    auto p = workload_.path(f);
    for (std::size_t i = 1; i < p.size(); ++i) dsu.unite(p[0], p[i]);
    for (ChannelId c : p)
      result_.channel_bytes[static_cast<std::size_t>(c)] +=
          workload_.bytes(f) * workload_.weight(f);
  }
  for (std::size_t c = 0; c < uC; ++c)
    floor_s_ = std::max(floor_s_, result_.channel_bytes[c] / workload_.capacity_Bps()[c]);
  Vec<std::int32_t> comp_of_root(uC, -1);
  std::int32_t ncomp = 0;
  component_of_.assign(uF, -1);
  for (FlowId f = 0; f < F; ++f) {
    auto p = workload_.path(f);
    if (p.empty()) continue;
    auto r = static_cast<std::size_t>(dsu.find(p[0]));
    if (comp_of_root[r] < 0) comp_of_root[r] = ncomp++;
    component_of_[static_cast<std::size_t>(f)] = comp_of_root[r];
  }
  components_.assign(static_cast<std::size_t>(ncomp), Component{});
  for (FlowId f = 0; f < F; ++f) {
    const auto uf = static_cast<std::size_t>(f);
    const std::int32_t k = component_of_[uf];
    if (k < 0) continue;
    auto& comp = components_[static_cast<std::size_t>(k)];
    ++comp.unreleased;
    if (succ_begin_[uf + 1] > succ_begin_[uf]) comp.has_successors = true;
  }
}

void Engine::size_channel_state() {
  const auto uC = static_cast<std::size_t>(workload_.channel_count());
  channel_.assign(uC, ChannelState{});
  list_of_.assign(uC, -1);
  released_head_.assign(uC, -1);
  sub_stamp_.assign(uC, 0);
  check_stamp_.assign(uC, 0);
  record_head_.assign(uC, -1);
  check_level_.assign(uC, 0.0);
  check_kind_.assign(uC, 0);
  lowest_level_.assign(uC, 0.0);
  lowest_level_stamp_.assign(uC, 0);
  changed_stamp_.assign(uC, 0);
  outside_max_.assign(uC, 0.0);
  outside_max_stamp_.assign(uC, 0);
  sub_list_of_.assign(uC, 0);
  channel_stamp_.assign(uC, 0);
}

}  // namespace detail

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
  detail::Engine e(w, opt);
  return e.run();
}

}  // namespace railsim::sim
