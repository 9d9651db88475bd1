#pragma once
// A parameter study as one call: lists of cluster, network, cost and model inputs, expanded as a
// cartesian product (or zipped), each point's three designs priced (cost::compare_designs) and,
// optionally, each design's best parallelization found (perf::plan, top 1). Points are evaluated
// in parallel (oneTBB) and kept in input order: the result is the same for any thread count.
// sweep_table turns the result into one tidy row per (point, design).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "railsim/cost/cost.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/report/table.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/spec/catalog.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/sweep/values.hpp"

namespace railsim::sweep {

// The values of each swept input. An empty list means the one default value: the GPU preset's
// (hb_domain, nic_gbps, hb_GBps, nics_per_gpu), 32,768 GPUs rounded down to whole HB domains
// (gpus), the model's (seq).
struct SweepAxes {
  std::vector<std::string> gpu = {spec::kDefaultGpu};
  std::vector<std::int64_t> gpus;
  std::vector<std::int64_t> hb_domain;
  std::vector<double> nic_gbps;
  std::vector<double> hb_GBps;
  std::vector<std::int64_t> nics_per_gpu;
  std::vector<std::string> sw = {"ETH-51.2T-128x400G"};
  std::vector<std::string> catalog = {"ib-ndr-thirdparty-2024"};
  std::vector<double> oversubscription = {1.0};
  std::vector<std::string> model = {spec::kDefaultModel};
  std::vector<std::int64_t> batch = {spec::kDefaultGlobalBatch};
  std::vector<std::int64_t> seq;
  std::vector<std::string> routing = {"auto"};  // auto: the switch family's default
  // Network planes (spec::NetworkDesign::planes): P planes split each NIC in P / gcd(P, NICs)
  // ports, one per plane; empty: 1.
  std::vector<std::int64_t> planes;
};

struct SweepOptions {
  SweepAxes axes;
  // false: the cartesian product (the last input varies fastest: gpu, gpus, hb_domain, nic_gbps,
  // hb_GBps, nics_per_gpu, switch, catalog, oversubscription, model, batch, seq, routing,
  // planes). true:
  // the lists taken together, point i from item i of each; every list with more than one value must
  // have the same length (one-value lists apply to every point).
  bool zip = false;
  bool perf = true;  // false: cost and power only
  std::int64_t max_points = kDefaultMaxPoints;
  int threads = 0;  // 0: oneTBB's default
  // The other network options (tier, copper, management links, ECMP seed, rail-only forwarding:
  // every design's, the all-to-all simulation's included); network.routing is replaced by the
  // routing axis.
  spec::NetworkOptions network;
  // The training software of every point (spec::make_training): the stack, and the dtype and
  // flash attention when given (otherwise bf16 and the stack's default).
  spec::Stack stack;
  std::optional<spec::Dtype> dtype;
  std::optional<bool> flash_attention;
  cost::SwitchCounting counting = cost::SwitchCounting::whole;
  // Bytes per GPU of a uniform all-to-all over all GPUs (the MoE dispatch), simulated on each
  // design's network (sim::simulate_collective with sim::sim_config of the design: its routing and
  // rail-only forwarding; aggregated by link class, 0.5 us per hop); 0: none. Adds the columns
  // alltoall_time_s and alltoall_vs_rail_optimized_pct.
  double alltoall_bytes = 0;
  // Called once per evaluated point, from the worker threads (e.g. report::ProgressBar::step).
  std::function<void()> on_point_done;
};

// One point's inputs as requested (unset optionals take the defaults above).
struct SweepPoint {
  std::string gpu;
  std::optional<std::int64_t> gpus, hb_domain;
  std::optional<double> nic_gbps, hb_GBps;
  std::optional<std::int64_t> nics_per_gpu;
  std::string sw, catalog;
  double oversubscription = 1.0;
  std::string model;
  std::int64_t batch = 0;
  std::optional<std::int64_t> seq;
  std::string routing = "auto";
  std::int64_t planes = 1;
};

// Expands the axes into points, in order. Throws InputError: --zip with lists of different
// lengths (naming the option), more points than max_points (--max-points, with the count).
std::vector<SweepPoint> expand_points(const SweepOptions& opt);

// The best plan of one design, or why there is none.
struct DesignPlan {
  std::optional<perf::Plan> best;
  std::string no_plan_reason;
  // Set when the search itself failed (fp8 on a GPU without it, too many candidates): its error,
  // whose what() is no_plan_reason.
  std::optional<InputError> error;
};

// One evaluated point: its resolved inputs, and either the three designs (rail_optimized,
// rail_only, ideal) with their plans, or why the point is invalid (e.g. N not a multiple of K).
struct PointResult {
  SweepPoint point;
  // Resolved inputs (the defaults filled in; as requested when the cluster is invalid).
  std::int64_t gpus = 0, hb_domain = 0, nics_per_gpu = 0, seq = 0;
  double nic_gbps = 0, hb_GBps = 0;
  std::string model_name;
  spec::NetworkDesign network;  // the routing resolved (auto: the switch's default) and forwarding
  perf::Training training;      // the software of its plans (set once its inputs are valid)
  std::vector<cost::DesignReport> designs;
  std::vector<DesignPlan> plans;  // empty without perf
  // The error band of its best plans' times (perf::error_band of its GPU, stack, model kind and
  // precision); 0 without perf or on an invalid point.
  double error_band = 0;
  // Per design, the simulated all-to-all's completion time (empty without alltoall_bytes; a
  // design the simulator cannot run has a missing value and its reason).
  std::vector<std::optional<double>> alltoall_s;
  std::vector<std::string> alltoall_reason;
  std::optional<InputError> invalid;
};

struct SweepResult {
  std::vector<PointResult> points;  // in the order of expand_points
  bool perf = true;
  bool alltoall = false;
  std::int64_t valid_points() const;
};

// Everything a sweep reads before it evaluates a point: the points and every preset they name.
struct SweepInputs {
  std::vector<SweepPoint> points;  // expand_points
  std::map<std::string, spec::GpuSpec> gpus;
  std::map<std::string, spec::SwitchSpec> switches;
  std::map<std::string, spec::Catalog> catalogs;
  std::map<std::string, spec::Model> models;
};

// Expands the points and loads every preset named: an unknown GPU, switch, catalog or model is an
// InputError naming its option, as is every error of expand_points.
SweepInputs load_sweep_inputs(const SweepOptions& opt);

// Evaluates the points of `inputs` at the indices `which` (each below inputs.points.size()) in
// parallel; the result holds them in the order of `which`. The same point gives the same result
// whichever others are evaluated with it (what lets processes share a sweep:
// sweep/distributed.hpp).
SweepResult evaluate_points(const SweepOptions& opt, const SweepInputs& inputs,
                            std::span<const std::size_t> which);

// The best plan (perf::plan, top 1) of each of one point's designs, in their order, each design
// being `base` with its kind: what every point of a sweep gets with perf, and what the compare
// command shows of a cluster. A design without a plan says why (perf::explain_no_plan). `job`:
// a job on part of the cluster (spec::job_cluster; compare --job-gpus), planned on its GPUs over
// the whole cluster's network; null: the whole cluster.
std::vector<DesignPlan> plan_designs(const spec::Model& m, const perf::Training& tr,
                                     const spec::Cluster& c, const spec::NetworkDesign& base,
                                     const std::vector<cost::DesignReport>& designs,
                                     const spec::Cluster* job = nullptr);

// The plan columns of one point's rows, design by design: best_iteration_time_s,
// vs_rail_optimized_pct (against the rail_optimized design before it), best_plan_mfu, best_plan,
// best_plan_knobs (all missing without a plan), and the reason there is none (missing with one).
// sweep_table's rows and `railsim compare`'s table take them from here.
struct PlanCells {
  std::vector<report::Cell> cells;
  report::Cell reason = report::Missing{};
};
std::vector<PlanCells> plan_cells(const std::vector<cost::DesignReport>& designs,
                                  const std::vector<DesignPlan>& plans);

// load_sweep_inputs, then every point evaluated in parallel.
SweepResult run_sweep(const SweepOptions& opt);

// The error of a sweep none of whose points is valid (nothing to show): the first invalid point's
// field and message, marked "(every point of the sweep is invalid)". One writer for the CLI and
// the Python module.
InputError no_valid_point(const InputError& first);

// One row per (point, design); an invalid point has one row per design with only its inputs, the
// design and the reason. Columns: gpu, gpus, hb_domain, nic_gbps, hb_GBps, nics_per_gpu, switch,
// catalog, oversubscription, model, batch, seq, planes, routing, seed, forwarding, forward_via,
// chunks
// (the routing resolved: auto becomes the switch's default), design, tiers, switches, cost_usd,
// power_w, cost_saving, power_saving, best_iteration_time_s, vs_rail_optimized_pct, best_plan_mfu,
// best_plan, best_plan_knobs, alltoall_time_s, alltoall_vs_rail_optimized_pct, the software
// (spec::software_columns: stack, dtype, flash_attention, compile, elementwise_kernels,
// ep_dispatch, cp_comm; missing on an invalid point), reason (the perf columns and the software
// only with perf, the all-to-all ones only with alltoall_bytes).
report::Table sweep_table(const SweepResult& r);

// The rows sweep_table makes of one point (one per design), without the human flags.
std::vector<std::vector<report::Cell>> point_rows(const PointResult& p, bool perf, bool alltoall);

// The table of rows made by point_rows, in the points' order: sweep_table's columns, and the
// inputs that vary among the rows shown to people. sweep_table(r) is this table of the rows of
// r's points.
report::Table sweep_table(std::vector<std::vector<report::Cell>> rows, bool perf, bool alltoall);

// The routing assumptions of a sweep_table's rows in one line for people: "routing ecmp, seed 0;
// rail-only forwarding pipelined via hb_first, 8 chunks" (each value once, in row order).
std::string routing_line(const report::Table& t);
// The software the plans of a sweep_table's rows assumed, for people: "software: stack
// megatron-core-2024, dtype bf16, flash attention on, compile off, EP dispatch direct, CP
// exchange p2p" (each value once, in row order); "" without perf.
std::string software_line(const report::Table& t);

// The columns of sweep_table for these options (what a plot may name), without any row.
std::vector<report::Column> sweep_columns(const SweepOptions& opt);

}  // namespace railsim::sweep
