#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <utility>

#include "railsim/core/big_vector.hpp"

using railsim::core::BigVector;
using railsim::core::HugePageAllocator;

namespace {

constexpr std::size_t kHuge = HugePageAllocator<double>::kHugePage;
constexpr std::size_t kMin = HugePageAllocator<double>::kMinBytes;

bool aligned_to_huge_page(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % kHuge == 0;
}

}  // namespace

TEST(BigVector, SmallArraysUseTheUsualAllocatorLargeOnesHugePages) {
  EXPECT_FALSE(HugePageAllocator<double>::huge(kMin / sizeof(double) - 1));
  EXPECT_TRUE(HugePageAllocator<double>::huge(kMin / sizeof(double)));
  EXPECT_TRUE(HugePageAllocator<std::uint8_t>::huge(kMin));
  EXPECT_FALSE(HugePageAllocator<std::uint8_t>::huge(kMin - 1));
  BigVector<double> big(3 * kMin / sizeof(double) + 5, 0.0);
  if (RAILSIM_BIG_VECTOR_MMAP) {
    EXPECT_TRUE(aligned_to_huge_page(big.data()));
  }
}

TEST(BigVector, KeepsEveryValueWhileGrowingPastTheThresholdAndShrinking) {
  BigVector<std::int64_t> v;
  const std::size_t n = 3 * kMin / sizeof(std::int64_t) + 12345;  // crosses it while doubling
  for (std::size_t i = 0; i < n; ++i) v.push_back(static_cast<std::int64_t>(i) * 7 - 3);
  ASSERT_EQ(v.size(), n);
  for (std::size_t i = 0; i < n; i += 997) EXPECT_EQ(v[i], static_cast<std::int64_t>(i) * 7 - 3);
  EXPECT_EQ(v.back(), static_cast<std::int64_t>(n - 1) * 7 - 3);
  std::int64_t sum = std::accumulate(v.begin(), v.end(), std::int64_t{0});
  const auto m = static_cast<std::int64_t>(n);
  EXPECT_EQ(sum, 7 * m * (m - 1) / 2 - 3 * m);
  // Shrinking below the threshold moves the values to small storage.
  v.resize(10);
  v.shrink_to_fit();
  EXPECT_EQ(v.capacity(), 10u);
  EXPECT_EQ(v[9], 60);
  // Moving and swapping hand the storage over (allocators compare equal).
  BigVector<std::int64_t> w(kMin / sizeof(std::int64_t) * 2, 42);
  const auto* data = w.data();
  BigVector<std::int64_t> moved = std::move(w);
  EXPECT_EQ(moved.data(), data);
  moved.swap(v);
  EXPECT_EQ(v.data(), data);
  EXPECT_EQ(moved.size(), 10u);
  EXPECT_TRUE(HugePageAllocator<int>{} == HugePageAllocator<double>{});
}

TEST(BigVector, ImpossibleSizesThrowInsteadOfWrapping) {
  HugePageAllocator<double> a;
  EXPECT_THROW((void)a.allocate(static_cast<std::size_t>(-1) / 4), std::bad_array_new_length);
}
