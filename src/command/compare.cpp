// railsim compare: rail_optimized, rail_only and ideal side by side over one cluster (or the
// paper's two): bill of materials, cost, power, savings and, unless --no-perf, each design's best
// plan, evaluated as a sweep evaluates a point (sweep::plan_designs).
#include <fmt/format.h>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "railsim/command/inputs.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/cost/tables.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/perf/tables.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/report/format.hpp"
#include "railsim/report/table.hpp"
#include "railsim/spec/routing_table.hpp"
#include "railsim/sweep/sweep.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {

// The options that feed the best-plan search alone.
const std::vector<std::string> kModelKeys = {
    "model",       "batch",      "seq",     "dtype",        "flash_attention", "compile",
    "ep_dispatch", "ep_overlap", "cp_comm", "train_tokens", "against"};

// The model and its training: GPT-1T, 4096 sequences of 2048 tokens by default (about 8M tokens
// per iteration).
struct PerfInputs {
  perf::Model model;
  perf::Training training;
  std::optional<double> train_tokens;  // the days each best plan takes for them
  std::optional<std::string> against;  // the user's own plan (--against), on each design
};

PerfInputs resolve_perf(const Args& a) {
  PerfInputs in;
  in.model = perf::load_model(a.text("model"), "--model");
  const Software sw = resolve_software(a);
  const std::int64_t batch = a.integer("batch");
  const std::int64_t seq =
      a.integer_if("seq").value_or(check_integer("--seq", in.model.seq_len, 1, 1 << 24));
  in.training = spec::make_training(batch, seq, sw.stack, sw.dtype, sw.flash_attention);
  perf::check_pins(in.model, in.training, {});
  in.train_tokens = a.number_if("train_tokens");
  in.against = a.text_if("against");
  if (in.against) (void)perf::parse_plan_text(*in.against, "--against");  // read before any work
  return in;
}

// The user's own plan (--against) on each design, timed as estimate times it: its time, against
// the design's best plan, and what decides between them (perf::explain_versus); where it does
// not fit, the fastest plan of its split of the GPUs that does (perf::fastest_of_shape, as plan
// --against says it), its time and how much slower than the design's best.
void add_against_columns(report::Table& t, const PerfInputs& in, const spec::Cluster& cluster,
                         const spec::NetworkDesign& base,
                         const std::vector<cost::DesignReport>& rows, const spec::Cluster& job,
                         const std::vector<sweep::DesignPlan>& plans) {
  const perf::Strategy s =
      perf::plan_from_text(in.model, in.training, *in.against, job, "--against");
  std::vector<report::Cell> time, vs, why, fits, fits_time, fits_vs;
  const report::Cell none{report::Missing{}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    spec::NetworkDesign d = base;
    d.kind = rows[i].bom.design;
    const perf::EstimateContext ctx = perf::make_context(in.model, in.training, job, cluster, d);
    const perf::Plan mine{s, perf::estimate(ctx, s)};
    time.emplace_back(mine.time.iteration_time_s);
    const perf::Plan* best = plans[i].best ? &*plans[i].best : nullptr;
    auto vs_best = [&](const perf::Plan& p) {
      return best ? report::Cell(100 * (p.time.iteration_time_s / best->time.iteration_time_s - 1))
                  : none;
    };
    vs.push_back(vs_best(mine));
    why.push_back(best ? report::Cell(perf::explain_versus(*best, mine, job.gpu.hbm_bytes)) : none);
    const std::optional<perf::Plan> instead =
        mine.time.feasible ? std::nullopt : perf::fastest_of_shape(ctx, perf::PlanOptions{}, s);
    fits.push_back(mine.time.feasible ? none
                   : instead          ? report::Cell(perf::describe_for_people(instead->strategy))
                                      : report::Cell(fmt::format("no plan of its shape ({}) fits",
                                                                 perf::describe_degrees(s))));
    fits_time.push_back(instead ? report::Cell(instead->time.iteration_time_s) : none);
    fits_vs.push_back(instead ? vs_best(*instead) : none);
  }
  auto signed_pct = [](std::string name, std::string label) {
    report::Column c = report::real_column(std::move(name), std::move(label), "%", 2);
    c.style = report::Style::signed_;
    return c;
  };
  t.add_column({.name = "against_plan", .label = "your plan"},
               std::vector<report::Cell>(rows.size(), report::Cell(perf::describe_for_people(s))));
  t.add_column(report::real_column("against_iteration_time_s", "your plan's time", "s", 3),
               std::move(time));
  t.add_column(signed_pct("against_vs_best_pct", "yours vs best"), std::move(vs));
  t.add_column({.name = "against_why", .label = "what decides"}, std::move(why));
  t.add_column({.name = "against_fits_instead", .label = "fits instead (your split)"},
               std::move(fits));
  t.add_column(report::real_column("against_fits_instead_time_s", "its time", "s", 3),
               std::move(fits_time));
  t.add_column(signed_pct("against_fits_instead_vs_best_pct", "it vs best"), std::move(fits_vs));
}

