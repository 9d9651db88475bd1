#pragma once
// `railsim fail whatif`: what one failure set does to a training job, per design, on the real
// Fabric (topo/failures.hpp routes around it). For each design:
// - what is cut off (dead GPUs, GPUs alive with no way out of their HB domain, the HB domains
//   the job loses) and the capacity lost per link tier;
// - the job's communicating pairs (consecutive members of every group of the chosen plan, and
//   every pair of its all-to-all groups) routed on the degraded Fabric: direct, rerouted by ECMP
//   (the healthy path crossed a dead component), forwarded through HB-domain peers (PXN), or
//   with no live path;
// - the chosen plan's iteration time on the degraded network by the analytic model, where the
//   slowest group paces every synchronous collective: the NIC bandwidth is divided by the worst
//   domain's NIC load factor (K M / live NICs, a dead NIC's traffic spread over the live ones),
//   the HB bandwidth scaled by the worst domain's live switch planes, and each tier's
//   oversubscription is the worst block's after its dead uplinks (ours); and by
//   the flow simulator (the plan's schedule on the healthy and the degraded Fabric, like for
//   like), each parallelism's exposed communication scaled by its simulated slowdown;
// - the job's options: run degraded, drop the affected HB domains and re-plan on the GPUs left,
//   or swap spare domains in; the throughput of each relative to the healthy job.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "railsim/core/json_fwd.hpp"
#include "railsim/fail/model.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/failures.hpp"

namespace railsim::fail {

// Forwarding through HB-domain peers around a dead NIC, link or leaf, the same on every design:
// on (the default) is NCCL's PXN, on by default since NCCL 2.12 (NCCL_PXN_DISABLE=0), which moves
// data over NVLink to a peer GPU whose NIC reaches the destination, on rail-optimized and rail-only
// networks alike; off models a stack that stops the job on a dead NIC (Meta's Llama 3 run counted
// NIC failures as interruptions).
enum class PxnMode : std::uint8_t { on, off };
std::string_view to_string(PxnMode m);
PxnMode parse_pxn_mode(std::string_view s, const std::string& option = "--pxn");

// Flow simulation of the schedule: automatic = when the cluster has at most kSimAutoGpus GPUs.
enum class SimMode : std::uint8_t { automatic, on, off };
SimMode parse_sim_mode(std::string_view s, const std::string& option = "--sim");
inline constexpr std::int64_t kSimAutoGpus = 4096;

struct WhatIfOptions {
  std::vector<std::string> fail;  // component specs (topo::parse_failure), applied to each design
  std::int64_t random = 0;        // plus this many drawn at random per design
  std::uint64_t seed = 1;
  PxnMode pxn = PxnMode::on;
  SimMode sim = SimMode::automatic;
  // Spare HB domains the job can swap in; unset: the goodput model's (auto_spare_domains under
  // the default failure rates), so that whatif and goodput assume the same spares.
  std::optional<std::int64_t> spare_domains;
  int examples = 5;         // rerouted pairs shown per design
  bool job_options = true;  // false: skip the options (and their re-plan searches)
  perf::PlanOptions plan;
};

struct JobOption {
  std::string name;  // "run degraded", "drop domains and re-plan", "swap in spares"
  bool possible = false;
  double throughput = 0;  // relative to the healthy job (tokens per second)
  bool restart = false;   // needs a restart from the last checkpoint
  std::string detail;     // the plan, or why the option is not possible
};

struct TierLoss {
  std::string name;
  std::int64_t links = 0, links_lost = 0;
  double capacity_Bps = 0, lost_Bps = 0;
};

struct DesignWhatIf {
  spec::DesignKind design = spec::DesignKind::rail_only;
  int tiers = 0;
  bool pxn = false;
  spec::NetworkDesign network;  // the routing and forwarding the answer assumes
  std::int64_t spare_domains = 0;
  bool spares_auto = false;
  std::vector<std::string> failures;           // applied, as written back (leaf:3, ...)
  std::vector<std::string> not_present;        // specs that name nothing in this design, with why
  std::vector<std::size_t> not_present_index;  // of each, its index in WhatIfOptions::fail
  std::int64_t gpus_dead = 0;
  std::int64_t gpus_cut_off = 0;         // alive, but no way out of their HB domain
  std::int64_t domains_lost = 0;         // holding a dead or cut-off GPU: out of the job
  std::int64_t domains_forwarding = 0;   // a GPU of theirs sends through a peer's NIC
  std::int64_t domains_hb_degraded = 0;  // running with a dead HB switch plane
  double hb_factor = 1;                  // worst such domain: live planes / planes
  std::vector<TierLoss> tiers_lost;
  // The busiest NIC port's load against healthy: M / live ports of a GPU that keeps some, K M /
  // live ports of a domain whose GPUs forward through peers; the worst over domains.
  double nic_load_factor = 1;
  std::vector<double> uplink_ratio;  // [t]: worst block down:up after failures (healthy >= 1)
  std::vector<double> healthy_uplink_ratio;

  std::int64_t pairs = 0, pairs_direct = 0, pairs_rerouted = 0, pairs_forwarded = 0,
               pairs_unreachable = 0;
  std::vector<std::string> examples;  // a few rerouted, forwarded or unreachable pairs

  std::optional<perf::Plan> plan;  // the chosen plan on the healthy network
  std::string no_plan_reason;
  bool runnable = false;  // every GPU of the job alive and every pair routed
  double healthy_s = 0;
  double degraded_s = 0;  // analytic; 0 when not runnable
  bool simulated = false;
  double sim_healthy_comm_s = 0, sim_degraded_comm_s = 0;  // serialised, like for like
  double sim_degraded_s = 0;                               // iteration, from the simulation
  std::vector<JobOption> options;
};

struct WhatIfReport {
  std::string model, gpu;
  std::int64_t gpus = 0, hb_domain = 0;
  std::vector<DesignWhatIf> designs;
};

// One design. Throws InputError("--fail") when a spec is malformed or names nothing in any design
// (what_if checks that across designs; here a spec absent from this design is listed in
// not_present).
DesignWhatIf what_if_design(const spec::Cluster& cluster, const spec::NetworkDesign& design,
                            const perf::Model& model, const perf::Training& training,
                            const WhatIfOptions& opt);

// Each design in turn (rail_optimized, rail_only by default).
WhatIfReport what_if(const spec::Cluster& cluster, const std::vector<spec::NetworkDesign>& designs,
                     const perf::Model& model, const perf::Training& training,
                     const WhatIfOptions& opt);

// The effects of a goodput model's network streams from the Fabric: for each stream of a NIC, a
// NIC-leaf link, a switch or a switch-switch link, the what-if of one such component (NIC 0 of
// GPU 0, switch 0 of the tier, uplink 0 of the boundary) on this design with the model's best
// plan: a job that can run degraded (interrupts = false, the HB domains forwarding, slowdown =
// degraded / healthy iteration time by the analytic model), or one that stops and loses the
// domains cut off. Streams of GPUs, hosts and software keep theirs; so does a stream whose
// failure stops the job without cutting off a domain (a switch block cut off above the leaf).
// Returns one line per stream changed ("nic: runs degraded x1.0222"). Call resolve_run after.
std::vector<std::string> fabric_effects(FailureModel& m, const spec::Cluster& cluster,
                                        const spec::NetworkDesign& design, const perf::Model& model,
                                        const perf::Training& training, const WhatIfOptions& opt);

Json to_json(const WhatIfReport& r);
std::string to_text(const WhatIfReport& r);

}  // namespace railsim::fail
