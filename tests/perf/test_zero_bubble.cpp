// The ZB-V order (Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, Sec. 6, in the order
// PyTorch's ScheduleZBVZeroBubble issues): timed by its dependencies for any forward,
// input-gradient and weight-gradient costs, and the two shortcuts zbv_idle takes (idle time
// independent of m from 2 p - 1 micro-batches, linear in p past a depth) checked against the
// whole order.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "railsim/perf/zero_bubble.hpp"

using railsim::perf::zbv_idle;
using railsim::perf::zbv_span;

namespace {
struct ZbvCosts {
  double f, i, w;
};
// Chunk costs from the GEMM-bound 1 : 1 : 1 to attention-heavy and recompute-heavy passes.
constexpr std::array<ZbvCosts, 6> kZbvCosts{{{1.0, 1.0, 1.0},
                                             {1.0, 1.3, 0.9},
                                             {1.0, 2.4, 0.6},
                                             {0.7, 1.8, 0.8},
                                             {1.9, 2.9, 0.2},
                                             {0.4, 1.0, 1.7}}};

double zbv_idle_of_whole_order(std::int64_t p, std::int64_t m, const ZbvCosts& c) {
  return zbv_span(p, m, c.f, c.i, c.w) - static_cast<double>(m) * 2.0 * (c.f + c.i + c.w);
}
}  // namespace

// With equal passes ZB-V has no bubble but the last GPU's start (p - 1 forward chunks after the
// first's), whatever the number of micro-batches past 2 p - 1: Qi et al.'s "zero bubble" counted
// over one iteration.
TEST(ZeroBubbleV, EqualPassesLeaveOnlyTheLastGpusLateStart) {
  for (std::int64_t p : {2, 4, 8, 16})
    for (std::int64_t m : {2 * p - 1, 2 * p, 5 * p}) {
      EXPECT_DOUBLE_EQ(zbv_idle_of_whole_order(p, m, {1.0, 1.0, 1.0}), static_cast<double>(p - 1))
          << "p " << p << " m " << m;
      EXPECT_DOUBLE_EQ(zbv_idle(p, m, 2.0, 2.0, 2.0), 2.0 * static_cast<double>(p - 1));
    }
}

// One micro-batch goes down and back up the V: 2 p forward chunks, 2 p input-gradient chunks and
// two weight passes on its critical path (GPU p - 1 runs its chunk-1 weight pass between the two
// input-gradient passes, as the order puts it).
TEST(ZeroBubbleV, OneMicroBatchIsTheRoundTripOfTheV) {
  for (std::int64_t p : {2, 3, 8})
    for (const ZbvCosts& c : kZbvCosts)
      EXPECT_NEAR(zbv_span(p, 1, c.f, c.i, c.w),
                  2.0 * static_cast<double>(p) * (c.f + c.i) + 2.0 * c.w, 1e-12);
}

// The shortcuts against the whole order: from 2 p - 1 micro-batches on the idle time does not
// depend on m, and deep pipelines (p past 4, or past max(6, m + 2) with fewer micro-batches than
// 2 p - 1) add the same idle time per stage.
TEST(ZeroBubbleV, ShortcutsMatchTheWholeOrder) {
  for (const ZbvCosts& c : kZbvCosts) {
    for (std::int64_t p : {2, 3, 4, 5, 6, 7, 8, 12})
      for (std::int64_t m : {1, 2, 3, 7, 2 * static_cast<int>(p) - 1, 4 * static_cast<int>(p) + 3})
        EXPECT_NEAR(zbv_idle(p, m, c.f, c.i, c.w), zbv_idle_of_whole_order(p, m, c), 1e-9)
            << "p " << p << " m " << m;
    for (std::int64_t p : {17, 24, 40})
      for (std::int64_t m : {1, 6, 20, 2 * static_cast<int>(p) - 1, 2 * static_cast<int>(p) + 5})
        EXPECT_NEAR(zbv_idle(p, m, c.f, c.i, c.w), zbv_idle_of_whole_order(p, m, c),
                    1e-9 * static_cast<double>(p))
            << "p " << p << " m " << m;
  }
}

// What ZB-V buys: at least the last GPU's late start and less than 1F1B's (p - 1)(F + B); no more
// than ZB-H1's (p - 1)(F + B - 2W) wherever that formula leaves more than the late start (weight
// passes as long as the input-gradient and forward ones together leave ZB-H1 nothing to fill).
TEST(ZeroBubbleV, BubbleLiesBetweenTheLateStartAndZeroBubbleH1) {
  for (const ZbvCosts& c : kZbvCosts)
    for (std::int64_t p : {4, 8, 16}) {
      const double pm1 = static_cast<double>(p - 1);
      // Stage passes: F = 2 f, B = 2 (i + w), W = 2 w.
      const double zb_h1 = pm1 * (2.0 * c.f + 2.0 * c.i - 2.0 * c.w);
      const double one_f_one_b = pm1 * 2.0 * (c.f + c.i + c.w);
      const double v = zbv_idle(p, 4 * p, c.f, c.i, c.w);
      EXPECT_GE(v, pm1 * c.f - 1e-9);
      EXPECT_LT(v, one_f_one_b);
      if (zb_h1 >= pm1 * c.f) {
        EXPECT_LE(v, zb_h1 + 1e-9) << "f " << c.f << " i " << c.i;
      }
    }
  // Equal passes: half of ZB-H1's bubble (p - 1) F / 2 against (p - 1) F, a sixth of 1F1B's.
  EXPECT_DOUBLE_EQ(zbv_idle(8, 32, 1.0, 1.0, 1.0), 7.0);
  EXPECT_EQ(zbv_idle(1, 8, 1.0, 1.0, 1.0), 0.0);
  EXPECT_EQ(zbv_idle(4, 0, 1.0, 1.0, 1.0), 0.0);
}
