// railsim traffic: who sends how many bytes to whom in one training iteration, and where.
#include "railsim/command/traffic.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>

#include "railsim/command/inputs.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/report/csv.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/format.hpp"
#include "railsim/report/heatmap.hpp"
#include "railsim/report/table.hpp"
#include "railsim/traffic/iteration.hpp"
#include "railsim/traffic/tables.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {

// Beyond this many GPUs a GPU x GPU picture says no more than the HB-domain one.
constexpr std::int64_t kMaxHeatmapGpus = 8192;

// The heatmap files asked for, with their option and view.
std::vector<std::tuple<std::string, const char*, traffic::TrafficView>> heatmaps(const Args& a) {
  std::vector<std::tuple<std::string, const char*, traffic::TrafficView>> v;
  for (const auto& [key, option, view] :
       {std::tuple{"heatmap_gpu", "--heatmap-gpu", traffic::TrafficView::gpu},
        {"heatmap_domain", "--heatmap-domain", traffic::TrafficView::domain},
        {"heatmap_rail", "--heatmap-rail", traffic::TrafficView::rail}})
    if (const auto path = a.text_if(key); path && !path->empty())
      v.emplace_back(*path, option, view);
  return v;
}

// Every GPU pair with traffic, streamed (millions of pairs): the header and the text field go
// through the table's CSV functions; the numbers are written as report::csv_cell writes them.
// With context parallelism (with_cp) a cp_bytes column comes before the total; the software
// columns, the same on every row, end each line.
void write_pairs_csv(const std::string& path, const traffic::TrafficMatrix& tm,
                     const spec::Cluster& c, const perf::Training& tr, bool with_cp) {
  report::CsvFile f(path, "--csv");
  std::string line = report::csv_header(traffic::traffic_pair_columns(with_cp));
  line.pop_back();
  f.line(line);
  const std::string software = traffic::traffic_pair_software_suffix(tr);
  traffic::for_each_pair(tm, [&](std::int64_t src, std::int64_t dst, const auto& b) {
    line.clear();
    fmt::format_to(std::back_inserter(line), "{},{},{},{},{},{},{},{},{},{},{},{}", src, dst,
                   c.domain_of(src), c.rail_of(src), c.domain_of(dst), c.rail_of(dst),
                   report::csv_field(traffic::to_string(traffic::locality_of(c, src, dst))), b[0],
                   b[1], b[2], b[3], b[4]);
    if (with_cp) fmt::format_to(std::back_inserter(line), ",{}", b[5]);
    fmt::format_to(std::back_inserter(line), ",{}",
                   b[0] + b[1] + b[2] + b[3] + b[4] + (with_cp ? b[5] : 0.0));
    line += software;
    f.line(line);
  });
  f.close();
}

// The bytes by parallelism (rows) and locality (columns), with their shares.
void print_bytes_table(Output& out, const traffic::TrafficSummary& sum) {
  using perf::Parallelism;
  out.print("\n{:<8} {:>12} {:>12} {:>12} {:>12} {:>7}\n", "", "same_domain", "same_rail",
            "cross_rail", "total", "share");
  for (Parallelism p : {Parallelism::tp, Parallelism::sp, Parallelism::pp, Parallelism::dp,
                        Parallelism::ep, Parallelism::cp}) {
    const auto& row = sum.bytes[static_cast<std::size_t>(p)];
    const double t = sum.bytes_by_parallelism(p);
    if (t == 0) continue;
    out.print("{:<8} {:>12} {:>12} {:>12} {:>12} {:>7}\n", perf::to_string(p),
              report::si(row[0], "B"), report::si(row[1], "B"), report::si(row[2], "B"),
              report::si(t, "B"), report::share(t / sum.total_bytes));
  }
  auto loc = [&](traffic::Locality l) { return sum.bytes_by_locality(l); };
  out.print("{:<8} {:>12} {:>12} {:>12} {:>12}\n", "total",
            report::si(loc(traffic::Locality::same_domain), "B"),
            report::si(loc(traffic::Locality::same_rail), "B"),
            report::si(loc(traffic::Locality::cross_rail), "B"), report::si(sum.total_bytes, "B"));
  if (sum.total_bytes > 0)
    out.print("{:<8} {:>12} {:>12} {:>12}\n", "share",
              report::share(loc(traffic::Locality::same_domain) / sum.total_bytes),
              report::share(loc(traffic::Locality::same_rail) / sum.total_bytes),
              report::share(loc(traffic::Locality::cross_rail) / sum.total_bytes));
}

// Which pairs talk, the busiest pair and NIC, and rail-only's forwarded bytes.
void print_pairs(Output& out, const traffic::TrafficSummary& sum, const spec::Cluster& c,
                 const spec::NetworkDesign& d, const perf::IterationTime& it) {
  const double n = static_cast<double>(c.gpus);
  out.print(
      "\nGPU pairs with traffic: {} of {} ordered pairs (src != dst): {}; {} exchange "
      "nothing\n",
      report::thousands(double(sum.pairs_with_traffic)), report::thousands(n * (n - 1)),
      report::share(sum.pair_fraction_with_traffic),
      report::share(1.0 - sum.pair_fraction_with_traffic));
  out.print(
      "HB-domain pairs with inter-domain traffic: {} of {}\n",
      report::thousands(double(sum.domain_pairs_with_traffic)),
      report::thousands(static_cast<double>(c.domains()) * static_cast<double>(c.domains() - 1)));
  if (sum.busiest_pair.src >= 0)
    out.print(
        "busiest pair: GPU {} -> GPU {} ({}), {}\n", sum.busiest_pair.src, sum.busiest_pair.dst,
        traffic::to_string(traffic::locality_of(c, sum.busiest_pair.src, sum.busiest_pair.dst)),
        report::si(sum.busiest_pair.bytes, "B"));
  if (sum.busiest_nic.gpu >= 0)
    out.print(
        "busiest NIC: GPU {} (domain {}, rail {}): {} out, {} in; busy {} of the iteration at "
        "{:g} Gb/s\n",
        sum.busiest_nic.gpu, c.domain_of(sum.busiest_nic.gpu), c.rail_of(sum.busiest_nic.gpu),
        report::si(sum.busiest_nic.tx_bytes, "B"), report::si(sum.busiest_nic.rx_bytes, "B"),
        report::share(traffic::busiest_nic_utilisation(sum, c, it)),
        units::Bps_to_gbps(c.nic_bw_per_gpu_Bps()));
  else
    out.print("busiest NIC: none ({})\n", d.kind == spec::DesignKind::ideal
                                              ? "the ideal design has no NIC network"
                                              : "no byte leaves an HB domain");
  if (d.kind == spec::DesignKind::rail_only)
    out.print(
        "rail-only forwarding: {} of cross-rail bytes take an NVLink hop to a GPU on the "
        "receiver's rail and load that GPU's NIC\n",
        report::si(sum.forwarded_bytes, "B"));
}

void run_traffic(const Args& a, Output& out, TrafficPairs* pairs) {
  const StrategyInputs in = resolve_strategy_inputs(a);
  const spec::Cluster c = spec::make_cluster(cluster_options(a));
  const spec::NetworkDesign d = resolve_network(a);
  const std::int64_t seed = a.integer("seed");
  const std::int64_t cells = a.integer("heatmap_cells");
  const auto maps = heatmaps(a);
  if (const auto gpu_map = a.text_if("heatmap_gpu");
      gpu_map && !gpu_map->empty() && c.gpus > kMaxHeatmapGpus)
    throw InputError("--heatmap-gpu",
                     fmt::format("the GPU x GPU heatmap is drawn for up to {} GPUs (got {}); use "
                                 "--heatmap-domain or --heatmap-rail for larger clusters",
                                 kMaxHeatmapGpus, c.gpus));
  // Output files are checked before the (possibly long) matrix is built.
  for (const auto& [path, option, view] : maps) {
    report::plot_format(path, option);
    report::check_writable(path, option);
    report::require_gnuplot(option);
  }
  const traffic::StrategyChoice choice =
      traffic::choose_strategy(in.model, in.training, in.pins, c, d, a.flag("best"));
  const perf::Strategy& s = choice.strategy;
  const std::string source =
      choice.searched
          ? fmt::format("best plan of {} strategies", report::thousands(double(choice.evaluated)))
          : "given";
  const traffic::IterationTraffic t = traffic::iteration_traffic(
      in.model, in.training, s, c, d, in.placement, static_cast<std::uint64_t>(seed));
  const std::string who =
      fmt::format("{}, {} x {} (K={}), {}", in.model.name, report::thousands(double(c.gpus)),
                  c.gpu.name, c.hb_domain, spec::to_string(d.kind));
  const bool with_cp = s.cp > 1;
  if (const auto csv = a.text_if("csv"); csv && !csv->empty())
    write_pairs_csv(*csv, t.matrix, c, in.training, with_cp);
  if (pairs != nullptr) {
    pairs->columns = with_cp ? traffic::kParallelisms : traffic::kParallelisms - 1;
    traffic::for_each_pair(t.matrix, [&](std::int64_t src, std::int64_t dst, const auto& per) {
      pairs->src.push_back(src);
      pairs->dst.push_back(dst);
      pairs->bytes.insert(pairs->bytes.end(), per.begin(), per.begin() + pairs->columns);
    });
  }
  const std::string title = fmt::format("{}: tp{}{} pp{} dp{} ep{}, {}", who, s.tp,
                                        with_cp ? fmt::format(" cp{}", s.cp) : "", s.pp, s.dp,
                                        perf::describe_ep(s, ""), perf::to_string(in.placement));
  for (const auto& [path, option, view] : maps)
    report::write_heatmap(traffic::traffic_heatmap(t.matrix, c, view, cells, title), path, option);
  if (a.flag("json")) {
    out.print("{}\n", traffic::traffic_document(t.matrix, t.summary, c, in.model, in.training, s,
                                                in.placement, source, seed, t.time, d)
                          .dump(2));
    return;
  }
  out.print("{}, placement {}\n", who, perf::to_string(in.placement));
  out.print("network: switch {}, {}\n", d.sw.describe(), spec::describe_routing(d));
  out.print("strategy ({}): {}\n", source, perf::describe(s));
  out.print("software: stack {}, {}{}{}\n", in.training.stack.name,
            perf::to_string(in.training.dtype), spec::software_notes(in.training),
            spec::cp_note(in.training.stack, s.cp));
  out.print("iteration time {:.4g} s{}; {} on the wire per iteration\n", t.time.iteration_time_s,
            t.time.feasible ? "" : " (does not fit in memory)",
            report::si(t.summary.total_bytes, "B"));
  print_bytes_table(out, t.summary);
  print_pairs(out, t.summary, c, d, t.time);
}

}  // namespace

std::string traffic_with_pairs(const Args& args, TrafficPairs& pairs) {
  Output out;
  run_traffic(args, out, &pairs);
  return out.text();
}

Command traffic_command() {
  Command c;
  c.path = "traffic";
  c.summary = "Bytes per GPU pair of one iteration, by parallelism and locality; heatmaps";
  c.fields = join(
      {cluster_fields(), network_fields(), {routing_field()}, strategy_fields()},
      {integer_field("seed", "--seed", "Seed of the shuffled placement", 0, std::int64_t{1} << 62,
                     "1"),
       flag_field("best", "--best",
                  "Search the best plan even when --tp/--pp/--dp/--ep are given (they pin it)"),
       flag_field("json", "--json", "Print the summary as JSON"),
       text_field("csv", "--csv", "Write the non-zero GPU pairs to this CSV file"),
       text_field("heatmap_gpu", "--heatmap-gpu",
                  "Write a GPU x GPU heatmap (.png, .svg or .pdf, by gnuplot; up to 8192 GPUs)"),
       text_field("heatmap_domain", "--heatmap-domain",
                  "Write an HB-domain x HB-domain heatmap (.png, .svg or .pdf)"),
       text_field("heatmap_rail", "--heatmap-rail",
                  "Write a rail x rail heatmap of inter-domain bytes (.png, .svg or .pdf)"),
       integer_field("heatmap_cells", "--heatmap-cells",
                     "Largest number of cells per heatmap axis (items are binned beyond it)", 16,
                     4096, "1024")});
  c.run = [](const Args& a, Output& out) { run_traffic(a, out, nullptr); };
  c.python_name = "traffic";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
