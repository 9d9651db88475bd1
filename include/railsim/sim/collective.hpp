#pragma once
// Collectives turned into flows and simulated on a SimNetwork.
//
// Reductions and gathers run the phases of perf's expansion (perf/expansion.hpp: the same that
// the analytic model times and traffic/ counts), one after another: each ring phase step by
// step, in step s member i sending one 1/n piece to member i+1 once it has received step s-1's
// piece from member i-1 (and has sent its own). Hierarchical = reduce-scatter in each HB domain,
// then along rails (one ring per local position), then all-gather in the domain, as the
// operation needs.
// Direct all-to-all: every member sends bytes/n to every other member at once. p2p: member i
// sends `bytes` to member i+1 (pipeline stages).
//
// Rail-only forwarding of a pair on different rails and domains: hb_first = HB hop to the GPU of
// the destination's rail in the source's domain, then that rail; rail_first = the source's rail
// to the destination's domain, then the HB hop. Store-and-forward sends the whole transfer on the
// first leg, then on the second; pipelined cuts it into `chunks` pieces, piece j's second leg
// starting when its first leg is delivered (the legs of different pieces overlap).
//
// Scale: identical flows (same path, size, dependencies and latency) are merged into one weighted
// flow (exact). A ring phase whose step-by-step flow count exceeds max_flows is simulated for one
// step and scaled by the step count (exact when every step sees the same contention, which
// holds for the symmetric groups used here; tests compare both at small sizes). An all-to-all
// over all GPUs of a symmetric fabric can be aggregated by link class (SimConfig::aggregate):
// one source's flows, weighted by N, over one channel per (tier, direction) holding the tier's
// total capacity; exact when routing spreads load evenly over a tier (tests compare it with
// flow-by-flow simulation).
#include <cstdint>
#include <string>
#include <vector>

#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/sim/flow_sim.hpp"
#include "railsim/sim/network.hpp"

