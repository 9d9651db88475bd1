// Cancellation (core/cancel.hpp): the flag, what check_cancelled throws, and the clean-up table a
// signal handler empties; the thread cap (core/threads.hpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/threads.hpp"

namespace fs = std::filesystem;
using namespace railsim;

namespace {

// Leaves the flag as found: tests share one process.
struct ResetAfter {
  ~ResetAfter() { reset_cancel(); }
};

}  // namespace

TEST(Cancel, TheFirstRequestIsKeptUntilReset) {
  ResetAfter reset;
  reset_cancel();
  EXPECT_FALSE(cancel_requested());
  EXPECT_NO_THROW(check_cancelled());
  request_cancel(SIGTERM);
  request_cancel(SIGINT);  // a second request keeps the first's signal
  EXPECT_TRUE(cancel_requested());
  EXPECT_EQ(cancel_signal(), SIGTERM);
  try {
    check_cancelled();
    ADD_FAILURE() << "no Cancelled";
  } catch (const Cancelled& c) {
    EXPECT_EQ(c.signal(), SIGTERM);
    EXPECT_STREQ(c.what(), "interrupted");
  }
  reset_cancel();
  EXPECT_FALSE(cancel_requested());
  EXPECT_EQ(cancel_signal(), 0);
  request_cancel();  // a caller's request, no signal
  EXPECT_EQ(cancel_signal(), 0);
  EXPECT_TRUE(cancel_requested());
}

TEST(Cancel, ARequestFromAnotherThreadStopsParallelWork) {
  ResetAfter reset;
  reset_cancel();
  std::atomic<long> done{0};
  std::thread requester([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    request_cancel();
  });
  // Endless unless stopped: the exception leaves oneTBB's loop in the calling thread.
  EXPECT_THROW(tbb::parallel_for(0L, 1L << 62,
                                 [&](long) {
                                   check_cancelled();
                                   ++done;
                                 }),
               Cancelled);
  requester.join();
  EXPECT_GT(done.load(), 0);
}

TEST(Cancel, CleanUpNowRemovesWhatIsRegisteredAndOnlyThat) {
  const fs::path dir =
      fs::temp_directory_path() / ("railsim_cleanup_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "folder");
  const fs::path in_folder = dir / "folder" / "a.tmp", kept = dir / "kept.tmp",
                 released = dir / "released.tmp";
  for (const auto& p : {in_folder, kept, released}) std::ofstream(p) << "x";
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  {
    ExitCleanup folder(ExitCleanup::Kind::folder, (dir / "folder").string());
    ExitCleanup file(ExitCleanup::Kind::file, in_folder.string());
    ExitCleanup process(child);
    ExitCleanup early(ExitCleanup::Kind::file, released.string());
    early.release();  // its owner removed it already (here: it keeps it)
    ExitCleanup too_long(ExitCleanup::Kind::file, std::string(ExitCleanup::kMaxPath + 1, 'x'));
    clean_up_now();
    EXPECT_FALSE(fs::exists(in_folder));
    EXPECT_FALSE(fs::exists(dir / "folder"));  // files first, then the folder
    EXPECT_TRUE(fs::exists(released));
    EXPECT_TRUE(fs::exists(kept));    // never registered
    EXPECT_EQ(::kill(child, 0), -1);  // killed and reaped
    EXPECT_EQ(errno, ESRCH);
  }
  // Unregistered at the end of their scope: nothing is removed any more.
  std::ofstream(in_folder.parent_path().parent_path() / "again.tmp") << "x";
  clean_up_now();
  EXPECT_TRUE(fs::exists(dir / "again.tmp"));
  fs::remove_all(dir);
}

TEST(Cancel, TheTableHoldsAFixedNumberOfRegistrations) {
  // Beyond kSlots, registration is skipped (the owners still clean up): nothing breaks.
  const fs::path dir = fs::temp_directory_path() / ("railsim_slots_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<std::unique_ptr<ExitCleanup>> regs;
  for (int i = 0; i < ExitCleanup::kSlots + 8; ++i) {
    const fs::path p = dir / std::to_string(i);
    std::ofstream(p) << "x";
    regs.push_back(std::make_unique<ExitCleanup>(ExitCleanup::Kind::file, p.string()));
  }
  clean_up_now();
  int left = 0;
  for (const auto& e : fs::directory_iterator(dir)) (void)e, ++left;
  EXPECT_EQ(left, 8);
  regs.clear();
  fs::remove_all(dir);
}

TEST(Threads, OneBoundForEveryCountAndACapAtWhatTheMachineHas) {
  EXPECT_EQ(check_threads("--threads", 0), 0);
  EXPECT_EQ(check_threads("--threads", kMaxThreads), kMaxThreads);
  EXPECT_THROW(check_threads("--threads", kMaxThreads + 1), InputError);
  EXPECT_THROW(check_threads("--threads", -1), InputError);
  // More threads than there are: as many as there are (oneTBB would warn on stderr).
  const int most = with_threads(4096, [] { return tbb::this_task_arena::max_concurrency(); });
  EXPECT_LE(most, static_cast<int>(tbb::global_control::active_value(
                      tbb::global_control::max_allowed_parallelism)));
  EXPECT_EQ(with_threads(1, [] { return tbb::this_task_arena::max_concurrency(); }), 1);
}
