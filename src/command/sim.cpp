// railsim sim: flow-level simulation of a collective (or a whole iteration's communication) on
// the concrete fabric of a design.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "railsim/command/inputs.hpp"
#include "railsim/core/bytes.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/report/format.hpp"
#include "railsim/report/progress.hpp"
#include "railsim/sim/check.hpp"
#include "railsim/sim/moe.hpp"
#include "railsim/sim/options.hpp"
#include "railsim/sim/tables.hpp"
#include "railsim/spec/routing_table.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/traffic/iteration.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {

// The skewed (MoE) all-to-all's fields.
const std::vector<std::string>& moe_keys() {
  static const std::vector<std::string> keys = {
      "skew",           "experts",     "topk",      "max_domains", "tokens", "bytes_per_token",
      "expert_weights", "pair_matrix", "moe_phase", "moe_seed"};
  return keys;
}

// The MoE routing options, checked (the library checks them again against the group).
sim::MoeRequest resolve_moe(const Args& a) {
  sim::MoeRequest req;
  auto& r = req.routing;
  const int files =
      int{a.given("skew")} + int{a.given("expert_weights")} + int{a.given("pair_matrix")};
  if (files > 1)
    throw InputError(a.given("pair_matrix") ? "--pair-matrix" : "--expert-weights",
                     "choose one of --skew, --expert-weights and --pair-matrix");
  sim::parse_skew(a.text("skew"), r, "--skew");
  if (a.given("expert_weights"))
    sim::load_weights(a.text("expert_weights"), sim::Popularity::expert_weights, r,
                      "--expert-weights");
  if (a.given("pair_matrix"))
    sim::load_weights(a.text("pair_matrix"), sim::Popularity::pair_weights, r, "--pair-matrix");
  r.tokens = a.integer("tokens");
  r.experts = a.integer("experts");
  r.topk = a.integer("topk");
  r.max_domains = a.integer("max_domains");
  r.seed = static_cast<std::uint64_t>(a.integer("moe_seed"));
  if (r.topk > r.experts)
    throw InputError("--topk", fmt::format("{} is more than --experts {}: a token picks distinct "
                                           "experts",
                                           r.topk, r.experts));
  req.phase = sim::parse_moe_phase(a.text("moe_phase"), "--moe-phase");
  if (a.given("bytes_per_token")) {
    if (a.given("bytes"))
      throw InputError("--bytes-per-token", "choose one of --bytes and --bytes-per-token");
    req.bytes_per_token = units::parse_bytes(a.text("bytes_per_token"), "--bytes-per-token");
  } else {
    // --bytes is what each GPU dispatches on average, as the uniform all-to-all's buffer.
    req.bytes_per_token = units::parse_bytes(a.text("bytes"), "--bytes") /
                          (static_cast<double>(r.tokens) * static_cast<double>(r.topk));
  }
  return req;
}

// The simulation's settings: the design's routing and forwarding, latency, limits.
sim::SimConfig resolve_config(const Args& a, const spec::NetworkDesign& d) {
  sim::SimConfig cfg = sim::sim_config(d);
  cfg.hop_latency_s = a.number("hop_latency_us") * 1e-6;
  cfg.max_flows = a.integer("max_flows");
  cfg.max_memory_bytes = units::parse_bytes(a.text("max_memory"), "--max-memory");
  cfg.aggregate = sim::parse_aggregation(a.text("aggregate"));
  if (a.flag("exact") && a.given("batch_tolerance"))
    throw InputError("--exact", "choose one of --exact and --batch-tolerance");
  cfg.batch_tolerance = a.flag("exact") ? sim::kExactBatchTolerance : a.number("batch_tolerance");
  return cfg;
}

void print_collective(Output& out, const sim::CollectiveResult& r) {
  const report::Column t{
      .type = report::Type::real, .unit = "s", .precision = 6, .style = report::Style::si};
  out.print("completion time {}\n", report::human_cell(t, r.completion_time_s));
  out.print("{}", report::to_text(sim::sim_phases_table(r), "  "));
  out.print("flows simulated {} (standing for {})\n", report::thousands(double(r.flows_simulated)),
            report::thousands(r.flows_represented));
  out.print("per link class:\n{}", report::to_text(sim::sim_links_table(r.tiers), "  "));
  out.print("busiest links:\n{}", report::to_text(sim::sim_links_table(r.busiest), "  "));
}

// The cluster, design and simulation settings every mode shares.
struct Setting {
  const spec::Cluster& c;
  const spec::NetworkDesign& d;
  const sim::SimConfig& cfg;
  int top = 5;
};