// The best plan of each design as columns of `t`, whose rows are `rows` in order (each design is
// `base` with its kind). A design without a plan has missing figures and says why in
// no_plan_reason. Returns rail_only's verdict under the contrasting routing (none without both
// plans).
std::optional<perf::VerdictFlip> add_performance_columns(
    report::Table& t, const PerfInputs& in, const spec::Cluster& cluster,
    const spec::NetworkDesign& base, const std::vector<cost::DesignReport>& rows,
    const spec::Cluster& job) {
  const spec::Cluster* part = job.gpus < cluster.gpus ? &job : nullptr;
  using report::Cell;
  using report::Style;
  using report::Type;
  const std::vector<sweep::DesignPlan> plans =
      sweep::plan_designs(in.model, in.training, cluster, base, rows, part);
  for (const sweep::DesignPlan& p : plans)
    if (p.error) throw *p.error;  // the search itself failed: the command does
  const std::vector<sweep::PlanCells> cells = sweep::plan_cells(rows, plans);
  std::vector<Cell> model, batch, seq, stack;
  std::vector<std::vector<Cell>> plan(5);  // time, vs, mfu, best, knobs
  std::vector<Cell> reason;
  std::optional<double> rail_only_pct;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    model.push_back(
        fmt::format("{}, {} x {}", in.model.name, in.training.global_batch, in.training.seq_len));
    batch.push_back(in.training.global_batch);
    seq.push_back(in.training.seq_len);
    // The CP exchange where the design's best plan splits the sequence.
    const std::int64_t cp = plans[i].best ? plans[i].best->strategy.cp : 1;
    stack.push_back(
        fmt::format("{}, {}{}{}{}", in.training.stack.name, perf::to_string(in.training.dtype),
                    in.training.flash_attention ? ", flash attention" : "",
                    spec::software_notes(in.training), spec::cp_short_note(in.training.stack, cp)));
    for (std::size_t k = 0; k < plan.size(); ++k) plan[k].push_back(cells[i].cells[k]);
    reason.push_back(cells[i].reason);
    const Cell& vs = cells[i].cells[1];
    if (rows[i].bom.design == spec::DesignKind::rail_only && std::holds_alternative<double>(vs))
      rail_only_pct = std::get<double>(vs);
  }
  t.add_column({.name = "perf_model", .label = "model"}, model);
  t.add_column({.name = "perf_global_batch",
                .label = "global batch",
                .type = Type::integer,
                .unit = "sequences",
                .human = false},
               batch);
  t.add_column({.name = "perf_seq_len",
                .label = "sequence length",
                .type = Type::integer,
                .unit = "tokens",
                .human = false},
               seq);
  t.add_column({.name = "perf_stack", .label = "software"}, stack);
  t.add_column({.name = "job_gpus", .label = "job GPUs", .type = Type::integer},
               std::vector<Cell>(rows.size(), Cell(job.gpus)));
  t.add_column({.name = "best_iteration_time_s",
                .label = "best iteration time",
                .type = Type::real,
                .unit = "s",
                .precision = 3},
               plan[0]);
  // The band estimate and plan print with such a time (its GPU, stack, model kind and precision),
  // on the designs that have one.
  const double band = perf::error_band(cluster.gpu.name, in.model, in.training).fraction;
  std::vector<Cell> band_cells;
  for (const Cell& time : plan[0])
    band_cells.push_back(std::holds_alternative<double>(time) ? Cell(band)
                                                              : Cell(report::Missing{}));
  t.add_column({.name = "error_band",
                .label = "error band (+-)",
                .type = Type::real,
                .precision = 1,
                .style = Style::fraction},
               std::move(band_cells));
  t.add_column({.name = "vs_rail_optimized_pct",
                .label = "vs rail_optimized",
                .type = Type::real,
                .unit = "%",
                .precision = 2,
                .style = Style::signed_},
               plan[1]);
  t.add_column({.name = "best_plan_mfu",
                .label = "best plan MFU",
                .type = Type::real,
                .precision = 1,
                .style = Style::fraction},
               plan[2]);
  t.add_column({.name = "best_plan", .label = "best plan"}, plan[3]);
  t.add_column({.name = "best_plan_knobs", .label = "best plan knobs"}, plan[4]);
  if (in.train_tokens) {
    std::vector<Cell> days;
    for (const sweep::DesignPlan& p : plans)
      days.push_back(p.best ? Cell(perf::days_to_train(p.best->time, *in.train_tokens))
                            : Cell(report::Missing{}));
    t.add_column(report::real_column("train_days", "days to train", "", 1), std::move(days));
  }
  if (in.against) add_against_columns(t, in, cluster, base, rows, job, plans);
  t.add_column({.name = "no_plan_reason", .label = "no plan"}, reason);
  if (!rail_only_pct) return std::nullopt;
  spec::NetworkDesign first = base;
  first.kind = rows.front().bom.design;
  return perf::rail_only_under_contrasting_routing(in.model, in.training, job, first,
                                                   *rail_only_pct, part ? &cluster : nullptr);
}

