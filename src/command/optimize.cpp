// railsim optimize: the cheapest network that trains the given models as fast as needed.
#include "railsim/optimize/optimize.hpp"

#include <fmt/format.h>

#include "railsim/command/inputs.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/plot.hpp"
#include "railsim/report/table.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/routing_table.hpp"
#include "railsim/sweep/values.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {
// Each model given (or the default), with the batch, sequence, software and pins shared by all.
std::vector<optimize::ModelSpec> models_of(const Args& a) {
  std::vector<std::string> names = a.values("model");
  if (names.empty()) names = {spec::kDefaultModel};
  std::vector<optimize::ModelSpec> models;
  for (const std::string& name : names) {
    const StrategyInputs in = resolve_strategy_inputs(a, name);
    models.push_back({in.model, in.training, in.pins});
  }
  return models;
}

// The lists as written ("8,16", "1:4:1"); those not given keep the Space's default.
optimize::Space space_of(const Args& a) {
  optimize::SpaceChoices c;
  c.designs = sweep::parse_names("--design", a.text("design"));
  c.oversubscription = sweep::parse_reals("--oversubscription", a.text("oversubscription"));
  if (const auto v = a.text_if("hb_domain")) c.hb_domain = sweep::parse_integers("--hb-domain", *v);
  if (const auto v = a.text_if("nic_gbps")) c.nic_gbps = sweep::parse_reals("--nic-gbps", *v);
  if (const auto v = a.text_if("nics_per_gpu"))
    c.nics_per_gpu = sweep::parse_integers("--nics-per-gpu", *v);
  c.planes = sweep::parse_integers("--planes", a.text("planes"));
  if (const auto v = a.text_if("switch")) c.switches = sweep::parse_names("--switch", *v);
  if (const auto v = a.text_if("catalog")) c.catalogs = sweep::parse_names("--catalog", *v);
  c.copper = sweep::parse_names("--copper-gpu-leaf", a.text("copper_gpu_leaf"));
  c.routing = a.text("routing");
  optimize::Space space = optimize::make_space(c);
  (void)a.integer("seed");  // checked; sim's hash only: no effect here
  return space;
}

optimize::Target target_of(const Args& a) {
  optimize::Target t;
  t.max_iteration_s = a.number_if("max_iteration_time");
  if (const auto v = a.number_if("min_mfu")) t.min_mfu = *v / 100;
  if (const auto v = a.number_if("within")) t.within = *v / 100;
  t.within_of = spec::parse_design_kind(a.text("of"), "--of");
  if (t.within_of == spec::DesignKind::rail_only)
    throw InputError("--of", "the reference is ideal or rail_optimized");
  t.tokens = a.number_if("tokens");
  t.days = a.number_if("days");
  return t;
}

void run_optimize(const Args& a, Output& out) {
  one_format(a);
  const spec::GpuSpec gpu = spec::load_gpu(a.text("gpu"), "--gpu");
  const std::int64_t gpus = optimize::cluster_gpus(gpu, a.integer_if("gpus").value_or(0));
  const std::vector<optimize::ModelSpec> models = models_of(a);
  const optimize::Space space = space_of(a);
  const optimize::Target t = target_of(a);
  optimize::Budget b;
  b.max_cost_usd = a.number_if("max_network_cost");
  b.max_power_w = a.number_if("max_power");
  optimize::Options o;
  const bool all = a.flag("all");
  if (a.flag("first") && all)
    throw InputError("--all",
                     "lists every candidate of the whole search, which --first stops "
                     "early; choose one of them");
  o.frontier = !a.flag("first");
  o.threads = check_threads("--threads", a.integer_if("threads").value_or(0));
  o.train_tokens = a.number_if("train_tokens");
  const std::string plot = a.text("plot");
  if (!plot.empty()) {  // checked before the search
    report::plot_format(plot, "--plot");
    report::check_writable(plot, "--plot");
    report::require_gnuplot("--plot");
  }
  // On a terminal, a search over 2 s shows the networks judged on stderr.
  report::ProgressBar bar(stderr, "optimize: networks", 1);
  o.progress = &bar;
  const optimize::Result r = optimize::optimize(gpu, gpus, models, space, t, b, o);
  bar.finish();
  if (!plot.empty()) report::write_plot(optimize::frontier_chart(r), plot, "--plot");
  const optimize::RoutingFlip flip =
      optimize::under_contrasting_routing(gpu, gpus, models, space, t, b, o, r);
  // Each model's times carry the band estimate and plan print for them (GPU, stack, model kind,
  // precision): an absolute target (--max-iteration-time, --min-mfu, --tokens --days) is met or
  // missed within it; a relative one (--within) compares times that share most of that error.
  std::vector<perf::ErrorBand> bands;
  for (const optimize::ModelSpec& m : models)
    bands.push_back(perf::error_band(gpu.name, m.model, m.training));
  if (a.flag("json")) {
    Json doc = optimize::optimize_document(r, flip, all);
    Json j = Json::array();
    for (std::size_t i = 0; i < models.size(); ++i) {
      Json band = perf::to_json(bands[i]);
      band["model"] = r.model_names[i];
      j.push_back(std::move(band));
    }
    doc["error_bands"] = std::move(j);
    out.print("{}\n", doc.dump(2));
    return;
  }
  const report::Table table = optimize::candidates_table(r, all);
  if (a.flag("csv")) {
    out.print("{}", report::to_csv(table));
    return;
  }
  out.print("{} x {}: {}\nsoftware: {}{}\n\n{}\n{}:\n{}", gpus, gpu.name,
            fmt::join(r.model_names, ", "), spec::describe_software(r.training),
            spec::cp_exchange_note(r.training.stack), optimize::explain(r),
            all ? "every candidate evaluated, cheapest first"
                : "frontier (each faster than every cheaper candidate)",
            report::to_text(table));
  if (flip.flips) out.print("note: {}\n", flip.line);
  for (std::size_t i = 0; i < models.size(); ++i)
    out.print(
        "note: {}'s times carry an error band of +-{:.1f}% ({}); a target relative to another "
        "design (--within) compares times that share most of that error\n",
        r.model_names[i], 100 * bands[i].fraction, bands[i].basis);
}

