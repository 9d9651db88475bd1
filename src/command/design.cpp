// railsim design: one network design over one cluster, its bill of materials, cost and power.
#include <fmt/format.h>

#include <sstream>

#include "railsim/command/inputs.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/cost/tables.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/table.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/export.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {
void run_design(const Args& a, Output& out) {
  const spec::Cluster cluster = spec::make_cluster(cluster_options(a));
  const spec::NetworkDesign design = resolve_network(a);
  const auto [cat, counting] = resolve_cost(a);
  one_format(a);
  const std::vector<std::string>& exp = a.values("export");
  std::optional<topo::GraphFormat> export_format;
  if (!exp.empty()) {
    if (exp.size() != 2) throw InputError("--export", "expected a FORMAT and a FILE");
    export_format = topo::parse_graph_format(exp[0], "--export");
    report::check_writable(exp[1], "--export");  // before the graph is built
  }
  const cost::DesignReport r = cost::evaluate(cluster, design, cat, counting);
  if (export_format) {
    const topo::Fabric f = topo::build_fabric(cluster, design);
    // Whole or not at all (report/file.hpp): a signal, a full disk or a second writer never
    // leaves a partial graph under the name, nor destroys the previous one.
    std::ostringstream graph;
    topo::write_graph(f, *export_format, graph);
    report::write_file_atomic(exp[1], graph.view(), "--export");
  }
  if (a.flag("json")) {
    out.print("{}\n", cost::design_document(cluster, r).dump(2));
  } else if (a.flag("csv")) {
    out.print("{}", report::to_csv(cost::designs_table(cluster, {r}, /*with_savings=*/false)));
  } else {
    out.print("{}", cost::design_table(cluster, r));
    if (export_format) out.print("graph written to {}\n", exp[1]);
  }
}
}  // namespace

Command design_command() {
  Command c;
  c.path = "design";
  c.summary = "One network design over one cluster: its full bill of materials, cost and power";
  Field exp =
      text_field("export", "--export", "Write the Fabric graph: --export graphml|dot|json FILE");
  exp.kind = Kind::pair;
  exp.type_name = "FORMAT FILE";
  c.fields = join({cluster_fields(), network_fields(), cost_fields()},
                  {flag_field("json", "--json", "Print JSON"),
                   flag_field("csv", "--csv", "Print CSV (a header and one row)"), exp});
  c.run = run_design;
  c.python_name = "design";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
