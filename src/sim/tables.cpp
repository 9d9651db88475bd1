#include "railsim/sim/tables.hpp"

#include <fmt/format.h>

#include <string>

#include "railsim/perf/tables.hpp"

namespace railsim::sim {

using perf::op_cells;
using perf::op_columns;
using perf::seconds_column;
using namespace report;  // Table, Column, Cell and the column makers

Table schedule_check_table(const sim::ScheduleCheck& r) {
  Table t;
  t.columns = op_columns();
  t.columns.insert(t.columns.end(), {seconds_column("sim_time_s", "simulated", 5),
                                     seconds_column("analytic_time_s", "analytic", 5),
                                     real_column("sim_over_analytic", "ratio", "", 3)});
  for (std::size_t i = 0; i < r.sim.ops.size(); ++i) {
    const auto& o = r.sim.ops[i];
    const double an = r.analytic_s[i];
    std::vector<Cell> row = op_cells(o.op);
    row.emplace_back(o.time_s);
    row.emplace_back(an);
    if (an > 0)
      row.emplace_back(o.time_s / an);
    else
      row.emplace_back(Missing{});
    t.add_row(std::move(row));
  }
  return t;
}

Table sim_phases_table(const sim::CollectiveResult& r) {
  Table t;
  t.columns = {text_column("phase", "phase"),
               seconds_column("time_s", "time", 5),
               integer_column("steps", "steps"),
               boolean_column("step_scaled", "one step scaled"),
               boolean_column("aggregated", "by link class"),
               integer_column("flows_simulated", "flows"),
               integer_column("events", "events")};
  for (const auto& p : r.phases)
    t.add_row(
        {p.name, p.time_s, p.steps, p.step_scaled, p.aggregated, p.flows_simulated, p.events});
  return t;
}

namespace {
template <class Row>
Table links_table(const std::vector<Row>& rows) {
  Table t;
  t.columns = {text_column("name", "link"), fraction_column("peak_utilisation", "peak utilisation"),
               si_column("bytes", "bytes", "B", 4)};
  for (const auto& x : rows) t.add_row({x.name, x.peak_utilisation, x.bytes});
  return t;
}
}  // namespace

Table sim_links_table(const std::vector<sim::TierStat>& tiers) {
  return links_table(tiers);
}
Table sim_links_table(const std::vector<sim::BusyChannel>& links) {
  return links_table(links);
}

}  // namespace railsim::sim
