#include "railsim/sweep/sweep.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "railsim/core/cancel.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/core/units.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/spec/catalog.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/routing_table.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/topo/builders.hpp"

namespace railsim::sweep {

namespace {

// One axis of the sweep: its option and how many values it has (0: the default alone).
struct Axis {
  const char* option;
  std::size_t size;
};

std::vector<Axis> axes_of(const SweepAxes& a) {
  return {{"--gpu", a.gpu.size()},
          {"--gpus", a.gpus.size()},
          {"--hb-domain", a.hb_domain.size()},
          {"--nic-gbps", a.nic_gbps.size()},
          {"--hb-GBps", a.hb_GBps.size()},
          {"--nics-per-gpu", a.nics_per_gpu.size()},
          {"--switch", a.sw.size()},
          {"--catalog", a.catalog.size()},
          {"--oversubscription", a.oversubscription.size()},
          {"--model", a.model.size()},
          {"--batch", a.batch.size()},
          {"--seq", a.seq.size()},
          {"--routing", a.routing.size()},
          {"--planes", a.planes.size()}};
}

template <typename T>
T pick(const std::vector<T>& v, std::size_t i, T fallback) {
  return v.empty() ? fallback : v[i];
}
template <typename T>
std::optional<T> pick_opt(const std::vector<T>& v, std::size_t i) {
  if (v.empty()) return std::nullopt;
  return v[i];
}

SweepPoint point_at(const SweepAxes& a, const std::vector<std::size_t>& idx) {
  SweepPoint p;
  p.gpu = pick(a.gpu, idx[0], std::string(spec::kDefaultGpu));
  p.gpus = pick_opt(a.gpus, idx[1]);
  p.hb_domain = pick_opt(a.hb_domain, idx[2]);
  p.nic_gbps = pick_opt(a.nic_gbps, idx[3]);
  p.hb_GBps = pick_opt(a.hb_GBps, idx[4]);
  p.nics_per_gpu = pick_opt(a.nics_per_gpu, idx[5]);
  p.sw = pick(a.sw, idx[6], std::string(spec::NetworkOptions{}.sw));
  p.catalog = pick(a.catalog, idx[7], std::string(spec::kDefaultCatalog));
  p.oversubscription = pick(a.oversubscription, idx[8], 1.0);
  p.model = pick(a.model, idx[9], std::string(spec::kDefaultModel));
  p.batch = pick(a.batch, idx[10], spec::kDefaultGlobalBatch);
  p.seq = pick_opt(a.seq, idx[11]);
  p.routing = pick(a.routing, idx[12], std::string("auto"));
  p.planes = pick(a.planes, idx[13], std::int64_t{1});
  return p;
}

// gpu ... seq, routing, seed, forwarding, forward_via, chunks: first in every row
constexpr std::size_t kInputColumns = 17;

std::string knobs_text(const perf::Strategy& s) {
  return fmt::format("mb{} v{} {}{}{}{}{}", s.micro_batch, s.interleave,
                     perf::to_string(s.recompute), s.sp ? " sp" : "", s.dist_opt ? " dopt" : "",
                     s.dp_overlap ? " ovl" : "",
                     s.schedule != perf::PipelineSchedule::one_f_one_b
                         ? fmt::format(" {}", perf::to_string(s.schedule))
                         : "");
}

PointResult evaluate_point(const SweepPoint& p, const SweepInputs& presets,
                           const SweepOptions& opt) {
  PointResult r;
  r.point = p;
  const spec::GpuSpec& g = presets.gpus.at(p.gpu);
  const spec::Model& m = presets.models.at(p.model);
  // The defaults of spec::make_cluster(ClusterOptions), resolved here so that an invalid point
  // still shows what it asked for.
  r.nics_per_gpu = p.nics_per_gpu.value_or(g.nics_per_gpu);
  r.hb_domain = p.hb_domain.value_or(g.default_hb_domain);
  // A requested 0 stays 0 (and the point says why it is invalid): only an absent value defaults.
  r.gpus = p.gpus ? *p.gpus
                  : (r.hb_domain >= 1 && r.hb_domain <= spec::kDefaultGpus
                         ? spec::kDefaultGpus / r.hb_domain * r.hb_domain
                         : spec::kDefaultGpus);
  r.nic_gbps = p.nic_gbps.value_or(units::Bps_to_gbps(g.nic_bw_Bps));
  r.hb_GBps = p.hb_GBps.value_or(g.hb_bw_Bps / 1e9);
  r.seq = p.seq.value_or(m.seq_len);
  r.model_name = m.name;
  spec::Cluster cluster;
  spec::NetworkDesign& base = r.network;
  base.sw = presets.switches.at(p.sw);
  spec::NetworkOptions routing = opt.network;
  routing.routing = p.routing;
  spec::apply_routing_options(base, routing);  // checked by load_sweep_inputs: cannot throw
  perf::Training tr;
  try {
    const auto nics = check_integer("--nics-per-gpu", r.nics_per_gpu, 1, 64);
    cluster =
        spec::make_cluster(g, r.gpus, r.hb_domain, r.nic_gbps, r.hb_GBps, static_cast<int>(nics));
    base = spec::make_network_design(spec::DesignKind::rail_optimized, base.sw, p.oversubscription,
                                     opt.network.oversubscribed_tier, opt.network.copper_gpu_leaf,
                                     opt.network.management_links);
    spec::split_nics_over_planes(base, p.planes, nics);
    spec::apply_routing_options(base, routing);
    tr = spec::make_training(check_integer("--batch", p.batch, 1, std::int64_t{1} << 40),
                             check_integer("--seq", r.seq, 1, 1 << 24), opt.stack, opt.dtype,
                             opt.flash_attention);
    r.training = tr;
    r.designs = cost::compare_designs(cluster, base, presets.catalogs.at(p.catalog), opt.counting);
  } catch (const InputError& e) {
    r.invalid = e;
    r.designs.clear();
    return r;
  }
  if (opt.alltoall_bytes > 0) {
    sim::SimConfig cfg = sim::sim_config(base);
    cfg.hop_latency_s = 0.5e-6;
    cfg.aggregate = sim::Aggregation::on;
    for (const cost::DesignReport& dr : r.designs) {
      spec::NetworkDesign d = base;
      d.kind = dr.bom.design;
      try {
        const topo::Fabric fabric = topo::build_fabric(cluster, d);
        sim::CollectiveRequest req;
        req.op = perf::CollectiveOp::all_to_all;
        req.algorithm = perf::Algorithm::direct;
        req.bytes = opt.alltoall_bytes;
        req.groups = sim::groups_all(fabric.cluster);
        r.alltoall_s.push_back(
            sim::simulate_collective(sim::make_sim_network(fabric), req, cfg, 0).completion_time_s);
        r.alltoall_reason.emplace_back();
      } catch (const InputError& e) {
        r.alltoall_s.push_back(std::nullopt);
        r.alltoall_reason.push_back(e.what());
      }
    }
  }
  if (opt.perf) r.plans = plan_designs(m, tr, cluster, base, r.designs);
  return r;
}

}  // namespace

std::vector<SweepPoint> expand_points(const SweepOptions& opt) {
  const std::vector<Axis> axes = axes_of(opt.axes);
  std::vector<std::size_t> idx(axes.size(), 0);
  std::vector<SweepPoint> points;
  if (opt.zip) {
    std::size_t n = 1;
    const char* first = nullptr;
    for (const Axis& a : axes) {
      if (a.size <= 1) continue;
      if (first && a.size != n)
        throw InputError(a.option, fmt::format("--zip takes the lists together: {} has {} values, "
                                               "{} has {}; give them the same length (or one "
                                               "value)",
                                               a.option, a.size, first, n));
      first = first ? first : a.option;
      n = a.size;
    }
    if (static_cast<std::int64_t>(n) > opt.max_points)
      throw InputError("--max-points",
                       fmt::format("the sweep has {} points, more than {}", n, opt.max_points));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < axes.size(); ++k) idx[k] = axes[k].size > 1 ? i : 0;
      points.push_back(point_at(opt.axes, idx));
    }
    return points;
  }
  double total = 1;
  std::string product;
  for (const Axis& a : axes) {
    total *= static_cast<double>(std::max<std::size_t>(a.size, 1));
    if (a.size > 1)
      product += fmt::format("{}{} {}", product.empty() ? "" : " x ", a.size, a.option);
  }
  if (total > static_cast<double>(opt.max_points))
    throw InputError("--max-points", fmt::format("the sweep has {:.0f} points ({}), more than {}",
                                                 total, product, opt.max_points));
  const auto n = static_cast<std::size_t>(total);
  points.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    points.push_back(point_at(opt.axes, idx));
    for (std::size_t k = axes.size(); k-- > 0;) {  // the last axis varies fastest
      if (++idx[k] < std::max<std::size_t>(axes[k].size, 1)) break;
      idx[k] = 0;
    }
  }
  return points;
}

