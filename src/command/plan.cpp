// railsim plan: search every valid parallelization and print the best ones.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "railsim/command/inputs.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/report.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/tables.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/report/format.hpp"
#include "railsim/report/table.hpp"
#include "railsim/spec/routing_table.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {
// What MFU and HFU are measured against: the dense peak at the training precision.
std::string mfu_basis(const spec::Cluster& c, const perf::Training& tr) {
  return fmt::format("dense {} peak of the {}, {:g} TFLOP/s per GPU", perf::to_string(tr.dtype),
                     c.gpu.name, perf::dtype_peak_flops(c.gpu, tr.dtype) / 1e12);
}

std::vector<perf::Plan> first_two(const perf::PlanResult& res) {
  return {res.plans.begin(), res.plans.begin() + std::min<std::ptrdiff_t>(2, res.plans.size())};
}

// The user's own plan (--against), timed as estimate times it, against the search's best.
struct Against {
  perf::Plan plan;
  std::string line;  // what decides between them (perf::explain_versus)
  bool is_best = false;
  // Where the user's plan does not fit: the fastest plan of its shape that does
  // (perf::fastest_of_shape), or none.
  std::optional<perf::Plan> fits_instead;
};

std::optional<Against> against_of(const Args& a, const StrategyInputs& in, const spec::Cluster& c,
                                  const perf::EstimateContext& ctx, const perf::PlanOptions& po,
                                  const perf::Plan& best) {
  const auto text = a.text_if("against");
  if (!text) return std::nullopt;
  const perf::Strategy s = perf::plan_from_text(in.model, in.training, *text, c, "--against");
  const perf::Placement pl(c, s.degrees(), in.placement);
  const perf::CommSchedule cs = perf::build_comm_schedule(in.model, in.training, s, pl);
  Against r{{s, perf::estimate(ctx, s, pl, cs)},
            "",
            perf::describe(s) == perf::describe(best.strategy),
            std::nullopt};
  r.line = r.is_best ? "it is the best plan" : perf::explain_versus(best, r.plan, c.gpu.hbm_bytes);
  if (!r.plan.time.feasible) r.fits_instead = perf::fastest_of_shape(ctx, po, s);
  return r;
}

// The best plan of each other shape (tp, cp, pp, dp, ep): the alternatives that split the GPUs
// differently, not the winner with one knob turned.
std::vector<perf::Plan> other_shapes(const perf::EstimateContext& ctx, perf::PlanOptions po,
                                     const perf::Plan& best) {
  po.top = 4;
  po.distinct_shapes = true;
  std::vector<perf::Plan> out;
  for (perf::Plan& p : perf::plan(ctx, po).plans)
    if (!perf::same_shape(p.strategy, best.strategy) && out.size() < 3) out.push_back(std::move(p));
  return out;
}

void print_explain(Output& out, const perf::Model& m, const perf::Training& tr,
                   const spec::Cluster& c, const perf::PlanResult& res,
                   const std::vector<perf::Plan>& shapes, perf::PlacementKind placement) {
  const perf::Plan& w = res.plans.front();
  out.print(
      "\n{}: {:.4g}B parameters ({:.4g}B active per token){}, {} PFLOP per iteration "
      "(model FLOPs, no recomputation); MFU is against the {}\n",
      m.name, m.total_params() / 1e9, m.active_params() / 1e9,
      m.mtp_layers > 0
          ? fmt::format(", and {} multi-token-prediction module(s) of {:.4g}B on the last stage "
                        "(timed, not in model FLOPs)",
                        m.mtp_layers, m.mtp_module_params() / 1e9)
          : std::string(),
      report::thousands(w.time.model_flops / 1e15), mfu_basis(c, tr));
  if (res.plans.size() < 2)
    out.print("one plan printed (--top 1) or fitting: no runner-up to compare it with\n");
  else
    out.print(
        "why #1 beats #2, part by part (time of one iteration; memory of the fullest "
        "stage):\n{}",
        report::to_text_by_column(perf::explain_table(first_two(res)), "plan"));
  if (shapes.empty()) return;
  out.print("\nthe best plans of other shapes (tp, pp, dp, ...), against #1:\n");
  report::Table t = perf::plans_table(shapes, placement);
  std::vector<report::Cell> vs;
  for (const perf::Plan& p : shapes)
    vs.push_back(perf::explain_versus(res.plans.front(), p, c.gpu.hbm_bytes));
  t.add_column(report::text_column("against_best", "against #1"), std::move(vs));
  out.print("{}", report::to_text(t));
}

void print_against(Output& out, const Against& mine, const perf::Plan& best) {
  out.print("\nyour plan, {}: {}\n", perf::describe_for_people(mine.plan.strategy), mine.line);
  if (mine.is_best) return;
  if (!mine.plan.time.feasible) {
    const std::string shape = perf::describe_degrees(mine.plan.strategy);
    if (const auto& f = mine.fits_instead)
      out.print("the fastest plan of its shape ({}) that fits: {}, {:.3f} s ({}), {:.1f} GiB\n",
                shape, perf::describe_for_people(f->strategy), f->time.iteration_time_s,
                f->time.iteration_time_s > best.time.iteration_time_s
                    ? fmt::format("{:.1f}% slower than the best",
                                  100 * (f->time.iteration_time_s / best.time.iteration_time_s - 1))
                    : std::string("the best plan"),
                f->time.memory.total() / units::kGiB);
    else
      out.print("no plan of its shape ({}) fits\n", shape);
  }
  out.print(
      "the best plan against yours, part by part:\n{}",
      report::to_text_by_column(perf::explain_table({best, mine.plan}, {"best", "yours"}), "plan"));
}

Json other_shapes_json(const std::vector<perf::Plan>& shapes, const perf::Plan& best,
                       const spec::Cluster& c, const StrategyInputs& in) {
  Json j = Json::array();
  for (const perf::Plan& p : shapes)
    j.push_back({{"strategy", perf::to_json(p.strategy, in.placement)},
                 {"iteration_time_s", p.time.iteration_time_s},
                 {"mfu", p.time.mfu},
                 {"vs_best_pct", 100 * (p.time.iteration_time_s / best.time.iteration_time_s - 1)},
                 {"why", perf::explain_versus(best, p, c.gpu.hbm_bytes)}});
  return j;
}

// JSON of Against::fits_instead: null where the user's plan fits or where none of its shape
// does; else the plan as the search prints it.
Json fits_instead_json(const Against& mine, const perf::Plan& best, const StrategyInputs& in) {
  if (!mine.fits_instead) return nullptr;
  const perf::Plan& f = *mine.fits_instead;
  return {{"strategy", perf::to_json(f.strategy, in.placement)},
          {"iteration_time_s", f.time.iteration_time_s},
          {"memory_gib", f.time.memory.total() / units::kGiB},
          {"vs_best_pct", 100 * (f.time.iteration_time_s / best.time.iteration_time_s - 1)}};
}

