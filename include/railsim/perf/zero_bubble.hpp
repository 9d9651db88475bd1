#pragma once
// The ZB-V pipeline schedule (Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, Sec. 6):
// the model cut into 2 p chunks laid out in a V, GPU r of the p holding chunks r and 2 p - 1 - r,
// every pass split into a forward F, an input-gradient pass I and a weight-gradient pass W. Its
// operations run in the order PyTorch's ScheduleZBVZeroBubble issues them
// (torch.distributed.pipelining, PyTorch 2.6); its bubble is zero only when F = I = W, so for
// other costs railsim times that order by its dependencies.
#include <cstdint>

namespace railsim::perf {

// The deepest ZB-V pipeline railsim times (perf::validate refuses deeper ones).
inline constexpr std::int64_t kZbvMaxStages = 512;

// Whether ZB-V can run `layers` layers on `pp` stages: 2 pp chunks of at least one layer each
// (Qi et al. 2024, Sec. 6), up to kZbvMaxStages stages. perf::validate's rule, which names the
// failing part, and the search's filter.
constexpr bool zbv_fits(std::int64_t layers, std::int64_t pp) {
  return pp <= kZbvMaxStages && layers >= 2 * pp;
}

// The span of the ZB-V order on p GPUs for m micro-batches, first forward to last weight pass,
// whose chunk passes take f (forward), i (input gradient, recomputation included) and w (weight
// gradient) seconds; 0 for p < 2 or m < 1. Allocation-free after the first call of a thread at a
// given size.
double zbv_span(std::int64_t p, std::int64_t m, double f, double i, double w);

// Idle time of the ZB-V order on the busiest GPU: the span less one GPU's work, m x 2 (f + i + w).
// From 2 p - 1 micro-batches on the order is periodic and the idle time no longer depends on m;
// it grows by the same amount with each further stage, from 2 stages on when m >= 2 p - 1 and
// from m + 2 stages on otherwise (tests check both against zbv_span). So at most 2 p - 1
// micro-batches are timed, on at most 4 GPUs when m >= 2 p - 1 and max(6, m + 2) otherwise:
// 6 p m passes at most, bounded by kZbvMaxStages.
double zbv_idle(std::int64_t p, std::int64_t m, double f, double i, double w);

}  // namespace railsim::perf