std::int64_t SweepResult::valid_points() const {
  std::int64_t n = 0;
  for (const PointResult& p : points) n += !p.invalid;
  return n;
}

InputError no_valid_point(const InputError& first) {
  return InputError(first.field(),
                    fmt::format("{} (every point of the sweep is invalid)", first.message()));
}

SweepInputs load_sweep_inputs(const SweepOptions& opt) {
  SweepInputs presets;
  presets.points = expand_points(opt);
  for (const std::string& s : opt.axes.gpu)
    if (!presets.gpus.count(s)) presets.gpus.emplace(s, spec::load_gpu(s, "--gpu"));
  for (const std::string& s : opt.axes.sw)
    if (!presets.switches.count(s)) presets.switches.emplace(s, spec::load_switch(s, "--switch"));
  for (const std::string& s : opt.axes.catalog)
    if (!presets.catalogs.count(s)) presets.catalogs.emplace(s, spec::load_catalog(s, "--catalog"));
  for (const std::string& s : opt.axes.model)
    if (!presets.models.count(s)) presets.models.emplace(s, spec::load_model(s, "--model"));
  for (const std::string& r : opt.axes.routing) {  // every routing name and routing option
    spec::NetworkDesign d;
    d.sw = presets.switches.begin()->second;
    spec::NetworkOptions routing = opt.network;
    routing.routing = r;
    spec::apply_routing_options(d, routing);
  }
  for (const SweepPoint& p : presets.points) {  // the defaults of axes left empty
    if (!presets.gpus.count(p.gpu)) presets.gpus.emplace(p.gpu, spec::load_gpu(p.gpu, "--gpu"));
    if (!presets.switches.count(p.sw))
      presets.switches.emplace(p.sw, spec::load_switch(p.sw, "--switch"));
    if (!presets.catalogs.count(p.catalog))
      presets.catalogs.emplace(p.catalog, spec::load_catalog(p.catalog, "--catalog"));
    if (!presets.models.count(p.model))
      presets.models.emplace(p.model, spec::load_model(p.model, "--model"));
    break;  // every point names the same defaults
  }
  return presets;
}

