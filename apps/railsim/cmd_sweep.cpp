#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "railsim/core/bytes.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/plot.hpp"
#include "railsim/report/progress.hpp"
#include "railsim/report/table.hpp"
#include "railsim/sweep/distributed.hpp"
#include "railsim/sweep/study.hpp"
#include "railsim/sweep/sweep.hpp"
#include "strategy_options.hpp"

#ifdef RAILSIM_WITH_MPI
#include "mpi_communicator.hpp"
#endif

namespace railsim::cli {

namespace {

// Every swept option as written ("8,16,32", "200:800:200", "1024..8192x2"); parsed once
// --max-points is known.
struct SweepCliOptions {
  std::optional<std::string> gpus, hb_domain, nic_gbps, hb_GBps, nics_per_gpu, gpu, sw, catalog,
      oversubscription, model, batch, seq, routing;
  SoftwareOptions software;
  std::optional<std::string> study, alltoall, forwarding, forward_via;
  std::optional<std::int64_t> seed, chunks;
  std::string plot, plot_x, plot_y;
  std::string counting = "whole";
  bool zip = false;
  bool no_perf = false;
  bool perf = false;
  std::string split = "strided";
  std::int64_t max_points = sweep::kDefaultMaxPoints;
  int threads = 0;
  bool json = false;
  bool csv = false;
};

// The processes of this run: this one alone, or the ranks of the MPI job a launcher (mpirun,
// srun) started.
std::unique_ptr<sweep::Communicator> make_world() {
  const std::optional<sweep::Launch> launch = sweep::launched_by_mpi();
  if (!launch) return std::make_unique<sweep::SerialCommunicator>();
#ifdef RAILSIM_WITH_MPI
  return sweep::mpi_world_communicator();
#else
  if (launch->rank > 0 || launch->size > 1)
    throw InputError("mpirun",
                     "this railsim was built without MPI (RAILSIM_MPI=OFF), so its processes "
                     "cannot share a sweep; run it as one process or build it with MPI");
  return std::make_unique<sweep::SerialCommunicator>();
#endif
}

// The world lives until the process exits, after main has printed the error of a failed sweep:
// every rank then waits for the others before leaving MPI, so no rank exits first and lets the
// launcher end the job before rank 0's line is out.
bool g_world_open = false;
sweep::Communicator& open_world() {
  static const std::unique_ptr<sweep::Communicator> world = make_world();
  g_world_open = true;
  return *world;
}

// Everything checked before any point is evaluated.
struct Resolved {
  sweep::SweepOptions s;
  std::optional<sweep::StudyPlot> plot;
  sweep::Split split = sweep::Split::strided;
  sweep::SweepInputs inputs;
};

// Resolves the options and loads the presets; `root` (rank 0, the one that writes) also checks
// the plot's file and gnuplot.
void resolve(const SweepCliOptions& o, bool root, Resolved& out) {
  if (o.json && o.csv) throw InputError("--csv", "choose one of --json and --csv");
  if (o.perf && o.no_perf) throw InputError("--perf", "choose one of --perf and --no-perf");
  check_integer("--max-points", o.max_points, 1, sweep::kMaxSweepPoints);
  check_threads("--threads", o.threads);
  out.split = sweep::parse_split(o.split, "--split");
  const std::int64_t m = o.max_points;
  // A study's axes and options first; every option given replaces the study's value.
  std::optional<sweep::Study> study;
  if (o.study) study = sweep::make_study(*o.study);
  sweep::SweepOptions& s = out.s;
  s = study ? study->options : sweep::SweepOptions{};
  sweep::SweepAxes& a = s.axes;
  if (o.gpu) a.gpu = sweep::parse_names("--gpu", *o.gpu, m);
  if (o.gpus) a.gpus = sweep::parse_integers("--gpus", *o.gpus, m);
  if (o.hb_domain) a.hb_domain = sweep::parse_integers("--hb-domain", *o.hb_domain, m);
  if (o.nic_gbps) a.nic_gbps = sweep::parse_reals("--nic-gbps", *o.nic_gbps, m);
  if (o.hb_GBps) a.hb_GBps = sweep::parse_reals("--hb-GBps", *o.hb_GBps, m);
  if (o.nics_per_gpu) a.nics_per_gpu = sweep::parse_integers("--nics-per-gpu", *o.nics_per_gpu, m);
  if (o.sw) a.sw = sweep::parse_names("--switch", *o.sw, m);
  if (o.catalog) a.catalog = sweep::parse_names("--catalog", *o.catalog, m);
  if (o.oversubscription)
    a.oversubscription = sweep::parse_reals("--oversubscription", *o.oversubscription, m);
  if (o.model) a.model = sweep::parse_names("--model", *o.model, m);
  if (o.batch) a.batch = sweep::parse_integers("--batch", *o.batch, m);
  if (o.seq) a.seq = sweep::parse_integers("--seq", *o.seq, m);
  if (o.routing) a.routing = sweep::parse_names("--routing", *o.routing, m);
  s.zip = o.zip;
  if (o.no_perf) s.perf = false;
  if (o.perf) s.perf = true;
  if (o.alltoall) s.alltoall_bytes = units::parse_bytes(*o.alltoall, "--alltoall");
  if (!s.perf && s.alltoall_bytes == 0)
    for (const auto& [given, name] : {std::pair{o.forwarding.has_value(), "--forwarding"},
                                      {o.forward_via.has_value(), "--forward-via"},
                                      {o.chunks.has_value(), "--chunks"},
                                      {o.seed.has_value(), "--seed"}})
      if (given)
        throw InputError(name,
                         "sets how the plans and --alltoall are routed; with --no-perf "
                         "and no --alltoall neither runs");
  if (o.forwarding) s.network.forwarding = *o.forwarding;
  if (o.forward_via) s.network.forward_via = *o.forward_via;
  if (o.seed) s.network.seed = *o.seed;
  if (o.chunks) s.network.chunks = *o.chunks;
  s.max_points = m;
  s.threads = o.threads;
  s.counting = cost::parse_switch_counting(o.counting);
  const Software sw = resolve_software(o.software);
  s.stack = sw.stack;
  s.dtype = sw.dtype;
  s.flash_attention = sw.flash_attention;
  // The plot's columns, the file and gnuplot are checked before the sweep runs.
  if (!o.plot.empty()) {
    out.plot = sweep::resolve_plot(study ? &*study : nullptr, o.plot_x, o.plot_y, s);
    report::plot_format(o.plot, "--plot");
    if (root) {
      report::check_writable(o.plot, "--plot");
      report::require_gnuplot("--plot");
    }
  } else if (!o.plot_x.empty() || !o.plot_y.empty()) {
    throw InputError(o.plot_x.empty() ? "--plot-y" : "--plot-x", "names what --plot FILE draws");
  }
  out.inputs = sweep::load_sweep_inputs(s);
}

// Under an MPI launcher every rank runs this: the same checks (errors agreed among the ranks, so
// all exit with the same status; rank 0 prints), its share of the points, and rank 0 writes the
// table and the plot from every rank's rows.
void run_sweep(const SweepCliOptions& o,
               const std::vector<std::pair<std::string, std::string>>& given) {
  sweep::Communicator& comm = open_world();
  const bool root = comm.rank() == 0;
  Resolved in;
  sweep::agree(comm, [&] { resolve(o, root, in); });
  // An MPMD launch, or nodes with different files, would otherwise mix rows of other sweeps.
  sweep::check_same_inputs(comm, sweep::describe_inputs(given));

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
    const report::Table& t = g->table;
    try {
      if (o.json)
        fmt::print("{}\n", Json{{"rows", report::to_json(t)}}.dump(2));
      else if (o.csv)
        fmt::print("{}", report::to_csv(t));
      else
        fmt::print("{}\n{}", sweep::routing_line(t), report::to_text(t));
    } catch (const std::system_error& e) {
      throw InputError("stdout", "cannot write the output (" + e.code().message() + ")");
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      throw InputError("stdout", "cannot write the output");
    if (in.plot) report::write_plot(sweep::sweep_chart(t, *in.plot), o.plot, "--plot");
  });
}

// What each rank was given, for sweep::check_same_inputs: every option set on the command line
// with its values, by name (so "--gpus=64" and "--gpus 64" agree), --threads aside (a count per
// process; the output does not depend on it).
std::vector<std::pair<std::string, std::string>> given_options(const CLI::App& cmd) {
  std::vector<std::pair<std::string, std::string>> given;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->count() == 0 || opt->get_name() == "--threads") continue;
    std::string values;
    for (const std::string& v : opt->results()) values += (values.empty() ? "" : " ") + v;
    given.emplace_back(opt->get_name(), values);
  }
  return given;
}

}  // namespace