// --schedule: every collective of one iteration, simulated and set beside the analytic model.
void run_schedule(const Args& a, Output& out, const Setting& st) {
  const auto& [c, d, cfg, top] = st;
  a.refuse(moe_keys(),
           "with --schedule (the skewed all-to-all is a single collective: --collective "
           "all_to_all)");
  const StrategyInputs in = resolve_strategy_inputs(a);
  // The strategy given (--tp, --pp, ...), or else the best plan on this network.
  const traffic::StrategyChoice choice =
      traffic::choose_strategy(in.model, in.training, in.pins, c, d, false);
  const perf::Strategy& s = choice.strategy;
  const std::string source = choice.searched
                                 ? fmt::format("the best plan of {} strategies",
                                               report::thousands(double(choice.evaluated)))
                                 : "the strategy given";
  const topo::Fabric fabric = topo::build_fabric(c, d);
  const perf::Placement pl(fabric.cluster, s.degrees(), in.placement);
  const perf::CommSchedule sched = perf::build_comm_schedule(in.model, in.training, s, pl);
  const sim::ScheduleCheck chk = sim::check_schedule(fabric, sched, pl, cfg);
  cfg.progress->finish();
  report::Table table = sim::schedule_check_table(chk);
  if (a.flag("csv")) {
    spec::add_routing_columns(table, d);
    spec::add_software_columns(table, in.training);
    out.print("{}", report::to_csv(table));
    return;
  }
  if (a.flag("json")) {
    Json j = sim::schedule_document(chk, fabric, s, cfg.batch_tolerance);
    j["strategy_searched"] = choice.searched;
    j.update(spec::software_json(in.training));
    out.print("{}\n", j.dump(2));
    return;
  }
  out.print(
      "{} on {} x {} ({}), tp {}{} pp {} dp {} ep {}{}{} ({}): communication of one iteration\n"
      "network: switch {}, {}\nsoftware: {}{}\nsimulation: {}\n{}",
      in.model.name, report::thousands(double(c.gpus)), c.gpu.name, spec::to_string(d.kind), s.tp,
      s.cp > 1 ? fmt::format(" cp {}", s.cp) : "", s.pp, s.dp, perf::describe_ep(s, " "),
      s.interleave > 1 ? fmt::format(", interleave {}", s.interleave) : "",
      s.schedule != perf::PipelineSchedule::one_f_one_b
          ? fmt::format(", {} schedule", spec::to_string(s.schedule))
          : "",
      source, d.sw.describe(), spec::describe_routing(d), spec::describe_software(in.training),
      spec::cp_note(in.training.stack, s.cp), sim::describe_batching(cfg.batch_tolerance),
      report::to_text(table));
  const report::Column t{
      .type = report::Type::real, .unit = "s", .precision = 5, .style = report::Style::si};
  const double simulated = chk.sim.total_s, analytic = chk.analytic_total_s;
  out.print("serialised communication per iteration: simulated {}, analytic {} (ratio {:.3f})\n",
            report::human_cell(t, simulated), report::human_cell(t, analytic),
            analytic > 0 ? simulated / analytic : 0.0);
}

// A skewed (MoE) all-to-all on the groups of `groups`.
void run_moe(const Args& a, Output& out, const Setting& st, const topo::Fabric& fabric,
             const sim::SimNetwork& net, std::vector<sim::Group> groups) {
  const auto& [c, d, cfg, top] = st;
  const std::string group = a.text("group");
  sim::MoeRequest moe = resolve_moe(a);
  moe.groups = std::move(groups);
  const sim::MoeResult m = sim::simulate_moe(net, moe, cfg, top);
  cfg.progress->finish();
  if (a.flag("json")) {
    out.print("{}\n", sim::moe_document(m, moe, group, fabric, cfg, a.flag("efficiency")).dump(2));
    return;
  }
  const report::Column b{
      .type = report::Type::real, .unit = "B", .precision = 4, .style = report::Style::si};
  out.print(
      "MoE all-to-all ({}), {} tokens per GPU x top-{} of {} experts, {}{}, {} per token, group "
      "{} ({} group{} of {}), on {} x {} (HB domain {}), {}\n",
      sim::to_string(moe.phase), moe.routing.tokens, moe.routing.topk, moe.routing.experts,
      sim::describe_popularity(moe.routing),
      moe.routing.max_domains > 0
          ? fmt::format(", at most {} HB domains per token", moe.routing.max_domains)
          : "",
      report::human_cell(b, moe.bytes_per_token), group,
      report::thousands(double(moe.groups.size())), moe.groups.size() == 1 ? "" : "s",
      report::thousands(double(moe.groups.front().size())), report::thousands(double(c.gpus)),
      c.gpu.name, c.hb_domain, spec::to_string(d.kind));
  out.print("simulation: {}\n", sim::describe_batching(cfg.batch_tolerance));
  out.print(
      "dispatch {} in all; busiest receiver {:.2f}x and sender {:.2f}x the mean; {:.1f}% "
      "leaves the HB domain; {:.2f} HB domains per token\n",
      report::human_cell(b, m.stats.total_bytes), m.stats.max_in_over_mean,
      m.stats.max_out_over_mean, 100 * m.stats.cross_domain_share, m.stats.domains_per_token);
  print_collective(out, m.sim);
}

