#include "railsim/sim/flow_sim.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <string>

namespace railsim::sim {

Workload::Workload(std::vector<double> channel_capacity_Bps)
    : capacity_(std::move(channel_capacity_Bps)) {
  for (double c : capacity_)
    if (!(c > 0) || !std::isfinite(c))
      throw std::logic_error("Workload: channel capacities must be positive and finite");
}

void Workload::reserve(std::size_t flows, std::size_t path_entries) {
  path_.reserve(path_entries);
  path_off_.reserve(flows + 1);
  bytes_.reserve(flows);
  weight_.reserve(flows);
  release_.reserve(flows);
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
  path_.insert(path_.end(), path.begin(), path.end());
  path_off_.push_back(static_cast<std::int64_t>(path_.size()));
  bytes_.push_back(bytes);
  weight_.push_back(weight);
  release_.push_back(release_s);
  return static_cast<FlowId>(bytes_.size() - 1);
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

// Buffers a re-fill needs; one per thread, reused across events (no allocation in steady state).
struct Scratch {
  std::vector<ChannelId> touched, live;
  std::vector<std::int64_t> start, fill;
  std::vector<FlowId> by_channel;
};

struct Component {
  std::vector<FlowId> active;
  double last_t = 0;
  double next_finish = std::numeric_limits<double>::infinity();
  std::uint32_t version = 0;
  bool dirty = false;
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
    res_.finish_s.assign(uF, -1.0);
    res_.channel_bytes.assign(uC, 0.0);
    res_.channel_peak_utilisation.assign(uC, 0.0);
    res_.flows_simulated = F;
    res_.flows_represented = w_.represented_flows();

    // Successors (CSR) and predecessor counts.
    npred_.assign(uF, 0);
    succ_off_.assign(uF + 1, 0);
    for (auto [a, b] : w_.dependencies()) {
      ++succ_off_[static_cast<std::size_t>(a) + 1];
      ++npred_[static_cast<std::size_t>(b)];
    }
    std::partial_sum(succ_off_.begin(), succ_off_.end(), succ_off_.begin());
    succ_.resize(w_.dependencies().size());
    {
      std::vector<std::int64_t> pos(succ_off_.begin(), succ_off_.end() - 1);
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
    std::vector<std::int32_t> comp_of_root(uC, -1);
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
    comp_stamp_.assign(static_cast<std::size_t>(ncomp), 0);

    rem_.assign(uF, 0.0);
    rate_.assign(uF, 0.0);
    ready_.assign(uF, 0.0);
    state_.assign(uF, 0);
    load_.assign(uC, 0.0);
    capr_.assign(uC, 0.0);
    loc_.assign(uC, 0);
    stamp_.assign(uC, 0);

    for (FlowId f = 0; f < F; ++f)
      if (npred_[static_cast<std::size_t>(f)] == 0) releases_.push({w_.release_s(f), f});

    std::int64_t delivered = 0;
    delivered_ = &delivered;
    while (true) {
      while (!finishes_.empty() &&
             finishes_.top().version !=
                 comps_[static_cast<std::size_t>(finishes_.top().comp)].version)
        finishes_.pop();
      const double inf = std::numeric_limits<double>::infinity();
      const double t_rel = releases_.empty() ? inf : releases_.top().first;
      const double t_fin = finishes_.empty() ? inf : finishes_.top().t;
      const double now = std::min(t_rel, t_fin);
      if (now == inf) break;
      const double horizon = now + opt_.batch_tolerance * std::max(std::abs(now), 1e-12);
      bool progress = true;
      while (progress) {
        progress = false;
        while (!releases_.empty() && releases_.top().first <= horizon) {
          const FlowId f = releases_.top().second;
          releases_.pop();
          release(f, now);
          progress = true;
        }
        while (!finishes_.empty() && finishes_.top().t <= horizon) {
          const FinishEvent e = finishes_.top();
          finishes_.pop();
          auto& comp = comps_[static_cast<std::size_t>(e.comp)];
          if (e.version != comp.version) continue;
          ++comp.version;  // consumed; the re-fill below posts the next one
          complete_finished(comp, horizon);
          mark_dirty(e.comp);
          progress = true;
        }
      }
      refill_dirty(now);
      ++res_.events;
    }
    if (delivered != F)
      throw std::logic_error("simulate: " + std::to_string(F - delivered) +
                             " flows never completed (dependency cycle)");
    return std::move(res_);
  }

 private:
  void mark_dirty(std::int32_t k) {
    auto& c = comps_[static_cast<std::size_t>(k)];
    if (!c.dirty) {
      c.dirty = true;
      dirty_.push_back(k);
    }
  }

  void deliver(FlowId f, double t_done) {
    const auto uf = static_cast<std::size_t>(f);
    state_[uf] = 2;
    const double d = t_done + opt_.hop_latency_s * static_cast<double>(w_.path(f).size());
    res_.finish_s[uf] = d;
    res_.completion_time_s = std::max(res_.completion_time_s, d);
    ++*delivered_;
    for (auto i = succ_off_[uf]; i < succ_off_[uf + 1]; ++i) {
      const FlowId s = succ_[static_cast<std::size_t>(i)];
      const auto us = static_cast<std::size_t>(s);
      ready_[us] = std::max(ready_[us], d);
      if (--npred_[us] == 0) releases_.push({std::max(ready_[us], w_.release_s(s)), s});
    }
  }

  void release(FlowId f, double now) {
    const auto uf = static_cast<std::size_t>(f);
    const std::int32_t k = comp_of_flow_[uf];
    if (k < 0 || w_.bytes(f) == 0) {
      deliver(f, now);
      return;
    }
    state_[uf] = 1;
    rem_[uf] = w_.bytes(f);
    rate_[uf] = 0;
    comps_[static_cast<std::size_t>(k)].active.push_back(f);
    mark_dirty(k);
  }

  void complete_finished(Component& comp, double horizon) {
    for (FlowId f : comp.active) {
      const auto uf = static_cast<std::size_t>(f);
      if (state_[uf] != 1 || rate_[uf] <= 0) continue;
      const double t_end = comp.last_t + rem_[uf] / rate_[uf];
      if (t_end <= horizon) deliver(f, t_end);
    }
  }

  void refill_dirty(double now) {
    if (dirty_.empty()) return;
    std::sort(dirty_.begin(), dirty_.end());
    res_.refills += static_cast<std::int64_t>(dirty_.size());
    if (dirty_.size() >= 4) {
      tbb::parallel_for(std::size_t{0}, dirty_.size(), [&](std::size_t i) {
        refill(comps_[static_cast<std::size_t>(dirty_[i])], now, scratch_.local(),
               static_cast<std::uint32_t>(dirty_[i]));
      });
    } else {
      for (auto k : dirty_)
        refill(comps_[static_cast<std::size_t>(k)], now, scratch_.local(),
               static_cast<std::uint32_t>(k));
    }
    for (auto k : dirty_) {
      auto& c = comps_[static_cast<std::size_t>(k)];
      c.dirty = false;
      ++c.version;
      if (!c.active.empty()) finishes_.push({c.next_finish, k, c.version});
    }
    dirty_.clear();
  }

  // Progressive filling on one component (exact max-min fairness): raise all unfrozen flows'
  // rates together; when a channel saturates, freeze the flows crossing it at the fair share.
  void refill(Component& comp, double now, Scratch& s, std::uint32_t comp_id) {
    const double dt = now - comp.last_t;
    std::size_t j = 0;
    for (FlowId f : comp.active) {
      const auto uf = static_cast<std::size_t>(f);
      if (state_[uf] == 2) continue;
      rem_[uf] = std::max(0.0, rem_[uf] - rate_[uf] * dt);
      comp.active[j++] = f;
    }
    comp.active.resize(j);
    comp.last_t = now;
    comp.next_finish = std::numeric_limits<double>::infinity();
    if (comp.active.empty()) return;

    // A channel belongs to one component only, so a per-component counter makes stamps unique
    // for its channels even when components are filled concurrently.
    const std::uint32_t cur = ++comp_stamp_[comp_id];
    s.touched.clear();
    s.start.clear();
    for (FlowId f : comp.active) {
      const double wt = w_.weight(f);
      for (ChannelId c : w_.path(f)) {
        const auto uc = static_cast<std::size_t>(c);
        if (stamp_[uc] != cur) {
          stamp_[uc] = cur;
          loc_[uc] = static_cast<std::int32_t>(s.touched.size());
          s.touched.push_back(c);
          s.start.push_back(0);
          load_[uc] = 0;
        }
        load_[uc] += wt;
        ++s.start[static_cast<std::size_t>(loc_[uc])];
      }
    }
    const std::size_t T = s.touched.size();
    // Exclusive prefix sum -> offsets; fill the channel -> flows lists.
    std::int64_t acc = 0;
    s.fill.resize(T + 1);
    for (std::size_t i = 0; i < T; ++i) {
      const auto n = s.start[i];
      s.start[i] = acc;
      s.fill[i] = acc;
      acc += n;
    }
    s.start.push_back(acc);
    s.by_channel.resize(static_cast<std::size_t>(acc));
    for (FlowId f : comp.active) {
      rate_[static_cast<std::size_t>(f)] = -1.0;  // unfrozen
      for (ChannelId c : w_.path(f))
        s.by_channel[static_cast<std::size_t>(
            s.fill[static_cast<std::size_t>(loc_[static_cast<std::size_t>(c)])]++)] = f;
    }
    for (ChannelId c : s.touched)
      capr_[static_cast<std::size_t>(c)] = w_.capacity_Bps()[static_cast<std::size_t>(c)];
    s.live.assign(s.touched.begin(), s.touched.end());
    std::size_t unfrozen = comp.active.size();
    while (unfrozen > 0) {
      double best = std::numeric_limits<double>::infinity();
      std::size_t m = 0;
      for (ChannelId c : s.live) {
        const auto uc = static_cast<std::size_t>(c);
        if (load_[uc] <= 0) continue;
        s.live[m++] = c;
        best = std::min(best, std::max(capr_[uc], 0.0) / load_[uc]);
      }
      s.live.resize(m);
      if (m == 0) break;  // cannot happen: every unfrozen flow loads a live channel
      const double thr = best * (1 + 1e-12);
      for (ChannelId c : s.live) {
        const auto uc = static_cast<std::size_t>(c);
        if (load_[uc] <= 0 || std::max(capr_[uc], 0.0) / load_[uc] > thr) continue;
        const auto li = static_cast<std::size_t>(loc_[uc]);
        for (auto i = s.start[li]; i < s.start[li + 1]; ++i) {
          const FlowId f = s.by_channel[static_cast<std::size_t>(i)];
          const auto uf = static_cast<std::size_t>(f);
          if (rate_[uf] >= 0) continue;
          rate_[uf] = best;
          --unfrozen;
          const double wt = w_.weight(f);
          for (ChannelId c2 : w_.path(f)) {
            capr_[static_cast<std::size_t>(c2)] -= best * wt;
            load_[static_cast<std::size_t>(c2)] -= wt;
          }
        }
      }
    }
    for (ChannelId c : s.touched) {
      const auto uc = static_cast<std::size_t>(c);
      const double cap = w_.capacity_Bps()[uc];
      const double util = (cap - std::max(capr_[uc], 0.0)) / cap;
      res_.channel_peak_utilisation[uc] = std::max(res_.channel_peak_utilisation[uc], util);
    }
    double nf = std::numeric_limits<double>::infinity();
    for (FlowId f : comp.active) {
      const auto uf = static_cast<std::size_t>(f);
      if (rate_[uf] > 0) nf = std::min(nf, now + rem_[uf] / rate_[uf]);
    }
    comp.next_finish = nf;
  }

  const Workload& w_;
  EngineOptions opt_;
  SimResult res_;
  std::vector<std::int32_t> npred_, comp_of_flow_, loc_;
  std::vector<std::int64_t> succ_off_;
  std::vector<FlowId> succ_;
  std::vector<Component> comps_;
  std::vector<double> rem_, rate_, ready_, load_, capr_;
  std::vector<std::uint8_t> state_;
  std::vector<std::uint32_t> stamp_, comp_stamp_;
  std::vector<std::int32_t> dirty_;
  std::priority_queue<std::pair<double, FlowId>, std::vector<std::pair<double, FlowId>>,
                      std::greater<>>
      releases_;
  std::priority_queue<FinishEvent, std::vector<FinishEvent>, std::greater<>> finishes_;
  tbb::enumerable_thread_specific<Scratch> scratch_;
  std::int64_t* delivered_ = nullptr;
};

}  // namespace

SimResult simulate(const Workload& w, const EngineOptions& opt) {
  if (!(opt.hop_latency_s >= 0) || !std::isfinite(opt.hop_latency_s))
    throw std::logic_error("simulate: hop latency must be finite and >= 0");
  Engine e(w, opt);
  return e.run();
}

}  // namespace railsim::sim