void run_plan(const Args& a, Output& out) {
  one_format(a);
  const StrategyInputs in = resolve_strategy_inputs(a);
  const spec::Cluster cluster = spec::make_cluster(cluster_options(a));
  const spec::Cluster c = job_of(a, cluster);  // the job's GPUs; the network is the cluster's
  const bool part = c.gpus < cluster.gpus;
  const spec::NetworkDesign d = resolve_network(a);
  perf::PlanOptions po;
  po.pins = in.pins;
  po.top = static_cast<int>(a.integer("top"));
  po.threads = check_threads("--threads", a.integer("threads"));
  po.max_candidates = a.integer("max_candidates");
  const perf::EstimateContext ctx =
      perf::make_context(in.model, in.training, c, cluster, d, in.placement);
  const perf::PlanResult res = perf::plan(ctx, po);
  if (res.plans.empty()) throw perf::explain_no_plan(res, in.model, in.training, in.pins, c);
  const std::optional<Against> mine = against_of(a, in, c, ctx, po, res.plans.front());
  const std::vector<perf::Plan> shapes =
      a.flag("explain") ? other_shapes(ctx, po, res.plans.front()) : std::vector<perf::Plan>{};
  const perf::ErrorBand band = perf::error_band(c.gpu.name, in.model, in.training);
  const perf::RoutingFlip flip = perf::plan_under_contrasting_routing(
      in.model, in.training, c, d, po, in.placement, res.plans.front(), &cluster);
  // Sizes near the one asked for that plan much better (the batch or N factors badly).
  const std::vector<perf::BetterSize> better =
      perf::better_sizes(in.model, in.training, c, cluster, d, po, in.placement, res.plans.front());
  // --train-tokens: the days each plan takes for them (no failures).
  const std::optional<double> tokens = a.number_if("train_tokens");
  std::vector<double> days;
  if (tokens)
    for (const perf::Plan& p : res.plans) days.push_back(perf::days_to_train(p.time, *tokens));
  if (a.flag("json")) {
    Json j = perf::plan_document(in.model, in.training, c, d, res, in.placement, &flip);
    if (part) j["cluster_gpus"] = cluster.gpus;  // "gpus" is the job's
    j["better_sizes"] = Json::array();
    for (const perf::BetterSize& b : better)
      j["better_sizes"].push_back({{"batch", b.batch},
                                   {"job_gpus", b.job_gpus},
                                   {"gain", b.gain},
                                   {"iteration_time_s", b.plan.time.iteration_time_s},
                                   {"tokens_per_s", b.plan.time.tokens_per_s},
                                   {"strategy", perf::to_json(b.plan.strategy, in.placement)}});
    if (tokens) {
      j["train_tokens"] = *tokens;
      for (std::size_t i = 0; i < days.size(); ++i) j["plans"][i]["train_days"] = days[i];
    }
    if (a.flag("explain"))
      j["explain"] = {
          {"total_params", in.model.total_params()},
          {"active_params", in.model.active_params()},
          {"mtp_layers", in.model.mtp_layers},
          {"mtp_params", static_cast<double>(in.model.mtp_layers) * in.model.mtp_module_params()},
          {"model_flops_per_iteration", res.plans.front().time.model_flops},
          {"mfu_basis", mfu_basis(c, in.training)},
          {"peak_flops_per_gpu", ctx.peak_flops},
          {"parts", report::to_json(perf::explain_table(first_two(res)))},
          {"other_shapes", other_shapes_json(shapes, res.plans.front(), c, in)}};
    if (mine)
      j["against"] = {
          {"strategy", perf::to_json(mine->plan.strategy, in.placement)},
          {"iteration_time_s", mine->plan.time.iteration_time_s},
          {"feasible", mine->plan.time.feasible},
          {"memory_gib", mine->plan.time.memory.total() / units::kGiB},
          {"vs_best_pct",
           100 * (mine->plan.time.iteration_time_s / res.plans.front().time.iteration_time_s - 1)},
          {"is_best", mine->is_best},
          {"why", mine->line},
          {"fits_instead", fits_instead_json(*mine, res.plans.front(), in)},
          {"parts", report::to_json(
                        perf::explain_table({res.plans.front(), mine->plan}, {"best", "yours"}))}};
    out.print("{}\n", j.dump(2));
    return;
  }
  report::Table table = perf::plans_table(res.plans, in.placement);
  // The CP exchange is stated when a ranked plan uses context parallelism.
  std::int64_t ranked_cp = 1;
  for (const perf::Plan& p : res.plans) ranked_cp = std::max(ranked_cp, p.strategy.cp);
  if (tokens) {
    std::vector<report::Cell> cells(days.begin(), days.end());
    table.add_column(report::real_column("train_days", "days to train", "", 1), std::move(cells));
  }
  spec::add_routing_columns(table, d);
  spec::add_plane_columns(table, d);
  spec::add_software_columns(table, in.training);
  if (a.flag("csv")) {
    out.print("{}", report::to_csv(table));
    return;
  }
  out.print(
      "{} on {}{} x {} (HB domain {}), {}, stack {} ({}{}{}): {} strategies, {} fit in "
      "memory\n",
      in.model.name, report::thousands(double(c.gpus)),
      part ? fmt::format(" of {}", report::thousands(double(cluster.gpus))) : "", c.gpu.name,
      c.hb_domain, spec::to_string(d.kind), in.training.stack.name,
      perf::to_string(in.training.dtype), in.training.flash_attention ? ", flash attention" : "",
      spec::software_notes(in.training) + spec::cp_note(in.training.stack, ranked_cp),
      report::thousands(double(res.evaluated)), report::thousands(double(res.feasible)));
  out.print("network: switch {}, {}\n", d.sw.describe(), spec::describe_routing(d));
  out.print("{}", report::to_text(table));
  out.print("error band of every time: +-{:.1f}% ({})\n", 100 * band.fraction, band.basis);
  if (tokens)
    out.print(
        "days to train: {} tokens at each plan's throughput, without failures or restarts "
        "(railsim fail goodput adds them)\n",
        report::count(*tokens));
  if (flip.flips) out.print("note: {}\n", flip.line);
  for (const perf::BetterSize& b : better)
    out.print(
        "note: {} trains {:.0f}% more tokens per second per GPU: {} at {:.3f} s ({} tokens/s{})\n",
        b.job_gpus < c.gpus
            ? fmt::format("a job of {} GPUs (--job-gpus {})",
                          report::thousands(static_cast<double>(b.job_gpus)), b.job_gpus)
            : fmt::format("a batch of {} (--batch {})",
                          report::thousands(static_cast<double>(b.batch)), b.batch),
        100 * b.gain, perf::describe_degrees(b.plan.strategy), b.plan.time.iteration_time_s,
        report::thousands(b.plan.time.tokens_per_s),
        b.job_gpus < c.gpus ? " in all, more than on every GPU" : "");
  if (a.flag("explain")) print_explain(out, in.model, in.training, c, res, shapes, in.placement);
  if (mine) print_against(out, *mine, res.plans.front());
}
}  // namespace

