// railsim sweep: a parameter study, every point's three designs priced and (unless --no-perf)
// planned; started by an MPI launcher, the processes share the points (sweep/distributed.hpp).
#include "railsim/sweep/sweep.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "railsim/command/inputs.hpp"
#include "railsim/command/sweep_world.hpp"
#include "railsim/core/bytes.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/plot.hpp"
#include "railsim/report/progress.hpp"
#include "railsim/report/table.hpp"
#include "railsim/sweep/study.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {

SweepWorld& world_hook() {
  static SweepWorld world;
  return world;
}

sweep::Communicator& world() {
  static sweep::SerialCommunicator alone;
  const SweepWorld& hook = world_hook();
  return hook ? hook() : alone;
}

// Everything checked before any point is evaluated.
struct Resolved {
  sweep::SweepOptions s;
  std::optional<sweep::StudyPlot> plot;
  sweep::Split split = sweep::Split::strided;
  sweep::SweepInputs inputs;
};

// The swept options, each a list, a range or a series (at most `m` values); an option given
// replaces the study's values.
void resolve_axes(const Args& a, std::int64_t m, sweep::SweepAxes& x) {
  if (const auto v = a.text_if("gpu")) x.gpu = sweep::parse_names("--gpu", *v, m);
  if (const auto v = a.text_if("gpus")) x.gpus = sweep::parse_integers("--gpus", *v, m);
  if (const auto v = a.text_if("hb_domain"))
    x.hb_domain = sweep::parse_integers("--hb-domain", *v, m);
  if (const auto v = a.text_if("nic_gbps")) x.nic_gbps = sweep::parse_reals("--nic-gbps", *v, m);
  if (const auto v = a.text_if("hb_GBps")) x.hb_GBps = sweep::parse_reals("--hb-GBps", *v, m);
  if (const auto v = a.text_if("nics_per_gpu"))
    x.nics_per_gpu = sweep::parse_integers("--nics-per-gpu", *v, m);
  if (const auto v = a.text_if("switch")) x.sw = sweep::parse_names("--switch", *v, m);
  if (const auto v = a.text_if("catalog")) x.catalog = sweep::parse_names("--catalog", *v, m);
  if (const auto v = a.text_if("oversubscription"))
    x.oversubscription = sweep::parse_reals("--oversubscription", *v, m);
  if (const auto v = a.text_if("model")) x.model = sweep::parse_names("--model", *v, m);
  if (const auto v = a.text_if("batch")) x.batch = sweep::parse_integers("--batch", *v, m);
  if (const auto v = a.text_if("seq")) x.seq = sweep::parse_integers("--seq", *v, m);
  if (const auto v = a.text_if("routing")) x.routing = sweep::parse_names("--routing", *v, m);
  if (const auto v = a.text_if("planes")) x.planes = sweep::parse_integers("--planes", *v, m);
}

// --alltoall and how the plans and it are routed: refused when neither runs.
void resolve_routing(const Args& a, sweep::SweepOptions& s) {
  if (const auto v = a.text_if("alltoall")) s.alltoall_bytes = units::parse_bytes(*v, "--alltoall");
  if (!s.perf && s.alltoall_bytes == 0)
    if (const Field* f = a.first_given({"forwarding", "forward_via", "chunks", "seed"}))
      throw InputError(f->spelled(),
                       "sets how the plans and --alltoall are routed; with --no-perf and no "
                       "--alltoall neither runs");
  if (const auto v = a.text_if("forwarding")) s.network.forwarding = *v;
  if (const auto v = a.text_if("forward_via")) s.network.forward_via = *v;
  if (const auto v = a.integer_if("seed")) s.network.seed = *v;
  if (const auto v = a.integer_if("chunks")) s.network.chunks = *v;
}

