#include "railsim/perf/tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>

#include "railsim/core/units.hpp"

namespace railsim::perf {

using namespace report;  // Table, Column, Cell and the column makers

Column seconds_column(const char* name, const char* label, int digits) {
  return si_column(name, label, "s", digits);
}

namespace {
// Inserts column `c` at `pos` (before the column of that index) with one cell per row.
void insert_column(Table& t, std::size_t pos, Column c, const std::vector<Cell>& cells) {
  t.columns.insert(t.columns.begin() + static_cast<std::ptrdiff_t>(pos), std::move(c));
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    t.rows[i].insert(t.rows[i].begin() + static_cast<std::ptrdiff_t>(pos), cells[i]);
}
std::size_t column_index(const Table& t, std::string_view name) {
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].name == name) return i;
  return t.columns.size();
}
// Context parallelism's columns (cp after tp, cp_comm_s after ep_comm_s), only when a plan has
// cp > 1: tables of plans without it stay as they were.
void add_cp_columns(Table& t, const std::vector<perf::Plan>& plans) {
  if (std::none_of(plans.begin(), plans.end(),
                   [](const perf::Plan& p) { return p.strategy.cp > 1; }))
    return;
  std::vector<Cell> cp, comm;
  for (const perf::Plan& p : plans) {
    cp.emplace_back(p.strategy.cp);
    comm.emplace_back(p.time.breakdown.cp_comm_s);
  }
  insert_column(t, column_index(t, "tp") + 1, integer_column("cp", "cp"), cp);
  if (const std::size_t ep = column_index(t, "ep_comm_s"); ep < t.columns.size())
    insert_column(t, ep + 1, real_column("cp_comm_s", "cp comm", "s", 3), comm);
}
// Columns shown only when a plan uses their knob, so that tables of plans without it stay as
// they were: the pipeline schedule (after the interleave) when a plan runs one other than 1F1B,
// the HSDP shard group (after dp) when a plan shards in groups, the offloaded layers (after
// recompute) when a plan offloads activations, the expert tensor-parallel size (after ep) when a
// plan folds its experts.
void add_schedule_columns(Table& t, const std::vector<perf::Plan>& plans) {
  std::vector<Cell> schedules, groups, offloads, etps;
  bool other_schedule = false, hybrid = false, offload = false, folded = false;
  for (const perf::Plan& p : plans) {
    schedules.emplace_back(std::string(to_string(p.strategy.schedule)));
    groups.emplace_back(p.strategy.hsdp);
    offloads.emplace_back(p.strategy.offload_layers);
    etps.emplace_back(p.strategy.expert_tp());
    folded |= p.strategy.folded();
    other_schedule |= p.strategy.schedule != perf::PipelineSchedule::one_f_one_b;
    hybrid |= p.strategy.hsdp > 0;
    offload |= p.strategy.offload_layers > 0;
  }
  if (other_schedule)
    insert_column(t, column_index(t, "interleave") + 1, text_column("pp_schedule", "schedule"),
                  schedules);
  if (hybrid) insert_column(t, column_index(t, "dp") + 1, integer_column("hsdp", "hsdp"), groups);
  if (folded) insert_column(t, column_index(t, "ep") + 1, integer_column("etp", "etp"), etps);
  if (offload)
    insert_column(t, column_index(t, "recompute") + 1, integer_column("offload_layers", "offload"),
                  offloads);
}
}  // namespace

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
      real_column("step_gib", "step copy", "GiB", 1, false),
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
               m.step_bytes / units::kGiB,
               m.reserved_bytes / units::kGiB});
  }
  add_cp_columns(t, plans);
  add_schedule_columns(t, plans);
  return t;
}

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
Table breakdown_table(const perf::IterationTime& it) {
  Table t;
  t.columns = {text_column("part", "part"), seconds_column("time_s", "time", 4),
               fraction_column("share", "share")};
  const perf::Breakdown& b = it.breakdown;
  const double T = it.iteration_time_s;
  const std::pair<const char*, double> parts[] = {
      {"compute", b.compute_s},           {"recompute", b.recompute_s},
      {"tp/sp comm", b.tp_comm_s},        {"tp overlap (SMs)", b.tp_overlap_s},
      {"ep all-to-all", b.ep_comm_s},     {"pp send/recv", b.pp_comm_s},
      {"dp comm (exposed)", b.dp_comm_s}, {"rail forwarding", b.rail_forwarding_s},
      {"pipeline bubble", b.bubble_s},    {"pipeline steps", b.pipeline_overhead_s},
      {"optimizer", b.optimizer_s},       {"cp K/V comm", b.cp_comm_s},
      {"activation offload", b.offload_s}};
  const bool cp = b.cp_comm_s > 0 || b.cp_hidden_s > 0;
  for (const auto& [name, v] : parts) {
    if (!cp && std::string_view(name) == "cp K/V comm") continue;            // no CP: no row
    if (v == 0 && std::string_view(name) == "activation offload") continue;  // none exposed
    t.add_row({std::string(name), v, T > 0 ? Cell(v / T) : Cell(Missing{})});
  }
  // Ring attention's transfers under the attention: time, not a share of the iteration.
  if (b.cp_hidden_s > 0) t.add_row({"cp hidden (not in total)", b.cp_hidden_s, Missing{}});
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
       seconds_column("time_s", "each", 4), seconds_column("forwarding_s", "forwarding", 4)});
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
  std::vector<std::string> names;
  for (std::size_t i = 0; i < plans.size(); ++i) names.push_back(fmt::format("#{}", i + 1));
  return explain_table(plans, names);
}

