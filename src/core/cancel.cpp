#include "railsim/core/cancel.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>

namespace railsim {

namespace {

// A slot's state: free, being written (skipped by clean_up_now), or holding a registration.
enum State : int { kFree = 0, kBusy = 1, kFile = 2, kFolder = 3, kProcess = 4 };

struct Slot {
  std::atomic<int> state{kFree};
  pid_t pid = 0;
  char path[ExitCleanup::kMaxPath + 1] = {};
};

// Static storage: nothing is allocated, so a handler may read it at any moment.
std::array<Slot, ExitCleanup::kSlots> g_slots;

int claim() noexcept {
  for (int i = 0; i < ExitCleanup::kSlots; ++i) {
    int expected = kFree;
    if (g_slots[static_cast<std::size_t>(i)].state.compare_exchange_strong(expected, kBusy))
      return i;
  }
  return -1;
}

}  // namespace

ExitCleanup::ExitCleanup(Kind kind, const std::string& path) noexcept {
  if (path.empty() || path.size() > kMaxPath || kind == Kind::process) return;
  slot_ = claim();
  if (slot_ < 0) return;
  Slot& s = g_slots[static_cast<std::size_t>(slot_)];
  std::memcpy(s.path, path.c_str(), path.size() + 1);
  s.state.store(kind == Kind::file ? kFile : kFolder, std::memory_order_release);
}

ExitCleanup::ExitCleanup(pid_t pid) noexcept {
  if (pid <= 0) return;
  slot_ = claim();
  if (slot_ < 0) return;
  Slot& s = g_slots[static_cast<std::size_t>(slot_)];
  s.pid = pid;
  s.state.store(kProcess, std::memory_order_release);
}

ExitCleanup::~ExitCleanup() {
  release();
}

void ExitCleanup::release() noexcept {
  if (slot_ < 0) return;
  g_slots[static_cast<std::size_t>(slot_)].state.store(kFree, std::memory_order_release);
  slot_ = -1;
}

void clean_up_now() noexcept {
  // Processes first (a running gnuplot may still be writing into a folder), then files, then the
  // folders that held them.
  for (const int want : {kProcess, kFile, kFolder})
    for (Slot& s : g_slots) {
      if (s.state.load(std::memory_order_acquire) != want) continue;
      if (want == kProcess) {
        ::kill(s.pid, SIGKILL);
        ::waitpid(s.pid, nullptr, 0);  // gone before its files are removed
      } else if (want == kFile)
        ::unlink(s.path);
      else
        ::rmdir(s.path);
    }
}

}  // namespace railsim
