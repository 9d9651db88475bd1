#include "railsim/fail/monte_carlo.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <thread>

#include "railsim/core/cancel.hpp"
#include "railsim/core/checks.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/fail/rng.hpp"
#include "railsim/report/format.hpp"
#include "railsim/report/progress.hpp"

namespace railsim::fail {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kHoursPerYear = 8766.0;  // 365.25 days
}  // namespace

TrialWorkspace::TrialWorkspace(const FailureModel& m) {
  double c = 0;
  cumulative_rate_.reserve(m.streams.size());
  for (const EventStream& s : m.streams) cumulative_rate_.push_back(c += s.rate_per_s);
  events_.assign(m.streams.size(), 0);
  // Domains out at once stay near mean_domains_in_repair (within the spares, by their sizing);
  // beyond this capacity the queue grows (allocates) and the trial is still right.
  const double mean = m.mean_domains_in_repair();
  repairs_.reserve(static_cast<std::size_t>(
      std::min(1e7, 4.0 * (mean + static_cast<double>(m.spare_domains)) + 256.0)));
  degraded_.reserve(256);
}

namespace detail {

// One trial of the run model as a state machine over events: running (with checkpoints), restarting
// or waiting for a repaired domain; failures arrive from the streams, degraded periods end, and
// domains come back from repair (a min-heap of return times in the workspace).
class Trial {
 public:
  Trial(const FailureModel& m, std::uint64_t seed, std::uint64_t trial, TrialWorkspace& ws)
      : m_(m),
        ws_(ws),
        rng_(seed, trial),
        W_(m.run_s),
        tau_(m.checkpoint_interval_s),
        cycle_(m.checkpoint_interval_s + m.checkpoint_write_s),
        R_(m.restart_s),
        S_(m.spare_domains),
        swap_(m.policy == DegradedPolicy::swap_at_checkpoint),
        total_rate_(ws.cumulative_rate_.empty() ? 0.0 : ws.cumulative_rate_.back()),
        repairs_(ws.repairs_),
        degraded_(ws.degraded_) {
    repairs_.clear();
    degraded_.clear();
    std::fill(ws.events_.begin(), ws.events_.end(), 0);
    r_.wall_s = W_;
    next_fail_ = total_rate_ > 0 ? rng_.exponential(total_rate_) : kInf;
  }

  TrialResult run() {
    for (std::uint64_t step = 1;; ++step) {
      if ((step & 0xffff) == 0) check_cancelled();
      double d_state = kInf;
      if (st_ == State::run) {
        if (swap_ && swappable_ > 0) d_state = cycle_ - phase_;
      } else if (st_ == State::restart) {
        d_state = restart_left_;
      } else {
        d_state = repairs_.empty() ? 0.0 : repairs_.front() - t_;  // waiting: domains out > spares
      }
      double d = W_ - t_;
      Next what = Next::end;
      if (d_state < d) d = d_state, what = Next::state;
      if (degraded_end_ - t_ < d) d = degraded_end_ - t_, what = Next::degraded_end;
      if (next_fail_ - t_ < d) d = next_fail_ - t_, what = Next::failure;
      d = std::max(d, 0.0);

      if (st_ == State::run) {
        if (what == Next::state)
          complete_cycle();
        else
          advance_cycles(d);
      } else if (st_ == State::restart) {
        r_.restart_s += d;
        restart_left_ -= d;
      } else {
        r_.wait_s += d;
      }
      t_ = what == Next::end ? W_ : t_ + d;
      if (what == Next::end) break;
      if (what == Next::state)
        state_ends();
      else if (what == Next::degraded_end)
        degraded_ends();
      else
        failure();
    }
    // The run ends with the state of its last step saved (a final checkpoint not charged).
    r_.productive_s += pending_;
    return r_;
  }

 private:
  enum class State { run, restart, wait };
  enum class Next { end, state, degraded_end, failure };

