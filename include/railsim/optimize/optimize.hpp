#pragma once
// The cheapest network that trains given models as fast as needed (ours).
//
// Candidates: every combination of design (rail_only, rail_optimized), oversubscription at the
// leaf, HB-domain size, NIC speed, NICs per GPU, network planes (P planes: each NIC split in
// P / gcd(P, NICs) ports so that the GPU's ports deal evenly over the planes), switch preset,
// copper or optics for the NIC-leaf links and price catalog that forms a valid network over the
// cluster (a switch whose port modes cannot serve the NIC, or a size K that does not divide N, is
// left out and counted). For each candidate: its bill of materials priced (cost, power) and, for
// each model, the best plan of the existing search on that network. A candidate meets the target
// when every model does; the model with the least slack binds. Budgets (network cost, power)
// filter.
//
// Exactness and speed: the plan of a model depends only on the cluster and the network as the
// analytic model sees it (topo::NetworkView), not on the catalog, the copper choice or a switch's
// price, so plans are computed once per distinct (cluster, view) and shared (exact). Candidates
// are ordered by cost; without the frontier (`frontier = false`) the search stops at the first
// candidate that meets the target within budget, which is the cheapest one (a test checks it
// against the exhaustive search). The frontier is the cost / slowest-model-time Pareto front:
// the candidates, in cost order, that are faster than every cheaper one.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "railsim/perf/search.hpp"
#include "railsim/report/plot.hpp"
#include "railsim/report/progress.hpp"
#include "railsim/report/table.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"

