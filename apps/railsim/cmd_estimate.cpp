// railsim estimate: the iteration time, memory and MFU of one given strategy.
#include <fmt/format.h>

#include "commands.hpp"
#include "network_options.hpp"
#include "railsim/core/units.hpp"
#include "railsim/perf/search.hpp"
#include "strategy_options.hpp"

namespace railsim::cli {

namespace {
struct EstimateArgs {
  spec::ClusterOptions cluster;
  NetworkOptions network;
  StrategyOptions strategy;
  bool json = false;
};

void print_human(const perf::Model& m, const spec::Cluster& c, const spec::NetworkDesign& d,
                 const perf::Strategy& s, const perf::IterationTime& it) {
  fmt::print("{} on {} x {} (HB domain {}, NIC {:g} Gb/s), {}\n", m.name, c.gpus, c.gpu.name,
             c.hb_domain, units::Bps_to_gbps(c.nic_bw_per_gpu_Bps()), spec::to_string(d.kind));
  fmt::print("strategy: {}\n", perf::describe(s));
  fmt::print("iteration time {:.4g} s   MFU {:.1f}%   HFU {:.1f}%   {:.4g} tokens/s\n",
             it.iteration_time_s, 100 * it.mfu, 100 * it.hfu, it.tokens_per_s);
  fmt::print("memory {:.1f} GiB per GPU of {:.0f} GiB ({})\n", it.memory.total() / units::kGiB,
             c.gpu.hbm_bytes / units::kGiB, it.feasible ? "fits" : "DOES NOT FIT");
  const perf::Breakdown& b = it.breakdown;
  const double T = it.iteration_time_s;
  auto row = [&](const char* name, double v) {
    fmt::print("  {:<18} {:>10.4g} s {:>6.1f}%\n", name, v, 100 * v / T);
  };
  fmt::print("breakdown:\n");
  row("compute", b.compute_s);
  row("recompute", b.recompute_s);
  row("tp/sp comm", b.tp_comm_s);
  row("ep all-to-all", b.ep_comm_s);
  row("pp send/recv", b.pp_comm_s);
  row("dp comm (exposed)", b.dp_comm_s);
  row("rail forwarding", b.rail_forwarding_s);
  row("pipeline bubble", b.bubble_s);
  row("optimizer", b.optimizer_s);
  if (it.cross_rail)
    fmt::print("note: some collectives send traffic between rails{}\n",
               d.kind == spec::DesignKind::rail_only ? " (forwarded through the HB domain)" : "");
}
void print_comm(const Json& comm) {
  if (comm.empty()) return;
  fmt::print("communication (per iteration, first pipeline stage):\n");
  fmt::print("  {:<4} {:<14} {:<4} {:<12} {:<9} {:>10} {:>8} {:>16} {:>11} {:>11}\n", "par", "op",
             "axis", "algorithm", "phase", "MB", "count", "group n(p x q)", "each_ms", "fwd_ms");
  for (const Json& o : comm) {
    const Json& g = o["group"];
    fmt::print(
        "  {:<4} {:<14} {:<4} {:<12} {:<9} {:>10.2f} {:>8.0f} {:>16} {:>11.4f} {:>11.4f}{}\n",
        o["parallelism"].get<std::string>(), o["op"].get<std::string>(),
        o["axis"].get<std::string>(), o["algorithm"].get<std::string>(),
        o["phase"].get<std::string>(), o["bytes"].get<double>() / 1e6, o["count"].get<double>(),
        fmt::format("{}({}x{}){}", g["size"].get<std::int64_t>(),
                    g["per_domain"].get<std::int64_t>(), g["domains"].get<std::int64_t>(),
                    g["rail_aligned"].get<bool>() ? "" : "*"),
        1e3 * o["time_s"].get<double>(), 1e3 * o["forwarding_s"].get<double>(),
        o["cross_rail"].get<bool>() ? "  cross-rail" : "");
  }
  fmt::print(
      "  (p x q: members per HB domain x domains; * not rail-aligned; fwd: rail-only HB hop)\n");
}
}  // namespace

void add_estimate_command(CLI::App& app) {
  auto args = std::make_shared<EstimateArgs>();
  auto* cmd = app.add_subcommand("estimate",
                                 "Iteration time, memory and MFU of one parallelization strategy");
  add_cluster_options(*cmd, args->cluster);
  add_network_options(*cmd, args->network);
  add_strategy_options(*cmd, args->strategy);
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args] {
    const StrategyInputs in = resolve_strategy_inputs(args->strategy);
    const spec::Cluster c = spec::make_cluster(args->cluster);
    const spec::NetworkDesign d = resolve_network(args->network);
    const perf::Strategy s = resolve_strategy(in, c);
    const perf::IterationTime it = perf::estimate(in.model, in.training, s, c, d, in.placement);
    // The schedule that was timed, op by op (the same as estimate() builds internally).
    const perf::Placement pl(c, s.degrees(), in.placement);
    const perf::CommSchedule cs = perf::build_comm_schedule(in.model, in.training, s, pl);
    const Json comm = perf::comm_to_json(cs, pl, perf::make_network_model(c, d));
    if (args->json) {
      Json j = perf::to_json(s, it, in.placement);
      j["model"] = in.model.name;
      j["gpus"] = c.gpus;
      j["gpu"] = c.gpu.name;
      j["hb_domain"] = c.hb_domain;
      j["design"] = std::string(spec::to_string(d.kind));
      j["global_batch"] = in.training.global_batch;
      j["seq_len"] = in.training.seq_len;
      j["dtype"] = std::string(perf::to_string(in.training.dtype));
      j["flash_attention"] = in.training.flash_attention;
      j["comm"] = comm;
      fmt::print("{}\n", j.dump(2));
    } else {
      print_human(in.model, c, d, s, it);
      print_comm(comm);
    }
  });
}

}  // namespace railsim::cli