namespace railsim::sim {

// Rail-only forwarding's modes (spec::ForwardingMode, the network design's): store, pipelined,
// two_phase. two_phase (all-to-all on rail-only only): every GPU first finishes all its first legs
// (the HB shuffle for hb_first; the rail legs and the same-rail transfers for rail_first), then,
// after a barrier, everything else (second legs, and for hb_first the transfers inside the domain
// and along the rail): the non-overlapped reading behind the paper's 8.2-11.2% (Wang et al., arXiv
// 2307.12169).
using ForwardingMode = spec::ForwardingMode;

enum class Aggregation : std::uint8_t { automatic, off, on };

// How a flow picks among equal-cost paths above its leaf: spec::Routing (docs/model.md section
// 5 defines each, with its source). ecmp: a hash of (source, destination, seed) at every hop, as
// switches hash a flow's headers; flows can collide on one uplink. adaptive and spray: per-packet
// adaptive routing (InfiniBand AR, Spectrum-X) and per-packet spraying both spread a flow's bytes
// over every equal-cost uplink; in the fluid model that is one flow over the bundles of parallel
// uplinks it crosses (SimNetwork::bundle_of), each bundle's capacity the sum of its live links,
// per-link bytes the bundle's shared evenly (docs/sim.md).
// The batch tolerance that `railsim sim` (and Python's sim) runs at unless asked for exact: the
// largest of 1e-9, 1e-6, 1e-5, 1e-4 and 1e-3 whose worst completion-time error against exact,
// over docs/sim.md's set of collectives (all-to-all, rings, hierarchical all-reduce, skewed MoE
// all-to-all, whole schedules; both designs; ECMP and adaptive), stays below 1e-4 relative:
// more than 100 times below the tightest error band the analytic model has had against measured
// runs (+-3.4%; docs/model.md section 10). 1e-3 missed it (9.3e-4); 1e-4 ran a skewed MoE
// all-to-all of 256 GPUs 15-30 times faster than exact, 3.3e-5 from it.
inline constexpr double kDefaultBatchTolerance = 1e-4;
// That set's worst relative error at kDefaultBatchTolerance (docs/gen_sim_tolerance_table.py).
inline constexpr double kDefaultBatchError = 3.4e-5;
// Exact: merges only finishing times that differ by rounding (EngineOptions' default).
inline constexpr double kExactBatchTolerance = 1e-9;

// The batching assumption in words, for the outputs that state their settings: the tolerance
// and the error it costs ("exact" at or below kExactBatchTolerance).
std::string describe_batching(double batch_tolerance);

struct SimConfig {
  topo::Forwarding forwarding = topo::Forwarding::hb_first;
  ForwardingMode mode = ForwardingMode::pipelined;  // spec::NetworkDesign's default (NCCL's PXN)
  int chunks = 8;                   // pipelined forwarding: pieces per forwarded transfer
  double hop_latency_s = 0.0;       // per channel crossed
  double transfer_latency_s = 0.0;  // per transfer (software and NIC cost of one step)
  // Per simulated phase, before scaling or aggregating; forwarding legs and pipelined chunks
  // count (a forwarded transfer is 2 flows, 2 x chunks when pipelined).
  std::int64_t max_flows = 4'000'000;
  // A phase whose estimated memory (estimated_memory_bytes) exceeds this is refused before any
  // flow is built (InputError naming --max-memory, with the estimate).
  double max_memory_bytes = 16.0 * (1ull << 30);
  Aggregation aggregate = Aggregation::automatic;  // all-to-all over all GPUs by link class
  // EngineOptions::batch_tolerance: exact here (the library's callers and tests compare with
  // exact figures); `railsim sim` runs at kDefaultBatchTolerance unless --exact.
  double batch_tolerance = kExactBatchTolerance;
  spec::Routing routing = spec::Routing::ecmp;
  // Salts the ECMP hash (another seed, another set of collisions). adaptive, spray: no effect on
  // switch paths (all are used).
  std::uint64_t seed = 0;
  // How a transfer leaving the HB domain spreads over its GPU's NIC ports
  // (spec::NetworkDesign::port_balance): spray, a share per port; hash, `connections` flows,
  // each on the live port a hash of (transfer, connection, seed) picks.
  spec::PortBalance port_balance = spec::PortBalance::spray;
  int connections = 1;
  // Shows each simulated phase's flows delivered (EngineOptions::progress); not owned.
  report::ProgressBar* progress = nullptr;
};

// The settings a network design fixes (routing, ECMP seed, rail-only forwarding), the rest at
// their defaults: what every command simulates a design with.
SimConfig sim_config(const spec::NetworkDesign& d);

using Group = std::vector<std::int64_t>;  // GPU ids in ring (rank) order

// Every group runs the same collective at the same time.
struct CollectiveRequest {
  perf::CollectiveOp op = perf::CollectiveOp::all_reduce;
  perf::Algorithm algorithm = perf::Algorithm::ring;
  double bytes = 0;  // per GPU, as perf::CommOp::bytes
  std::vector<Group> groups;
  perf::ExpertRouting routing{};  // all_to_all with rail_then_domain: copies per HB domain
};

struct TierStat {
  std::string name;         // "GPU-leaf up", ...
  double peak_utilisation;  // max over channels of the class and over time
  double bytes;             // carried by all channels of the class
};

struct BusyChannel {
  std::string name;
  double peak_utilisation;
  double bytes;
};

struct PhaseResult {
  std::string name;          // "ring step", "reduce-scatter in domain", "all-to-all", ...
  double time_s = 0;         // the phase's contribution (scaled when step_scaled)
  std::int64_t steps = 1;    // ring steps the phase has
  bool step_scaled = false;  // simulated one step and multiplied by `steps`
  bool aggregated = false;   // simulated by link class
  std::int64_t flows_simulated = 0;
  double flows_represented = 0;
  std::int64_t events = 0;
  double bytes_sent = 0;  // bytes the senders hand to the network (forwarded bytes once)
};

struct CollectiveResult {
  double completion_time_s = 0;
  std::vector<PhaseResult> phases;
  std::vector<TierStat> tiers;       // per link class
  std::vector<BusyChannel> busiest;  // channels (or classes when aggregated), busiest first
  std::int64_t flows_simulated = 0;
  double flows_represented = 0;
  double bytes_sent = 0;  // over all phases (scaled phases included)
};

CollectiveResult simulate_collective(const SimNetwork& net, const CollectiveRequest& req,
                                     const SimConfig& cfg, int busiest = 5);

// All-to-alls with given bytes per pair (skewed, e.g. MoE dispatch and combine: sim/moe.hpp), run
// one after another. In each, member i of group g sends pair_bytes[g][i n + j] to member j
// (row-major n x n; the diagonal stays on the GPU), every group at once, flow by flow (a skewed
// load is not symmetric, so it is never aggregated by link class). Throws InputError when a phase
// has more than cfg.max_flows transfers ("--max-flows") or cfg.aggregate is on ("--aggregate").
struct AllToAllV {
  std::string name;
  std::vector<std::vector<double>> pair_bytes;  // one n x n matrix per group
};
CollectiveResult simulate_alltoallv(const SimNetwork& net, const std::vector<Group>& groups,
                                    const std::vector<AllToAllV>& phases, const SimConfig& cfg,
                                    int busiest = 5);

// The directed channels a transfer from src to dst crosses under cfg (the ECMP hash the simulator
// uses, salted by cfg.seed; on rail-only, the forwarding legs through the HB-domain peer that
// cfg.forwarding picks, concatenated), for packet-level cross-checks that must take the same
// paths. ECMP only (adaptive routing and spraying split a transfer over every path).
topo::Path transfer_path(const SimNetwork& net, const SimConfig& cfg, std::int64_t src,
                         std::int64_t dst);

// Groups: all GPUs as one; every rail; every HB domain; rail 0 only; domain 0 only; the
// groups of a placement's axis.
std::vector<Group> groups_all(const spec::Cluster& c);
std::vector<Group> groups_rails(const spec::Cluster& c);
std::vector<Group> groups_domains(const spec::Cluster& c);
std::vector<Group> groups_of_axis(const perf::Placement& p, perf::Axis a);

// A whole iteration: each op of the schedule simulated on its placement's groups, one after
// another (ops within one iteration are serialised; overlap is the analytic model's business).
// send_recv: forward ops send rank i -> i+1, backward ops i+1 -> i; the interleaving wrap
// (CommOp::wrap_count) is not simulated.
struct ScheduleOpResult {
  perf::CommOp op;
  double time_s = 0;   // one occurrence
  double total_s = 0;  // time_s x op.count
  CollectiveResult detail;
};
struct ScheduleResult {
  std::vector<ScheduleOpResult> ops;
  double total_s = 0;
};
ScheduleResult simulate_schedule(const SimNetwork& net, const perf::CommSchedule& s,
                                 const perf::Placement& p, const SimConfig& cfg);

}  // namespace railsim::sim