SweepResult evaluate_points(const SweepOptions& opt, const SweepInputs& inputs,
                            std::span<const std::size_t> which) {
  for (const std::size_t i : which)
    if (i >= inputs.points.size())
      throw std::out_of_range(fmt::format("sweep point {} of {}", i, inputs.points.size()));
  SweepResult res;
  res.perf = opt.perf;
  res.alltoall = opt.alltoall_bytes > 0;
  res.points.resize(which.size());
  auto run = [&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, which.size()),
                      [&](const tbb::blocked_range<std::size_t>& range) {
                        for (std::size_t i = range.begin(); i != range.end(); ++i) {
                          check_cancelled();
                          res.points[i] = evaluate_point(inputs.points[which[i]], inputs, opt);
                          if (opt.on_point_done) opt.on_point_done();
                        }
                      });
  };
  with_threads(opt.threads, run);
  // Each point's error band, after the parallel loop: the first call of perf::error_band runs the
  // shipped validation tables' plan searches (once per process), which must not start inside a
  // task of that loop.
  if (opt.perf)
    for (PointResult& p : res.points)
      if (!p.invalid)
        p.error_band = perf::error_band(inputs.gpus.at(p.point.gpu).name,
                                        inputs.models.at(p.point.model), p.training)
                           .fraction;
  return res;
}