  void pop_repairs(double now) {
    while (!repairs_.empty() && repairs_.front() <= now) {
      std::pop_heap(repairs_.begin(), repairs_.end(), later_);
      repairs_.pop_back();
    }
  }
  std::int64_t free_spares() const { return S_ - static_cast<std::int64_t>(repairs_.size()); }
  void send_to_repair(std::int64_t domains, double until) {
    for (std::int64_t k = 0; k < domains; ++k) {
      repairs_.push_back(until);
      std::push_heap(repairs_.begin(), repairs_.end(), later_);
    }
  }
  void refresh_degraded() {
    slowdown_ = 1.0;
    degraded_end_ = kInf;
    swappable_ = 0;
    for (const auto& d : degraded_) {
      slowdown_ = std::max(slowdown_, d.slowdown);
      degraded_end_ = std::min(degraded_end_, d.end_s);
      swappable_ += d.domains > 0 ? 1 : 0;
    }
  }
  // Degraded domains go to repair while spares allow; true when any did.
  bool swap_degraded(double now) {
    pop_repairs(now);
    bool any = false;
    for (std::size_t i = 0; i < degraded_.size();) {
      if (degraded_[i].domains > 0 && degraded_[i].domains <= free_spares()) {
        send_to_repair(degraded_[i].domains, degraded_[i].end_s);
        degraded_[i] = degraded_.back();
        degraded_.pop_back();
        any = true;
      } else {
        ++i;
      }
    }
    if (any) refresh_degraded();
    return any;
  }
  void begin_restart(double now) {
    if (swap_) swap_degraded(now);
    pop_repairs(now);
    if (free_spares() >= 0) {
      st_ = State::restart;
      restart_left_ = R_;
    } else {
      st_ = State::wait;
      ++r_.waits;
    }
  }
  // Running-and-checkpointing for dt at the current speed, across any number of cycles.
  void advance_cycles(double dt) {
    const double s = 1.0 / slowdown_;
    const double ran_before = std::min(phase_, tau_);
    const double total = phase_ + dt;
    const double n = std::floor(total / cycle_);
    const double rem = std::max(0.0, total - n * cycle_);
    const double ran = n * tau_ + std::min(rem, tau_) - ran_before;
    r_.checkpoint_s += dt - ran;
    r_.degraded_s += ran * (1.0 - s);
    if (n >= 1) {
      r_.productive_s += pending_ + s * (n * tau_ - ran_before);
      pending_ = s * std::min(rem, tau_);
      r_.checkpoints += static_cast<std::int64_t>(n);
    } else {
      pending_ += s * ran;
    }
    phase_ = rem;
  }
  // The rest of the current cycle, ending exactly at its checkpoint's completion.
  void complete_cycle() {
    const double s = 1.0 / slowdown_;
    const double ran = tau_ - std::min(phase_, tau_);
    r_.checkpoint_s += (cycle_ - phase_) - ran;
    r_.degraded_s += ran * (1.0 - s);
    r_.productive_s += pending_ + s * ran;
    pending_ = 0;
    phase_ = 0;
    ++r_.checkpoints;
  }
  // The current state's own end: a checkpoint with degraded domains to swap, a restart done, or
  // a repaired domain back while waiting.
  void state_ends() {
    if (st_ == State::run) {  // a checkpoint completed with degraded domains to swap
      if (swap_degraded(t_)) {
        ++r_.planned_restarts;
        st_ = State::restart;
        restart_left_ = R_;
      }
    } else if (st_ == State::restart) {
      st_ = State::run;
      phase_ = 0;
      pending_ = 0;
    } else {
      pop_repairs(t_);
      if (free_spares() >= 0) {
        st_ = State::restart;
        restart_left_ = R_;
      }
    }
  }
  void degraded_ends() {
    for (std::size_t i = 0; i < degraded_.size();) {
      if (degraded_[i].end_s <= t_) {
        degraded_[i] = degraded_.back();
        degraded_.pop_back();
      } else {
        ++i;
      }
    }
    refresh_degraded();
  }
  // A failure of the stream drawn by its rate: an interruption (its domains to repair, the work
  // since the checkpoint lost, a restart) or a degradation (a slowdown until its repair).
  void failure() {
    const double u = rng_.uniform_open0() * total_rate_;
    const auto it = std::lower_bound(ws_.cumulative_rate_.begin(), ws_.cumulative_rate_.end(), u);
    const std::size_t k = std::min<std::size_t>(
        static_cast<std::size_t>(it - ws_.cumulative_rate_.begin()), m_.streams.size() - 1);
    ++ws_.events_[k];
    const FailureEffect& e = m_.streams[k].effect;
    if (e.interrupts) {
      send_to_repair(e.domains_lost, t_ + e.repair_s);
      if (st_ != State::wait) {
        ++r_.interruptions;
        if (st_ == State::run) {
          r_.rework_s += pending_;
          pending_ = 0;
          phase_ = 0;
        }
        begin_restart(t_);
      }
    } else {
      ++r_.degradations;
      if (e.repair_s > 0) {
        degraded_.push_back({t_ + e.repair_s, e.slowdown, e.domains_lost});
        refresh_degraded();
      }
    }
    next_fail_ = t_ + rng_.exponential(total_rate_);
  }