// One collective (--collective, --bytes, --group), or the skewed all-to-all of the MoE options.
void run_collective(const Args& a, Output& out, const Setting& st) {
  const auto& [c, d, cfg, top] = st;
  a.refuse(strategy_keys(),
           "without --schedule (the model and strategy options time one iteration's "
           "collectives; a single collective takes --collective, --bytes, --group)");
  const std::string collective = a.text("collective"), group = a.text("group");
  const bool efficiency = a.flag("efficiency");
  const perf::CollectiveOp op = perf::parse_collective_op(collective, "--collective");
  sim::CollectiveRequest req;
  req.op = op;
  req.algorithm = sim::parse_collective_algorithm(a.text("algorithm"), op);
  req.bytes = units::parse_bytes(a.text("bytes"), "--bytes");
  const topo::Fabric fabric = topo::build_fabric(c, d);
  sim::SimConfig net_cfg = cfg;  // like_for_like sets the per-step latency
  const sim::SimNetwork net =
      efficiency ? sim::like_for_like(fabric, net_cfg) : sim::make_sim_network(fabric);
  req.groups = sim::parse_groups(group, fabric.cluster);
  if (a.first_given(moe_keys()) != nullptr) {
    if (op != perf::CollectiveOp::all_to_all)
      throw InputError("--collective", fmt::format("{} with the MoE options (--skew, --topk, ...); "
                                                   "they shape an all_to_all",
                                                   collective));
    run_moe(a, out, {c, d, net_cfg, top}, fabric, net, req.groups);
    return;
  }
  const sim::CollectiveResult r = sim::simulate_collective(net, req, net_cfg, top);
  cfg.progress->finish();
  if (a.flag("json")) {
    out.print("{}\n", sim::collective_document(r, req, group, fabric, net_cfg, efficiency).dump(2));
    return;
  }
  out.print(
      "{} ({}) of {} per GPU, group {} ({} group{} of {}), on {} x {} (HB domain "
      "{}, HB {:g} GB/s, NIC {:g} Gb/s), {} ({} tier{})",
      perf::to_string(op), perf::to_string(req.algorithm),
      report::human_cell(
          {.type = report::Type::real, .unit = "B", .precision = 4, .style = report::Style::si},
          req.bytes),
      group, report::thousands(double(req.groups.size())), req.groups.size() == 1 ? "" : "s",
      report::thousands(double(req.groups.front().size())), report::thousands(double(c.gpus)),
      c.gpu.name, c.hb_domain, c.hb_bw_Bps / 1e9, units::Bps_to_gbps(c.nic_bw_per_gpu_Bps()),
      spec::to_string(d.kind), fabric.tiers, fabric.tiers == 1 ? "" : "s");
  out.print("\nnetwork: switch {}, {}\nsimulation: {}\n", d.sw.describe(),
            spec::describe_routing(d), sim::describe_batching(cfg.batch_tolerance));
  print_collective(out, r);
}

void run_sim(const Args& a, Output& out) {
  one_format(a);
  if (a.flag("csv") && !a.flag("schedule"))
    throw InputError("--csv", "CSV is printed for --schedule only");
  const spec::Cluster c = spec::make_cluster(cluster_options(a));
  const spec::NetworkDesign d = resolve_network(a);
  sim::SimConfig cfg = resolve_config(a, d);
  // On a terminal, a simulation that takes more than 2 s shows its flows delivered on stderr
  // (each phase's, or each op's with --schedule); erased before the answer is printed.
  report::ProgressBar bar(stderr, "sim: flows delivered", 1);
  cfg.progress = &bar;
  const Setting st{c, d, cfg, static_cast<int>(a.integer("top"))};
  if (a.flag("schedule"))
    run_schedule(a, out, st);
  else
    run_collective(a, out, st);
}

}  // namespace