std::vector<DesignPlan> plan_designs(const spec::Model& m, const perf::Training& tr,
                                     const spec::Cluster& c, const spec::NetworkDesign& base,
                                     const std::vector<cost::DesignReport>& designs,
                                     const spec::Cluster* job) {
  const spec::Cluster& on = job ? *job : c;
  std::vector<DesignPlan> plans;
  plans.reserve(designs.size());
  for (const cost::DesignReport& dr : designs) {
    spec::NetworkDesign d = base;
    d.kind = dr.bom.design;
    DesignPlan dp;
    try {
      perf::PlanOptions po;
      po.top = 1;
      const perf::PlanResult pr = perf::plan(perf::make_context(m, tr, on, c, d), po);
      if (pr.plans.empty())
        dp.no_plan_reason = perf::explain_no_plan(pr, m, tr, {}, on).message();
      else
        dp.best = pr.plans.front();
    } catch (const InputError& e) {
      dp.no_plan_reason = e.what();
      dp.error = e;
    }
    plans.push_back(std::move(dp));
  }
  return plans;
}

std::vector<PlanCells> plan_cells(const std::vector<cost::DesignReport>& designs,
                                  const std::vector<DesignPlan>& plans) {
  using report::Cell;
  std::vector<PlanCells> out(designs.size());
  double reference = 0;
  for (std::size_t d = 0; d < designs.size(); ++d) {
    const DesignPlan& dp = plans[d];
    std::vector<Cell>& cells = out[d].cells;
    if (!dp.best) {
      cells.assign(5, report::Missing{});
      out[d].reason = dp.no_plan_reason;
      continue;
    }
    const double seconds = dp.best->time.iteration_time_s;
    if (designs[d].bom.design == spec::DesignKind::rail_optimized) reference = seconds;
    cells.push_back(seconds);
    cells.push_back(reference > 0 ? Cell(100 * (seconds / reference - 1)) : report::Missing{});
    cells.push_back(dp.best->time.mfu);
    cells.push_back(perf::describe_degrees(dp.best->strategy));
    cells.push_back(knobs_text(dp.best->strategy));
  }
  return out;
}