  const FailureModel& m_;
  TrialWorkspace& ws_;
  TrialRng rng_;
  const double W_, tau_, cycle_, R_;  // run, checkpoint interval, interval + write, restart
  const std::int64_t S_;              // spare domains
  const bool swap_;
  const double total_rate_;
  const std::greater<double> later_{};
  std::vector<double>& repairs_;  // min-heap of return times
  std::vector<TrialWorkspace::Degraded>& degraded_;
  TrialResult r_;
  State st_ = State::run;
  double t_ = 0;
  double phase_ = 0;    // position in the run-then-checkpoint cycle, [0, cycle)
  double pending_ = 0;  // work since the last completed checkpoint (full-speed seconds)
  double restart_left_ = 0;
  double slowdown_ = 1.0;
  double degraded_end_ = kInf;
  std::int64_t swappable_ = 0;  // degraded records holding domains
  double next_fail_ = kInf;
};

}  // namespace detail

TrialResult simulate_trial(const FailureModel& m, std::uint64_t seed, std::uint64_t trial,
                           TrialWorkspace& ws) {
  return detail::Trial(m, seed, trial, ws).run();
}

void validate(const MonteCarloOptions& o) {
  check_integer("--trials", o.trials, 1, 10'000'000);
  check_threads("--threads", o.threads);
}

Stats stats_of(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  const double n = static_cast<double>(v.size());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
  std::sort(v.begin(), v.end());
  auto q = [&](double p) {
    const double pos = p * (n - 1);
    const auto i = static_cast<std::size_t>(std::floor(pos));
    const std::size_t j = std::min(i + 1, v.size() - 1);
    return v[i] + (pos - static_cast<double>(i)) * (v[j] - v[i]);
  };
  s.p5 = q(0.05);
  s.p50 = q(0.50);
  s.p95 = q(0.95);
  return s;
}

double GoodputResult::ettr_standard_error() const {
  return trials > 0 ? ettr.stddev / std::sqrt(static_cast<double>(trials)) : 0.0;
}