std::string agree_on_startup_error(const std::string& message) {
  if (g_world_open || !sweep::launched_by_mpi()) return message;
  try {
    sweep::agree(open_world(), [&] { throw InputError("", message); });
  } catch (const InputError& agreed) {
    return agreed.what();
  }
  return message;
}

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepCliOptions>();
  auto* cmd = app.add_subcommand(
      "sweep",
      "A parameter study: each option takes a list (8,16,32), a range (200:800:200, inclusive) or "
      "a geometric series (1024..8192x2); every point's three designs are priced and (unless "
      "--no-perf) get their best plan. One row per point and design. Started by mpirun or srun "
      "(mpirun -np 8 railsim sweep ...), the processes share the points and rank 0 prints the "
      "same table as one process would (docs/studies.md)");
  std::string studies;
  for (const auto& n : sweep::study_names()) studies += (studies.empty() ? "" : "|") + n;
  cmd->add_option("--study", o->study,
                  "A study of the paper, as preset axes and a plot: " + studies +
                      " (docs/studies.md); options given replace the study's");
  cmd->add_option("--gpus", o->gpus, "GPU counts N (default 32768 in whole HB domains)");
  cmd->add_option("--gpu", o->gpu, "GPU presets or JSON files (default H100-SXM)");
  cmd->add_option("--hb-domain", o->hb_domain, "HB-domain sizes K (default: the GPU preset's)");
  cmd->add_option("--nic-gbps", o->nic_gbps, "NIC speeds, Gb/s (default: the GPU preset's)");
  cmd->add_option("--hb-GBps", o->hb_GBps,
                  "HB bandwidths per GPU per direction, GB/s (default: the GPU preset's)");
  cmd->add_option("--nics-per-gpu", o->nics_per_gpu, "NICs per GPU (default: the GPU preset's)");
  cmd->add_option("--switch", o->sw, "Switch presets or JSON files (default ETH-51.2T-128x400G)");
  cmd->add_option("--catalog", o->catalog, "Price/power catalogs (default ib-ndr-thirdparty-2024)");
  cmd->add_option("--oversubscription", o->oversubscription, "Leaf down:up ratios R (default 1)");
  cmd->add_option("--model", o->model, "Models: presets or JSON files (default GPT-1T)");
  cmd->add_option(
      "--batch", o->batch,
      fmt::format("Global batches in sequences (default {})", spec::kDefaultGlobalBatch));
  cmd->add_option("--seq", o->seq, "Sequence lengths in tokens (default: the model's)");
  add_software_options(*cmd, o->software);  // one value each, for every point
  cmd->add_option("--switch-counting", o->counting, "whole or ports (one value)")
      ->capture_default_str();
  cmd->add_flag("--zip", o->zip,
                "Take the lists together (point i from item i of each; lists of one value apply "
                "to every point) instead of their cartesian product");
  cmd->add_flag("--no-perf", o->no_perf,
                "Cost and power only: no plan search, no plan columns (the default of the "
                "cluster-size and moe-alltoall studies)");
  cmd->add_flag("--perf", o->perf,
                "Search each design's best plan even where a study skips it (cluster-size, "
                "moe-alltoall)");
  cmd->add_option("--max-points", o->max_points, "Refuse sweeps of more points")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads,
                  "Threads (0: all cores; per process under MPI); the output is the same")
      ->capture_default_str();
  cmd->add_option("--split", o->split,
                  "Under MPI, how the points are shared among the processes: strided (rank r "
                  "takes points r, r+R, ...) or contiguous blocks; the output is the same")
      ->capture_default_str();
  cmd->add_option("--alltoall", o->alltoall,
                  "Also simulate a uniform all-to-all of this size per GPU over all GPUs on each "
                  "design (e.g. 256MB): columns alltoall_time_s, alltoall_vs_rail_optimized_pct");
  cmd->add_option("--routing", o->routing,
                  "Routings: auto (the switch's default: adaptive on InfiniBand, ecmp on "
                  "Ethernet), ecmp, adaptive, spray; a list sweeps them (default auto)");
  cmd->add_option("--seed", o->seed, "ECMP hash seed, 0 .. 2^62 (default 0)");
  cmd->add_option("--forwarding", o->forwarding,
                  "Rail-only forwarding of every design's plans and of --alltoall: pipelined "
                  "(default, NCCL's PXN), store or two-phase (the moe-alltoall study's)");
  cmd->add_option("--forward-via", o->forward_via,
                  "Forwarding peer: hb_first (default) or rail_first");
  cmd->add_option("--chunks", o->chunks,
                  "Pieces per forwarded transfer when pipelined (default 8)");
  cmd->add_option("--plot", o->plot,
                  "Write a line chart of the rows (.png, .svg or .pdf, drawn by gnuplot): the "
                  "study's, or --plot-x against --plot-y");
  cmd->add_option("--plot-x", o->plot_x, "The x axis of --plot: a swept option or a column");
  cmd->add_option("--plot-y", o->plot_y,
                  "The y axis of --plot: a numeric column (best_iteration_time_s, cost_usd, ...)");
  cmd->add_flag("--json", o->json, "Print JSON: {\"rows\": [...]}");
  cmd->add_flag("--csv", o->csv, "Print CSV: a header and one row per point and design");
  cmd->callback([o, cmd] { run_sweep(*o, given_options(*cmd)); });
}

}  // namespace railsim::cli
