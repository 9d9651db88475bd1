#pragma once
// Exhaustive search for the best parallelization: every valid combination of TP, CP, PP, DP, EP,
// micro-batch, interleaving, recompute, SP, distributed optimizer and DP overlap, evaluated in
// parallel (oneTBB), infeasible ones dropped, a deterministic top-k (the same for any thread
// count: ties are broken by the strategy's knobs).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "railsim/core/error.hpp"
#include "railsim/core/json_fwd.hpp"
#include "railsim/perf/iteration.hpp"

namespace railsim::perf {

// Knobs the user fixed; unset ones are searched.
struct StrategyPins {
  std::optional<std::int64_t> tp, pp, dp, ep, micro_batch, interleave, cp, hsdp;
  // The expert tensor-parallel size: 1 (folded) or the strategy's tp; unpinned, the search tries
  // both where the stack folds and the model is MoE.
  std::optional<std::int64_t> etp;
  // Layers whose activations are offloaded to host memory: a pin keeps only the strategies that
  // run it (0: none offloads). Unpinned, none offloads, as Megatron-Core's cpu_offloading is off
  // by default and its host memory and PCIe traffic compete with what railsim does not model
  // (data loading, checkpoints), unless offload_auto: then every strategy that does not fit HBM
  // at pp 1 without recomputation offloads the fewest layers that make it fit, where the stack
  // and GPU offload and the host memory holds them.
  std::optional<std::int64_t> offload_layers;
  bool offload_auto = false;
  std::optional<Recompute> recompute;
  std::optional<bool> sp, dist_opt, dp_overlap;
  std::optional<PipelineSchedule> schedule;
};

// Whether two strategies split the GPUs alike: the same tp, cp, pp, dp, ep and expert tp.
bool same_shape(const Strategy& a, const Strategy& b);

// A plan as railsim prints it, read back: words separated by spaces or commas, "tp8 pp16 dp64"
// (degrees tpN, cpN, ppN, dpN, epN; etpN, the expert tensor-parallel size), then any knobs: mbN
// (micro-batch), vN (interleave), a recompute mode (none, selective, op, qkv, layer, full), a
// schedule (1f1b, zb-h1, zb-v, dualpipe), sp, dopt, ovl (on) and no-sp, no-dopt, no-ovl (off): "tp8
// pp16 dp64 mb1 v8 selective sp dopt ovl". What it leaves out is left unpinned (default_strategy
// gives the stack's default). InputError(option) naming the word it cannot read, a knob given
// twice, or no degree at all.
StrategyPins parse_plan_text(std::string_view text, const std::string& option);
// The concrete strategy of such a text on this cluster: default_strategy of its pins. Every
// error names `option` (a knob the plan cannot have names the knob in parentheses).
Strategy plan_from_text(const Model& m, const Training& tr, std::string_view text,
                        const spec::Cluster& c, const std::string& option);

// Throws InputError naming the option when a pinned knob, the dtype or flash attention is one
// the training's software stack (tr.stack) lacks.
void check_pins(const Model& m, const Training& tr, const StrategyPins& pins);

// One concrete strategy from the pinned knobs, the rest defaulted: tp = the largest of min(8, K)
// and below that divides the heads and N, cp = 1, pp = 1, dp = N / (tp cp pp), ep = 1, micro-batch
// 1, interleave 1, and the stack's defaults: its recompute mode, SP when tp > 1, the distributed
// optimizer when dp > 1, DP overlap (megatron-core-2024: selective, on, on, on).
// Validated (InputError naming the knob that is wrong).
Strategy default_strategy(const Model& m, const Training& tr, const StrategyPins& pins,
                          const spec::Cluster& c);

// Default bound on the candidates one search may visit (estimate_candidates); the presets on
// 32,768 to 16M GPUs visit at most a few hundred thousand (MoE-1.2T on 131,072: 326,148).
inline constexpr std::int64_t kDefaultMaxCandidates = 10'000'000;

// Context parallelism in the search (unless --cp pins it): cp > 1 from the divisors of N / tp up
// to kMaxSearchCp, where the stack has it, 2 cp divides the sequence and each of the 2 cp chunks
// keeps at least kMinCpChunk tokens (ours: shorter chunks leave the GEMMs small and the K/V
// all-gather large against the attention it serves; Megatron-Core recommends CP for long
// sequences). This keeps the search of short-sequence runs as it was.
inline constexpr std::int64_t kMaxSearchCp = 16;
inline constexpr std::int64_t kMinCpChunk = 2048;

struct PlanOptions {
  StrategyPins pins;
  int top = 10;     // plans to keep
  int threads = 0;  // 0 = oneTBB's default
  // plan() throws InputError("--max-candidates") when estimate_candidates is above this (<= 0:
  // no bound).
  std::int64_t max_candidates = kDefaultMaxCandidates;
  // At most one plan per shape (tp, cp, pp, dp, ep), the best of each: the next-best plans that
  // differ in how the GPUs are split, not in one knob (plan --explain).
  bool distinct_shapes = false;
};

struct Plan {
  Strategy strategy;
  IterationTime time;
};

struct PlanResult {
  std::vector<Plan> plans;      // best first, at most `top`
  std::int64_t evaluated = 0;   // valid strategies timed or memory-checked
  std::int64_t feasible = 0;    // of which fit in HBM
  double min_memory_bytes = 0;  // smallest memory need over all valid strategies
  double hbm_bytes = 0;
};

// Strict order of plans: shorter iteration first; ties broken by the knobs (deterministic).
bool plan_before(const Plan& a, const Plan& b);

PlanResult plan(const EstimateContext& ctx, const PlanOptions& opt);

// The fastest plan that fits in memory with the split of the GPUs of `shape` (its tp, cp, pp,
// dp, ep and expert tp: same_shape), every other knob searched as `opt`'s pins leave it: what a
// plan that does not fit can become without moving a GPU (plan --against). nullopt when no plan
// of that shape fits.
std::optional<Plan> fastest_of_shape(const EstimateContext& ctx, PlanOptions opt,
                                     const Strategy& shape);

// A batch or job size near the one asked for that plans much better: "the batch factors badly".
struct BetterSize {
  std::int64_t batch = 0;     // global batch, sequences
  std::int64_t job_gpus = 0;  // GPUs of the job (whole HB domains of the network)
  Plan plan;                  // its best plan
  double gain = 0;            // tokens per second per GPU against the given size's, - 1
};
// When `best` (the best plan of the batch and GPUs asked for) spends more than kBadSizeShare of
// its iteration in the pipeline bubble and the exposed DP reduction: nearby sizes whose best plan
// trains at least kBetterSizeGain more tokens per second per GPU, best first, at most 3. Batches
// within 12.5% of the one asked for that share more factors with the GPU count (gcd) than it does,
// most first (3 searched), and jobs of whole HB domains down to 12.5% fewer GPUs whose domain count
// shares more with the batch (2 searched) and that also train more tokens per second in all. Ours:
// within 12.5%, the batch alone moves the bubble and the optimizer step by at most about that
// much, so a 10% gain says the size divides badly (18,432 GB200 with a batch of 4,096 plans
// pp72; 4,608 splits as dp288).
inline constexpr double kBetterSizeGain = 0.10;
inline constexpr double kBadSizeShare = 0.25;
std::vector<BetterSize> better_sizes(const Model& m, const Training& tr, const spec::Cluster& job,
                                     const spec::Cluster& network, const spec::NetworkDesign& d,
                                     const PlanOptions& opt, PlacementKind placement,
                                     const Plan& best);

// Why a search found no plan (r.plans empty), as the InputError to report: a pinned knob that
// cannot work (named by default_strategy's checks), a global batch that no dp = N / (tp x pp)
// divides (with the smallest dp that would), or the smallest memory need against the HBM.
InputError explain_no_plan(const PlanResult& r, const Model& m, const Training& tr,
                           const StrategyPins& pins, const spec::Cluster& c);

// Verdicts under the other routing (docs/model.md section 5): railsim sets each answer beside
// the one under the contrasting routing, ecmp against spreading: adaptive for ecmp, ecmp for
// adaptive and spray.
spec::Routing contrasting_routing(spec::Routing r);

// The best plan of the same search under contrasting_routing(d.routing), and whether it is
// another strategy than `best` (the plan's verdict flips). `line`: one sentence saying so, empty
// when the plan holds.
struct RoutingFlip {
  spec::Routing routing = spec::Routing::adaptive;  // the contrasting routing
  std::optional<Plan> best;                         // its best plan (none: nothing fits)
  bool flips = false;
  std::string line;
};
// `network`: the whole cluster when `c` is a job on part of it (spec::job_cluster).
RoutingFlip plan_under_contrasting_routing(const Model& m, const Training& tr,
                                           const spec::Cluster& c, const spec::NetworkDesign& d,
                                           const PlanOptions& opt, PlacementKind placement,
                                           const Plan& best,
                                           const spec::Cluster* network = nullptr);
Json to_json(const RoutingFlip& f);

// compare's verdict, rail_only against rail_optimized: "faster" or "slower" when the best plans
// differ by more than kVerdictBand, else "as fast". `here_pct` is rail_only's best iteration time
// against rail_optimized's under d.routing (percent; + is slower); `there_pct` the same under
// contrasting_routing(d.routing), from the same searches. `line` says so when the verdicts differ.
inline constexpr double kVerdictBand = 0.01;
std::string_view rail_only_verdict(double pct);
struct VerdictFlip {
  spec::Routing routing = spec::Routing::adaptive;  // the contrasting routing
  std::optional<double> there_pct;                  // none: a design has no plan there
  bool flips = false;
  std::string line;
};
VerdictFlip rail_only_under_contrasting_routing(const Model& m, const Training& tr,
                                                const spec::Cluster& c,
                                                const spec::NetworkDesign& d, double here_pct,
                                                const spec::Cluster* network = nullptr);
Json to_json(const VerdictFlip& f);

// Candidates the search would visit (shapes x boolean knobs, before the validity check; an
// upper bound of count_strategies), counted without building them: O(divisors) work, no
// allocation proportional to the answer. Saturates at INT64_MAX.
std::int64_t estimate_candidates(const EstimateContext& ctx, const StrategyPins& pins);

// Number of strategies the search would visit (valid ones), for benchmarks and progress.
std::int64_t count_strategies(const EstimateContext& ctx, const StrategyPins& pins);

// JSON of results ("strategy", "feasible", "iteration_time_s", "memory_gib", "mfu", "hfu",
// "tokens_per_s", "breakdown", "memory", "cross_rail").
Json to_json(const Strategy& s, PlacementKind placement = PlacementKind::rail_aligned);
Json to_json(const Strategy& s, const IterationTime& it,
             PlacementKind placement = PlacementKind::rail_aligned);
// Every op of a schedule with where its groups sit and what one instance costs on this network:
// an array of {parallelism, op, axis, algorithm, phase, bytes, count, wrap_count, overlappable,
// group: {size, per_domain, domains, rail_aligned}, time_s, forwarding_s, cross_rail}.
Json comm_to_json(const CommSchedule& cs, const Placement& pl, const NetworkModel& net);

}  // namespace railsim::perf