// The strategy fields but --model, which comes after them and takes several models.
std::vector<Field> shared_strategy_fields() {
  std::vector<Field> f;
  for (Field& s : strategy_fields())
    if (s.key != "model") f.push_back(std::move(s));
  Field models = text_field("model", "--model",
                            "Model preset or JSON file; repeat for several (default GPT-1T)");
  models.kind = Kind::texts;
  f.push_back(std::move(models));
  return f;
}

std::vector<Field> space_fields() {
  return {
      text_field("design", "--design", "Designs to consider (list)", "rail_only,rail_optimized"),
      text_field("oversubscription", "--oversubscription",
                 "Leaf down:up ratios to consider (list or range)", "1,2,3"),
      text_field("hb_domain", "--hb-domain", "HB-domain sizes K (list; default the GPU's)"),
      text_field("nic_gbps", "--nic-gbps", "NIC speeds (list; default the GPU's)"),
      text_field("nics_per_gpu", "--nics-per-gpu", "NICs per GPU (list; default the GPU's)"),
      text_field("planes", "--planes",
                 "Network planes (list): P planes split each NIC in P / gcd(P, NICs) ports, one "
                 "per plane",
                 "1"),
      text_field("switch", "--switch", "Switch presets or files (list; default every preset)"),
      text_field("catalog", "--catalog", "Price catalogs (list; default ib-ndr-thirdparty-2024)"),
      text_field("copper_gpu_leaf", "--copper-gpu-leaf", "off, on, or on,off (both)", "off")};
}

std::vector<Field> target_fields() {
  return {number_field("max_iteration_time", "--max-iteration-time",
                       "Target: iteration time at most S seconds (every model)",
                       Range::positive(1e9), "", "s"),
          number_field("min_mfu", "--min-mfu", "Target: MFU at least X percent (every model)",
                       Range::between(1e-6, 100), "", "%"),
          number_field("within", "--within", "Target: within PCT percent of the reference (--of)",
                       Range::between(0, 1e4), "", "%"),
          text_field("of", "--of", "Reference of --within: ideal or rail_optimized", "ideal"),
          number_field("tokens", "--tokens",
                       "Target (with --days): train this many tokens of every model",
                       Range::positive(1e30)),
          number_field("days", "--days", "Target: in D days", Range::positive(1e6), "", "days"),
          number_field("max_network_cost", "--max-network-cost", "Budget: network cost in USD",
                       Range::positive(1e15), "", "USD"),
          number_field("max_power", "--max-power", "Budget: network power in W",
                       Range::positive(1e15), "", "W")};
}
}  // namespace

Command optimize_command() {
  Command c;
  c.path = "optimize";
  c.summary =
      "The cheapest network (design, HB domain, NIC, switch, catalog) that trains the models as "
      "fast as needed, and the cost/time frontier";
  Field seed = routing_seed_field();
  seed.min = 0;
  seed.max = spec::kMaxRoutingSeed;
  c.fields = join(
      {{text_field("gpu", "--gpu", "GPU preset or JSON file", spec::kDefaultGpu),
        integer_field("gpus", "--gpus", "GPUs (default: 32,768 rounded down to whole HB domains)",
                      1, spec::kMaxGpus)},
       shared_strategy_fields(),
       space_fields(),
       target_fields()},
      {flag_field("first", "--first",
                  "Stop at the cheapest network that meets the target (no frontier)"),
       flag_field("all", "--all",
                  "Print every candidate evaluated, not only the frontier (with --json: the key "
                  "\"all\" beside \"frontier\")"),
       integer_field("threads", "--threads", "Threads of the plan searches (0 = all cores)", 0, 0),
       train_tokens_field(), routing_field(), seed,
       text_field("plot", "--plot",
                  "Also draw the frontier to FILE.png, .svg or .pdf (gnuplot): cost in $ millions "
                  "against the slowest model's time in percent above the fastest frontier "
                  "network (from 0), each point labelled with its design, oversubscription, "
                  "switch and cost"),
       flag_field("json", "--json", "Print JSON"),
       flag_field("csv", "--csv", "Print CSV (the frontier, or every candidate with --all)")});
  c.run = run_optimize;
  c.python_name = "optimize";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
