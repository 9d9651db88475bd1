#pragma once
// The run model of `railsim fail goodput` (ours; docs/failures.md has the derivation and the
// sources of every default): a synchronous training job on N GPUs in HB domains of K (D = N/K)
// checkpoints every tau of running time (write time C); a failure that interrupts it loses the
// work since the last completed checkpoint and costs a restart R (detection + restart). A GPU or
// host failure takes its HB domain out until repaired; the job restarts on a spare domain when
// one is free, else waits for a repair. On rail_only, a dead NIC, NIC-leaf link or leaf is not an
// interruption: the HB domain forwards that rail's traffic through a peer GPU's NIC (NCCL PXN) and
// the job runs degraded (slower) instead. Above the leaf, ECMP routes around a dead link or switch
// and the job runs degraded by the capacity lost.
//
// Each failure class becomes one Poisson stream per tier it hits (EventStream) with a plain
// FailureEffect, which a caller may overwrite (e.g. from a failure what-if on the real Fabric)
// before calling resolve_run and the Monte Carlo (monte_carlo.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/spec/cluster.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/spec/network.hpp"

namespace railsim::fail {

// What a degraded job does about the domain whose NIC (link, leaf) is dead.
//   swap_at_checkpoint: at the next completed checkpoint (or any restart), if enough spare
//     domains are free, restart on them (a planned restart: R, no lost work) and send the
//     degraded domain(s) to repair; otherwise keep running degraded.
//   until_repair: run degraded until the component is repaired.
enum class DegradedPolicy { swap_at_checkpoint, until_repair };
std::string_view to_string(DegradedPolicy p);  // "swap-at-checkpoint", "until-repair"
DegradedPolicy parse_degraded_policy(std::string_view s, const std::string& option = "--degraded");

// Defaults (ours, docs/failures.md says why).
inline constexpr double kDefaultCheckpointWriteS = 10.0;
inline constexpr double kDefaultDetectS = 2 * 60.0;
inline constexpr double kDefaultRestartS = 5 * 60.0;
inline constexpr double kDefaultRepairS = 24 * 3600.0;
inline constexpr std::int64_t kDefaultGpusPerHost = 8;
// Exposed scale-out communication as a fraction of an iteration: GPT-1T's best plan on 32,768
// H100 (railsim plan): pp 0.081 s + dp 0.495 s of 4.334 s = 13%, rounded up.
inline constexpr double kDefaultCommFraction = 0.15;
// Auto spares: the fewest for which more domains in repair at once has probability below this.
inline constexpr double kSpareTailProbability = 1e-4;

// The inputs of the run; unset optionals take the defaults of resolve_run.
struct RunParams {
  double days = 90;
  std::optional<double> checkpoint_interval_s;  // running time between checkpoints; Young/Daly
  double checkpoint_write_s = kDefaultCheckpointWriteS;  // C, the job stalls while it writes
  double detect_s = kDefaultDetectS;                     // failure to restart start
  double restart_s = kDefaultRestartS;                   // reschedule, init, load checkpoint
  double repair_s = kDefaultRepairS;  // a lost domain or failed component, unless the class says
  std::optional<std::int64_t> spare_domains;  // default: auto_spare_domains
  std::int64_t gpus_per_host = kDefaultGpusPerHost;
  double comm_fraction = kDefaultCommFraction;  // f
  std::optional<double> degraded_slowdown;      // a NIC/link/leaf forwarded; default 1 + f
  // A dead NIC port forwarded through HB-domain peers (NCCL's PXN, on both designs: the job runs
  // degraded) or not (the job stops and loses the domain until repaired); fail::PxnMode.
  bool pxn = true;
  DegradedPolicy policy = DegradedPolicy::swap_at_checkpoint;
};

// Throws InputError naming the CLI option (--days, --checkpoint-interval-min,
// --checkpoint-write-s, --detect-min, --restart-min, --repair-h, --spare-domains,
// --gpus-per-host, --comm-fraction, --degraded-slowdown) for zero, negative or non-finite values.
void validate(const RunParams& p);

// What one failure does to the job: a plain record, so that a later analysis may fill it.
struct FailureEffect {
  bool interrupts = true;  // the job stops and restarts from its last checkpoint
  // interrupts: HB domains out until repaired (0: none, software);
  // degrades: HB domains running degraded (swapped for spares under swap_at_checkpoint).
  std::int64_t domains_lost = 0;
  double slowdown = 1.0;  // >= 1: iteration time factor while degraded (interrupts == false)
  double repair_s = 0;    // how long the domains are out or the job is degraded
};

// One failure class on one tier of one design: a Poisson stream of rate units x per-unit rate.
struct EventStream {
  std::string name;  // the class name, "+ tier t" when a link or switch class spans tiers
  std::size_t class_index = 0;
  spec::FailureScope scope = spec::FailureScope::gpu;
  int tier = 0;
  double units = 0;       // GPUs, NICs, links or switches it counts per
  double rate_per_s = 0;  // all units together
  FailureEffect effect;
};

// Everything the Monte Carlo needs for one design.
struct FailureModel {
  spec::DesignKind design = spec::DesignKind::rail_optimized;
  std::int64_t gpus = 0;
  std::int64_t hb_domain = 0;
  std::int64_t domains = 0;
  int tiers = 0;
  std::vector<EventStream> streams;  // streams with no units are left out

