#include "railsim/perf/tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "railsim/core/units.hpp"
#include "railsim/report/columns.hpp"

namespace railsim::perf {

using report::Cell;
using report::Column;
using report::Missing;
using report::Style;
using report::Table;
using report::Type;
using namespace report::columns;

report::Table plans_table(const std::vector<perf::Plan>& plans, perf::PlacementKind placement) {
  report::Table t;
  t.columns = {
      count("rank", "#"),
      count("tp", "tp"),
      count("pp", "pp"),
      count("dp", "dp"),
      count("ep", "ep"),
      count("micro_batch", "mb"),
      count("interleave", "v"),
      text("recompute", "recompute"),
      flag("sp", "sp"),
      flag("dist_opt", "dopt"),
      flag("dp_overlap", "ovl"),
      text("placement", "placement", false),
      flag("feasible", "fits", false),
      real("iteration_time_s", "time", "s", 3),
      fraction("mfu", "MFU"),
      fraction("hfu", "HFU", false),
      real("tokens_per_s", "tokens/s", "", 0, false),
      real("memory_gib", "memory", "GiB", 1),
      flag("cross_rail", "cross rail", false),
      real("compute_s", "compute", "s", 3, false),
      real("recompute_s", "recompute time", "s", 3, false),
      real("tp_comm_s", "tp comm", "s", 3),
      real("pp_comm_s", "pp comm", "s", 3),
      real("dp_comm_s", "dp comm", "s", 3),
      real("ep_comm_s", "ep comm", "s", 3),
      real("rail_forwarding_s", "rail fwd", "s", 3),
      real("bubble_s", "bubble", "s", 3),
      real("pipeline_overhead_s", "pipeline steps", "s", 3, false),
      real("optimizer_s", "optimizer", "s", 3, false),
      real("weights_gib", "weights", "GiB", 1, false),
      real("gradients_gib", "gradients", "GiB", 1, false),
      real("optimizer_gib", "optimizer state", "GiB", 1, false),
      real("activations_gib", "activations", "GiB", 1, false),
      real("reserved_gib", "reserved", "GiB", 1, false),
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

std::vector<Column> op_columns() {
  return {text("parallelism", "par"),
          text("op", "op"),
          text("axis", "axis"),
          text("algorithm", "algorithm"),
          text("phase", "phase"),
          {.name = "bytes",
           .label = "bytes",
           .type = Type::real,
           .unit = "B",
           .precision = 4,
           .style = Style::si},
          {.name = "count", .label = "count", .type = Type::real, .precision = 0}};
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
Table breakdown_table(const perf::IterationTime& it) {
  Table t;
  t.columns = {text("part", "part"),
               {.name = "time_s",
                .label = "time",
                .type = Type::real,
                .unit = "s",
                .precision = 4,
                .style = Style::si},
               {.name = "share",
                .label = "share",
                .type = Type::real,
                .precision = 1,
                .style = Style::fraction}};
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
  t.columns.insert(t.columns.end(),
                   {{.name = "group_size", .label = "group", .type = Type::integer},
                    {.name = "per_domain", .label = "per domain", .type = Type::integer},
                    {.name = "domains", .label = "domains", .type = Type::integer},
                    {.name = "rail_aligned", .label = "rail-aligned", .type = Type::boolean},
                    seconds("time_s", "each", 4),
                    seconds("forwarding_s", "forwarding", 4)});
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
  auto sec = [](const char* name, const char* label) {
    return Column{.name = name,
                  .label = label,
                  .type = Type::real,
                  .unit = "s",
                  .precision = 4,
                  .style = Style::si};
  };
  auto gib = [](const char* name, const char* label) {
    return Column{.name = name, .label = label, .type = Type::real, .unit = "GiB", .precision = 1};
  };
  Table t;
  t.columns = {text("plan", "plan"),
               text("strategy", "strategy", false),
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

}  // namespace railsim::perf
