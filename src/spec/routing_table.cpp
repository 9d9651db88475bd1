#include "railsim/spec/routing_table.hpp"

#include <fmt/format.h>

#include "railsim/core/json.hpp"

namespace railsim::spec {

using report::Cell;
using report::Column;
using report::integer_column;
using report::Table;
using report::text_column;

std::vector<Column> routing_columns() {
  return {text_column("routing", "routing"),
          integer_column("seed", "seed", false),
          text_column("forwarding", "forwarding", false),
          text_column("forward_via", "forward via", false),
          integer_column("chunks", "chunks", false),
          text_column("port_balance", "port balance", false),
          integer_column("connections", "connections", false)};
}

void append_routing_cells(std::vector<Cell>& row, const spec::NetworkDesign& d) {
  row.emplace_back(std::string(spec::to_string(d.routing)));
  row.emplace_back(static_cast<std::int64_t>(d.ecmp_seed));
  row.emplace_back(std::string(spec::to_string(d.forwarding)));
  row.emplace_back(std::string(spec::to_string(d.forward_via)));
  row.emplace_back(std::int64_t{d.forwarding_chunks});
  row.emplace_back(std::string(spec::to_string(d.port_balance)));
  row.emplace_back(std::int64_t{d.connections});
}

void add_routing_columns(Table& t, const spec::NetworkDesign& d) {
  std::vector<Cell> cells;
  append_routing_cells(cells, d);
  std::vector<Column> columns = routing_columns();
  for (std::size_t i = 0; i < columns.size(); ++i) {
    columns[i].human = false;
    t.add_column(columns[i], std::vector<Cell>(t.rows.size(), cells[i]));
  }
}

void add_plane_columns(Table& t, const spec::NetworkDesign& d) {
  const std::size_t n = t.rows.size();
  t.add_column(integer_column("planes", "planes", false), std::vector<Cell>(n, Cell(d.planes)));
  t.add_column(integer_column("nic_ports", "NIC ports", false),
               std::vector<Cell>(n, Cell(d.nic_ports)));
  t.add_column(report::boolean_column("dual_tor", "dual ToR", false),
               std::vector<Cell>(n, Cell(d.dual_tor)));
}

std::vector<Column> software_columns() {
  return {text_column("stack", "stack", false),
          text_column("dtype", "dtype", false),
          report::boolean_column("flash_attention", "flash attention", false),
          text_column("attention_kernel", "attention kernel", false),
          report::boolean_column("compile", "torch.compile", false),
          text_column("elementwise_kernels", "element-wise kernels", false),
          text_column("fp8_casts", "fp8 casts", false),
          text_column("ep_dispatch", "EP dispatch", false),
          report::boolean_column("ep_overlap", "EP overlap", false),
          report::boolean_column("fp8_output_layer", "output layer MXFP8", false),
          text_column("cp_comm", "CP exchange", false)};
}

void append_software_cells(std::vector<Cell>& row, const Training& tr) {
  row.emplace_back(tr.stack.name);
  row.emplace_back(std::string(to_string(tr.dtype)));
  row.emplace_back(tr.flash_attention);
  row.emplace_back(std::string(to_string(tr.stack.attention_kernel)));
  row.emplace_back(tr.compile);
  row.emplace_back(std::string(tr.eager_elementwise() ? "eager" : "fused"));
  row.emplace_back(std::string(fp8_casts_name(tr.stack)));
  row.emplace_back(std::string(ep_dispatch_name(tr.stack)));
  row.emplace_back(tr.stack.defaults.ep_overlap);
  row.emplace_back(tr.stack.defaults.fp8_output_layer);
  row.emplace_back(std::string(cp_comm_name(tr.stack)));
}

Json software_json(const Training& tr) {
  Table t;
  t.columns = software_columns();
  std::vector<Cell> row;
  append_software_cells(row, tr);
  t.add_row(std::move(row));
  return report::to_json(t).at(0);
}

void add_software_columns(Table& t, const Training& tr) {
  std::vector<Cell> cells;
  append_software_cells(cells, tr);
  std::vector<Column> columns = software_columns();
  for (std::size_t i = 0; i < columns.size(); ++i)
    t.add_column(columns[i], std::vector<Cell>(t.rows.size(), cells[i]));
}

std::string describe_software(const Training& tr) {
  return fmt::format("stack {}, {}, flash attention {}{}", tr.stack.name, to_string(tr.dtype),
                     tr.flash_attention ? "on" : "off", software_notes(tr));
}

}  // namespace railsim::spec