  double run_s = 0;
  double checkpoint_interval_s = 0;
  bool checkpoint_interval_auto = true;
  double checkpoint_write_s = 0;
  double restart_s = 0;  // detection + restart
  std::int64_t spare_domains = 0;
  bool spares_auto = true;
  DegradedPolicy policy = DegradedPolicy::swap_at_checkpoint;

  double rate_per_s() const;            // every stream
  double interrupt_rate_per_s() const;  // interrupting streams only
  double mtbf_s() const;  // mean time between interruptions (infinity when none interrupt)
  // The rate Young/Daly's interval is set on: interruptions, plus (swap_at_checkpoint) each
  // degradation that the job leaves at its next checkpoint, weighted by the work it loses while
  // degraded (1 - 1/slowdown of that time, against all of it for an interruption).
  double checkpoint_rate_per_s() const;
  // Mean HB domains in repair at once (Little's law) from the streams that consume spares.
  double mean_domains_in_repair() const;
};

// Streams with default effects, then resolve_run.
FailureModel make_failure_model(const spec::Cluster& cluster, const spec::NetworkDesign& design,
                                const spec::FailureRates& rates, const RunParams& params);
// Streams only (effects by default), nothing of the run resolved.
FailureModel make_streams(const spec::Cluster& cluster, const spec::NetworkDesign& design,
                          const spec::FailureRates& rates, const RunParams& params);
// The run's figures from params and the streams' effects: the checkpoint interval (Young/Daly on
// 1 / checkpoint_rate_per_s unless given; one day when nothing fails), restart = detect +
// restart, the spares (auto_spare_domains unless given).
void resolve_run(FailureModel& m, const RunParams& params);

// Young (1974) / Daly (2006) first-order optimum checkpoint interval: sqrt(2 C M).
double young_daly_interval_s(double checkpoint_write_s, double mtbf_s);

// Expected fraction of wall time that is kept work, for interruptions at rate lambda (Poisson),
// a checkpoint every tau of running time taking C, and a restart R that starts over when a
// failure hits it (the renewal argument of docs/failures.md, the model of Daly 2006):
//   E[wall per kept tau] = e^{lambda R} (e^{lambda (tau + C)} - 1) / lambda
//   goodput = lambda tau e^{-lambda R} / (e^{lambda (tau + C)} - 1)
double periodic_checkpoint_goodput(double rate_per_s, double interval_s, double write_s,
                                   double restart_s);

// Smallest s with P(X > s) <= tail for X ~ Poisson(mean).
std::int64_t poisson_quantile(double mean, double tail);
// Spares so that a restart rarely waits: poisson_quantile(mean_domains_in_repair, 1e-4).
std::int64_t auto_spare_domains(const FailureModel& m);

}  // namespace railsim::fail
