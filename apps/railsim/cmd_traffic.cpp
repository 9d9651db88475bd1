// railsim traffic: who sends how many bytes to whom in one training iteration, and where.
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "commands.hpp"
#include "network_options.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/report/csv.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/heatmap.hpp"
#include "railsim/report/table.hpp"
#include "railsim/report/tables.hpp"
#include "railsim/report/traffic_heatmap.hpp"
#include "railsim/traffic/summary.hpp"
#include "strategy_options.hpp"

namespace railsim::cli {

namespace {

// Beyond this many GPUs a GPU x GPU picture says no more than the HB-domain one.
constexpr std::int64_t kMaxHeatmapGpus = 8192;

struct TrafficArgs {
  spec::ClusterOptions cluster;
  NetworkOptions network;
  StrategyOptions strategy;
  std::int64_t seed = 1;
  bool best = false;
  bool json = false;
  std::string csv, heatmap_gpu, heatmap_domain, heatmap_rail;
  std::int64_t heatmap_cells = 1024;
};

bool degrees_given(const StrategyOptions& o) {
  return o.tp || o.pp || o.dp || o.ep;
}

// A share as a percentage with enough digits that neither a tiny share nor one just short of
// 100% rounds to a misleading 0% or 100%.
std::string pct(double x) {
  if (x <= 0) return "0%";
  if (x >= 1) return "100%";
  if (x < 0.001) return fmt::format("{:.2g}%", 100 * x);
  const double rest = 1.0 - x;
  int digits = 1;
  while (digits < 6 && 100 * rest < 0.5 * std::pow(10.0, -digits + 1)) ++digits;
  return fmt::format("{:.{}f}%", 100 * x, digits);
}

void run(const TrafficArgs& a) {
  const StrategyInputs in = resolve_strategy_inputs(a.strategy);
  const spec::Cluster c = spec::make_cluster(a.cluster);
  const spec::NetworkDesign d = resolve_network(a.network);
  const std::int64_t seed = check_integer("--seed", a.seed, 0, std::int64_t{1} << 62);
  const std::int64_t cells = check_integer("--heatmap-cells", a.heatmap_cells, 16, 4096);
  if (!a.heatmap_gpu.empty() && c.gpus > kMaxHeatmapGpus)
    throw InputError("--heatmap-gpu",
                     fmt::format("the GPU x GPU heatmap is drawn for up to {} GPUs (got {}); use "
                                 "--heatmap-domain or --heatmap-rail for larger clusters",
                                 kMaxHeatmapGpus, c.gpus));
  // Output files are checked before the (possibly long) matrix is built.
  for (const auto& [path, option] : {std::pair{a.heatmap_gpu, "--heatmap-gpu"},
                                     {a.heatmap_domain, "--heatmap-domain"},
                                     {a.heatmap_rail, "--heatmap-rail"}}) {
    if (path.empty()) continue;
    report::plot_format(path, option);
    report::check_writable(path, option);
    report::require_gnuplot(option);
  }

  // The strategy: the one given (estimate's defaults fill the rest), or the best plan. The search
  // runs on the rail-aligned placement; --placement then only moves the ranks, so that a careless
  // placement shows what it costs for the same strategy.
  perf::Strategy s;
  std::string source;
  if (degrees_given(a.strategy) && !a.best) {
    s = resolve_strategy(in, c);
    source = "given";
  } else {
    perf::PlanOptions po;
    po.pins = in.pins;
    po.top = 1;
    const perf::EstimateContext ctx = perf::make_context(in.model, in.training, c, d);
    const perf::PlanResult res = perf::plan(ctx, po);
    if (res.plans.empty()) {
      const InputError e = perf::explain_no_plan(res, in.model, in.training, in.pins, c);
      if (res.evaluated == 0) throw e;
      throw InputError(e.field(), e.message() +
                                      "; give --tp/--pp/--dp to see the traffic of a strategy "
                                      "anyway");
    }
    s = res.plans.front().strategy;
    source = fmt::format("best plan of {} strategies", cost::with_commas(double(res.evaluated)));
  }

  const perf::Placement pl(c, s.degrees(), in.placement, static_cast<std::uint64_t>(seed));
  const perf::CommSchedule cs = perf::build_comm_schedule(in.model, in.training, s, pl);
  const traffic::TrafficMatrix tm = traffic::TrafficMatrix::build(cs, pl, c);
  const traffic::TrafficSummary sum = traffic::summarize(tm, c, d.kind);
  // One producer, two consumers: the matrix must carry exactly the bytes the time model charges.
  const perf::WireBytes wire = perf::wire_bytes(cs, pl);
  for (int p = 0; p < traffic::kParallelisms; ++p) {
    const double want = wire.by_parallelism[static_cast<std::size_t>(p)];
    const double got = sum.bytes_by_parallelism(static_cast<perf::Parallelism>(p));
    if (std::fabs(got - want) > 1e-9 * std::max(1.0, want))
      throw std::logic_error(fmt::format("traffic: {} bytes {} differ from the time model's {}",
                                         perf::to_string(static_cast<perf::Parallelism>(p)), got,
                                         want));
  }
  const perf::EstimateContext ectx = perf::make_context(in.model, in.training, c, d, in.placement);
  const perf::IterationTime it = perf::estimate(ectx, s, pl, cs);

  const std::string who =
      fmt::format("{}, {} x {} (K={}), {}", in.model.name, cost::with_commas(double(c.gpus)),
                  c.gpu.name, c.hb_domain, spec::to_string(d.kind));
  const std::string strat =
      fmt::format("tp{} pp{} dp{} ep{}, {}", s.tp, s.pp, s.dp, s.ep, perf::to_string(in.placement));
  if (!a.csv.empty()) {
    report::CsvFile f(a.csv, "--csv");
    // Streamed (millions of pairs): the header and the text field go through the table's CSV
    // functions; the numbers are written as report::csv_cell writes them.
    std::string line = report::csv_header(report::traffic_pair_columns());
    line.pop_back();
    f.line(line);
    traffic::for_each_pair(tm, [&](std::int64_t src, std::int64_t dst, const auto& b) {
      line.clear();
      fmt::format_to(std::back_inserter(line), "{},{},{},{},{},{},{},{},{},{},{},{},{}", src, dst,
                     c.domain_of(src), c.rail_of(src), c.domain_of(dst), c.rail_of(dst),
                     report::csv_field(traffic::to_string(traffic::locality_of(c, src, dst))), b[0],
                     b[1], b[2], b[3], b[4], b[0] + b[1] + b[2] + b[3] + b[4]);
      f.line(line);
    });
    f.close();
  }
  const std::string title = fmt::format("{}: {}", who, strat);
  for (const auto& [path, option, view] :
       {std::tuple{a.heatmap_gpu, "--heatmap-gpu", report::TrafficView::gpu},
        {a.heatmap_domain, "--heatmap-domain", report::TrafficView::domain},
        {a.heatmap_rail, "--heatmap-rail", report::TrafficView::rail}})
    if (!path.empty())
      report::write_heatmap(report::traffic_heatmap(tm, c, view, cells, title), path, option);

  if (a.json) {
    fmt::print("{}\n", traffic::traffic_document(tm, sum, c, in.model, in.training, s, in.placement,
                                                 source, seed, it, d)
                           .dump(2));
    return;
  }
  using perf::Parallelism;
  fmt::print("{}, placement {}\n", who, perf::to_string(in.placement));
  fmt::print("network: switch {}, {}\n", d.sw.describe(), spec::describe_routing(d));
  fmt::print("strategy ({}): {}\n", source, perf::describe(s));
  fmt::print("iteration time {:.4g} s{}; {} on the wire per iteration\n", it.iteration_time_s,
             it.feasible ? "" : " (does not fit in memory)", report::si(sum.total_bytes, "B"));
  fmt::print("\n{:<8} {:>12} {:>12} {:>12} {:>12} {:>7}\n", "", "same_domain", "same_rail",
             "cross_rail", "total", "share");
  for (Parallelism p :
       {Parallelism::tp, Parallelism::sp, Parallelism::pp, Parallelism::dp, Parallelism::ep}) {
    const auto& row = sum.bytes[static_cast<std::size_t>(p)];
    const double t = sum.bytes_by_parallelism(p);
    if (t == 0) continue;
    fmt::print("{:<8} {:>12} {:>12} {:>12} {:>12} {:>7}\n", perf::to_string(p),
               report::si(row[0], "B"), report::si(row[1], "B"), report::si(row[2], "B"),
               report::si(t, "B"), pct(t / sum.total_bytes));
  }
  auto loc = [&](traffic::Locality l) { return sum.bytes_by_locality(l); };
  fmt::print("{:<8} {:>12} {:>12} {:>12} {:>12}\n", "total",
             report::si(loc(traffic::Locality::same_domain), "B"),
             report::si(loc(traffic::Locality::same_rail), "B"),
             report::si(loc(traffic::Locality::cross_rail), "B"), report::si(sum.total_bytes, "B"));
  if (sum.total_bytes > 0)
    fmt::print("{:<8} {:>12} {:>12} {:>12}\n", "share",
               pct(loc(traffic::Locality::same_domain) / sum.total_bytes),
               pct(loc(traffic::Locality::same_rail) / sum.total_bytes),
               pct(loc(traffic::Locality::cross_rail) / sum.total_bytes));
  const double n = static_cast<double>(c.gpus);
  fmt::print(
      "\nGPU pairs with traffic: {} of {} ordered pairs (src != dst): {}; {} exchange "
      "nothing\n",
      cost::with_commas(double(sum.pairs_with_traffic)), cost::with_commas(n * (n - 1)),
      pct(sum.pair_fraction_with_traffic), pct(1.0 - sum.pair_fraction_with_traffic));
  fmt::print(
      "HB-domain pairs with inter-domain traffic: {} of {}\n",
      cost::with_commas(double(sum.domain_pairs_with_traffic)),
      cost::with_commas(static_cast<double>(c.domains()) * static_cast<double>(c.domains() - 1)));
  if (sum.busiest_pair.src >= 0)
    fmt::print(
        "busiest pair: GPU {} -> GPU {} ({}), {}\n", sum.busiest_pair.src, sum.busiest_pair.dst,
        traffic::to_string(traffic::locality_of(c, sum.busiest_pair.src, sum.busiest_pair.dst)),
        report::si(sum.busiest_pair.bytes, "B"));
  if (sum.busiest_nic.gpu >= 0)
    fmt::print(
        "busiest NIC: GPU {} (domain {}, rail {}): {} out, {} in; busy {} of the iteration at "
        "{:g} Gb/s\n",
        sum.busiest_nic.gpu, c.domain_of(sum.busiest_nic.gpu), c.rail_of(sum.busiest_nic.gpu),
        report::si(sum.busiest_nic.tx_bytes, "B"), report::si(sum.busiest_nic.rx_bytes, "B"),
        pct(traffic::busiest_nic_utilisation(sum, c, it)),
        units::Bps_to_gbps(c.nic_bw_per_gpu_Bps()));
  else
    fmt::print("busiest NIC: none ({})\n", d.kind == spec::DesignKind::ideal
                                               ? "the ideal design has no NIC network"
                                               : "no byte leaves an HB domain");
  if (d.kind == spec::DesignKind::rail_only)
    fmt::print(
        "rail-only forwarding: {} of cross-rail bytes take an NVLink hop to a GPU on the "
        "receiver's rail and load that GPU's NIC\n",
        report::si(sum.forwarded_bytes, "B"));
}

}  // namespace

void add_traffic_command(CLI::App& app) {
  auto args = std::make_shared<TrafficArgs>();
  auto* cmd = app.add_subcommand(
      "traffic", "Bytes per GPU pair of one iteration, by parallelism and locality; heatmaps");
  add_cluster_options(*cmd, args->cluster);
  add_network_options(*cmd, args->network);
  cmd->add_option("--routing", args->network.routing, kRoutingHelp)->capture_default_str();
  add_strategy_options(*cmd, args->strategy);
  cmd->add_option("--seed", args->seed, "Seed of the shuffled placement")->capture_default_str();
  cmd->add_flag("--best", args->best,
                "Search the best plan even when --tp/--pp/--dp/--ep are given (they pin it)");
  cmd->add_flag("--json", args->json, "Print the summary as JSON");
  cmd->add_option("--csv", args->csv, "Write the non-zero GPU pairs to this CSV file");
  cmd->add_option("--heatmap-gpu", args->heatmap_gpu,
                  "Write a GPU x GPU heatmap (.png, .svg or .pdf, by gnuplot; up to 8192 GPUs)");
  cmd->add_option("--heatmap-domain", args->heatmap_domain,
                  "Write an HB-domain x HB-domain heatmap (.png, .svg or .pdf)");
  cmd->add_option("--heatmap-rail", args->heatmap_rail,
                  "Write a rail x rail heatmap of inter-domain bytes (.png, .svg or .pdf)");
  cmd->add_option("--heatmap-cells", args->heatmap_cells,
                  "Largest number of cells per heatmap axis (items are binned beyond it)")
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace railsim::cli
