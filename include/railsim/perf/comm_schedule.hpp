#pragma once
// CommSchedule: the single description of a strategy's communication in one training iteration.
// The analytic model (perf/) times it, traffic/ turns it into bytes per GPU pair, and sim/ turns
// it into flows; none of them describes communication a second way.
//
// Semantics (exact; traffic/ and wire_bytes() rely on them). A CommOp runs on every group along
// its axis (Placement::group_count(axis) groups of n = Placement::axis_size(axis) members), `count`
// times per iteration. B = `bytes`. What each member sends, by algorithm:
//   ring all_reduce       : a ring in group-rank order (i -> i+1 mod n); each member sends
//                           2(n-1)/n * B to its successor (reduce-scatter then all-gather).
//   ring all_gather / reduce_scatter: the same ring; each member sends (n-1)/n * B.
//   hierarchical (group of q HB domains with p members each, rail-aligned; n = p q):
//                           1. reduce-scatter inside each domain (ring over the p members):
//                              each sends (p-1)/p * B;
//                           2. on each rail, a ring over the q members with the same local rank,
//                              on the B/p shard: all_reduce sends 2(q-1)/q * B/p per member,
//                              reduce_scatter / all_gather send (q-1)/q * B/p;
//                           3. all-gather inside each domain: each sends (p-1)/p * B
//                              (all_reduce only; a reduce_scatter stops after 2, an all_gather
//                              runs 2 then 3 without step 1).
//                           Per member the totals equal the flat ring's: 2(n-1)/n B for
//                           all_reduce and (n-1)/n B for the others; only the locality differs.
//   direct all_to_all     : each member sends B/n to every other member: (n-1)/n * B in all.
//   rail_then_domain all_to_all (a rail-aligned group of q HB domains with p members each; the
//                           MoE dispatch of DeepSeek-V3's report, Sec. 3.2.2):
//                           1. along each rail, a direct exchange among the q members with the
//                              same local rank of B1 = B d: each sends B1/q to every other,
//                              where d = routed_domains(routing, q) / top_k (one copy per HB
//                              domain a token is routed to instead of one per expert; d = 1
//                              without routing information);
//                           2. inside each domain, a direct exchange among its p members of B:
//                              each sends B/p to every other (the copies for the experts).
//                           A group that is not rail-aligned runs the direct exchange instead.
//   p2p send_recv         : phase forward: rank i sends B to rank i+1 for i in [0, n-2];
//                           phase backward: rank i+1 sends B to rank i. `count` times per pair.
//                           Interleaved pipelines also wrap: rank n-1 sends B to rank 0
//                           (backward: rank 0 to rank n-1) `wrap_count` times.
// So the bytes on the wire per iteration for one op, summed over every GPU (see wire_bytes()):
//   all_reduce: G c 2(n-1) B;  all_gather, reduce_scatter, all_to_all: G c (n-1) B
//   (rail_then_domain: G c n ((q-1)/q B d + (p-1)/p B)); send_recv: G B (c (n-1) + wrap_count);
//   with G groups and c = count; 0 when n = 1.
// Bytes inside an HB domain are included (they are "on the wire" of the HB domain).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "railsim/perf/placement.hpp"

namespace railsim::spec {
struct Model;
struct Training;
}  // namespace railsim::spec

