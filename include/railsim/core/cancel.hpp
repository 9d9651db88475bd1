#pragma once
// Stopping long work early, and cleaning up when it stops.
//
// Cancellation is cooperative and process-wide: request_cancel() (safe in a signal handler) sets
// one flag, and every potentially long loop of the library (the flow simulator's events, the flow
// builders, plan searches, sweeps, the goodput Monte Carlo, the optimizer's candidates, traffic
// matrices, Fabric building, waiting for gnuplot) calls check_cancelled() often enough to stop
// within a fraction of a second; it throws Cancelled, whose unwinding removes temporary files and
// stops child processes. The front ends decide what raises the flag: the program's SIGINT, SIGTERM
// and SIGHUP (apps/railsim/main.cpp), Python's Ctrl-C during a call (python/), or any thread of a
// C++ caller. The flag stays raised until reset_cancel().
//
// For an exit that cannot wait for unwinding (a second signal), ExitCleanup keeps what must not
// be left behind (temporary files and folders, child processes) in a fixed table that
// clean_up_now() empties with async-signal-safe calls only.
#include <sys/types.h>

#include <atomic>
#include <exception>
#include <string>

namespace railsim {

// Thrown by check_cancelled() once cancellation was requested; `signal()` is the signal that
// requested it (0: none, a caller's request).
class Cancelled : public std::exception {
 public:
  explicit Cancelled(int signal) noexcept : signal_(signal) {}
  int signal() const noexcept { return signal_; }
  const char* what() const noexcept override { return "interrupted"; }

 private:
  int signal_;
};

namespace detail {
// -1: no cancellation requested; otherwise the signal that requested it (0: none).
inline constinit std::atomic<int> g_cancel_signal{-1};
static_assert(std::atomic<int>::is_always_lock_free, "request_cancel must be signal-safe");
}  // namespace detail

// Async-signal-safe. The first request's signal is kept.
inline void request_cancel(int signal = 0) noexcept {
  int expected = -1;
  detail::g_cancel_signal.compare_exchange_strong(expected, signal < 0 ? 0 : signal);
}
inline bool cancel_requested() noexcept {
  return detail::g_cancel_signal.load(std::memory_order_relaxed) >= 0;
}
// The signal of the request (0 for none, or when no cancellation was requested).
inline int cancel_signal() noexcept {
  const int s = detail::g_cancel_signal.load(std::memory_order_relaxed);
  return s < 0 ? 0 : s;
}
inline void reset_cancel() noexcept {
  detail::g_cancel_signal.store(-1);
}
// Cheap (one relaxed load): call it in every loop that may run for long.
inline void check_cancelled() {
  if (cancel_requested()) throw Cancelled(cancel_signal());
}

// Registers, for its lifetime, a temporary file, a temporary folder (removed after the files) or
// a child process (sent SIGKILL) for clean_up_now(). Registration is best effort: paths longer
// than kMaxPath, or more than kSlots at once, are not registered (their owners still remove them
// on every ordinary exit, exceptions included).
class ExitCleanup {
 public:
  enum class Kind { file, folder, process };
  static constexpr int kSlots = 64;
  static constexpr std::size_t kMaxPath = 4096;
  ExitCleanup(Kind kind, const std::string& path) noexcept;
  ExitCleanup(pid_t pid) noexcept;  // Kind::process
  ~ExitCleanup();
  ExitCleanup(const ExitCleanup&) = delete;
  ExitCleanup& operator=(const ExitCleanup&) = delete;
  // Forgets the registration early (the owner removed the thing itself).
  void release() noexcept;

 private:
  int slot_ = -1;
};

// Async-signal-safe: sends SIGKILL to every registered process, then unlinks every registered
// file, then removes every registered folder (empty by then). For a signal handler about to end
// the process.
void clean_up_now() noexcept;

}  // namespace railsim
