#pragma once
// How many threads a command's parallel work may use (--threads, or the Python functions'
// `threads`): 0 for all of oneTBB's, otherwise a cap. The output never depends on it.
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace railsim {

// The largest thread count any option takes (RAILSIM_THREADS's too).
inline constexpr std::int64_t kMaxThreads = 4096;

// Throws InputError(option, ...) unless 0 <= threads <= kMaxThreads.
int check_threads(const std::string& option, std::int64_t threads);

// Runs f() on at most `threads` threads (0: every thread oneTBB may use). A count above what
// oneTBB may use (the cores, or RAILSIM_THREADS) is that: oneTBB would print a warning on stderr
// for each arena asking for more and use them anyway.
template <class F>
decltype(auto) with_threads(int threads, F&& f) {
  if (threads <= 0) return f();
  const auto allowed = static_cast<int>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  tbb::task_arena arena(std::min(threads, std::max(allowed, 1)));
  return arena.execute(f);
}

}  // namespace railsim