Command plan_command() {
  Command c;
  c.path = "plan";
  c.summary = "Search all parallelization strategies; print the fastest that fit in memory";
  c.fields = join(
      {cluster_fields(), network_fields(), routing_fields(), strategy_fields()},
      {integer_field("top", "--top", "Plans to print", 1, 100000, "5"),
       integer_field("threads", "--threads", "Worker threads (0 = all cores)", 0, 0, "0"),
       integer_field("max_candidates", "--max-candidates",
                     "Refuse a search that would visit more candidate strategies than this "
                     "(estimated before any is built)",
                     1, std::int64_t{1} << 40, std::to_string(perf::kDefaultMaxCandidates)),
       job_gpus_field(), train_tokens_field(), flag_field("json", "--json", "Print JSON"),
       flag_field("csv", "--csv", "Print CSV (a header and one row per plan)"),
       flag_field("explain", "--explain",
                  "Also show the model's size and FLOPs, the MFU basis, the winner against the "
                  "runner-up part by part (time and memory) and the best plans of other shapes "
                  "(tp, pp, dp, ...) with what they lose; with --json: an \"explain\" object"),
       text_field("against", "--against",
                  "Your own plan, as railsim prints plans (\"tp8 pp16 dp64\", knobs optional: "
                  "\"tp8 pp16 dp64 mb1 v8 selective sp dopt ovl\"; the rest the stack's defaults): "
                  "what decides between it and the best plan (memory, the parts of the time), part "
                  "by part, and, where it does not fit, the fastest plan of its shape that does; "
                  "with --json: an \"against\" object")});
  c.run = run_plan;
  c.python_name = "plan";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