// docs/design.md's table: N from 1k to 128k, K in {8, 72, 256}.
void print_savings_table(spec::ClusterOptions like, const spec::NetworkDesign& base,
                         const cost::Catalog& cat, cost::SwitchCounting counting, Output& out) {
  like.gpus = 1024;
  like.hb_domain = 8;
  const spec::Cluster c = spec::make_cluster(like);
  const std::vector<std::int64_t> sizes(std::begin(spec::kPaperClusterSizes),
                                        std::end(spec::kPaperClusterSizes));
  const std::vector<std::int64_t> ks = {8, 72, 256};
  out.print(
      "rail_only vs rail_optimized, {} NIC {:g} Gb/s, switch {} ({} x {:g}G), catalog {}, {} "
      "switch counting\n\n",
      c.gpu.name, units::Bps_to_gbps(c.nic_bw_Bps), base.sw.name, base.sw.radix, base.sw.port_gbps,
      cat.name, cost::to_string(counting));
  out.print("{}",
            cost::savings_markdown(cost::savings_grid(c, sizes, ks, base, cat, counting), ks));
}

// With no cluster option: the README's main job, the two clusters of the paper's ranges.
std::vector<spec::Cluster> clusters_of(const Args& a, const spec::ClusterOptions& given) {
  if (cluster_given(a)) return {spec::make_cluster(given)};
  std::vector<spec::Cluster> paper;
  for (const spec::ReferenceCluster& r : spec::kPaperClusters) {
    spec::ClusterOptions o;
    o.gpu = r.gpu;
    o.gpus = r.gpus;
    o.hb_domain = r.hb_domain;
    paper.push_back(spec::make_cluster(o));
  }
  return paper;
}

// Every cluster's designs: one table of all of them, the text people read, the verdict flips.
struct Compared {
  report::Table all;
  std::string text;
  Json flips = Json::array();
};

Compared compare_clusters(const Args& a, const std::vector<spec::Cluster>& clusters,
                          const spec::NetworkDesign& base, const ResolvedCost& cost) {
  Compared r;
  std::optional<PerfInputs> perf;  // resolved once a cluster's designs are priced
  for (std::size_t ci = 0; ci < clusters.size(); ++ci) {
    const spec::Cluster& c = clusters[ci];
    const auto rows = cost::compare_designs(c, base, cost.catalog, cost.counting);
    report::Table t = cost::designs_table(c, rows, /*with_savings=*/true);
    const spec::Cluster job = job_of(a, c);
    std::optional<perf::VerdictFlip> flip;
    if (!a.flag("no_perf")) {
      if (!perf) perf = resolve_perf(a);
      flip = add_performance_columns(t, *perf, c, base, rows, job);
    }
    spec::add_routing_columns(t, base);
    if (!a.flag("no_perf")) spec::add_software_columns(t, perf->training);
    if (ci) r.text += "\n";
    const std::string job_line =
        job.gpus < c.gpus
            ? fmt::format(
                  "job: {} of the {} GPUs ({} of {} HB domains), planned over the whole "
                  "network\n",
                  report::thousands(static_cast<double>(job.gpus)),
                  report::thousands(static_cast<double>(c.gpus)), job.domains(), c.domains())
            : "";
    r.text += cost::compare_heading(c, rows) + job_line +
              spec::describe_routing(base, /*with_forwarding=*/true) + "\n" +
              report::to_text_by_column(t, "design") + cost::compare_notes(rows);
    if (flip && flip->flips) r.text += "  note: " + flip->line + "\n";
    if (perf) {
      const perf::ErrorBand band = perf::error_band(c.gpu.name, perf->model, perf->training);
      r.text += fmt::format(
          "  note: error band of each time +-{:.1f}% ({}); the designs share most of their "
          "error: the band bounds each time, not their difference\n",
          100 * band.fraction, band.basis);
    }
    if (flip) r.flips.push_back(perf::to_json(*flip));
    if (ci == 0)
      r.all = std::move(t);
    else
      report::append(r.all, t);
  }
  return r;
}