SweepResult run_sweep(const SweepOptions& opt) {
  const SweepInputs inputs = load_sweep_inputs(opt);
  std::vector<std::size_t> all(inputs.points.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return evaluate_points(opt, inputs, all);
}

namespace {

std::vector<report::Column> columns_of(bool perf, bool alltoall) {
  using report::Column;
  using report::Style;
  using report::Type;
  std::vector<Column> columns = {
      {.name = "gpu", .label = "GPU"},
      {.name = "gpus", .label = "GPUs", .type = Type::integer},
      {.name = "hb_domain", .label = "HB domain", .type = Type::integer},
      {.name = "nic_gbps", .label = "NIC", .type = Type::real, .unit = "Gb/s"},
      {.name = "hb_GBps", .label = "HB", .type = Type::real, .unit = "GB/s"},
      {.name = "nics_per_gpu", .label = "NICs per GPU", .type = Type::integer},
      {.name = "switch", .label = "switch"},
      {.name = "catalog", .label = "catalog"},
      {.name = "oversubscription", .label = "oversubscription", .type = Type::real, .precision = 1},
      {.name = "model", .label = "model"},
      {.name = "batch", .label = "batch", .type = Type::integer, .unit = "seq"},
      {.name = "seq", .label = "seq", .type = Type::integer, .unit = "tokens"},
      {.name = "planes", .label = "planes", .type = Type::integer},
  };
  for (report::Column& c : spec::routing_columns()) columns.push_back(std::move(c));
  const std::vector<Column> outputs = {
      {.name = "design", .label = "design"},
      {.name = "tiers", .label = "tiers", .type = Type::integer},
      {.name = "switches", .label = "switches", .type = Type::integer},
      {.name = "cost_usd", .label = "cost", .type = Type::real, .style = Style::usd},
      {.name = "power_w",
       .label = "power",
       .type = Type::real,
       .unit = "W",
       .precision = 4,
       .style = Style::si},
      {.name = "cost_saving",
       .label = "cost saving",
       .type = Type::real,
       .precision = 1,
       .style = Style::fraction},
      {.name = "power_saving",
       .label = "power saving",
       .type = Type::real,
       .precision = 1,
       .style = Style::fraction},
  };
  columns.insert(columns.end(), outputs.begin(), outputs.end());

  if (perf) {
    columns.push_back({.name = "best_iteration_time_s",
                       .label = "best iteration time",
                       .type = Type::real,
                       .unit = "s",
                       .precision = 3});
    columns.push_back({.name = "error_band",
                       .label = "error band (+-)",
                       .type = Type::real,
                       .precision = 1,
                       .style = Style::fraction});
    columns.push_back({.name = "vs_rail_optimized_pct",
                       .label = "vs rail_optimized",
                       .type = Type::real,
                       .unit = "%",
                       .precision = 2,
                       .style = Style::signed_});
    columns.push_back({.name = "best_plan_mfu",
                       .label = "best plan MFU",
                       .type = Type::real,
                       .precision = 1,
                       .style = Style::fraction});
    columns.push_back({.name = "best_plan", .label = "best plan"});
    columns.push_back({.name = "best_plan_knobs", .label = "best plan knobs"});
  }
  if (alltoall) {
    columns.push_back({.name = "alltoall_time_s",
                       .label = "all-to-all",
                       .type = Type::real,
                       .unit = "s",
                       .precision = 4,
                       .style = Style::si});
    columns.push_back({.name = "alltoall_vs_rail_optimized_pct",
                       .label = "all-to-all vs rail_optimized",
                       .type = Type::real,
                       .unit = "%",
                       .precision = 2,
                       .style = Style::signed_});
  }
  if (perf)
    for (report::Column& c : spec::software_columns()) columns.push_back(std::move(c));
  columns.push_back({.name = "reason", .label = "reason"});
  return columns;
}

}  // namespace

std::vector<report::Column> sweep_columns(const SweepOptions& opt) {
  return columns_of(opt.perf, opt.alltoall_bytes > 0);
}

std::vector<std::vector<report::Cell>> point_rows(const PointResult& p, bool perf, bool alltoall) {
  using report::Cell;
  using report::Missing;
  const std::size_t n_columns = columns_of(perf, alltoall).size();
  std::vector<std::vector<Cell>> rows;
  rows.reserve(3);
  auto inputs = [&] {
    std::vector<Cell> row;
    row.reserve(n_columns);
    row.emplace_back(p.point.gpu);
    row.emplace_back(p.gpus);
    row.emplace_back(p.hb_domain);
    row.emplace_back(p.nic_gbps);
    row.emplace_back(p.hb_GBps);
    row.emplace_back(p.nics_per_gpu);
    row.emplace_back(p.point.sw);
    row.emplace_back(p.point.catalog);
    row.emplace_back(p.point.oversubscription);
    row.emplace_back(p.model_name);
    row.emplace_back(p.point.batch);
    row.emplace_back(p.seq);
    row.emplace_back(p.point.planes);
    spec::append_routing_cells(row, p.network);
    return row;
  };
  if (p.invalid) {
    for (spec::DesignKind k :
         {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only, spec::DesignKind::ideal}) {
      std::vector<Cell> row = inputs();
      row.push_back(std::string(spec::to_string(k)));
      while (row.size() + 1 < n_columns) row.push_back(Missing{});
      row.push_back(std::string(p.invalid->what()));
      rows.push_back(std::move(row));
    }
    return rows;
  }
  double alltoall_reference = 0;
  const std::vector<PlanCells> plans =
      perf ? plan_cells(p.designs, p.plans) : std::vector<PlanCells>{};
  for (std::size_t d = 0; d < p.designs.size(); ++d) {
    const cost::DesignReport& dr = p.designs[d];
    std::vector<Cell> row = inputs();
    row.push_back(std::string(spec::to_string(dr.bom.design)));
    row.push_back(std::int64_t{dr.bom.tiers});
    row.push_back(dr.bom.switches);
    row.push_back(dr.cost.cost_usd());
    row.push_back(dr.cost.power_w());
    row.push_back(dr.cost_saving);
    row.push_back(dr.power_saving);
    Cell reason = Missing{};
    if (perf) {
      // The best time, its error band (where there is a time), then the rest of the plan's cells.
      const std::vector<Cell>& cells = plans[d].cells;
      row.push_back(cells.front());
      row.push_back(std::holds_alternative<double>(cells.front()) ? Cell(p.error_band)
                                                                  : Cell(Missing{}));
      row.insert(row.end(), cells.begin() + 1, cells.end());
      reason = plans[d].reason;
    }
    if (alltoall) {
      const std::optional<double>& a = p.alltoall_s[d];
      if (a) {
        if (dr.bom.design == spec::DesignKind::rail_optimized) alltoall_reference = *a;
        row.push_back(*a);
        row.push_back(alltoall_reference > 0 ? Cell(100 * (*a / alltoall_reference - 1))
                                             : Missing{});
      } else {
        row.push_back(Missing{});
        row.push_back(Missing{});
        if (std::holds_alternative<Missing>(reason)) reason = p.alltoall_reason[d];
      }
    }
    if (perf) spec::append_software_cells(row, p.training);
    row.push_back(reason);
    rows.push_back(std::move(row));
  }
  return rows;
}

report::Table sweep_table(std::vector<std::vector<report::Cell>> rows, bool perf, bool alltoall) {
  report::Table t;
  t.columns = columns_of(perf, alltoall);
  t.rows.reserve(rows.size());
  for (auto& row : rows) t.add_row(std::move(row));
  // People see the inputs that vary (all of them are in CSV and JSON).
  for (std::size_t c = 0; c < kInputColumns; ++c) {
    bool varies = false;
    for (const auto& row : t.rows) varies = varies || row[c] != t.rows.front()[c];
    t.columns[c].human = varies;
  }
  return t;
}

report::Table sweep_table(const SweepResult& r) {
  std::vector<std::vector<report::Cell>> rows;
  rows.reserve(r.points.size() * 3);
  for (const PointResult& p : r.points)
    for (auto& row : point_rows(p, r.perf, r.alltoall)) rows.push_back(std::move(row));
  return sweep_table(std::move(rows), r.perf, r.alltoall);
}

namespace {
// The distinct values of column `name` over t's rows, in row order, joined by ", " (booleans as
// on/off); "?" where t has no such column.
std::string column_values(const report::Table& t, std::string_view name) {
  std::size_t c = 0;
  while (c < t.columns.size() && t.columns[c].name != name) ++c;
  if (c == t.columns.size()) return "?";
  std::vector<std::string> seen;
  for (const auto& row : t.rows) {
    std::string v = report::csv_cell(row[c]);
    if (t.columns[c].type == report::Type::boolean && !v.empty()) v = v == "true" ? "on" : "off";
    if (!v.empty() && std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  }
  std::string out;
  for (const std::string& v : seen) out += (out.empty() ? "" : ", ") + v;
  return out;
}
}  // namespace

std::string routing_line(const report::Table& t) {
  const auto values = [&](const char* name) { return column_values(t, name); };
  return fmt::format("routing {}, seed {}; rail-only forwarding {} via {}, {} chunks",
                     values("routing"), values("seed"), values("forwarding"), values("forward_via"),
                     values("chunks"));
}

std::string software_line(const report::Table& t) {
  if (std::none_of(t.columns.begin(), t.columns.end(),
                   [](const report::Column& c) { return c.name == "stack"; }))
    return "";
  const auto values = [&](const char* name) { return column_values(t, name); };
  return fmt::format(
      "software: stack {}, {}, flash attention {}, torch.compile {}, EP dispatch {}, CP exchange "
      "{}",
      values("stack"), values("dtype"), values("flash_attention"), values("compile"),
      values("ep_dispatch"), values("cp_comm"));
}

}  // namespace railsim::sweep
