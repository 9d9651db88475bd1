// railsim estimate: the iteration time, memory and MFU of one given strategy.
#include <fmt/format.h>

#include "commands.hpp"
#include "network_options.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/perf/report.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/report/tables.hpp"
#include "strategy_options.hpp"

namespace railsim::cli {

namespace {
struct EstimateArgs {
  spec::ClusterOptions cluster;
  NetworkOptions network;
  StrategyOptions strategy;
  std::optional<double> train_tokens;
  bool json = false;
};

// "15T", "300B", "2.5M", "40,000".
std::string tokens_text(double n) {
  if (n >= 1e12) return fmt::format("{:g}T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:g}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:g}M", n / 1e6);
  return cost::with_commas(n);
}

void print_human(const perf::Model& m, const perf::Training& tr, const spec::Cluster& c,
                 const spec::NetworkDesign& d, const perf::Strategy& s,
                 const perf::IterationTime& it, const report::Table& comm,
                 std::optional<double> train_tokens, double train_days) {
  fmt::print("{} on {} x {} (HB domain {}, NIC {:g} Gb/s), {}\n", m.name,
             cost::with_commas(double(c.gpus)), c.gpu.name, c.hb_domain,
             units::Bps_to_gbps(c.nic_bw_per_gpu_Bps()), spec::to_string(d.kind));
  fmt::print("network: switch {}, {}\n", d.sw.describe(), spec::describe_routing(d));
  fmt::print("strategy: {}\n", perf::describe(s));
  fmt::print("software: stack {}, {}, flash attention {}\n", tr.stack.name,
             perf::to_string(tr.dtype), tr.flash_attention ? "on" : "off");
  fmt::print("iteration time {:.4g} s   MFU {:.1f}%   HFU {:.1f}%   {} tokens/s\n",
             it.iteration_time_s, 100 * it.mfu, 100 * it.hfu, cost::with_commas(it.tokens_per_s));
  if (train_tokens)
    fmt::print(
        "time to train {} tokens: {:.1f} days ({} h) at this iteration time, without "
        "failures or restarts (railsim fail goodput adds them)\n",
        tokens_text(*train_tokens), train_days, cost::with_commas(train_days * 24));
  const perf::ErrorBand band = perf::error_band(c.gpu.name, tr.stack.name);
  fmt::print("error band +-{:.1f}% ({:.4g}-{:.4g} s): {}\n", 100 * band.fraction,
             it.iteration_time_s * (1 - band.fraction), it.iteration_time_s * (1 + band.fraction),
             band.basis);
  fmt::print("memory {:.1f} GiB per GPU of {:.0f} GiB ({})\n", it.memory.total() / units::kGiB,
             c.gpu.hbm_bytes / units::kGiB, it.feasible ? "fits" : "DOES NOT FIT");
  fmt::print("breakdown:\n{}", report::to_text(report::breakdown_table(it), "  "));
  if (it.cross_rail)
    fmt::print("note: some collectives send traffic between rails{}\n",
               d.kind == spec::DesignKind::rail_only ? " (forwarded through the HB domain)" : "");
  if (comm.rows.empty()) return;
  fmt::print("communication (per iteration, first pipeline stage; each = one occurrence):\n{}",
             report::to_text(comm, "  "));
}
}  // namespace

void add_estimate_command(CLI::App& app) {
  auto args = std::make_shared<EstimateArgs>();
  auto* cmd = app.add_subcommand("estimate",
                                 "Iteration time, memory and MFU of one parallelization strategy");
  add_cluster_options(*cmd, args->cluster);
  add_network_options(*cmd, args->network);
  add_routing_options(*cmd, args->network);
  add_strategy_options(*cmd, args->strategy);
  cmd->add_option("--train-tokens", args->train_tokens,
                  "Tokens to train on, in (0, 1e18]: prints the days this iteration time takes "
                  "for them (tokens / tokens per second; no failures)");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args] {
    const StrategyInputs in = resolve_strategy_inputs(args->strategy);
    const spec::Cluster c = spec::make_cluster(args->cluster);
    const spec::NetworkDesign d = resolve_network(args->network);
    const perf::Strategy s = resolve_strategy(in, c);
    if (args->json) {
      fmt::print("{}\n", perf::estimate_document(in.model, in.training, s, c, d, in.placement,
                                                 args->train_tokens)
                             .dump(2));
      return;
    }
    const perf::IterationTime it = perf::estimate(in.model, in.training, s, c, d, in.placement);
    // The schedule that was timed, op by op (the same as estimate() builds internally).
    const perf::Placement pl(c, s.degrees(), in.placement);
    const perf::CommSchedule cs = perf::build_comm_schedule(in.model, in.training, s, pl);
    const perf::NetworkModel nm = perf::make_network_model(c, d);
    const double days = args->train_tokens ? perf::days_to_train(it, *args->train_tokens) : 0;
    print_human(in.model, in.training, c, d, s, it, report::comm_table(cs, pl, nm),
                args->train_tokens, days);
  });
}

}  // namespace railsim::cli
