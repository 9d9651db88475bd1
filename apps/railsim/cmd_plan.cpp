// railsim plan: search every valid parallelization and print the best ones.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "commands.hpp"
#include "network_options.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/perf/report.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/report/table.hpp"
#include "railsim/report/tables.hpp"
#include "strategy_options.hpp"

namespace railsim::cli {

namespace {
// What MFU and HFU are measured against: the dense peak at the training precision.
std::string mfu_basis(const spec::Cluster& c, const perf::Training& tr) {
  const bool fp8 = tr.dtype == perf::Dtype::fp8;
  return fmt::format("dense {} peak of the {}, {:g} TFLOP/s per GPU", fp8 ? "fp8" : "bf16",
                     c.gpu.name, (fp8 ? c.gpu.peak_fp8_flops : c.gpu.peak_bf16_flops) / 1e12);
}
struct PlanArgs {
  spec::ClusterOptions cluster;
  NetworkOptions network;
  StrategyOptions strategy;
  int top = 5;
  int threads = 0;
  std::int64_t max_candidates = perf::kDefaultMaxCandidates;
  bool json = false;
  bool csv = false;
  bool explain = false;
};
}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand(
      "plan", "Search all parallelization strategies; print the fastest that fit in memory");
  add_cluster_options(*cmd, args->cluster);
  add_network_options(*cmd, args->network);
  add_routing_options(*cmd, args->network);
  add_strategy_options(*cmd, args->strategy);
  cmd->add_option("--top", args->top, "Plans to print")->capture_default_str();
  cmd->add_option("--threads", args->threads, "Worker threads (0 = all cores)")
      ->capture_default_str();
  cmd->add_option("--max-candidates", args->max_candidates,
                  "Refuse a search that would visit more candidate strategies than this "
                  "(estimated before any is built)")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_flag("--csv", args->csv, "Print CSV (a header and one row per plan)");
  cmd->add_flag("--explain", args->explain,
                "Also show the model's size and FLOPs, the MFU basis, and the winner against the "
                "runner-up part by part (time and memory); with --json: an \"explain\" object");
  cmd->callback([args] {
    if (args->json && args->csv) throw InputError("--csv", "choose one of --json and --csv");
    const StrategyInputs in = resolve_strategy_inputs(args->strategy);
    const spec::Cluster c = spec::make_cluster(args->cluster);
    const spec::NetworkDesign d = resolve_network(args->network);
    perf::PlanOptions po;
    po.pins = in.pins;
    po.top = static_cast<int>(check_integer("--top", args->top, 1, 100000));
    po.threads = check_threads("--threads", args->threads);
    po.max_candidates =
        check_integer("--max-candidates", args->max_candidates, 1, std::int64_t{1} << 40);
    const perf::EstimateContext ctx = perf::make_context(in.model, in.training, c, d, in.placement);
    const perf::PlanResult res = perf::plan(ctx, po);
    if (res.plans.empty()) throw perf::explain_no_plan(res, in.model, in.training, in.pins, c);
    const perf::ErrorBand band = perf::error_band(c.gpu.name, in.training.stack.name);
    const perf::RoutingFlip flip = perf::plan_under_contrasting_routing(
        in.model, in.training, c, d, po, in.placement, res.plans.front());
    if (args->json) {
      Json j = perf::plan_document(in.model, in.training, c, d, res, in.placement, &flip);
      if (args->explain) {
        const std::vector<perf::Plan> two(
            res.plans.begin(), res.plans.begin() + std::min<std::ptrdiff_t>(2, res.plans.size()));
        j["explain"] = {{"total_params", in.model.total_params()},
                        {"active_params", in.model.active_params()},
                        {"model_flops_per_iteration", res.plans.front().time.model_flops},
                        {"mfu_basis", mfu_basis(c, in.training)},
                        {"peak_flops_per_gpu", ctx.peak_flops},
                        {"parts", report::to_json(report::explain_table(two))}};
      }
      fmt::print("{}\n", j.dump(2));
      return;
    }
    report::Table table = report::plans_table(res.plans, in.placement);
    report::add_routing_columns(table, d);
    if (args->csv) {
      fmt::print("{}", report::to_csv(table));
      return;
    }
    fmt::print(
        "{} on {} x {} (HB domain {}), {}, stack {} ({}{}): {} strategies, {} fit in "
        "memory\n",
        in.model.name, cost::with_commas(double(c.gpus)), c.gpu.name, c.hb_domain,
        spec::to_string(d.kind), in.training.stack.name, perf::to_string(in.training.dtype),
        in.training.flash_attention ? ", flash attention" : "",
        cost::with_commas(double(res.evaluated)), cost::with_commas(double(res.feasible)));
    fmt::print("network: switch {}, {}\n", d.sw.describe(), spec::describe_routing(d));
    fmt::print("{}", report::to_text(table));
    fmt::print("error band of every time: +-{:.1f}% ({})\n", 100 * band.fraction, band.basis);
    if (flip.flips) fmt::print("note: {}\n", flip.line);
    if (!args->explain) return;
    const perf::Plan& w = res.plans.front();
    fmt::print(
        "\n{}: {:.4g}B parameters ({:.4g}B active per token), {} PFLOP per iteration "
        "(model FLOPs, no recomputation); MFU is against the {}\n",
        in.model.name, in.model.total_params() / 1e9, in.model.active_params() / 1e9,
        cost::with_commas(w.time.model_flops / 1e15), mfu_basis(c, in.training));
    if (res.plans.size() < 2) {
      fmt::print("only one plan fits: nothing to compare it with\n");
      return;
    }
    const std::vector<perf::Plan> two(res.plans.begin(), res.plans.begin() + 2);
    fmt::print(
        "why #1 beats #2, part by part (time of one iteration; memory of the fullest "
        "stage):\n{}",
        report::to_text_by_column(report::explain_table(two), "plan"));
  });
}

}  // namespace railsim::cli
