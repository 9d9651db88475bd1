#pragma once
// CommSchedule: the single description of a strategy's communication in one training iteration.
// The analytic model (perf/) times it, traffic/ turns it into bytes per GPU pair, and sim/ turns
// it into flows; none of them describes communication a second way.
#include <array>
#include <cstdint>
#include <string_view>

#include "railsim/perf/placement.hpp"

namespace railsim::perf {

enum class Parallelism : std::uint8_t { tp, sp, pp, dp, ep };
std::string_view to_string(Parallelism p);

enum class CollectiveOp : std::uint8_t { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
std::string_view to_string(CollectiveOp op);

// How the collective is carried out; the time model and the traffic matrix both follow it.
enum class Algorithm : std::uint8_t {
  ring,          // flat ring over the group in rank order
  hierarchical,  // reduce-scatter inside each HB domain, ring along rails, all-gather inside
  direct,        // every member sends its share straight to every other member (all-to-all)
  p2p,           // send_recv: rank i of the group sends to rank i + 1 (pipeline next stage)
};
std::string_view to_string(Algorithm a);

enum class Phase : std::uint8_t { forward, backward, optimizer };
std::string_view to_string(Phase p);

struct CommOp {
  CollectiveOp op = CollectiveOp::all_reduce;
  Parallelism parallelism = Parallelism::tp;
  Axis axis = Axis::tp;  // every group along this axis runs the op (Placement gives the GPUs)
  Algorithm algorithm = Algorithm::ring;
  Phase phase = Phase::forward;
  // Per-GPU buffer size in bytes: the full buffer for all_reduce, the gathered output for
  // all_gather, the input for reduce_scatter, the total a GPU sends for all_to_all (1/n of it to
  // each member, itself included), the bytes sent to the next stage for send_recv.
  double bytes = 0;
  double count = 1;  // times per iteration
  bool overlappable = false;  // may hide behind compute (DP with overlap, PP with 1F1B steady state)
};

// Fixed capacity so that building a schedule in the search's hot path never allocates.
struct CommSchedule {
  static constexpr int kMaxOps = 24;
  std::array<CommOp, kMaxOps> ops{};
  int size = 0;

  void add(const CommOp& op);  // throws std::logic_error when full (an internal bug)
  const CommOp* begin() const { return ops.data(); }
  const CommOp* end() const { return ops.data() + size; }
};

}  // namespace railsim::perf
