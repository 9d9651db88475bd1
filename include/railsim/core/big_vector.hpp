#pragma once
// Storage for arrays of millions of entries (the flow simulator's per-flow state): an allocation
// of 2 MiB or more is mapped on its own, aligned to 2 MiB, and advised to the kernel as
// transparent huge pages (madvise MADV_HUGEPAGE, for Linux's "madvise" mode of
// transparent_hugepage). One 2 MiB page then backs what 512 pages of 4 KiB would: 512 times fewer
// page faults when the array is first written, and TLB entries that cover the array when it is
// read at random (the 4,096-GPU all-to-all of docs/sim.md ran 1.6 times faster). Smaller
// allocations, and every allocation under AddressSanitizer, go to the usual allocator. Where the
// kernel has no huge pages to give, the advice is ignored and the memory is ordinary.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
#include <sys/mman.h>
#if defined(MADV_HUGEPAGE)
#define RAILSIM_BIG_VECTOR_MMAP 1
#endif
#endif
#ifndef RAILSIM_BIG_VECTOR_MMAP
#define RAILSIM_BIG_VECTOR_MMAP 0  // the usual allocator (and AddressSanitizer's checks)
#endif

namespace railsim::core {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{1} << 21;
  // From one huge page: the flow simulator's per-component arrays of a few MiB gain as much as
  // its largest ones.
  static constexpr std::size_t kMinBytes = kHugePage;

  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding converts

  static bool huge(std::size_t n) { return n >= kMinBytes / sizeof(T); }

  T* allocate(std::size_t n) {
    if (!huge(n)) return std::allocator<T>{}.allocate(n);
    if (n > (static_cast<std::size_t>(-1) - 2 * kHugePage) / sizeof(T))
      throw std::bad_array_new_length();
#if RAILSIM_BIG_VECTOR_MMAP
    // Mapped directly, 2 MiB-aligned: a freed array goes back to the system at once instead of
    // staying in the allocator's heap, where huge pages would keep it resident.
    const std::size_t len = mapped_length(n);
    void* m = ::mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    const auto base = reinterpret_cast<std::uintptr_t>(m);
    const std::uintptr_t aligned = (base + kHugePage - 1) & ~(std::uintptr_t{kHugePage} - 1);
    if (aligned > base) ::munmap(m, aligned - base);
    if (const std::size_t tail = base + kHugePage - aligned; tail > 0)
      ::munmap(reinterpret_cast<void*>(aligned + len), tail);
    // Only the whole huge pages the array fills: its tail keeps small pages, so that a 2 MiB page
    // is never backed for a few bytes. Advice only: ignored where THP is off.
    ::madvise(reinterpret_cast<void*>(aligned), n * sizeof(T) / kHugePage * kHugePage,
              MADV_HUGEPAGE);
    return reinterpret_cast<T*>(aligned);
#else
    return std::allocator<T>{}.allocate(n);
#endif
  }
  void deallocate(T* p, std::size_t n) noexcept {
#if RAILSIM_BIG_VECTOR_MMAP
    if (huge(n)) {
      ::munmap(p, mapped_length(n));
      return;
    }
#endif
    std::allocator<T>{}.deallocate(p, n);
  }

 private:
  static std::size_t mapped_length(std::size_t n) {
    constexpr std::size_t page = 4096;
    return (n * sizeof(T) + page - 1) / page * page;
  }

 public:
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace railsim::core