GoodputResult run_goodput(const FailureModel& m, const MonteCarloOptions& o) {
  validate(o);
  const double per_trial = m.rate_per_s() * m.run_s;
  if (static_cast<double>(o.trials) * per_trial > kMaxGoodputEvents)
    throw InputError(
        "--trials",
        fmt::format("{} trials of about {} failure events each ({:.2g} events) exceed one run's "
                    "budget of {:.0g} events (about two minutes on two cores); take at most {} "
                    "trials (the ETTR's standard error falls as 1/sqrt(trials))",
                    report::thousands(static_cast<double>(o.trials)), report::thousands(per_trial),
                    static_cast<double>(o.trials) * per_trial, kMaxGoodputEvents,
                    report::thousands(std::floor(kMaxGoodputEvents / std::max(per_trial, 1.0)))));
  const auto n = static_cast<std::size_t>(o.trials);
  const std::size_t ns = m.streams.size();
  std::vector<TrialResult> trials(n);
  std::vector<std::int64_t> events(n * ns);
  std::atomic<std::int64_t> done{0};
  const std::thread::id owner = std::this_thread::get_id();
  auto body = [&](const tbb::blocked_range<std::size_t>& range) {
    TrialWorkspace ws(m);
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      check_cancelled();
      trials[i] = simulate_trial(m, o.seed, i, ws);
      std::copy(ws.events().begin(), ws.events().end(),
                events.begin() + static_cast<std::ptrdiff_t>(i * ns));
    }
    if (o.progress == nullptr) return;
    const auto size = static_cast<std::int64_t>(range.size());
    const std::int64_t d = done.fetch_add(size, std::memory_order_relaxed) + size;
    if (std::this_thread::get_id() == owner) o.progress->update(d, o.trials);
  };
  const tbb::blocked_range<std::size_t> all(0, n, 16);
  with_threads(o.threads, [&] { tbb::parallel_for(all, body); });
  if (o.progress != nullptr) o.progress->update(o.trials, o.trials);

  // Aggregated in trial order: the same sums whatever ran where.
  GoodputResult g;
  g.model = m;
  g.trials = o.trials;
  g.seed = o.seed;
  std::vector<double> v(n);
  auto stats = [&](auto field) {
    for (std::size_t i = 0; i < n; ++i) v[i] = field(trials[i]);
    return stats_of(v);
  };
  g.ettr = stats([](const TrialResult& t) { return t.ettr(); });
  g.interruptions = stats([](const TrialResult& t) { return double(t.interruptions); });
  g.planned_restarts = stats([](const TrialResult& t) { return double(t.planned_restarts); });
  g.degradations = stats([](const TrialResult& t) { return double(t.degradations); });
  const double gpus = static_cast<double>(m.gpus);
  auto mean_gpu_h = [&](auto field) {
    double s = 0;
    for (const TrialResult& t : trials) s += field(t);
    return s / static_cast<double>(n) * gpus / 3600.0;
  };
  std::int64_t waits = 0;
  for (const TrialResult& t : trials) waits += t.waits;
  g.waits_mean = static_cast<double>(waits) / static_cast<double>(n);
  g.wall_gpu_h = mean_gpu_h([](const TrialResult& t) { return t.wall_s; });
  g.productive_gpu_h = mean_gpu_h([](const TrialResult& t) { return t.productive_s; });
  g.checkpoint_gpu_h = mean_gpu_h([](const TrialResult& t) { return t.checkpoint_s; });
  g.rework_gpu_h = mean_gpu_h([](const TrialResult& t) { return t.rework_s; });
  g.restart_gpu_h = mean_gpu_h([](const TrialResult& t) { return t.restart_s; });
  g.wait_gpu_h = mean_gpu_h([](const TrialResult& t) { return t.wait_s; });
  g.degraded_gpu_h = mean_gpu_h([](const TrialResult& t) { return t.degraded_s; });
  g.mean_events.assign(ns, 0.0);
  for (std::size_t k = 0; k < ns; ++k) {
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += events[i * ns + k];
    g.mean_events[k] = static_cast<double>(sum) / static_cast<double>(n);
  }
  return g;
}

TimeToTrain time_to_train(const GoodputResult& r, double tokens, double tokens_per_s) {
  check_number("--tokens", tokens, Range::positive(1e30));
  check_number("--tokens-per-s", tokens_per_s, Range::positive(1e30));
  TimeToTrain t;
  const double ideal_s = tokens / tokens_per_s;
  auto days = [&](double ettr) { return ettr > 0 ? ideal_s / ettr / 86400.0 : kInf; };
  t.ideal_days = ideal_s / 86400.0;
  t.days_mean = days(r.ettr.mean);
  t.days_fast = days(r.ettr.p95);
  t.days_slow = days(r.ettr.p5);
  return t;
}

double network_cost_per_effective_gpu_hour(const GoodputResult& r, double network_cost_usd,
                                           double years) {
  check_number("--amortize-years", years, Range::positive(100));
  const double gpu_h = static_cast<double>(r.model.gpus) * r.ettr.mean * years * kHoursPerYear;
  return gpu_h > 0 ? network_cost_usd / gpu_h : kInf;
}

}  // namespace railsim::fail
