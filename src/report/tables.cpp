#include "railsim/report/tables.hpp"

#include <fmt/format.h>

#include <array>
#include <string>

#include "railsim/core/units.hpp"
#include "railsim/cost/report.hpp"

namespace railsim::report {

namespace {

Column watts(const char* name, const char* label, bool human = true) {
  return si_column(name, label, "W", 4, human);
}
Column seconds(const char* name, const char* label, int digits) {
  return si_column(name, label, "s", digits);
}

}  // namespace

std::vector<Column> routing_columns() {
  return {text_column("routing", "routing"), integer_column("seed", "seed", false),
          text_column("forwarding", "forwarding", false),
          text_column("forward_via", "forward via", false),
          integer_column("chunks", "chunks", false)};
}

void append_routing_cells(std::vector<Cell>& row, const spec::NetworkDesign& d) {
  row.emplace_back(std::string(spec::to_string(d.routing)));
  row.emplace_back(static_cast<std::int64_t>(d.ecmp_seed));
  row.emplace_back(std::string(spec::to_string(d.forwarding)));
  row.emplace_back(std::string(spec::to_string(d.forward_via)));
  row.emplace_back(std::int64_t{d.forwarding_chunks});
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

report::Table designs_table(const spec::Cluster& c, const std::vector<cost::DesignReport>& rows,
                            bool with_savings) {
  report::Table t;
  t.columns = {
      text_column("gpu", "GPU", false),
      integer_column("gpus", "GPUs", false),
      integer_column("hb_domain", "HB domain", false),
      text_column("design", "design"),
      text_column("switch", "switch", false),
      integer_column("switch_radix", "switch radix", false),
      real_column("switch_port_gbps", "switch port", "Gb/s", 0, false),
      text_column("catalog", "catalog", false),
      text_column("switch_counting", "switch counting", false),
      integer_column("tiers", "tiers"),
      text_column("tier_names", "tier names"),
      integer_column("clos_networks", "Clos networks", false),
      integer_column("switches", "switches"),
      integers_column("switches_per_tier", "switches per tier"),
      integer_column("switch_ports", "switch ports", false),
      integer_column("switch_ports_used", "switch ports used", false),
      integers_column("switch_ports_used_per_tier", "ports used per tier", false),
      real_column("switch_equivalents", "switch equivalents", "", 1, false),
      integer_column("links", "links", false),
      integers_column("links_per_tier", "links per tier"),
      integer_column("optical_links", "optical links", false),
      integer_column("copper_links", "copper links", false),
      integer_column("management_links", "management links", false),
      integer_column("transceivers", "transceivers"),
      integer_column("transceivers_nic_side", "transceivers NIC side", false),
      integer_column("transceivers_switch_side", "transceivers switch side", false),
      integer_column("transceiver_ends", "transceiver ends", false),
      integer_column("nics", "NICs", false),
      usd_column("cost_usd", "cost"),
      usd_column("cost_per_gpu_usd", "cost per GPU"),
      usd_column("switch_cost_usd", "switch cost", false),
      usd_column("transceiver_cost_usd", "transceiver cost", false),
      usd_column("cable_cost_usd", "cable cost", false),
      watts("power_w", "power"),
      watts("power_per_gpu_w", "power per GPU"),
      watts("switch_power_w", "switch power", false),
      watts("transceiver_power_w", "transceiver power", false),
      watts("cable_power_w", "cable power", false),
      text_column("switch_power_from", "switch watts from", false),
      real_column("switch_w_each", "switch watts each", "W", 0, false),
      usd_column("nic_cost_usd", "NIC cost", false),
      watts("nic_power_w", "NIC power", false),
      fraction_column("cost_saving", "cost saving"),
      fraction_column("power_saving", "power saving"),
  };
  for (const cost::DesignReport& r : rows) {
    const cost::BillOfMaterials& b = r.bom;
    auto saving = [&](double v) { return with_savings ? report::Cell(v) : report::Missing{}; };
    t.add_row({c.gpu.name,
               b.gpus,
               b.hb_domain,
               std::string(spec::to_string(b.design)),
               r.switch_name,
               std::int64_t{b.radix},
               b.port_gbps,
               r.catalog_name,
               std::string(cost::to_string(r.counting)),
               std::int64_t{b.tiers},
               b.tiers ? cost::tier_names(b.tiers) : std::string("HB only"),
               b.clos_networks,
               b.switches,
               b.switches_per_tier,
               b.switch_ports,
               b.switch_ports_used,
               b.ports_used_per_tier,
               b.switch_equivalents(),
               b.links,
               b.links_per_tier,
               b.optical_links,
               b.copper_links,
               b.management_links,
               b.transceivers(),
               b.nic_side_transceivers,
               b.switch_side_transceivers,
               b.transceiver_ends,
               b.nics,
               r.cost.cost_usd(),
               r.cost_per_gpu_usd(),
               r.cost.usd.switches,
               r.cost.usd.transceivers,
               r.cost.usd.cables,
               r.cost.power_w(),
               r.power_per_gpu_w(),
               r.cost.watts.switches,
               r.cost.watts.transceivers,
               r.cost.watts.cables,
               std::string(r.switch_box_w > 0 ? "preset" : "catalog"),
               r.switch_box_w,
               r.cost.nic_usd,
               r.cost.nic_w,
               saving(r.cost_saving),
               saving(r.power_saving)});
  }
  return t;
}

report::Table plans_table(const std::vector<perf::Plan>& plans, perf::PlacementKind placement) {
  report::Table t;
  t.columns = {
      integer_column("rank", "#"),
      integer_column("tp", "tp"),
      integer_column("pp", "pp"),
      integer_column("dp", "dp"),
      integer_column("ep", "ep"),
      integer_column("micro_batch", "mb"),
      integer_column("interleave", "v"),
      text_column("recompute", "recompute"),
      boolean_column("sp", "sp"),
      boolean_column("dist_opt", "dopt"),
      boolean_column("dp_overlap", "ovl"),
      text_column("placement", "placement", false),
      boolean_column("feasible", "fits", false),
      real_column("iteration_time_s", "time", "s", 3),
      fraction_column("mfu", "MFU"),
      fraction_column("hfu", "HFU", false),
      real_column("tokens_per_s", "tokens/s", "", 0, false),
      real_column("memory_gib", "memory", "GiB", 1),
      boolean_column("cross_rail", "cross rail", false),
      real_column("compute_s", "compute", "s", 3, false),
      real_column("recompute_s", "recompute time", "s", 3, false),
      real_column("tp_comm_s", "tp comm", "s", 3),
      real_column("pp_comm_s", "pp comm", "s", 3),
      real_column("dp_comm_s", "dp comm", "s", 3),
      real_column("ep_comm_s", "ep comm", "s", 3),
      real_column("rail_forwarding_s", "rail fwd", "s", 3),
      real_column("bubble_s", "bubble", "s", 3),
      real_column("pipeline_overhead_s", "pipeline steps", "s", 3, false),
      real_column("optimizer_s", "optimizer", "s", 3, false),
      real_column("weights_gib", "weights", "GiB", 1, false),
      real_column("gradients_gib", "gradients", "GiB", 1, false),
      real_column("optimizer_gib", "optimizer state", "GiB", 1, false),
      real_column("activations_gib", "activations", "GiB", 1, false),
      real_column("reserved_gib", "reserved", "GiB", 1, false),
  };
  std::int64_t rank = 0;
  for (const perf::Plan& p : plans) {
    const perf::Strategy& s = p.strategy;
    const perf::IterationTime& it = p.time;
    const perf::Breakdown& b = it.breakdown;
    const perf::MemoryUse& m = it.memory;
    t.add_row({++rank,
               s.tp,
               s.pp,
               s.dp,
               s.ep,
               s.micro_batch,
               s.interleave,
               std::string(perf::to_string(s.recompute)),
               s.sp,
               s.dist_opt,
               s.dp_overlap,
               std::string(perf::to_string(placement)),
               it.feasible,
               it.iteration_time_s,
               it.mfu,
               it.hfu,
               it.tokens_per_s,
               m.total() / units::kGiB,
               it.cross_rail,
               b.compute_s,
               b.recompute_s,
               b.tp_comm_s,
               b.pp_comm_s,
               b.dp_comm_s,
               b.ep_comm_s,
               b.rail_forwarding_s,
               b.bubble_s,
               b.pipeline_overhead_s,
               b.optimizer_s,
               m.weights_bytes / units::kGiB,
               m.gradients_bytes / units::kGiB,
               m.optimizer_bytes / units::kGiB,
               m.activations_bytes / units::kGiB,
               m.reserved_bytes / units::kGiB});
  }
  return t;
}

std::vector<report::Column> traffic_pair_columns() {
  std::vector<Column> c = {integer_column("src", "source GPU"),
                           integer_column("dst", "destination GPU"),
                           integer_column("src_domain", "source domain"),
                           integer_column("src_rail", "source rail"),
                           integer_column("dst_domain", "destination domain"),
                           integer_column("dst_rail", "destination rail"),
                           text_column("locality", "locality")};
  for (const char* p : {"tp", "sp", "pp", "dp", "ep", "total"})
    c.push_back(si_column(std::string(p) + "_bytes", std::string(p) + " bytes", "B", 3));
  return c;
}

namespace {
// The columns and cells naming one CommOp (schedule tables of estimate and sim).
std::vector<Column> op_columns() {
  return {text_column("parallelism", "par"),   text_column("op", "op"),
          text_column("axis", "axis"),         text_column("algorithm", "algorithm"),
          text_column("phase", "phase"),       si_column("bytes", "bytes", "B", 4),
          real_column("count", "count", "", 0)};
}
std::vector<Cell> op_cells(const perf::CommOp& op) {
  return {std::string(perf::to_string(op.parallelism)),
          std::string(perf::to_string(op.op)),
          std::string(perf::to_string(op.axis)),
          std::string(perf::to_string(op.algorithm)),
          std::string(perf::to_string(op.phase)),
          op.bytes,
          op.count};
}
}  // namespace

Table schedule_check_table(const sim::ScheduleCheck& r) {
  Table t;
  t.columns = op_columns();
  t.columns.insert(t.columns.end(), {seconds("sim_time_s", "simulated", 5),
                                     seconds("analytic_time_s", "analytic", 5),
                                     real_column("sim_over_analytic", "ratio", "", 3)});
  for (std::size_t i = 0; i < r.sim.ops.size(); ++i) {
    const auto& o = r.sim.ops[i];
    const double an = r.analytic_s[i];
    std::vector<Cell> row = op_cells(o.op);
    row.insert(row.end(), {o.time_s, an, an > 0 ? Cell(o.time_s / an) : Cell(Missing{})});
    t.add_row(std::move(row));
  }
  return t;
}

Table sim_phases_table(const sim::CollectiveResult& r) {
  Table t;
  t.columns = {text_column("phase", "phase"),
               seconds("time_s", "time", 5),
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

Table breakdown_table(const perf::IterationTime& it) {
  Table t;
  t.columns = {text_column("part", "part"), seconds("time_s", "time", 4),
               fraction_column("share", "share")};
  const perf::Breakdown& b = it.breakdown;
  const double T = it.iteration_time_s;
  const std::pair<const char*, double> parts[] = {
      {"compute", b.compute_s},           {"recompute", b.recompute_s},
      {"tp/sp comm", b.tp_comm_s},        {"tp overlap (SMs)", b.tp_overlap_s},
      {"ep all-to-all", b.ep_comm_s},     {"pp send/recv", b.pp_comm_s},
      {"dp comm (exposed)", b.dp_comm_s}, {"rail forwarding", b.rail_forwarding_s},
      {"pipeline bubble", b.bubble_s},    {"pipeline steps", b.pipeline_overhead_s},
      {"optimizer", b.optimizer_s}};
  for (const auto& [name, v] : parts)
    t.add_row({std::string(name), v, T > 0 ? Cell(v / T) : Cell(Missing{})});
  return t;
}

Table comm_table(const perf::CommSchedule& cs, const perf::Placement& pl,
                 const perf::NetworkModel& net) {
  Table t;
  t.columns = op_columns();
  t.columns.insert(
      t.columns.end(),
      {integer_column("group_size", "group"), integer_column("per_domain", "per domain"),
       integer_column("domains", "domains"), boolean_column("rail_aligned", "rail-aligned"),
       seconds("time_s", "each", 4), seconds("forwarding_s", "forwarding", 4)});
  for (const perf::CommOp& op : cs) {
    const perf::GroupShape g = pl.shape(op.axis);
    const perf::CollectiveTime ct = perf::collective_time(op, pl, net);
    std::vector<Cell> row = op_cells(op);
    row.insert(row.end(),
               {g.size, g.per_domain, g.domains, g.rail_aligned, ct.time_s, ct.forwarding_s});
    t.add_row(std::move(row));
  }
  return t;
}

Table explain_table(const std::vector<perf::Plan>& plans) {
  auto sec = [](const char* name, const char* label) { return seconds(name, label, 4); };
  auto gib = [](const char* name, const char* label) { return real_column(name, label, "GiB", 1); };
  Table t;
  t.columns = {text_column("plan", "plan"),
               text_column("strategy", "strategy", false),
               sec("iteration_time_s", "iteration"),
               sec("compute_s", "compute"),
               sec("recompute_s", "recompute"),
               sec("tp_comm_s", "tp/sp comm (exposed)"),
               sec("tp_overlap_s", "tp overlap (SMs)"),
               sec("ep_comm_s", "ep all-to-all"),
               sec("pp_comm_s", "pp send/recv"),
               sec("dp_comm_s", "dp comm (exposed)"),
               sec("rail_forwarding_s", "rail forwarding"),
               sec("bubble_s", "pipeline bubble"),
               sec("pipeline_overhead_s", "pipeline steps"),
               sec("optimizer_s", "optimizer step"),
               sec("tp_hidden_s", "tp/sp hidden (not in total)"),
               sec("pp_hidden_s", "pp hidden (not in total)"),
               gib("memory_gib", "memory per GPU"),
               gib("weights_gib", "  weights"),
               gib("gradients_gib", "  gradients"),
               gib("optimizer_gib", "  optimizer state"),
               gib("activations_gib", "  activations"),
               gib("reserved_gib", "  reserved")};
  auto values = [](const perf::IterationTime& it) {
    const perf::Breakdown& b = it.breakdown;
    const perf::MemoryUse& m = it.memory;
    const double g = units::kGiB;
    return std::array<double, 20>{it.iteration_time_s,
                                  b.compute_s,
                                  b.recompute_s,
                                  b.tp_comm_s,
                                  b.tp_overlap_s,
                                  b.ep_comm_s,
                                  b.pp_comm_s,
                                  b.dp_comm_s,
                                  b.rail_forwarding_s,
                                  b.bubble_s,
                                  b.pipeline_overhead_s,
                                  b.optimizer_s,
                                  b.tp_hidden_s,
                                  b.pp_hidden_s,
                                  m.total() / g,
                                  m.weights_bytes / g,
                                  m.gradients_bytes / g,
                                  m.optimizer_bytes / g,
                                  m.activations_bytes / g,
                                  m.reserved_bytes / g};
  };
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const perf::Strategy& s = plans[i].strategy;
    std::vector<Cell> row{
        fmt::format("#{} tp{} pp{} dp{}{} mb{} v{} {}{}", i + 1, s.tp, s.pp, s.dp,
                    s.ep > 1 ? fmt::format(" ep{}", s.ep) : std::string(), s.micro_batch,
                    s.interleave, perf::to_string(s.recompute), s.sp ? " sp" : ""),
        perf::describe(s)};
    for (double v : values(plans[i].time)) row.push_back(v);
    t.add_row(std::move(row));
  }
  // The difference of each later plan against the winner, part by part.
  for (std::size_t i = 1; i < plans.size(); ++i) {
    std::vector<Cell> row{fmt::format("#{} - #1", i + 1), std::string()};
    const auto a = values(plans[i].time), w = values(plans.front().time);
    for (std::size_t k = 0; k < a.size(); ++k) row.push_back(a[k] - w[k]);
    t.add_row(std::move(row));
  }
  return t;
}

}  // namespace railsim::report
