// railsim sim: flow-level simulation of a collective (or a whole iteration's communication) on
// the concrete fabric of a design.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <memory>
#include <string>

#include "commands.hpp"
#include "network_options.hpp"
#include "railsim/core/bytes.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/report/tables.hpp"
#include "railsim/sim/check.hpp"
#include "railsim/sim/moe.hpp"
#include "railsim/sim/options.hpp"
#include "railsim/topo/builders.hpp"
#include "strategy_options.hpp"

namespace railsim::cli {

namespace {

struct SimArgs {
  spec::ClusterOptions cluster;
  NetworkOptions network;
  StrategyOptions strategy;
  std::string collective = "all_reduce";
  std::string algorithm = "ring";
  std::string group = "all";
  std::string bytes = "1GB";
  double hop_latency_us = 0.5;
  std::string aggregate = "auto";
  std::int64_t max_flows = 4'000'000;
  std::string max_memory = "16GiB";
  int top = 5;
  double batch_tolerance = 1e-9;
  bool schedule = false;
  bool efficiency = false;
  bool json = false;
  bool csv = false;
  // Skewed (MoE) all-to-all.
  std::string skew = "uniform";
  std::int64_t experts = 256;
  std::int64_t topk = 8;
  std::int64_t max_domains = 0;
  std::int64_t tokens = 4096;
  std::string bytes_per_token;
  std::string expert_weights;
  std::string pair_matrix;
  std::string moe_phase = "both";
  std::int64_t moe_seed = 1;
};

const std::vector<std::string> kMoeOptionNames = {
    "--skew",      "--experts",         "--topk",           "--max-domains",
    "--tokens",    "--bytes-per-token", "--expert-weights", "--pair-matrix",
    "--moe-phase", "--moe-seed"};

bool moe_requested(const CLI::App& cmd) {
  for (const auto& o : kMoeOptionNames)
    if (cmd.count(o) > 0) return true;
  return false;
}

// The MoE routing options, checked (the library checks them again against the group).
sim::MoeRequest resolve_moe(const SimArgs& a, const CLI::App& cmd) {
  sim::MoeRequest req;
  auto& r = req.routing;
  const int files = (cmd.count("--skew") > 0) + (cmd.count("--expert-weights") > 0) +
                    (cmd.count("--pair-matrix") > 0);
  if (files > 1)
    throw InputError(cmd.count("--pair-matrix") > 0 ? "--pair-matrix" : "--expert-weights",
                     "choose one of --skew, --expert-weights and --pair-matrix");
  sim::parse_skew(a.skew, r, "--skew");
  if (cmd.count("--expert-weights") > 0)
    sim::load_weights(a.expert_weights, sim::Popularity::expert_weights, r, "--expert-weights");
  if (cmd.count("--pair-matrix") > 0)
    sim::load_weights(a.pair_matrix, sim::Popularity::pair_weights, r, "--pair-matrix");
  r.tokens = check_integer("--tokens", a.tokens, 1, 10'000'000);
  r.experts = check_integer("--experts", a.experts, 1, 1'000'000);
  r.topk = check_integer("--topk", a.topk, 1, 1'000'000);
  r.max_domains = check_integer("--max-domains", a.max_domains, 0, 1'000'000);
  r.seed =
      static_cast<std::uint64_t>(check_integer("--moe-seed", a.moe_seed, 0, std::int64_t{1} << 62));
  if (r.topk > r.experts)
    throw InputError("--topk", fmt::format("{} is more than --experts {}: a token picks distinct "
                                           "experts",
                                           r.topk, r.experts));
  req.phase = sim::parse_moe_phase(a.moe_phase, "--moe-phase");
  if (cmd.count("--bytes-per-token") > 0) {
    if (cmd.count("--bytes") > 0)
      throw InputError("--bytes-per-token", "choose one of --bytes and --bytes-per-token");
    req.bytes_per_token = units::parse_bytes(a.bytes_per_token, "--bytes-per-token");
  } else {
    // --bytes is what each GPU dispatches on average, as the uniform all-to-all's buffer.
    req.bytes_per_token = units::parse_bytes(a.bytes, "--bytes") /
                          (static_cast<double>(r.tokens) * static_cast<double>(r.topk));
  }
  return req;
}

void print_collective(const sim::CollectiveResult& r) {
  const report::Column t{
      .type = report::Type::real, .unit = "s", .precision = 6, .style = report::Style::si};
  fmt::print("completion time {}\n", report::human_cell(t, r.completion_time_s));
  fmt::print("{}", report::to_text(report::sim_phases_table(r), "  "));
  fmt::print("flows simulated {} (standing for {})\n", cost::with_commas(double(r.flows_simulated)),
             cost::with_commas(r.flows_represented));
  fmt::print("per link class:\n{}", report::to_text(report::sim_links_table(r.tiers), "  "));
  fmt::print("busiest links:\n{}", report::to_text(report::sim_links_table(r.busiest), "  "));
}

void run(const SimArgs& a, const CLI::App& cmd) {
  if (a.csv && a.json) throw InputError("--csv", "choose one of --json and --csv");
  if (a.csv && !a.schedule) throw InputError("--csv", "CSV is printed for --schedule only");
  const spec::Cluster c = spec::make_cluster(a.cluster);
  const spec::NetworkDesign d = resolve_network(a.network);
  sim::SimConfig cfg = sim::sim_config(d);
  cfg.hop_latency_s =
      check_number("--hop-latency-us", a.hop_latency_us, Range::non_negative(1e6)) * 1e-6;
  cfg.max_flows = check_integer("--max-flows", a.max_flows, 1000, 200'000'000);
  cfg.max_memory_bytes = units::parse_bytes(a.max_memory, "--max-memory");
  cfg.aggregate = sim::parse_aggregation(a.aggregate);
  cfg.batch_tolerance =
      check_number("--batch-tolerance", a.batch_tolerance, Range::between(0, 0.01));
  const int top = static_cast<int>(check_integer("--top", a.top, 0, 1000));

  if (a.schedule) {
    refuse_ignored(cmd, kMoeOptionNames,
                   "with --schedule (the skewed all-to-all is a single collective: "
                   "--collective all_to_all)");
    const StrategyInputs in = resolve_strategy_inputs(a.strategy);
    const perf::Strategy s = resolve_strategy(in, c);
    const topo::Fabric fabric = topo::build_fabric(c, d);
    const perf::Placement pl(fabric.cluster, s.degrees(), in.placement);
    const perf::CommSchedule sched = perf::build_comm_schedule(in.model, in.training, s, pl);
    const sim::ScheduleCheck chk = sim::check_schedule(fabric, sched, pl, cfg);
    const sim::ScheduleResult& r = chk.sim;
    const double analytic_total = chk.analytic_total_s;
    const report::Table table = report::schedule_check_table(chk);
    if (a.csv) {
      fmt::print("{}", report::to_csv(table));
      return;
    }
    if (!a.json)
      fmt::print(
          "{} on {} x {} ({}), tp {} pp {} dp {} ep {}: communication of one iteration\nnetwork: "
          "switch {}, {}\n{}",
          in.model.name, cost::with_commas(double(c.gpus)), c.gpu.name, spec::to_string(d.kind),
          s.tp, s.pp, s.dp, s.ep, d.sw.describe(), spec::describe_routing(d),
          report::to_text(table));
    if (a.json) {
      fmt::print("{}\n", sim::schedule_document(chk, fabric, s).dump(2));
    } else {
      const report::Column t{
          .type = report::Type::real, .unit = "s", .precision = 5, .style = report::Style::si};
      fmt::print(
          "serialised communication per iteration: simulated {}, analytic {} (ratio {:.3f})\n",
          report::human_cell(t, r.total_s), report::human_cell(t, analytic_total),
          analytic_total > 0 ? r.total_s / analytic_total : 0.0);
    }
    return;
  }

  refuse_ignored(cmd, kStrategyOptionNames,
                 "without --schedule (the model and strategy options time one iteration's "
                 "collectives; a single collective takes --collective, --bytes, --group)");
  const perf::CollectiveOp op = perf::parse_collective_op(a.collective, "--collective");
  sim::CollectiveRequest req;
  req.op = op;
  req.algorithm = sim::parse_collective_algorithm(a.algorithm, op);
  req.bytes = units::parse_bytes(a.bytes, "--bytes");
  const topo::Fabric fabric = topo::build_fabric(c, d);
  const sim::SimNetwork net =
      a.efficiency ? sim::like_for_like(fabric, cfg) : sim::make_sim_network(fabric);
  req.groups = sim::parse_groups(a.group, fabric.cluster);
  if (moe_requested(cmd)) {
    if (op != perf::CollectiveOp::all_to_all)
      throw InputError("--collective", fmt::format("{} with the MoE options (--skew, --topk, ...); "
                                                   "they shape an all_to_all",
                                                   a.collective));
    sim::MoeRequest moe = resolve_moe(a, cmd);
    moe.groups = req.groups;
    const sim::MoeResult m = sim::simulate_moe(net, moe, cfg, top);
    if (a.json) {
      Json j = sim::to_json(m.sim);
      j["collective"] = "all_to_all";
      j["group"] = a.group;
      j["groups"] = moe.groups.size();
      sim::add_settings_json(j, fabric, cfg, a.efficiency);
      j["moe"] = sim::to_json(moe, m.stats);
      fmt::print("{}\n", j.dump(2));
      return;
    }
    const report::Column b{
        .type = report::Type::real, .unit = "B", .precision = 4, .style = report::Style::si};
    fmt::print(
        "MoE all-to-all ({}), {} tokens per GPU x top-{} of {} experts, {}{}, {} per token, group "
        "{} ({} group{} of {}), on {} x {} (HB domain {}), {}\n",
        sim::to_string(moe.phase), moe.routing.tokens, moe.routing.topk, moe.routing.experts,
        sim::describe_popularity(moe.routing),
        moe.routing.max_domains > 0
            ? fmt::format(", at most {} HB domains per token", moe.routing.max_domains)
            : "",
        report::human_cell(b, moe.bytes_per_token), a.group,
        cost::with_commas(double(moe.groups.size())), moe.groups.size() == 1 ? "" : "s",
        cost::with_commas(double(moe.groups.front().size())), cost::with_commas(double(c.gpus)),
        c.gpu.name, c.hb_domain, spec::to_string(d.kind));
    fmt::print(
        "dispatch {} in all; busiest receiver {:.2f}x and sender {:.2f}x the mean; {:.1f}% "
        "leaves the HB domain; {:.2f} HB domains per token\n",
        report::human_cell(b, m.stats.total_bytes), m.stats.max_in_over_mean,
        m.stats.max_out_over_mean, 100 * m.stats.cross_domain_share, m.stats.domains_per_token);
    print_collective(m.sim);
    return;
  }
  const sim::CollectiveResult r = sim::simulate_collective(net, req, cfg, top);
  if (a.json) {
    fmt::print("{}\n",
               sim::collective_document(r, req, a.group, fabric, cfg, a.efficiency).dump(2));
    return;
  }
  fmt::print(
      "{} ({}) of {} per GPU, group {} ({} group{} of {}), on {} x {} (HB domain "
      "{}, HB {:g} GB/s, NIC {:g} Gb/s), {} ({} tier{})",
      perf::to_string(op), perf::to_string(req.algorithm),
      report::human_cell(
          {.type = report::Type::real, .unit = "B", .precision = 4, .style = report::Style::si},
          req.bytes),
      a.group, cost::with_commas(double(req.groups.size())), req.groups.size() == 1 ? "" : "s",
      cost::with_commas(double(req.groups.front().size())), cost::with_commas(double(c.gpus)),
      c.gpu.name, c.hb_domain, c.hb_bw_Bps / 1e9, units::Bps_to_gbps(c.nic_bw_per_gpu_Bps()),
      spec::to_string(d.kind), fabric.tiers, fabric.tiers == 1 ? "" : "s");
  fmt::print("\nnetwork: switch {}, {}\n", d.sw.describe(), spec::describe_routing(d));
  print_collective(r);
}

}  // namespace

void add_sim_command(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  auto* cmd = app.add_subcommand(
      "sim", "Flow-level simulation of a collective, or of one iteration's communication");
  add_cluster_options(*cmd, args->cluster);
  add_network_options(*cmd, args->network);
  add_strategy_options(*cmd, args->strategy);
  cmd->add_option("--collective", args->collective,
                  "all_reduce, all_gather, reduce_scatter, all_to_all or send_recv (NCCL test "
                  "names allreduce, allgather, reducescatter, alltoall, p2p also accepted)")
      ->capture_default_str();
  cmd->add_option("--algorithm", args->algorithm,
                  "ring or hierarchical (reductions; hierarchical = HB domain, then rails)")
      ->capture_default_str();
  cmd->add_option("--group", args->group,
                  "all (one group of every GPU), rail (every rail, concurrently), domain (every HB "
                  "domain), rail0, domain0, pair (first and last GPU)")
      ->capture_default_str();
  cmd->add_option("--bytes", args->bytes,
                  "Buffer per GPU (as in NCCL tests): e.g. 1e9, 512MB, 1GiB")
      ->capture_default_str();
  cmd->add_option("--hop-latency-us", args->hop_latency_us,
                  "Latency per link crossed, microseconds")
      ->capture_default_str();
  cmd->add_option("--aggregate", args->aggregate,
                  "all-to-all over all GPUs by link class: auto (beyond --max-flows), on, off")
      ->capture_default_str();
  cmd->add_option("--max-flows", args->max_flows,
                  "Flows per simulated phase (forwarding legs and pipelined chunks counted) "
                  "before ring steps are scaled or all-to-all aggregated")
      ->capture_default_str();
  cmd->add_option("--max-memory", args->max_memory,
                  "Refuse, before it starts, a phase whose estimated memory exceeds this "
                  "(e.g. 4GB, 16GiB)")
      ->capture_default_str();
  cmd->add_option("--batch-tolerance", args->batch_tolerance,
                  "T: an event at time t also ends the flows finishing by t + T max(t, L), L "
                  "the busiest link's bytes over its capacity, and re-fills at the mean of their "
                  "finishing times weighted by the capacity they free (speed against accuracy; "
                  "<= 0.01; 1e-4 runs a 4,096-GPU all-to-all flow by flow in about 15 s on 2 "
                  "cores, its completion within about 1.4e-5 of exact, and both phases of a "
                  "skewed MoE all-to-all of 4,096 GPUs in about 36 s)")
      ->capture_default_str();
  cmd->add_option("--top", args->top, "Busiest links to list")->capture_default_str();
  add_routing_options(*cmd, args->network);
  cmd->add_option("--skew", args->skew,
                  "Skewed (MoE) all-to-all: expert popularity uniform or zipf:S (the expert of "
                  "rank r gets r^-S, S in [0, 4]; ranks dealt to experts by --moe-seed)")
      ->capture_default_str();
  cmd->add_option("--experts", args->experts,
                  "MoE: routed experts over the all-to-all group (>= its GPUs; GPU i of n hosts "
                  "experts e with floor(e n / E) = i)")
      ->capture_default_str();
  cmd->add_option("--topk", args->topk, "MoE: experts per token (distinct)")->capture_default_str();
  cmd->add_option("--max-domains", args->max_domains,
                  "MoE: HB domains a token may reach (DeepSeek-V3's node-limited routing; 0: no "
                  "limit)")
      ->capture_default_str();
  cmd->add_option("--tokens", args->tokens, "MoE: tokens each GPU dispatches")
      ->capture_default_str();
  cmd->add_option("--bytes-per-token", args->bytes_per_token,
                  "MoE: bytes of one token sent to one expert (default: --bytes / (tokens x "
                  "topk), so that a GPU dispatches --bytes on average)");
  cmd->add_option("--expert-weights", args->expert_weights,
                  "MoE: JSON file, an array of one popularity weight per expert (instead of "
                  "--skew)");
  cmd->add_option("--pair-matrix", args->pair_matrix,
                  "MoE: JSON file, an n x n array of GPU-pair weights of the all-to-all group "
                  "(row = source), scaled to GPUs x tokens x topk x bytes per token");
  cmd->add_option("--moe-phase", args->moe_phase,
                  "MoE: dispatch, combine (the transpose) or both (one after the other)")
      ->capture_default_str();
  cmd->add_option("--moe-seed", args->moe_seed, "MoE: seed of the token routing and Zipf ranks")
      ->capture_default_str();
  cmd->add_flag("--schedule", args->schedule,
                "Simulate every collective of one iteration of the strategy (--model, --tp, ...) "
                "and compare with the analytic model");
  cmd->add_flag("--efficiency", args->efficiency,
                "Scale HB and network links by the GPU preset's achievable fractions and add its "
                "per-step collective latency (always on with --schedule)");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_flag("--csv", args->csv,
                "With --schedule: print CSV (a header and one row per op, the columns of the "
                "JSON's ops)");
  cmd->callback([args, cmd] { run(*args, *cmd); });
}

}  // namespace railsim::cli