// Resolves the options and loads the presets; `root` (rank 0, the one that writes) also checks
// the plot's file and gnuplot.
void resolve(const Args& a, bool root, Resolved& out) {
  refuse_beyond_int(a, {"threads"});
  one_format(a);
  if (a.flag("perf") && a.flag("no_perf"))
    throw InputError("--perf", "choose one of --perf and --no-perf");
  const std::int64_t m = a.integer("max_points");
  const int threads = check_threads("--threads", a.integer("threads"));
  out.split = sweep::parse_split(a.text("split"), "--split");
  // A study's axes and options first; every option given replaces the study's value.
  std::optional<sweep::Study> study;
  if (const auto name = a.text_if("study")) study = sweep::make_study(*name);
  sweep::SweepOptions& s = out.s;
  s = study ? study->options : sweep::SweepOptions{};
  resolve_axes(a, m, s.axes);
  s.zip = a.flag("zip");
  if (a.flag("no_perf")) s.perf = false;
  if (a.flag("perf")) s.perf = true;
  resolve_routing(a, s);
  s.max_points = m;
  s.threads = threads;
  s.counting = cost::parse_switch_counting(a.text("switch_counting"));
  const Software sw = resolve_software(a);
  s.stack = sw.stack;
  s.dtype = sw.dtype;
  s.flash_attention = sw.flash_attention;
  // The plot's columns, the file and gnuplot are checked before the sweep runs.
  const std::string plot = a.text("plot"), x = a.text("plot_x"), y = a.text("plot_y");
  if (!plot.empty()) {
    out.plot = sweep::resolve_plot(study ? &*study : nullptr, x, y, s);
    report::plot_format(plot, "--plot");
    if (root) {
      report::check_writable(plot, "--plot");
      report::require_gnuplot("--plot");
    }
  } else if (!x.empty() || !y.empty()) {
    throw InputError(x.empty() ? "--plot-y" : "--plot-x", "names what --plot FILE draws");
  }
  out.inputs = sweep::load_sweep_inputs(s);
}

// What this rank was given, for sweep::check_same_inputs: every option set with its values, by
// flag (so "--gpus=64" and "--gpus 64" agree), --threads aside (a count per process; the output
// does not depend on it).
std::vector<std::pair<std::string, std::string>> given_inputs(const Args& a) {
  std::vector<std::pair<std::string, std::string>> given;
  for (const Field& f : a.fields()) {
    if (!a.given(f.key) || f.key == "threads") continue;
    std::string values;
    for (const std::string& v : a.values(f.key)) values += (values.empty() ? "" : " ") + v;
    given.emplace_back(f.spelled(), values);
  }
  return given;
}

// Rank 0's table on `out` as text, CSV or JSON.
void print_table(const Args& a, const report::Table& t, Output& out) {
  try {
    if (a.flag("json"))
      out.print("{}\n", Json{{"rows", report::to_json(t)}}.dump(2));
    else if (a.flag("csv"))
      out.print("{}", report::to_csv(t));
    else {
      const std::string software = sweep::software_line(t);
      out.print("{}\n{}{}", sweep::routing_line(t), software.empty() ? "" : software + "\n",
                report::to_text(t));
    }
  } catch (const std::system_error& e) {
    throw InputError("stdout", "cannot write the output (" + e.code().message() + ")");
  }
  if (!out.flush()) throw InputError("stdout", "cannot write the output");
}

// Under an MPI launcher every rank runs this: the same checks (errors agreed among the ranks, so
// all exit with the same status; rank 0 prints), its share of the points, and rank 0 writes the
// table and the plot from every rank's rows.
void run_sweep(const Args& a, Output& out) {
  sweep::Communicator& comm = world();
  const bool root = comm.rank() == 0;
  Resolved in;
  sweep::agree(comm, [&] { resolve(a, root, in); });
  // An MPMD launch, or nodes with different files, would otherwise mix rows of other sweeps.
  sweep::check_same_inputs(comm, sweep::describe_inputs(given_inputs(a)));

  // On a terminal, a sweep that takes more than 2 s shows rank 0's progress on stderr.
  std::optional<report::ProgressBar> bar;
  if (root) {
    bar.emplace(stderr, "sweep",
                static_cast<std::int64_t>(
                    sweep::share_of(in.inputs.points.size(), 0, comm.size(), in.split).size()));
    in.s.on_point_done = [&bar] { bar->step(); };
  }
  sweep::agree(comm, [&] {
    const std::optional<sweep::GatheredSweep> g =
        sweep::run_distributed(in.s, in.inputs, comm, in.split);
    if (!root) return;
    bar->finish();
    // Nothing to show: the first point's reason, exit 2.
    if (g->valid_points == 0) throw sweep::no_valid_point(*g->first_invalid);
    print_table(a, g->table, out);
    if (in.plot)
      report::write_plot(sweep::sweep_chart(g->table, *in.plot), a.text("plot"), "--plot");
  });
}

