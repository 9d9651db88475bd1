#pragma once
// The one expansion of a CommSchedule operation: which phases an algorithm runs, over which
// members, with which buffer. The analytic model times these phases from a group's shape
// (phase_plan, allocation-free), traffic/ turns the expanded rings into bytes per GPU pair and
// sim/ into flows (expand_members), so that an algorithm means the same thing in all three.
//
//   ring          one phase: a ring over the group in rank order.
//   hierarchical  (p members in each of q HB domains, on the same local ranks):
//                   all_reduce:     reduce-scatter in each domain on B, all-reduce along each
//                                   rail on B/p, all-gather in each domain on B;
//                   reduce_scatter: reduce-scatter in each domain on B, then along each rail on
//                                   B/p;
//                   all_gather:     all-gather along each rail on B/p, then in each domain on B.
//                 A group that is not rail-aligned (uneven members per domain, or different local
//                 ranks) runs the flat ring instead: same bytes, other locality.
//   direct        one phase: every member sends B/n to every other member (all_reduce: 2B/n).
//   rail_then_domain (all_to_all on a rail-aligned group of q domains of p members): a direct
//                 exchange along each rail of B d (one copy per routed domain, d =
//                 routed_domains / top_k), and one inside each domain of B (p > 1); the two run
//                 at once, the domain's forwarding what the rail delivers. Otherwise direct.
//   p2p           one phase: member i sends B to member i+1.
// In a ring phase of n members on buffer B each member sends f (n-1)/n B to its successor in
// f (n-1) steps of B/n, f = 2 for all_reduce and 1 otherwise (Patarasuk and Yuan 2009).
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/placement.hpp"

namespace railsim::perf {

enum class Scope : std::uint8_t {
  group,       // the whole group (ring in rank order, direct exchange, or pipeline chain)
  in_domain,   // the group's members inside each HB domain (one ring per domain)
  along_rail,  // the members with the same local rank across domains (one ring per rail)
};

struct CollectivePhase {
  CollectiveOp op = CollectiveOp::all_reduce;  // what this phase does
  Algorithm algorithm = Algorithm::ring;       // ring, direct or p2p (never rail_then_domain)
  Scope scope = Scope::group;
  std::int64_t members = 0;  // per ring (or per exchange)
  double bytes = 0;          // per-member buffer, as CommOp::bytes
};

struct PhasePlan {
  std::array<CollectivePhase, 3> phases{};
  int size = 0;
  bool hierarchical = false;  // the phases are the hierarchical (or rail_then_domain) algorithm's
  const CollectivePhase* begin() const { return phases.data(); }
  const CollectivePhase* end() const { return phases.data() + size; }
};

// The phases of one instance of `op` (bytes B = op.bytes) on a group of shape `g`.
PhasePlan phase_plan(const CommOp& op, const GroupShape& g);

// Whether groups of shape `g` run rail_then_domain in two exchanges: rail-aligned, over at least
// two HB domains, the same members in each (otherwise the direct exchange).
bool two_level(const GroupShape& g);

// Ring steps and bytes per step of a ring phase: f (n-1) steps of B/n.
std::int64_t ring_steps(const CollectivePhase& ph);
// Bytes each member sends to its successor over a whole ring phase: f (n-1)/n B.
double ring_bytes_per_member(const CollectivePhase& ph);

// The phases of one group, with the members of every ring of every phase (GPU ids).
struct GroupExpansion {
  PhasePlan plan;
  std::array<std::int64_t, 3> rings{};  // rings (or exchanges) in each phase
  std::array<std::size_t, 3> offset{};  // first member of each phase in `gpus`
  std::vector<std::int64_t> gpus;       // ring after ring, phase after phase
  std::vector<std::int64_t> members;    // expand_group: the group in rank order
  std::span<const std::int64_t> ring(int phase, std::int64_t r) const {
    const auto n = static_cast<std::size_t>(plan.phases[static_cast<std::size_t>(phase)].members);
    return {gpus.data() + offset[static_cast<std::size_t>(phase)] + static_cast<std::size_t>(r) * n,
            n};
  }
};

// Expands `op` over a group given by its members in rank order (GPU ids) on HB domains of
// `hb_domain` GPUs, from that group's own shape. `scratch` is reused between calls.
void expand_members(const CommOp& op, std::span<const std::int64_t> members, std::int64_t hb_domain,
                    GroupExpansion& out, std::vector<std::int64_t>& scratch);
// The same for group `group` of op.axis under a placement; rail_then_domain runs in two exchanges
// only when the axis's shape (Placement::shape, every group's) allows it.
void expand_group(const CommOp& op, const Placement& pl, std::int64_t group, GroupExpansion& out,
                  std::vector<std::int64_t>& scratch);

}  // namespace railsim::perf
