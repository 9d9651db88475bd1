#include "railsim/traffic/tables.hpp"

#include <fmt/format.h>

#include "railsim/spec/routing_table.hpp"
#include "railsim/traffic/aggregate.hpp"

namespace railsim::traffic {

using namespace report;  // Table, Column, Cell and the column makers

std::vector<Column> traffic_pair_columns(bool with_cp) {
  std::vector<Column> c = {integer_column("src", "source GPU"),
                           integer_column("dst", "destination GPU"),
                           integer_column("src_domain", "source domain"),
                           integer_column("src_rail", "source rail"),
                           integer_column("dst_domain", "destination domain"),
                           integer_column("dst_rail", "destination rail"),
                           text_column("locality", "locality")};
  for (const char* p : {"tp", "sp", "pp", "dp", "ep", "cp", "total"})
    if (with_cp || std::string_view(p) != "cp")
      c.push_back(si_column(std::string(p) + "_bytes", std::string(p) + " bytes", "B", 3));
  for (Column& s : spec::software_columns()) c.push_back(std::move(s));
  return c;
}

std::string traffic_pair_software_suffix(const spec::Training& tr) {
  std::vector<Cell> cells;
  spec::append_software_cells(cells, tr);
  std::string out;
  for (const Cell& v : cells) {
    out.push_back(',');
    out.append(csv_cell(v));
  }
  return out;
}

report::Heatmap traffic_heatmap(const TrafficMatrix& tm, const spec::Cluster& c, TrafficView v,
                                std::int64_t cells, const std::string& title) {
  traffic::Grid g;
  std::string what, axis;
  switch (v) {
    case TrafficView::gpu:
      g = traffic::gpu_grid(tm, cells);
      what = "bytes per iteration, GPU to GPU";
      axis = "GPUs";
      break;
    case TrafficView::domain:
      g = traffic::domain_grid(tm, c, cells);
      what = "bytes per iteration, HB domain to HB domain (diagonal: NVLink)";
      axis = "domains";
      break;
    case TrafficView::rail:
      g = traffic::rail_grid(tm, c, cells);
      what = "inter-domain bytes per iteration, rail to rail (off-diagonal: cross rail)";
      axis = "rails";
      break;
  }
  report::Heatmap h;
  h.rows = h.cols = g.cells;
  h.values = g.bytes;
  h.title = title;
  h.subtitle =
      g.bin > 1 ? fmt::format("{}; each cell sums {} x {} {}", what, g.bin, g.bin, axis) : what;
  const std::string item = axis.substr(0, axis.size() - 1);
  h.x_label = "receiving " + item;
  h.y_label = "sending " + item;
  h.x_items = h.y_items = g.items;
  h.items_per_cell = g.bin;
  if (v == TrafficView::gpu && c.hb_domain % g.bin == 0 && c.hb_domain / g.bin >= 2) {
    h.separator_every = c.hb_domain / g.bin;
    h.subtitle += "; grey lines: HB domains";
  }
  return h;
}

}  // namespace railsim::traffic
