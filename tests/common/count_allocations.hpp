#pragma once
// Replaces the global allocation functions of the test binary that includes this header (include
// it in exactly one file per binary) to count heap allocations, for the "no allocation on the hot
// path" tests: read allocation_count() before and after the code under test.
#include <atomic>
#include <cstdlib>
#include <new>

namespace railsim::test {
inline std::atomic<long> g_allocations{0};
inline long allocation_count() {
  return g_allocations.load();
}
}  // namespace railsim::test

// GCC takes the free() of the operator delete below for a mismatch with operator new; both are
// replaced here, over malloc and free, so they are one pair.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  ++railsim::test::g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop
