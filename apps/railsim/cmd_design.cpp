#include <fmt/format.h>

#include <memory>
#include <sstream>

#include "commands.hpp"
#include "railsim/core/error.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/table.hpp"
#include "railsim/report/tables.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/export.hpp"

namespace railsim::cli {

namespace {

struct DesignOptions {
  spec::ClusterOptions cluster;
  NetworkOptions network;
  CostOptions cost;
  bool json = false;
  bool csv = false;
  std::vector<std::string> export_args;  // FORMAT FILE
};

void run_design(const DesignOptions& o) {
  const spec::Cluster cluster = spec::make_cluster(o.cluster);
  const spec::NetworkDesign design = resolve_network(o.network);
  const auto [cat, counting] = resolve_cost(o.cost);
  if (o.json && o.csv) throw InputError("--csv", "choose one of --json and --csv");
  std::optional<topo::GraphFormat> export_format;
  if (!o.export_args.empty()) {
    export_format = topo::parse_graph_format(o.export_args[0], "--export");
    report::check_writable(o.export_args[1], "--export");  // before the graph is built
  }

  const cost::DesignReport r = cost::evaluate(cluster, design, cat, counting);
  if (export_format) {
    const topo::Fabric f = topo::build_fabric(cluster, design);
    // Whole or not at all (report/file.hpp): a signal, a full disk or a second writer never
    // leaves a partial graph under the name, nor destroys the previous one.
    std::ostringstream out;
    topo::write_graph(f, *export_format, out);
    report::write_file_atomic(o.export_args[1], out.view(), "--export");
  }
  if (o.json) {
    fmt::print("{}\n", cost::design_document(cluster, r).dump(2));
  } else if (o.csv) {
    fmt::print("{}", report::to_csv(report::designs_table(cluster, {r}, /*with_savings=*/false)));
  } else {
    fmt::print("{}", cost::design_table(cluster, r));
    if (export_format) fmt::print("graph written to {}\n", o.export_args[1]);
  }
}

}  // namespace

void add_design_command(CLI::App& app) {
  auto o = std::make_shared<DesignOptions>();
  auto* cmd = app.add_subcommand(
      "design", "One network design over one cluster: its full bill of materials, cost and power");
  add_cluster_options(*cmd, o->cluster);
  add_network_options(*cmd, o->network);
  add_cost_options(*cmd, o->cost);
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--csv", o->csv, "Print CSV (a header and one row)");
  cmd->add_option("--export", o->export_args,
                  "Write the Fabric graph: --export graphml|dot|json FILE")
      ->expected(2)
      ->type_name("FORMAT FILE");
  cmd->callback([o] { run_design(*o); });
}

}  // namespace railsim::cli