namespace railsim::perf {

enum class Parallelism : std::uint8_t { tp, sp, pp, dp, ep, cp };
inline constexpr int kParallelismCount = 6;
std::string_view to_string(Parallelism p);

enum class CollectiveOp : std::uint8_t {
  all_reduce,
  all_gather,
  reduce_scatter,
  all_to_all,
  send_recv
};
std::string_view to_string(CollectiveOp op);
// all_reduce, all_gather, reduce_scatter, all_to_all, send_recv (also allreduce, allgather,
// reducescatter, alltoall, p2p, as NCCL's tests name them). InputError(option, ...) otherwise.
CollectiveOp parse_collective_op(std::string_view s, const std::string& option);

// How the collective is carried out; the time model and the traffic matrix both follow it.
enum class Algorithm : std::uint8_t {
  ring,              // flat ring over the group in rank order
  hierarchical,      // reduce-scatter inside each HB domain, ring along rails, all-gather inside
  direct,            // every member sends its share straight to every other member (all-to-all)
  p2p,               // send_recv: rank i of the group sends to rank i + 1 (pipeline next stage)
  rail_then_domain,  // all-to-all: one copy per HB domain along the rails, then inside each domain
};
std::string_view to_string(Algorithm a);
Algorithm parse_algorithm(std::string_view s, const std::string& option);

enum class Phase : std::uint8_t { forward, backward, optimizer };
std::string_view to_string(Phase p);

// How an MoE layer routes its tokens, for the all-to-all's copies per HB domain
// (rail_then_domain): `experts` in `groups` equal groups of consecutive experts, each token to
// `top_k` experts inside `groups_per_token` groups (spec::Model's expert_groups). top_k 0: not
// known (every copy crosses the network).
struct ExpertRouting {
  std::int32_t experts = 0, top_k = 0, groups = 1, groups_per_token = 1;
};

// The expected number of distinct HB domains among a token's top_k experts when the EP group's
// experts are dealt in order over q domains (E/q consecutive experts each), the token choosing
// groups_per_token of the groups uniformly and its top_k experts uniformly among theirs (the
// balanced routing the all-to-all's bytes assume) (ours): exact where the groups nest in the
// domains or the domains in the groups; otherwise the group limit is not applied. 0 without
// routing information (top_k 0); 1 on one domain.
double routed_domains(const ExpertRouting& r, std::int64_t q);

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
  double count = 1;  // times per iteration (per group; for send_recv per adjacent pair)
  bool overlappable =
      false;                // may hide behind compute (DP with overlap, PP with 1F1B steady state)
  double wrap_count = 0;    // send_recv only: times rank n-1 sends to rank 0 (interleaving)
  ExpertRouting routing{};  // all_to_all only: how tokens pick their experts
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

using spec::Model;
using spec::Training;
struct Strategy;

// The communication of one iteration of `s` on `pl` (which must have been built with
// s.degrees()). Ops, in order: TP/SP (tag tp: all_reduce without SP; tag sp: all_gather and
// reduce_scatter with SP; forward, backward, and a backward-phase copy of the forward ones for
// full recompute), CP (tag cp, axis cp, cp > 1: all_gather of K and V forward, reduce_scatter of
// their gradients backward, per layer per micro-batch, B = 2 b s kvd / t x 2 bytes of the whole
// sequence; Dubey et al. 2024, Sec. 3.3.2; a backward-phase all_gather again with full
// recompute), EP all_to_all (dispatch + combine per MoE layer), PP send_recv (forward
// activations and backward gradients of B = b s h / t x 2 bytes, Megatron's scatter-gather), DP
// gradient reduction of the dense weights (axis dp: dp x cp members) and of the expert weights
// (axis edp) in fp32
// (all_reduce; or reduce_scatter plus an optimizer-phase all_gather of bf16 weights with the
// distributed optimizer). Algorithms: p2p for PP, direct for all-to-all, hierarchical for the
// others when the group spans HB domains with several members in each and is rail-aligned, ring
// otherwise. Counts are per iteration for the GPUs of the first pipeline stage (which holds the
// embedding: DP bytes include it). Allocation-free.
CommSchedule build_comm_schedule(const Model& m, const Training& tr, const Strategy& s,
                                 const Placement& pl);

// The algorithm the model assumes for a reduction over groups of this shape.
Algorithm reduction_algorithm(const GroupShape& g);

// Bytes one op puts on the wire per iteration, summed over all GPUs of all its groups (formulas
// above).
double op_wire_bytes(const CommOp& op, const Placement& pl);

struct WireBytes {
  std::array<double, kParallelismCount> by_parallelism{};  // indexed by Parallelism
  double of(Parallelism p) const { return by_parallelism[static_cast<std::size_t>(p)]; }
  double total() const;
};
// Total bytes each parallelism puts on the wire per iteration over all GPUs: the sum of
// op_wire_bytes over the schedule. traffic/'s matrix sums must equal these.
WireBytes wire_bytes(const CommSchedule& s, const Placement& pl);

}  // namespace railsim::perf