// The swept options: text, each a list (8,16,32), a range (200:800:200) or a series (1024..8192x2).
std::vector<Field> swept_fields() {
  std::string studies;
  for (const auto& n : sweep::study_names()) studies += (studies.empty() ? "" : "|") + n;
  return {
      text_field("study", "--study",
                 "A study of the paper, as preset axes and a plot: " + studies +
                     " (docs/studies.md); options given replace the study's"),
      text_field("gpus", "--gpus", "GPU counts N (default 32768 in whole HB domains)"),
      text_field("gpu", "--gpu", "GPU presets or JSON files (default H100-SXM)"),
      text_field("hb_domain", "--hb-domain", "HB-domain sizes K (default: the GPU preset's)"),
      text_field("nic_gbps", "--nic-gbps", "NIC speeds, Gb/s (default: the GPU preset's)"),
      text_field("hb_GBps", "--hb-GBps",
                 "HB bandwidths per GPU per direction, GB/s (default: the GPU preset's)"),
      text_field("nics_per_gpu", "--nics-per-gpu", "NICs per GPU (default: the GPU preset's)"),
      text_field("switch", "--switch", "Switch presets or JSON files (default ETH-51.2T-128x400G)"),
      text_field("catalog", "--catalog", "Price/power catalogs (default ib-ndr-thirdparty-2024)"),
      text_field("oversubscription", "--oversubscription", "Leaf down:up ratios R (default 1)"),
      text_field("model", "--model", "Models: presets or JSON files (default GPT-1T)"),
      text_field(
          "batch", "--batch",
          fmt::format("Global batches in sequences (default {})", spec::kDefaultGlobalBatch)),
      text_field("seq", "--seq", "Sequence lengths in tokens (default: the model's)"),
      text_field("planes", "--planes",
                 "Network planes: P planes split each NIC in P / gcd(P, NICs) ports, one per plane "
                 "(default 1)")};
}

// How the sweep runs, what it adds, how its rows are routed and printed.
std::vector<Field> run_fields() {
  return {
      text_field("switch_counting", "--switch-counting", "whole or ports (one value)", "whole"),
      flag_field("zip", "--zip",
                 "Take the lists together (point i from item i of each; lists of one value apply "
                 "to every point) instead of their cartesian product"),
      flag_field("no_perf", "--no-perf",
                 "Cost and power only: no plan search, no plan columns (the default of the "
                 "cluster-size and moe-alltoall studies)"),
      flag_field("perf", "--perf",
                 "Search each design's best plan even where a study skips it (cluster-size, "
                 "moe-alltoall)"),
      integer_field("max_points", "--max-points", "Refuse sweeps of more points", 1,
                    sweep::kMaxSweepPoints, std::to_string(sweep::kDefaultMaxPoints)),
      integer_field("threads", "--threads",
                    "Threads (0: all cores; per process under MPI); the output is the same", 0, 0,
                    "0"),
      text_field("split", "--split",
                 "Under MPI, how the points are shared among the processes: strided (rank r "
                 "takes points r, r+R, ...) or contiguous blocks; the output is the same",
                 "strided"),
      text_field("alltoall", "--alltoall",
                 "Also simulate a uniform all-to-all of this size per GPU over all GPUs on each "
                 "design (e.g. 256MB): columns alltoall_time_s, alltoall_vs_rail_optimized_pct"),
      text_field("routing", "--routing",
                 "Routings: auto (the switch's default: adaptive on InfiniBand, ecmp on "
                 "Ethernet), ecmp, adaptive, spray; a list sweeps them (default auto)"),
      integer_field("seed", "--seed", "ECMP hash seed, 0 .. 2^62 (default 0)", 0, 0),
      text_field("forwarding", "--forwarding",
                 "Rail-only forwarding of every design's plans and of --alltoall: pipelined "
                 "(default, NCCL's PXN), store or two-phase (the moe-alltoall study's)"),
      text_field("forward_via", "--forward-via",
                 "Forwarding peer: hb_first (default) or rail_first"),
      integer_field("chunks", "--chunks",
                    "Pieces per forwarded transfer when pipelined (default 8)", 0, 0),
      text_field("plot", "--plot",
                 "Write a line chart of the rows (.png, .svg or .pdf, drawn by gnuplot): the "
                 "study's, or --plot-x against --plot-y"),
      text_field("plot_x", "--plot-x", "The x axis of --plot: a swept option or a column"),
      text_field("plot_y", "--plot-y",
                 "The y axis of --plot: a numeric column (best_iteration_time_s, cost_usd, ...)"),
      flag_field("json", "--json", "Print JSON: {\"rows\": [...]}"),
      flag_field("csv", "--csv", "Print CSV: a header and one row per point and design")};
}
}  // namespace

void set_sweep_world(SweepWorld world) {
  world_hook() = std::move(world);
}

Command sweep_command() {
  Command c;
  c.path = "sweep";
  c.summary =
      "A parameter study: each option takes a list (8,16,32), a range (200:800:200, inclusive) or "
      "a geometric series (1024..8192x2); every point's three designs are priced and (unless "
      "--no-perf) get their best plan. One row per point and design. Started by mpirun or srun "
      "(mpirun -np 8 railsim sweep ...), the processes share the points and rank 0 prints the "
      "same table as one process would (docs/studies.md)";
  // The software applies to every point (one value each).
  c.fields = join({swept_fields(), software_fields(), run_fields()});
  c.run = run_sweep;
  c.python_name = "sweep";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
