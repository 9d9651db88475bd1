// railsim estimate: the iteration time, memory and MFU of one given strategy.
#include <fmt/format.h>

#include "railsim/command/inputs.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/perf/report.hpp"
#include "railsim/perf/tables.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/report/format.hpp"
#include "railsim/spec/routing_table.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {

struct Estimate {
  const perf::Model& m;
  const perf::Training& tr;
  const spec::Cluster& c;
  const spec::NetworkDesign& d;
  const perf::Strategy& s;
  const perf::IterationTime& it;
};

void print_human(Output& out, const Estimate& e, const report::Table& comm,
                 std::optional<double> train_tokens, double days) {
  const auto& [m, tr, c, d, s, it] = e;
  out.print("{} on {} x {} (HB domain {}, NIC {:g} Gb/s), {}\n", m.name,
            report::thousands(double(c.gpus)), c.gpu.name, c.hb_domain,
            units::Bps_to_gbps(c.nic_bw_per_gpu_Bps()), spec::to_string(d.kind));
  out.print("network: switch {}, {}\n", d.sw.describe(), spec::describe_routing(d));
  out.print("strategy: {}\n", perf::describe(s));
  out.print("software: {}{}\n", spec::describe_software(tr), spec::cp_note(tr.stack, s.cp));
  out.print("iteration time {:.4g} s   MFU {:.1f}%   HFU {:.1f}%   {} tokens/s\n",
            it.iteration_time_s, 100 * it.mfu, 100 * it.hfu, report::thousands(it.tokens_per_s));
  if (train_tokens)
    out.print(
        "time to train {} tokens: {:.1f} days ({} h) at this iteration time, without "
        "failures or restarts (railsim fail goodput adds them)\n",
        report::count(*train_tokens), days, report::thousands(days * 24));
  const perf::ErrorBand band = perf::error_band(c.gpu.name, m, tr);
  out.print("error band +-{:.1f}% ({:.4g}-{:.4g} s): {}\n", 100 * band.fraction,
            band.low(it.iteration_time_s), band.high(it.iteration_time_s), band.basis);
  if (s.offload_layers > 0)
    out.print(
        "memory {:.1f} GiB per GPU of {:.0f} GiB, {:.1f} GiB offloaded to its {:.0f} GiB of "
        "host memory ({})\n",
        it.memory.total() / units::kGiB, c.gpu.hbm_bytes / units::kGiB,
        it.memory.host_bytes / units::kGiB, c.gpu.host_memory_bytes / units::kGiB,
        it.feasible ? "fits" : "DOES NOT FIT");
  else
    out.print("memory {:.1f} GiB per GPU of {:.0f} GiB ({})\n", it.memory.total() / units::kGiB,
              c.gpu.hbm_bytes / units::kGiB, it.feasible ? "fits" : "DOES NOT FIT");
  out.print("breakdown:\n{}", report::to_text(perf::breakdown_table(it), "  "));
  if (it.cross_rail)
    out.print("note: some collectives send traffic between rails{}\n",
              d.kind == spec::DesignKind::rail_only ? " (forwarded through the HB domain)" : "");
  if (comm.rows.empty()) return;
  out.print("communication (per iteration, fullest pipeline stage; each = one occurrence):\n{}",
            report::to_text(comm, "  "));
}

void run_estimate(const Args& a, Output& out) {
  const StrategyInputs in = resolve_strategy_inputs(a);
  const spec::Cluster c = spec::make_cluster(cluster_options(a));
  const spec::NetworkDesign d = resolve_network(a);
  const perf::Strategy s = resolve_strategy(in, c);
  const std::optional<double> tokens = a.number_if("train_tokens");
  if (a.flag("json")) {
    out.print(
        "{}\n",
        perf::estimate_document(in.model, in.training, s, c, d, in.placement, tokens).dump(2));
    return;
  }
  const perf::IterationTime it = perf::estimate(in.model, in.training, s, c, d, in.placement);
  // The schedule that was timed, op by op (the same as estimate() builds internally).
  const perf::Placement pl(c, s.degrees(), in.placement);
  const perf::CommSchedule cs = perf::build_comm_schedule(in.model, in.training, s, pl);
  const perf::NetworkModel nm = perf::make_network_model(c, d);
  const double days = tokens ? perf::days_to_train(it, *tokens) : 0;
  print_human(out, {in.model, in.training, c, d, s, it}, perf::comm_table(cs, pl, nm), tokens,
              days);
}
}  // namespace

Command estimate_command() {
  Command c;
  c.path = "estimate";
  c.summary = "Iteration time, memory and MFU of one parallelization strategy";
  c.fields = join({cluster_fields(), network_fields(), routing_fields(), strategy_fields()},
                  {train_tokens_field(), flag_field("json", "--json", "Print JSON")});
  c.run = run_estimate;
  c.python_name = "estimate";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