namespace {
// The single collective's fields and the simulation's settings.
std::vector<Field> collective_fields() {
  return {
      text_field("collective", "--collective",
                 "all_reduce, all_gather, reduce_scatter, all_to_all or send_recv (NCCL test "
                 "names allreduce, allgather, reducescatter, alltoall, p2p also accepted)",
                 "all_reduce"),
      text_field("algorithm", "--algorithm",
                 "ring or hierarchical (reductions; hierarchical = HB domain, then rails)", "ring"),
      text_field("group", "--group",
                 "all (one group of every GPU), rail (every rail, concurrently), domain (every HB "
                 "domain), rail0, domain0, pair (first and last GPU)",
                 "all"),
      text_field("bytes", "--bytes", "Buffer per GPU (as in NCCL tests): e.g. 1e9, 512MB, 1GiB",
                 "1GB"),
      number_field("hop_latency_us", "--hop-latency-us", "Latency per link crossed, microseconds",
                   Range::non_negative(1e6), "0.5", "us"),
      text_field("aggregate", "--aggregate",
                 "all-to-all over all GPUs by link class: auto (beyond --max-flows), on, off",
                 "auto"),
      integer_field("max_flows", "--max-flows",
                    "Flows per simulated phase (forwarding legs and pipelined chunks counted) "
                    "before ring steps are scaled or all-to-all aggregated",
                    1000, 200'000'000, "4000000"),
      text_field("max_memory", "--max-memory",
                 "Refuse, before it starts, a phase whose estimated memory exceeds this (e.g. "
                 "4GB, 16GiB)",
                 "16GiB"),
      number_field(
          "batch_tolerance", "--batch-tolerance",
          "T: an event at time t also ends the flows finishing by t + T max(t, L) / D, L the "
          "busiest link's bytes over its capacity and D the longest chain of dependent flows, "
          "and re-fills at the mean of their finishing times weighted by the capacity they "
          "free: the completion moves by about T of itself (speed against accuracy; <= 0.01). "
          "The default 1e-4 moved docs/sim.md's collectives by at most 3.4e-5 (a hundredth of "
          "the analytic model's tightest error band) and ran a skewed MoE all-to-all of 256 "
          "GPUs 15-30 times faster than exact; --exact for exact",
          Range::between(0, 0.01), "1e-4"),
      flag_field("exact", "--exact",
                 "Exact simulation: an event ends only the flows that finish at its time (as "
                 "--batch-tolerance 1e-9; slow on skewed or uneven traffic of thousands of GPUs)"),
      integer_field("top", "--top", "Busiest links to list", 0, 1000, "5")};
}

std::vector<Field> moe_fields() {
  return {
      text_field("skew", "--skew",
                 "Skewed (MoE) all-to-all: expert popularity uniform or zipf:S (the expert of "
                 "rank r gets r^-S, S in [0, 4]; ranks dealt to experts by --moe-seed)",
                 "uniform"),
      integer_field("experts", "--experts",
                    "MoE: routed experts over the all-to-all group (>= its GPUs; GPU i of n hosts "
                    "experts e with floor(e n / E) = i)",
                    1, 1'000'000, "256"),
      integer_field("topk", "--topk", "MoE: experts per token (distinct)", 1, 1'000'000, "8"),
      integer_field("max_domains", "--max-domains",
                    "MoE: HB domains a token may reach (DeepSeek-V3's node-limited routing; 0: no "
                    "limit)",
                    0, 1'000'000, "0"),
      integer_field("tokens", "--tokens", "MoE: tokens each GPU dispatches", 1, 10'000'000, "4096"),
      text_field("bytes_per_token", "--bytes-per-token",
                 "MoE: bytes of one token sent to one expert (default: --bytes / (tokens x "
                 "topk), so that a GPU dispatches --bytes on average)"),
      text_field("expert_weights", "--expert-weights",
                 "MoE: JSON file, an array of one popularity weight per expert (instead of "
                 "--skew)"),
      text_field("pair_matrix", "--pair-matrix",
                 "MoE: JSON file, an n x n array of GPU-pair weights of the all-to-all group "
                 "(row = source), scaled to GPUs x tokens x topk x bytes per token"),
      text_field("moe_phase", "--moe-phase",
                 "MoE: dispatch, combine (the transpose) or both (one after the other)", "both"),
      integer_field("moe_seed", "--moe-seed", "MoE: seed of the token routing and Zipf ranks", 0,
                    std::int64_t{1} << 62, "1")};
}
}  // namespace

Command sim_command() {
  Command c;
  c.path = "sim";
  c.summary = "Flow-level simulation of a collective, or of one iteration's communication";
  c.fields = join(
      {cluster_fields(), network_fields(), strategy_fields(), collective_fields(), routing_fields(),
       moe_fields()},
      {flag_field("schedule", "--schedule",
                  "Simulate every collective of one iteration of the strategy given (--model, "
                  "--tp, ...), or else of the best plan, and compare with the analytic model"),
       flag_field("efficiency", "--efficiency",
                  "Scale HB and network links by the GPU preset's achievable fractions and add "
                  "its per-step collective latency (always on with --schedule)"),
       flag_field("json", "--json", "Print JSON"),
       flag_field("csv", "--csv",
                  "With --schedule: print CSV (a header and one row per op, the columns of the "
                  "JSON's ops)")});
  c.run = run_sim;
  c.python_name = "sim";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