namespace railsim::optimize {

struct ModelSpec {
  perf::Model model;
  perf::Training training;
  perf::StrategyPins pins;
};

// The space searched. Empty lists take the GPU preset's value (hb_domain, nic_gbps,
// nics_per_gpu) or every shipped switch preset (switches).
// The most candidate networks one search takes (the product of the Space's lists), checked
// before any is priced or planned: about 10 minutes on 2 cores at the bound (docs/trust.md).
inline constexpr std::int64_t kMaxCandidateNetworks = 100'000;

struct Space {
  std::vector<spec::DesignKind> designs = {spec::DesignKind::rail_only,
                                           spec::DesignKind::rail_optimized};
  std::vector<double> oversubscription = {1.0, 2.0, 3.0};  // down:up at the leaf
  std::vector<std::int64_t> hb_domain;
  std::vector<double> nic_gbps;
  std::vector<std::int64_t> nics_per_gpu;
  std::vector<std::int64_t> planes = {1};
  std::vector<std::string> switches;
  std::vector<bool> copper = {false};
  std::vector<std::string> catalogs;  // empty: the default catalog
  // Of every candidate (docs/model.md section 5); unset: each candidate switch's own default
  // (spec::default_routing: adaptive on InfiniBand, ecmp on Ethernet).
  std::optional<spec::Routing> routing;
};

// A Space as the command line and the Python module name it: the designs by name (ideal is the
// reference, not a network to buy), the leaf oversubscriptions (each from 1 to 64), copper for
// the NIC-leaf links as "on" and "off", the routing by name ("auto": each switch's own); the
// other lists as Space takes them. Errors are InputErrors naming the command line's option
// (--design, --oversubscription, --routing, --copper-gpu-leaf).
struct SpaceChoices {
  std::vector<std::string> designs = {"rail_only", "rail_optimized"};
  std::vector<double> oversubscription = {1.0, 2.0, 3.0};
  std::vector<std::int64_t> hb_domain;
  std::vector<double> nic_gbps;
  std::vector<std::int64_t> nics_per_gpu;
  std::vector<std::int64_t> planes = {1};
  std::vector<std::string> switches;
  std::vector<std::string> catalogs;
  std::vector<std::string> copper = {"off"};
  std::string routing = "auto";
};
Space make_space(const SpaceChoices& c);

// The GPUs searched: `gpus` (1 to spec::kMaxGpus), or for 0 spec::kDefaultGpus rounded down to
// whole HB domains of the GPU's default size; a negative count is an InputError naming --gpus.
std::int64_t cluster_gpus(const spec::GpuSpec& gpu, std::int64_t gpus);

// What "fast enough" means; at least one must be set. within: iteration time at most (1 +
// within) x the reference of each model, the best plan on `within_of` (ideal: one HB domain over
// all GPUs; rail_optimized: the fastest non-oversubscribed rail_optimized candidate).
struct Target {
  std::optional<double> max_iteration_s;
  std::optional<double> min_mfu;
  std::optional<double> within;
  spec::DesignKind within_of = spec::DesignKind::ideal;
  std::optional<double> tokens;  // with days: tokens of each model's batch within the days
  std::optional<double> days;
};

struct Budget {
  std::optional<double> max_cost_usd;
  std::optional<double> max_power_w;
};

struct Options {
  bool frontier = true;  // false: stop at the cheapest candidate that meets the target
  int threads = 0;
  // The days each candidate's best plan of each model takes to train this many tokens (a column
  // per model; without failures).
  std::optional<double> train_tokens;
  // When set, told the candidates judged of all (after the reference's plans); not owned.
  report::ProgressBar* progress = nullptr;
};

struct ModelOutcome {
  std::optional<perf::Plan> best;
  std::string no_plan_reason;
  double limit_s = 0;  // the iteration time the target allows this model
  bool meets = false;
  double slack = 0;  // limit / time - 1 (negative: misses by that much); MFU targets: mfu / min - 1
};

struct Candidate {
  spec::Cluster cluster;
  spec::NetworkDesign design;
  std::string catalog;
  int tiers = 0;
  std::int64_t switches = 0;
  double cost_usd = 0, power_w = 0;
  bool within_budget = true;
  bool evaluated = false;  // plans computed (false: skipped by the early stop)
  std::vector<ModelOutcome> models;
  bool meets = false;         // every model meets the target
  int binding = -1;           // the model with the least slack
  double worst_relative = 0;  // max over models of time / reference
  std::string name() const;   // "rail_only K=8 400G x1 ETH-51.2T-128x400G optics ib-ndr-..."
};

struct Result {
  std::vector<Candidate> candidates;  // valid networks, cheapest first
  std::int64_t invalid = 0;           // combinations that form no valid network
  std::vector<std::string> invalid_examples;
  std::vector<double> reference_s;  // per model (0 when the target has no `within`)
  std::vector<std::string> model_names;
  std::vector<std::size_t> frontier;        // indices into candidates, cheapest first
  std::optional<std::size_t> cheapest;      // the answer
  std::optional<std::size_t> next_cheaper;  // the cheapest candidate below it, which misses
  std::int64_t plans_computed = 0;          // distinct (cluster, view, model) plan searches
  std::int64_t evaluated = 0;               // candidates whose plans were looked at
  std::optional<double> train_tokens;       // Options::train_tokens
  perf::Training training;                  // the first model's: the software every plan assumed
};

// Throws InputError: no target (--within ...), empty lists, no valid candidate (with why),
// every candidate over budget (--max-network-cost / --max-power, with the cheapest's figure), no
// candidate that meets the target (naming the binding model and by how much the best misses).
Result optimize(const spec::GpuSpec& gpu, std::int64_t gpus, const std::vector<ModelSpec>& models,
                const Space& space, const Target& target, const Budget& budget,
                const Options& options = {});

// One row per frontier candidate (or per candidate with all = true): design, K, NIC, switch,
// catalog, tiers, switches, cost, power, per model time, plan and (with train_tokens) days to
// train, meets, binding model, and (CSV and JSON only) the software (spec::software_columns).
report::Table candidates_table(const Result& r, bool all = false);
// Lines that say the answer: the cheapest network meeting the target, which model binds, and
// why the next cheaper candidate fails.
std::string explain(const Result& r);
// The frontier as a chart: network cost ($ millions) against the slowest model's iteration time
// in percent above the fastest frontier network's (the axis from 0; the subtitle gives that
// network's time over the ideal cluster's), each point labelled with its design,
// oversubscription, switch and cost, and the answer as its own point.
report::LineChart frontier_chart(const Result& r);
Json to_json(const Result& r);

// The answer under the contrasting routing (perf::contrasting_routing of space.routing; with
// each switch's own routing, ecmp everywhere): the same search stopped at its cheapest candidate
// that meets the target. `flips` when that is another network than r's answer (or none meets
// the target there); `line` says so, empty when the answer holds.
struct RoutingFlip {
  spec::Routing routing = spec::Routing::ecmp;
  std::optional<std::string> cheapest;  // Candidate::name() of its answer; none: nothing meets
  double cost_usd = 0;
  bool flips = false;
  std::string line;
};
RoutingFlip under_contrasting_routing(const spec::GpuSpec& gpu, std::int64_t gpus,
                                      const std::vector<ModelSpec>& models, const Space& space,
                                      const Target& target, const Budget& budget,
                                      const Options& options, const Result& r);
Json to_json(const RoutingFlip& f);
// `railsim optimize --json`: to_json(r), "all" (every candidate evaluated, the rows of
// candidates_table(r, true), with `all`: --all) and "routing_flip" (to_json(f)).
Json optimize_document(const Result& r, const RoutingFlip& f, bool all = false);

}  // namespace railsim::optimize