Table explain_table(const std::vector<perf::Plan>& plans, const std::vector<std::string>& names) {
  auto sec = [](const char* name, const char* label) { return seconds_column(name, label, 4); };
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
               gib("step_gib", "  step copy (the larger of it and activations)"),
               gib("reserved_gib", "  reserved")};
  auto values = [](const perf::IterationTime& it) {
    const perf::Breakdown& b = it.breakdown;
    const perf::MemoryUse& m = it.memory;
    const double g = units::kGiB;
    return std::array<double, 21>{it.iteration_time_s,
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
                                  m.step_bytes / g,
                                  m.reserved_bytes / g};
  };
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const perf::Strategy& s = plans[i].strategy;
    std::vector<Cell> row{
        fmt::format("{} tp{}{} pp{} dp{}{} mb{} v{} {}{}", names.at(i), s.tp,
                    s.cp > 1 ? fmt::format(" cp{}", s.cp) : std::string(), s.pp, s.dp,
                    s.ep > 1 ? fmt::format(" ep{}", s.ep) : std::string(), s.micro_batch,
                    s.interleave, perf::to_string(s.recompute), s.sp ? " sp" : ""),
        perf::describe(s)};
    for (double v : values(plans[i].time)) row.push_back(v);
    t.add_row(std::move(row));
  }
  // The difference of each later plan against the winner, part by part.
  for (std::size_t i = 1; i < plans.size(); ++i) {
    std::vector<Cell> row{fmt::format("{} - {}", names.at(i), names.front()), std::string()};
    const auto a = values(plans[i].time), w = values(plans.front().time);
    for (std::size_t k = 0; k < a.size(); ++k) row.push_back(a[k] - w[k]);
    t.add_row(std::move(row));
  }
  // Parts only some plans have, as columns after the optimizer step when a plan has them (so
  // that the parts add up to each iteration): context parallelism's exposed exchanges and
  // activation offload's exposed copies.
  auto conditional = [&](const char* name, const char* label, double perf::Breakdown::*part) {
    bool any = false;
    std::vector<Cell> cells;
    for (const perf::Plan& p : plans) {
      cells.emplace_back(p.time.breakdown.*part);
      any |= p.time.breakdown.*part != 0;
    }
    if (!any) return;
    for (std::size_t i = 1; i < plans.size(); ++i)
      cells.emplace_back(plans[i].time.breakdown.*part - plans.front().time.breakdown.*part);
    insert_column(t, column_index(t, "optimizer_s") + 1, sec(name, label), cells);
  };
  conditional("offload_s", "activation offload", &perf::Breakdown::offload_s);
  conditional("cp_comm_s", "cp K/V comm", &perf::Breakdown::cp_comm_s);
  return t;
}

