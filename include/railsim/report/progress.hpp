#pragma once
// A progress bar for long runs, drawn on a terminal only: nothing at all when the stream is not a
// TTY (a pipe, a file, a test's capture), and nothing before `delay_s` has passed, so that short
// runs and scripted runs print exactly what they did before. Safe to call from many threads.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace railsim::report {

class ProgressBar {
 public:
  // `label` starts the line ("sweep"); `total` is the number of steps.
  ProgressBar(std::FILE* out, std::string label, std::int64_t total, double delay_s = 2.0);
  ~ProgressBar();  // finish()
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // One more step done; redraws at most ten times a second.
  void step();
  // `done` of `total` steps (the total may change: a simulation's phases each have their own
  // flows). For a loop's owner thread: when the stream is not a terminal it returns at once, and
  // otherwise it reads the clock and draws at most ten times a second, so a loop may call it on
  // every step it takes.
  void update(std::int64_t done, std::int64_t total);
  std::int64_t done() const { return done_; }  // steps counted (on a terminal only)
  std::int64_t total() const { return total_; }
  // Erases the bar (when one was drawn) so that what follows starts on a clean line.
  void finish();
  bool enabled() const { return enabled_; }  // the stream is a terminal

  // The text of the bar for `done` of `total` steps after `elapsed_s` (for tests): label, a bar
  // 30 characters wide, the count, the percentage and the estimated time left.
  static std::string line(const std::string& label, std::int64_t done, std::int64_t total,
                          double elapsed_s);

 private:
  std::FILE* out_;
  std::string label_;
  std::int64_t total_, done_ = 0;
  double delay_s_;
  bool enabled_, drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
  std::mutex mutex_;
};

}  // namespace railsim::report