void run_compare(const Args& a, Output& out) {
  // What the command line checked as it read the options, first.
  const spec::ClusterOptions given = cluster_options(a);
  (void)a.number_if("oversubscription");
  refuse_beyond_int(a, {"oversubscribed_tier", "management_links"});
  const spec::NetworkDesign base = resolve_network(a);
  const ResolvedCost cost = resolve_cost(a);
  one_format(a);
  (void)resolve_software(a);  // a bad --stack is refused even with --no-perf
  const bool no_perf = a.flag("no_perf"), savings = a.flag("savings_table");
  if (no_perf) a.refuse(kModelKeys, "with --no-perf (no best plan is searched); drop one of them");
  if (savings) a.refuse(kModelKeys, "with --savings-table (it prints cost and power only)");
  if (no_perf || savings)
    a.refuse({"job_gpus"}, "without the plan search (a job changes no price)");
  if (!cluster_given(a))
    a.refuse({"job_gpus"},
             "without a cluster option (--gpus, --gpu, --hb-domain, ...): give the "
             "cluster the job runs on");
  if (savings) {
    if (a.flag("json") || a.flag("csv"))
      throw InputError("--savings-table", "prints Markdown; drop --json/--csv");
    print_savings_table(given, base, cost.catalog, cost.counting, out);
    return;
  }
  const Compared r = compare_clusters(a, clusters_of(a, given), base, cost);
  if (a.flag("json")) {
    Json j{{"designs", report::to_json(r.all)}};
    j.update(spec::routing_json(base));
    if (!no_perf) j["routing_flip"] = r.flips;  // one per cluster, in order
    out.print("{}\n", j.dump(2));
  } else if (a.flag("csv")) {
    out.print("{}", report::to_csv(r.all));
  } else {
    out.print("{}", r.text);
  }
}

// The model whose best plan each design gets, and --no-perf.
std::vector<Field> performance_fields() {
  Field batch = integer_field("batch", "--batch", "Global batch in sequences for the model", 1,
                              std::int64_t{1} << 40, std::to_string(spec::kDefaultGlobalBatch));
  std::vector<Field> f = {
      text_field("model", "--model",
                 "Model whose best-plan iteration time is compared (preset or JSON file)",
                 spec::kDefaultModel),
      batch, integer_field("seq", "--seq", "Sequence length (default: the model's)", 1, 1 << 24)};
  for (Field& s : software_fields()) f.push_back(std::move(s));
  f.push_back(job_gpus_field());
  f.push_back(text_field("against", "--against",
                         "Your own plan on each design, as railsim prints plans (\"tp8 pp16 "
                         "dp128\", knobs optional): its time against the design's best plan and "
                         "what decides between them; where it does not fit, the fastest plan of "
                         "its split of the GPUs that does"));
  f.push_back(train_tokens_field());
  f.push_back(flag_field("no_perf", "--no-perf", "Cost and power only: skip the best-plan search"));
  return f;
}
}  // namespace

Command compare_command() {
  Command c;
  c.path = "compare";
  c.summary =
      "rail_optimized vs rail_only vs ideal side by side: bill of materials, cost, power and "
      "savings. With no cluster option: 32,768 GH200 (K=256) and 32,768 H100 (K=8)";
  c.fields = join(
      {cluster_fields(),
       network_fields(/*with_design=*/false),
       routing_fields(),
       cost_fields(),
       {flag_field("json", "--json", "Print JSON: {\"designs\": [...]}"),
        flag_field("csv", "--csv", "Print CSV (a header and one row per design)"),
        flag_field("savings_table", "--savings-table",
                   "Print the Markdown table of rail_only savings for 1k..128k GPUs and K = 8, 72, "
                   "256 (uses --gpu, --nic-gbps, --switch, --catalog; ignores --gpus and "
                   "--hb-domain)")}},
      performance_fields());
  c.run = run_compare;
  c.python_name = "compare";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