std::string explain_versus(const perf::Plan& best, const perf::Plan& other, double hbm_bytes) {
  const perf::MemoryUse &m = other.time.memory, &mb = best.time.memory;
  const double g = units::kGiB;
  if (m.total() > hbm_bytes) {
    struct Part {
      const char* name;
      double other, best;
    };
    const Part parts[] = {{"activations", m.activations_bytes, mb.activations_bytes},
                          {"weights", m.weights_bytes, mb.weights_bytes},
                          {"gradients", m.gradients_bytes, mb.gradients_bytes},
                          {"optimizer state", m.optimizer_bytes, mb.optimizer_bytes}};
    const Part& most = *std::max_element(std::begin(parts), std::end(parts), [](auto& x, auto& y) {
      return x.other - x.best < y.other - y.best;
    });
    return fmt::format(
        "it does not fit: it needs {:.1f} GiB per GPU, {:.1f} GiB over the {:.1f} GiB of HBM{}",
        m.total() / g, (m.total() - hbm_bytes) / g, hbm_bytes / g,
        most.other > most.best ? fmt::format(" ({} {:.1f} GiB against the best plan's {:.1f})",
                                             most.name, most.other / g, most.best / g)
                               : "");
  }
  if (!other.time
           .feasible)  // HBM holds it; the host memory its offloaded activations need does not
    return fmt::format(
        "it does not fit: its {} offloaded layers need {:.1f} GiB of host memory per "
        "GPU, more than the system has",
        other.strategy.offload_layers, m.host_bytes / g);
  const perf::Breakdown &b = other.time.breakdown, &w = best.time.breakdown;
  const std::pair<const char*, double> parts[] = {
      {"compute", b.compute_s - w.compute_s},
      {"recompute", b.recompute_s - w.recompute_s},
      {"tp/sp comm (exposed)", b.tp_comm_s - w.tp_comm_s},
      {"tp overlap (SMs)", b.tp_overlap_s - w.tp_overlap_s},
      {"ep all-to-all", b.ep_comm_s - w.ep_comm_s},
      {"cp K/V comm", b.cp_comm_s - w.cp_comm_s},
      {"pp send/recv", b.pp_comm_s - w.pp_comm_s},
      {"dp comm (exposed)", b.dp_comm_s - w.dp_comm_s},
      {"rail forwarding", b.rail_forwarding_s - w.rail_forwarding_s},
      {"pipeline bubble", b.bubble_s - w.bubble_s},
      {"pipeline steps", b.pipeline_overhead_s - w.pipeline_overhead_s},
      {"optimizer step", b.optimizer_s - w.optimizer_s}};
  // Largest difference first; equal ones in the order above (std::sort: test_perf's allocation
  // counter replaces operator new, which stable_sort's temporary buffer would bypass).
  std::vector<std::size_t> order(std::size(parts));
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const double ax = std::abs(parts[x].second), ay = std::abs(parts[y].second);
    return ax != ay ? ax > ay : x < y;
  });
  const double t = other.time.iteration_time_s, tb = best.time.iteration_time_s;
  std::string worse, better;
  int n_worse = 0, n_better = 0;
  for (std::size_t i : order) {
    const auto& [name, d] = parts[i];
    if (std::abs(d) < 5e-4 * tb) continue;  // under 0.05% of the iteration: not what decides
    if (d > 0 && n_worse < 3)
      worse += fmt::format("{}{} +{:.3f} s", n_worse++ ? ", " : "", name, d);
    else if (d < 0 && n_better < 2)
      better += fmt::format("{}{} {:.3f} s", n_better++ ? ", " : "", name, -d);
  }
  std::string s = fmt::format("{:.1f}% {} ({:.3f} s against {:.3f} s)", 100 * std::abs(t / tb - 1),
                              t >= tb ? "slower" : "faster", t, tb);
  if (!worse.empty()) s += ": " + worse;
  if (!better.empty()) s += "; it saves " + better;
  return s + fmt::format("; memory {:.1f} of {:.1f} GiB", m.total() / g, hbm_bytes / g);
}

}  // namespace railsim::perf
