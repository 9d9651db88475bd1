#pragma once
// TrafficMatrix: the bytes each GPU sends to each other GPU in one training iteration, tagged by
// parallelism (TP, SP, PP, DP, EP) and by locality (same HB domain, same rail across domains,
// cross rail across domains).
//
// It is built from the strategy's CommSchedule (never from a second description of the
// communication) by expanding every operation into per-pair bytes with the operation's Algorithm,
// exactly as the iteration-time model charges them (docs/traffic.md):
//   ring          member i sends to member i+1 (mod n), in group rank order:
//                 all_reduce 2(n-1)/n B, all_gather and reduce_scatter (n-1)/n B;
//   hierarchical  the group's members in each HB domain run a ring (reduce-scatter, and all-gather
//                 for all_reduce) on B, and the members with the same local rank a ring along
//                 their rail on B/p (p members per domain); a group that does not put the same
//                 number of members in each domain it touches falls back to a flat ring (same
//                 total bytes, only the locality differs);
//   direct        every member sends B/n to every other member (all_to_all; all_reduce sends 2B/n);
//   p2p           stage i sends B to stage i+1 (forward and optimizer phases), stage i+1 to stage
//                 i in the backward phase (activation gradients flow back); interleaved pipelines
//                 also wrap from the last stage to the first wrap_count times.
// Every byte is multiplied by the operation's count. These are the semantics written down in
// perf/comm_schedule.hpp, which perf::wire_bytes() sums; tests check that the two agree.
//
// Storage is sparse: one entry per (src, dst, parallelism) with bytes > 0, sorted by src, dst,
// parallelism; 16 bytes per entry and nothing proportional to N^2. The build is parallel (oneTBB)
// and deterministic: the same inputs give bit-identical entries whatever the thread count.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/spec/cluster.hpp"

namespace railsim::traffic {

enum class Locality : std::uint8_t {
  same_domain,  // both GPUs in one HB domain: carried by NVLink, never by a NIC
  same_rail,    // different HB domains, same local rank: stays on one rail
  cross_rail,   // different HB domains and rails: needs the spine (or rail-only forwarding)
};
inline constexpr int kLocalities = 3;
inline constexpr int kParallelisms = perf::kParallelismCount;  // tp, sp, pp, dp, ep, cp
std::string_view to_string(Locality l);

inline Locality locality_of(const spec::Cluster& c, std::int64_t src, std::int64_t dst) {
  if (c.domain_of(src) == c.domain_of(dst)) return Locality::same_domain;
  return c.rail_of(src) == c.rail_of(dst) ? Locality::same_rail : Locality::cross_rail;
}

struct TrafficEntry {
  std::int64_t src = 0, dst = 0;
  perf::Parallelism parallelism = perf::Parallelism::tp;
  double bytes = 0;
};

// One send of an expanded operation: `bytes` from src to dst (GPU ids), count included.
struct Transfer {
  std::int64_t src = 0, dst = 0;
  double bytes = 0;
};

// The transfers of one group of one operation (group g of op.axis), in a deterministic order.
// Appends to `out`; `scratch` is reused between calls. Exposed for tests and for sim/.
void expand_group(const perf::CommOp& op, const perf::Placement& placement, std::int64_t group,
                  std::vector<Transfer>& out, std::vector<std::int64_t>& scratch);

class TrafficMatrix {
 public:
  TrafficMatrix() = default;
  static TrafficMatrix build(const perf::CommSchedule& schedule, const perf::Placement& placement,
                             const spec::Cluster& cluster);

  std::int64_t gpus() const { return gpus_; }
  std::int64_t hb_domain() const { return hb_domain_; }
  std::size_t size() const { return keys_.size(); }  // non-zero (src, dst, parallelism) entries
  TrafficEntry operator[](std::size_t i) const {
    const std::uint64_t k = keys_[i];
    return {static_cast<std::int64_t>(k >> 40), static_cast<std::int64_t>((k >> 16) & kGpuMask),
            static_cast<perf::Parallelism>((k >> 8) & 0xFF), bytes_[i]};
  }
  double total_bytes() const;
  // Heap bytes held (entries only): the figure behind "memory proportional to non-zero pairs".
  std::size_t memory_bytes() const {
    return keys_.capacity() * sizeof(std::uint64_t) + bytes_.capacity() * sizeof(double);
  }
  // Largest number of expansion records held at once during build (scratch), for the benchmark.
  std::size_t build_records() const { return build_records_; }

  // Packed key: src in bits 40-63, dst in bits 16-39, parallelism in bits 8-15 (GPU ids < 2^24 =
  // spec::kMaxGpus); bits 0-7 hold the operation while building, so that sums run in a fixed order.
  static constexpr std::uint64_t kGpuMask = (std::uint64_t{1} << 24) - 1;

 private:
  std::int64_t gpus_ = 0, hb_domain_ = 1;
  std::vector<std::uint64_t> keys_;  // sorted, unique
  std::vector<double> bytes_;
  std::size_t build_records_ = 0;
};

}  // namespace railsim::traffic
