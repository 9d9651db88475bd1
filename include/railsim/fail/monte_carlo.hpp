#pragma once
// Monte Carlo of a long training run under failures (the run model of model.hpp): each trial is
// event-driven (the superposed Poisson streams, checkpoint completions, restarts, repairs, the end
// of a degradation), draws from its own counter-based stream (rng.hpp), and does not allocate;
// trials run in parallel (oneTBB) and the results are the same, bit for bit, whatever the thread
// count.
#include <cstdint>
#include <optional>
#include <vector>

#include "railsim/fail/model.hpp"

namespace railsim::report {
class ProgressBar;
}

namespace railsim::fail {

// One trial: the run's wall time split by what the job was doing (the parts add up to wall_s).
struct TrialResult {
  double wall_s = 0;
  double productive_s = 0;         // work kept (at full speed), the uncheckpointed tail included
  double checkpoint_s = 0;         // writing checkpoints
  double rework_s = 0;             // work lost to interruptions: done again
  double restart_s = 0;            // detection and restart, after interruptions and planned swaps
  double wait_s = 0;               // no spare domain free: waiting for a repair
  double degraded_s = 0;           // running degraded: the (1 - 1/slowdown) part of that time
  std::int64_t interruptions = 0;  // failures that stopped the running or restarting job
  std::int64_t planned_restarts = 0;  // degraded domains swapped for spares at a checkpoint
  std::int64_t degradations = 0;      // failures the job ran through
  std::int64_t waits = 0;             // restarts that had to wait for a repair
  std::int64_t checkpoints = 0;       // completed

  double ettr() const { return wall_s > 0 ? productive_s / wall_s : 0; }
};

namespace detail {
class Trial;  // the state machine of one trial (src/fail/monte_carlo.cpp)
}  // namespace detail

// Scratch memory of one trial, sized once for a model and reused (simulate_trial does not
// allocate while the repair queue stays within the capacity reserved here).
class TrialWorkspace {
 public:
  explicit TrialWorkspace(const FailureModel& m);
  // Failures per stream in the last trial (the model's stream order).
  const std::vector<std::int64_t>& events() const { return events_; }

 private:
  friend class detail::Trial;
  struct Degraded {
    double end_s;
    double slowdown;
    std::int64_t domains;
  };
  std::vector<double> cumulative_rate_;  // prefix sums of the streams' rates
  std::vector<double> repairs_;          // min-heap of the repair times of domains out
  std::vector<Degraded> degraded_;
  std::vector<std::int64_t> events_;
};

// One trial (trial number `trial` of `seed`).
TrialResult simulate_trial(const FailureModel& m, std::uint64_t seed, std::uint64_t trial,
                           TrialWorkspace& ws);

struct MonteCarloOptions {
  std::int64_t trials = 1000;
  std::uint64_t seed = 1;
  int threads = 0;  // 0: every core
  // When set, told the trials done (by the thread that calls run_goodput; the workers count);
  // not owned, and no part of the results.
  report::ProgressBar* progress = nullptr;
};
// --trials in [1, 10^7], --threads in [0, kMaxThreads] (core/threads.hpp).
void validate(const MonteCarloOptions& o);

// Mean, sample standard deviation and percentiles (linear between order statistics).
struct Stats {
  double mean = 0;
  double stddev = 0;
  double p5 = 0;
  double p50 = 0;
  double p95 = 0;
};
Stats stats_of(std::vector<double> values);

struct GoodputResult {
  FailureModel model;
  std::int64_t trials = 0;
  std::uint64_t seed = 0;
  Stats ettr;  // effective training time ratio: productive / wall
  Stats interruptions;
  Stats planned_restarts;
  Stats degradations;
  double waits_mean = 0;
  // Mean GPU-hours of the job's N GPUs over the run, by where they went.
  double wall_gpu_h = 0;
  double productive_gpu_h = 0;
  double checkpoint_gpu_h = 0;
  double rework_gpu_h = 0;
  double restart_gpu_h = 0;
  double wait_gpu_h = 0;
  double degraded_gpu_h = 0;
  std::vector<double> mean_events;  // per stream of the model

  double ettr_standard_error() const;  // ettr.stddev / sqrt(trials)
};

// The Monte Carlo is bounded before it starts: trials x the expected failure events of one trial
// (rate x run length) at most kMaxGoodputEvents (about two minutes on two cores), else an
// InputError naming --trials with the estimate.
inline constexpr double kMaxGoodputEvents = 2e9;
GoodputResult run_goodput(const FailureModel& m, const MonteCarloOptions& o);

// Days to train `tokens` at `tokens_per_s` (the job's full-speed throughput): the productive time
// divided by the ETTR (mean; and at the ETTR's p95 and p5, the fast and slow ends).
struct TimeToTrain {
  double ideal_days = 0;  // without failures
  double days_mean = 0;
  double days_fast = 0;  // at the ETTR's p95
  double days_slow = 0;  // at the ETTR's p5
};
// Throws InputError naming --tokens / --tokens-per-s for non-positive or non-finite values.
TimeToTrain time_to_train(const GoodputResult& r, double tokens, double tokens_per_s);

// Network cost per effective GPU-hour: the network's price spread over the GPU-hours it serves in
// `years` at the run's mean ETTR (N x ETTR x years x 8766 h). Throws InputError naming
// --amortize-years.
double network_cost_per_effective_gpu_hour(const GoodputResult& r, double network_cost_usd,
                                           double years);

}  // namespace railsim::fail
