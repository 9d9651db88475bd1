#include "railsim/html/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "railsim/core/checks.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/version.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/cost/tables.hpp"
#include "railsim/fail/model.hpp"
#include "railsim/fail/monte_carlo.hpp"
#include "railsim/fail/report.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/report/format.hpp"
#include "railsim/report/plot.hpp"
#include "railsim/spec/catalog.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/sweep/study.hpp"
#include "railsim/sweep/sweep.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/export.hpp"
#include "railsim/traffic/tables.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

namespace railsim::html {

namespace {
bool numeric(report::Type t) {
  return t == report::Type::integer || t == report::Type::real;
}
}  // namespace

std::string escape(std::string_view text) {
  std::string o;
  o.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string o;
  o.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]) << 16 |
                                              static_cast<unsigned char>(bytes[i + 1]) << 8 |
                                              static_cast<unsigned char>(bytes[i + 2]));
    o += kAlphabet[v >> 18 & 63];
    o += kAlphabet[v >> 12 & 63];
    o += kAlphabet[v >> 6 & 63];
    o += kAlphabet[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const auto v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]) << 16);
    o += kAlphabet[v >> 18 & 63];
    o += kAlphabet[v >> 12 & 63];
    o += "==";
  } else if (i + 2 == bytes.size()) {
    const auto v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]) << 16 |
                                              static_cast<unsigned char>(bytes[i + 1]) << 8);
    o += kAlphabet[v >> 18 & 63];
    o += kAlphabet[v >> 12 & 63];
    o += kAlphabet[v >> 6 & 63];
    o += '=';
  }
  return o;
}

std::string table_html(const report::Table& t) {
  std::vector<std::size_t> cols;
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    if (!t.columns[c].human) continue;
    const bool any = std::any_of(t.rows.begin(), t.rows.end(), [&](const auto& row) {
      return !std::holds_alternative<report::Missing>(row[c]);
    });
    if (any) cols.push_back(c);
  }
  std::string o = "<table>\n<tr>";
  for (std::size_t c : cols) o += fmt::format("<th>{}</th>", escape(t.columns[c].label));
  o += "</tr>\n";
  for (const auto& row : t.rows) {
    o += "<tr>";
    for (std::size_t c : cols)
      o += fmt::format("<td{}>{}</td>", numeric(t.columns[c].type) ? " class=\"n\"" : "",
                       escape(report::human_cell(t.columns[c], row[c])));
    o += "</tr>\n";
  }
  return o + "</table>\n";
}

std::string svg_img(std::string_view svg, std::string_view alt) {
  return fmt::format("<img src=\"data:image/svg+xml;base64,{}\" alt=\"{}\">", base64(svg),
                     escape(alt));
}

namespace {

std::size_t design_index(const sweep::PointResult& p, spec::DesignKind k) {
  for (std::size_t i = 0; i < p.designs.size(); ++i)
    if (p.designs[i].bom.design == k) return i;
  return p.designs.size();
}

const perf::Plan* best_of(const sweep::PointResult& p, std::size_t i) {
  return i < p.plans.size() && p.plans[i].best ? &*p.plans[i].best : nullptr;
}

// "rail-optimized", "rail-only", "ideal": the designs as the page's prose names them.
std::string design_words(spec::DesignKind k) {
  std::string s(spec::to_string(k));
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

std::string signed_percent(double fraction) {
  return fmt::format("{}{:.2f}%", fraction >= 0 ? "+" : "", 100 * fraction);
}

}  // namespace

Recommendation recommend(const sweep::PointResult& p, double same_speed) {
  Recommendation r;
  if (p.invalid) {
    r.headline = "No recommendation";
    r.reason = p.invalid->what();
    return r;
  }
  const std::size_t ro = design_index(p, spec::DesignKind::rail_optimized);
  const std::size_t rl = design_index(p, spec::DesignKind::rail_only);
  if (ro == p.designs.size() || rl == p.designs.size())
    throw std::logic_error("recommend: a point without rail_optimized and rail_only");
  const cost::DesignReport &dro = p.designs[ro], &drl = p.designs[rl];
  const perf::Plan *pro = best_of(p, ro), *prl = best_of(p, rl);
  const double cost_ro = dro.cost.cost_usd(), cost_rl = drl.cost.cost_usd();
  const std::string money = fmt::format(
      "rail-only's network costs {} against rail-optimized's {} ({} less) and draws {} against {} "
      "({} less)",
      report::money(cost_rl), report::money(cost_ro), report::percent(drl.cost_saving, 1),
      report::watts(drl.cost.power_w()), report::watts(dro.cost.power_w()),
      report::percent(drl.power_saving, 1));
  const bool cheaper = cost_rl < cost_ro;
  if (!pro && !prl) {
    r.headline = "No recommendation: no design trains " + p.model_name;
    r.reason = p.plans.empty() ? "no plan was searched" : p.plans[ro].no_plan_reason;
    return r;
  }
  if (!prl) {
    r.design = spec::DesignKind::rail_optimized;
    r.headline = "Rail-optimized: rail-only has no plan for " + p.model_name;
    r.reason = fmt::format("Rail-only: {}. {}.", p.plans[rl].no_plan_reason, money);
    return r;
  }
  if (!pro) {
    r.design = spec::DesignKind::rail_only;
    r.headline = "Rail-only: rail-optimized has no plan for " + p.model_name;
    r.reason = fmt::format("Rail-optimized: {}. {}.", p.plans[ro].no_plan_reason, money);
    return r;
  }
  const double t_ro = pro->time.iteration_time_s, t_rl = prl->time.iteration_time_s;
  const double slower = t_rl / t_ro - 1;
  const std::string speed = fmt::format(
      "{} trains at {:.3f} s per iteration on rail-only against {:.3f} s on rail-optimized ({})",
      p.model_name, t_rl, t_ro, signed_percent(slower));
  if (slower <= same_speed && cheaper) {
    r.design = spec::DesignKind::rail_only;
    r.headline =
        fmt::format("Rail-only: {} less network cost and {} less power, {}",
                    report::percent(drl.cost_saving, 1), report::percent(drl.power_saving, 1),
                    slower <= -0.005 ? report::percent(-slower, 1) + " faster"
                    : slower <= 0    ? "no slower"
                                     : "the same speed within 1%");
    r.reason = fmt::format("{}; {}.", money, speed);
  } else if (slower <= same_speed && cost_rl == cost_ro) {
    r.design = spec::DesignKind::rail_optimized;
    r.headline = "Rail-optimized: rail-only saves nothing on this cluster";
    r.reason = fmt::format(
        "Both need {} switches in {} tiers: {}; {}. Rail-optimized also carries cross-rail "
        "traffic without forwarding it through the HB domain.",
        report::thousands(static_cast<double>(drl.bom.switches)), drl.bom.tiers, money, speed);
  } else if (slower <= same_speed) {
    r.design = spec::DesignKind::rail_optimized;
    r.headline = "Rail-optimized: as fast, and rail-only costs more on this cluster";
    r.reason = fmt::format(
        "{}; {}. Each rail of rail-only is a Clos of its own: on a cluster this size its rails "
        "need as many switches as one rail-optimized network.",
        money, speed);
  } else {
    r.design = spec::DesignKind::rail_optimized;
    r.headline = fmt::format("Rail-optimized: rail-only is {} slower", report::percent(slower, 1));
    r.reason = fmt::format("{}; {}, beyond the {} this report calls the same speed{}.", speed,
                           money, report::percent(same_speed, 0),
                           cheaper ? ": weigh the saving against the slower training" : "");
  }
  return r;
}

namespace {

// Cells per axis of the report's heatmaps: enough to see the structure, small pictures.
constexpr std::int64_t kHeatmapCells = 256;

// What the report covers: each cluster with its options (for the sweep and the studies).
struct ClusterCase {
  spec::ClusterOptions options;
  spec::Cluster cluster;
};

std::vector<ClusterCase> clusters_of(const ReportOptions& o) {
  std::vector<ClusterCase> out;
  if (o.cluster) {
    out.push_back({*o.cluster, spec::make_cluster(*o.cluster)});
    return out;
  }
  for (const spec::ReferenceCluster& r : spec::kPaperClusters) {
    spec::ClusterOptions co;
    co.gpu = r.gpu;
    co.gpus = r.gpus;
    co.hb_domain = r.hb_domain;
    out.push_back({co, spec::make_cluster(co)});
  }
  return out;
}

// The sweep axes of one cluster's options (what a study does not vary keeps these values).
void set_cluster_axes(sweep::SweepAxes& a, const ClusterCase& cc) {
  const spec::ClusterOptions& c = cc.options;
  a.gpu = {c.gpu};
  a.gpus = {cc.cluster.gpus};
  a.hb_domain = {cc.cluster.hb_domain};
  if (c.nic_gbps) a.nic_gbps = {*c.nic_gbps};
  if (c.hb_gbytes_per_s) a.hb_GBps = {*c.hb_gbytes_per_s};
  if (c.nics_per_gpu) a.nics_per_gpu = {*c.nics_per_gpu};
}

void set_common(sweep::SweepOptions& so, const ReportOptions& o, const std::string& catalog) {
  so.axes.sw = {o.network.sw};
  so.axes.catalog = {catalog};
  so.axes.oversubscription = {o.network.oversubscription};
  so.axes.batch = {o.batch};
  if (o.seq) so.axes.seq = {*o.seq};
  so.axes.routing = {o.network.routing};
  so.axes.planes = {o.network.planes};
  so.network = o.network;
  so.stack = o.stack;
  so.dtype = o.dtype;
  so.flash_attention = o.flash_attention;
  so.counting = o.counting;
  so.threads = o.threads;
}

// The designs of every cluster with every model's best plans: a sweep of the models per cluster,
// points in the order cluster-major, model-minor.
sweep::SweepResult run_designs(const ReportOptions& o, const std::vector<ClusterCase>& clusters,
                               const std::string& catalog) {
  sweep::SweepOptions so;
  set_common(so, o, catalog);
  sweep::SweepResult all;
  for (const ClusterCase& c : clusters) {
    sweep::SweepOptions one = so;
    set_cluster_axes(one.axes, c);
    one.axes.model = o.models;
    sweep::SweepResult r = sweep::run_sweep(one);
    for (auto& p : r.points) {
      if (p.invalid) throw *p.invalid;
      all.points.push_back(std::move(p));
    }
  }
  return all;
}

std::string figure(std::string_view svg, const std::string& caption) {
  return fmt::format("<figure>{}<figcaption>{}</figcaption></figure>\n", svg_img(svg, caption),
                     escape(caption));
}

std::string cluster_name(const spec::Cluster& c) {
  return fmt::format("{} x {} (HB domain K={}, HB {:g} GB/s, NIC {:g} Gb/s x {})",
                     report::thousands(static_cast<double>(c.gpus)), c.gpu.name, c.hb_domain,
                     c.hb_bw_Bps / 1e9, c.nic_bw_Bps * 8 / 1e9, c.nics_per_gpu);
}

// The networks one can buy (rail-optimized and rail-only; ideal is a reference, not a network):
// tiers, switches, cost and power with rail-only's savings.
report::Table network_table(const sweep::PointResult& p) {
  report::Table t;
  t.columns = {report::text_column("design", "design"),
               report::integer_column("tiers", "tiers"),
               report::integer_column("switches", "switches"),
               report::usd_column("cost_usd", "network cost"),
               report::si_column("power_w", "network power", "W", 4),
               report::fraction_column("cost_saving", "cost saved"),
               report::fraction_column("power_saving", "power saved")};
  for (const cost::DesignReport& d : p.designs) {
    if (d.bom.design == spec::DesignKind::ideal) continue;
    const bool ro = d.bom.design == spec::DesignKind::rail_optimized;
    t.add_row({design_words(d.bom.design), std::int64_t{d.bom.tiers}, d.bom.switches,
               d.cost.cost_usd(), d.cost.power_w(),
               ro ? report::Cell(report::Missing{}) : report::Cell(d.cost_saving),
               ro ? report::Cell(report::Missing{}) : report::Cell(d.power_saving)});
  }
  return t;
}

// Every design's best plan for the point's model: the time, against rail-optimized, MFU, the plan
// in words and, with a token count, the days to train them; ideal as the reference.
report::Table training_table(const sweep::PointResult& p, const std::optional<double>& tokens) {
  report::Table t;
  t.columns = {report::text_column("design", "design"),
               report::real_column("iteration_time_s", "iteration time", "s", 3),
               {.name = "vs_rail_optimized",
                .label = "vs rail-optimized",
                .type = report::Type::real,
                .unit = "%",
                .precision = 2,
                .style = report::Style::signed_},
               report::fraction_column("mfu", "MFU"),
               report::text_column("plan", "best plan"),
               report::real_column("train_days", "days to train", "", 1),
               report::text_column("no_plan", "no plan")};
  const std::size_t ro = design_index(p, spec::DesignKind::rail_optimized);
  const perf::Plan* reference = best_of(p, ro);
  for (std::size_t i = 0; i < p.designs.size(); ++i) {
    const spec::DesignKind k = p.designs[i].bom.design;
    const std::string name = k == spec::DesignKind::ideal
                                 ? "ideal (reference: one HB domain over every GPU)"
                                 : design_words(k);
    const perf::Plan* b = best_of(p, i);
    if (!b) {
      t.add_row({name, report::Missing{}, report::Missing{}, report::Missing{}, report::Missing{},
                 report::Missing{}, i < p.plans.size() ? p.plans[i].no_plan_reason : ""});
      continue;
    }
    const double s = b->time.iteration_time_s;
    t.add_row({name, s,
               reference ? report::Cell(100 * (s / reference->time.iteration_time_s - 1))
                         : report::Cell(report::Missing{}),
               b->time.mfu, perf::describe_for_people(b->strategy),
               tokens ? report::Cell(perf::days_to_train(b->time, *tokens))
                      : report::Cell(report::Missing{}),
               report::Missing{}});
  }
  return t;
}

std::string assumptions_html(const ReportOptions& o, const spec::NetworkDesign& network,
                             const spec::Catalog& catalog,
                             const std::vector<ClusterCase>& clusters) {
  std::string clusters_text;
  for (const ClusterCase& c : clusters)
    clusters_text += (clusters_text.empty() ? "" : "; ") + cluster_name(c.cluster);
  std::string models;
  for (const std::string& m : o.models) models += (models.empty() ? "" : ", ") + m;
  const std::string items[][2] = {
      {"Cluster",
       clusters_text + (o.cluster ? "" : " (the paper's two clusters: no cluster option given)")},
      {"Network",
       fmt::format("switch {} ({} ports of {:g} Gb/s), oversubscription {:g}:1 at tier {}",
                   network.sw.name, network.sw.radix, network.sw.port_gbps,
                   o.network.oversubscription, o.network.oversubscribed_tier)},
      {"Routing", spec::describe_routing(network, /*with_forwarding=*/true)},
      {"Training",
       fmt::format(
           "{}; global batch {} sequences{}; software {}{}{}{}{}", models,
           report::thousands(static_cast<double>(o.batch)),
           o.seq ? fmt::format(" of {} tokens", *o.seq) : " of each model's length", o.stack.name,
           o.dtype ? fmt::format(", {}", perf::to_string(*o.dtype)) : ", bf16",
           o.flash_attention ? (*o.flash_attention ? ", flash attention" : ", no flash attention")
                             : "",
           spec::software_notes(o.stack, o.stack.defaults.compile,
                                o.dtype.value_or(spec::Dtype::bf16)),
           o.stack.knobs.context_parallel
               ? (o.stack.ring_cp ? ", context parallelism by ring attention (K/V passed around "
                                    "the CP ring under the attention)"
                                  : ", context parallelism with K/V all-gathered")
               : "")},
      {"Time model",
       "railsim's analytic iteration time (docs/model.md), searched over every parallelization "
       "that fits in memory; each time's error band (under its table) is from published runs "
       "railsim was not fitted on (docs/validation.md)"},
      {"Catalog", fmt::format("{}: {}", catalog.name, catalog.about)},
      {"Failures",
       o.failures ? fmt::format("the {} failure rates, a 90-day run, {} Monte Carlo trials per "
                                "design",
                                spec::kDefaultFailureRates, o.failure_trials)
                  : std::string("not studied (--no-failures)")},
      {"Version", fmt::format("railsim {}", version())},
      {"Inputs", "railsim report " + (o.inputs.empty() ? std::string("(defaults)") : o.inputs)}};
  std::string s = "<ul class=\"assumptions\">\n";
  for (const auto& [k, v] : items)
    s += fmt::format("<li><b>{}</b>: {}</li>\n", escape(k), escape(v));
  return s + "</ul>\n";
}

// The traffic heatmaps of rail-only's best plan of the first model (HB domain to HB domain, rail
// to rail).
std::string traffic_body(const ClusterCase& cc, const sweep::PointResult& p,
                         const spec::Model& model, std::int64_t batch) {
  const spec::Cluster& c = cc.cluster;
  std::string body = fmt::format("<h3>{}</h3>\n", escape(cluster_name(c)));
  const std::size_t rl = design_index(p, spec::DesignKind::rail_only);
  const perf::Plan* b = best_of(p, rl);
  if (!b) return body + fmt::format("<p>No plan: {}</p>\n", escape(p.plans[rl].no_plan_reason));
  const perf::Strategy& s = b->strategy;
  perf::Training tr;
  tr.global_batch = batch;
  tr.seq_len = p.seq;
  const perf::Placement pl(c, s.degrees(), perf::PlacementKind::rail_aligned);
  const perf::CommSchedule cs = perf::build_comm_schedule(model, tr, s, pl);
  const traffic::TrafficMatrix tm = traffic::TrafficMatrix::build(cs, pl, c);
  const std::string title = fmt::format("{}, {} x {}, rail-only: {}", model.name,
                                        report::thousands(static_cast<double>(c.gpus)), c.gpu.name,
                                        perf::describe_degrees(s));
  body += "<div class=\"pair\">\n";
  for (const auto& [view, what] :
       {std::pair{traffic::TrafficView::domain, "HB domain to HB domain"},
        {traffic::TrafficView::rail, "rail to rail"}}) {
    auto h = traffic::traffic_heatmap(tm, c, view, kHeatmapCells, title);
    // Drawn at about the size the page shows it, so that its 12-pixel labels stay 12 pixels.
    h.width = 560;
    h.height = 520;
    body += figure(report::render(h, report::PlotFormat::svg, "--out"),
                   fmt::format("{}: bytes per iteration, {}", c.gpu.name, what));
  }
  return body + "</div>\n";
}

// What a study's chart shows without the paper's cluster: "GPT-1T on 32,768 GPUs: best iteration
// time vs HB-domain size" is "best iteration time vs HB-domain size"; "Network cost vs cluster
// size (H100 K=8, GH200 K=256)" is "Network cost vs cluster size".
std::string what_it_shows(const std::string& title) {
  const std::size_t colon = title.rfind(": ");
  std::string s = colon == std::string::npos ? title : title.substr(colon + 2);
  if (const std::size_t paren = s.find(" ("); paren != std::string::npos) s.resize(paren);
  return s;
}

// Each study's chart, on the report's cluster (the paper's when it has none): the study varies
// its own option and keeps the report's values of the others.
std::string studies_body(const std::vector<sweep::Study>& studies, const ReportOptions& o,
                         const std::vector<ClusterCase>& clusters, const std::string& catalog) {
  std::string body = fmt::format(
      "<p>The paper's studies{}, each one <code>railsim sweep --study NAME</code> with the "
      "report's options (docs/studies.md has the paper's).</p>\n",
      o.cluster ? " on this cluster: each varies one option and keeps the others as above" : "");
  for (sweep::Study st : studies) {
    const sweep::SweepOptions own = st.options;  // what the study varies stays the study's
    set_common(st.options, o, catalog);
    if (own.network.forwarding != spec::NetworkOptions{}.forwarding)  // moe-alltoall's
      st.options.network.forwarding = own.network.forwarding;
    st.options.perf = own.perf;
    st.options.alltoall_bytes = own.alltoall_bytes;
    st.options.axes.model = {o.models.front()};
    sweep::SweepAxes& a = st.options.axes;
    if (own.axes.batch.size() > 1) a.batch = own.axes.batch;
    if (o.cluster) {
      set_cluster_axes(a, clusters.front());
      const std::vector<std::int64_t>& gpus = own.axes.gpus;
      if (own.axes.hb_domain.size() > 1) a.hb_domain = own.axes.hb_domain;
      if (own.axes.hb_GBps.size() > 1) a.hb_GBps = own.axes.hb_GBps;
      if (own.axes.nic_gbps.size() > 1) a.nic_gbps = own.axes.nic_gbps;
      if (gpus.size() > 1) {  // the study's sizes in whole HB domains of this cluster
        const std::int64_t k = clusters.front().cluster.hb_domain;
        a.gpus.clear();
        for (std::int64_t n : gpus) a.gpus.push_back(std::max(k, n / k * k));
      }
      // The study's other axes are not the user's: the title says what this cluster is.
      const spec::Cluster& c = clusters.front().cluster;
      st.plot.title = fmt::format(
          "{}{}: {}", st.options.perf ? o.models.front() + " on " : "",
          gpus.size() > 1
              ? c.gpu.name
              : fmt::format("{} x {}", report::thousands(static_cast<double>(c.gpus)), c.gpu.name),
          what_it_shows(st.plot.title));
    }
    const report::Table t = sweep::sweep_table(sweep::run_sweep(st.options));
    body +=
        fmt::format("<h3>{}</h3>\n<p>{}; {}.</p>\n", escape(st.name),
                    escape(o.cluster ? st.plot.title : st.summary), escape(sweep::routing_line(t)));
    body += figure(report::render(sweep::sweep_chart(t, st.plot), report::PlotFormat::svg, "--out"),
                   st.plot.title);
  }
  return body;
}

// Goodput over a 90-day run of one cluster, both designs, under the default failure rates: a
// table, and a chart of where the GPU-hours went.
std::string failures_body(const ClusterCase& cc, const sweep::PointResult& p,
                          const ReportOptions& o, const spec::NetworkDesign& network,
                          const spec::Catalog& catalog) {
  const spec::Cluster& c = cc.cluster;
  fail::GoodputRequest req;
  req.rates = spec::load_failure_rates(spec::kDefaultFailureRates, "--rates");
  req.mc.trials = o.failure_trials;
  req.mc.threads = o.threads;
  req.catalog = catalog;
  for (spec::DesignKind kind : {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only}) {
    spec::NetworkDesign d = network;
    d.kind = kind;
    req.designs.push_back(d);
  }
  fail::validate(req.mc);
  const fail::GoodputReport rep = fail::goodput_report(c, req);

  report::Table t;
  t.columns = {report::text_column("design", "design"),
               report::real_column("interruptions", "interruptions per run", "", 1),
               report::real_column("mtbf_h", "mean time between them", "h", 1),
               report::real_column("checkpoint_min", "checkpoint every", "min", 0),
               report::integer_column("spare_gpus", "spare GPUs"),
               report::fraction_column("ettr", "goodput (ETTR)"),
               report::text_column("ettr_range", "5th-95th percentile"),
               report::real_column("usd_per_gpu_h", "network $ per effective GPU-hour", "", 3),
               report::real_column("days", "days to train", "", 1),
               report::text_column("days_range", "5th-95th percentile days")};
  report::BarChart chart;
  chart.title = fmt::format("{}: where the GPU-hours of a 90-day run go",
                            report::thousands(static_cast<double>(c.gpus)) + " x " + c.gpu.name);
  chart.categories = {"checkpoints", "rework", "restarts", "waiting for repair", "degraded"};
  chart.y.label = "share of the run's GPU-hours (%)";
  chart.width = 900;
  chart.height = 420;
  for (std::size_t i = 0; i < rep.designs.size(); ++i) {
    const fail::GoodputResult& g = rep.designs[i];
    const fail::FailureModel& m = g.model;
    report::Cell days = report::Missing{}, range = report::Missing{};
    const std::size_t di = design_index(p, m.design);
    if (const perf::Plan* b = o.train_tokens ? best_of(p, di) : nullptr) {
      const double tokens_per_s = static_cast<double>(o.batch * p.seq) / b->time.iteration_time_s;
      const fail::TimeToTrain tt = fail::time_to_train(g, *o.train_tokens, tokens_per_s);
      days = tt.days_mean;
      range = fmt::format("{:.1f} - {:.1f}", tt.days_fast, tt.days_slow);
    }
    const double mtbf = m.mtbf_s();
    t.add_row(
        {design_words(m.design), g.interruptions.mean,
         std::isfinite(mtbf) ? report::Cell(mtbf / 3600) : report::Cell(report::Missing{}),
         m.checkpoint_interval_s / 60, m.spare_domains * m.hb_domain, g.ettr.mean,
         fmt::format("{} - {}", report::percent(g.ettr.p5, 1), report::percent(g.ettr.p95, 1)),
         rep.network_cost_usd[i] ? report::Cell(fail::network_cost_per_effective_gpu_hour(
                                       g, *rep.network_cost_usd[i], rep.amortize_years))
                                 : report::Cell(report::Missing{}),
         days, range});
    const double wall = g.wall_gpu_h > 0 ? g.wall_gpu_h : 1;
    chart.series.push_back(
        {design_words(m.design),
         {100 * g.checkpoint_gpu_h / wall, 100 * g.rework_gpu_h / wall,
          100 * g.restart_gpu_h / wall, 100 * g.wait_gpu_h / wall, 100 * g.degraded_gpu_h / wall}});
  }
  std::string body = fmt::format(
      "<h3>{}</h3>\n<p>A 90-day run under the <code>{}</code> failure rates, {} Monte Carlo "
      "trials per design (<code>railsim fail goodput</code>); goodput is the share of the run's "
      "time spent on training that is kept{}.</p>\n",
      escape(cluster_name(c)), escape(rep.rates), o.failure_trials,
      o.train_tokens ? fmt::format("; days to train {} tokens at each design's best plan",
                                   report::count(*o.train_tokens))
                     : "");
  body += table_html(t);
  body += figure(report::render(chart, report::PlotFormat::svg, "--out"), chart.title);
  return body;
}

// Both designs drawn small (Graphviz): 64 GPUs of the cluster's GPU in 8 HB domains of 8, one
// 400G NIC each, on 16-port switches, so that every switch and link can be seen; a real cluster
// has more of each in the same structure. Without Graphviz the section says how to get it.
std::string fabric_body(const spec::Cluster& c) {
  std::string body = fmt::format(
      "<p>The structure of both designs, drawn small: 64 {} GPUs in 8 HB domains of 8 (one "
      "cluster per domain, GPUs in rails), one 400G NIC each, on 16-port switches. Rail-optimized "
      "joins every rail's leaf through spines; rail-only keeps each rail to itself. The report's "
      "cluster has more of everything in the same shape ({}); <code>railsim design --export "
      "dot</code> writes any size.</p>\n",
      escape(c.gpu.name), escape(cluster_name(c)));
  if (report::find_dot().empty())
    return body +
           "<p>Graphviz (dot) is not installed, so the fabric is not drawn: install the graphviz "
           "package and run the report again.</p>\n";
  spec::Cluster small = spec::make_cluster(c.gpu, 64, 8, 400, c.hb_bw_Bps / 1e9, 1);
  spec::SwitchSpec sw;
  sw.name = "16-port switch";
  sw.radix = 16;
  sw.port_gbps = 400;
  body += "<div class=\"pair\">\n";
  for (spec::DesignKind kind : {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only}) {
    std::ostringstream dot;
    topo::write_graph(topo::build_fabric(small, spec::make_network_design(kind, sw)),
                      topo::GraphFormat::dot, dot);
    body += figure(report::render_dot_svg(dot.str(), "--out"),
                   fmt::format("{}: 64 GPUs on 16-port switches", design_words(kind)));
  }
  return body + "</div>\n";
}

// When the verdict between rail-only and rail-optimized turns under the contrasting routing (ECMP
// against adaptive), compare's line saying so; empty when it holds (or a design has no plan).
std::string routing_note(const sweep::PointResult& p, const spec::Model& model,
                         const ReportOptions& o, const spec::Cluster& c) {
  const perf::Plan* ro = best_of(p, design_index(p, spec::DesignKind::rail_optimized));
  const perf::Plan* rl = best_of(p, design_index(p, spec::DesignKind::rail_only));
  if (!ro || !rl) return "";
  const perf::Training tr =
      spec::make_training(o.batch, p.seq, o.stack, o.dtype, o.flash_attention);
  const double here = 100 * (rl->time.iteration_time_s / ro->time.iteration_time_s - 1);
  spec::NetworkDesign first = p.network;  // compare's: the flip is measured from rail-optimized
  first.kind = spec::DesignKind::rail_optimized;
  const perf::VerdictFlip f = perf::rail_only_under_contrasting_routing(model, tr, c, first, here);
  return f.flips ? f.line : "";
}

constexpr std::string_view kStyle = R"(
body { font-family: 'DejaVu Sans', Arial, sans-serif; margin: 2em auto; max-width: 1150px;
       color: #222; line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.6em; border-bottom: 2px solid #0072B2; padding-bottom: .2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; font-size: .85em; margin: .6em 0 1em; }
th, td { border: 1px solid #ddd; padding: .25em .55em; vertical-align: top; }
th { background: #f3f6fa; text-align: left; }
td.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.verdict { background: #eef6ee; border-left: 4px solid #009E73; padding: .6em 1em; margin: 1em 0; }
.verdict.other { background: #fdf3e7; border-left-color: #E69F00; }
.verdict b { font-size: 1.1em; }
ul.assumptions { font-size: .9em; }
figure { margin: 1em 0 1.6em; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .85em; color: #555; }
code, pre { font-family: 'DejaVu Sans Mono', monospace; font-size: .85em; }
.pair { display: flex; flex-wrap: wrap; gap: 1em; }
.pair figure { flex: 1 1 520px; }
nav a { margin-right: 1em; }
)";

constexpr std::string_view kImageCheck = R"(
window.addEventListener('load', function () {
  var images = document.images, ok = 0;
  for (var i = 0; i < images.length; i++) {
    if (images[i].complete && images[i].naturalWidth > 0) ok++;
    else console.error('railsim report: picture did not load: ' + images[i].alt);
  }
  document.body.setAttribute('data-images', ok + ' of ' + images.length);
});
)";

}  // namespace

std::string build_report(const ReportOptions& o) {
  // Inputs first: a bad option fails before any work.
  const std::string catalog_name = o.catalog.empty() ? spec::kDefaultCatalog : o.catalog;
  const spec::Catalog catalog = spec::load_catalog(catalog_name, "--catalog");
  if (o.models.empty()) throw InputError("--model", "give at least one model");
  std::vector<spec::Model> models;
  for (const std::string& m : o.models) models.push_back(spec::load_model(m, "--model"));
  (void)check_integer("--batch", o.batch, 1, std::int64_t{1} << 40);
  if (o.train_tokens)  // as perf::days_to_train checks it, before any work
    (void)check_number("--train-tokens", *o.train_tokens, Range::positive(1e18));
  std::vector<sweep::Study> studies;
  for (const std::string& name : o.studies) studies.push_back(sweep::make_study(name, "--studies"));
  const std::vector<ClusterCase> clusters = clusters_of(o);
  spec::NetworkOptions routed = o.network;
  routed.design = "rail_optimized";
  const spec::NetworkDesign network = spec::make_network_design(routed);
  report::require_gnuplot("--out");

  const sweep::SweepResult designs = run_designs(o, clusters, catalog_name);
  const std::size_t per_cluster = o.models.size();

  std::string body;
  std::string nav;
  auto section = [&](const std::string& id, const std::string& title) {
    nav += fmt::format("<a href=\"#{}\">{}</a>", id, escape(title));
    body += fmt::format("<h2 id=\"{}\">{}</h2>\n", id, escape(title));
  };

  section("summary", "Recommendation");
  body += fmt::format(
      "<p>Rail-optimized is the usual GPU network: a Clos with a spine over every rail. Rail-only "
      "removes the spine and keeps one Clos per rail; the rare traffic between rails crosses the "
      "HB domain (NVLink). Each is priced with the <code>{}</code> catalog and trains each model "
      "with its fastest plan that fits in memory; ideal (one HB domain over every GPU) is the "
      "fastest any network could be, a reference with no price. Every time on this page "
      "assumes {}.</p>\n",
      escape(catalog.name), escape(spec::describe_routing(network, /*with_forwarding=*/true)));
  for (std::size_t ci = 0; ci < clusters.size(); ++ci) {
    body += fmt::format("<h3>{}</h3>\n", escape(cluster_name(clusters[ci].cluster)));
    for (std::size_t mi = 0; mi < per_cluster; ++mi) {
      const sweep::PointResult& p = designs.points[ci * per_cluster + mi];
      const Recommendation r = recommend(p);
      const std::string flip = routing_note(p, models[mi], o, clusters[ci].cluster);
      body += fmt::format("<div class=\"verdict{}\"><b>{}</b><br>{}{}</div>\n",
                          r.design == spec::DesignKind::rail_only ? "" : " other",
                          escape((per_cluster > 1 ? p.model_name + ". " : "") + r.headline),
                          escape(r.reason), flip.empty() ? "" : "<br><b>Note</b>: " + escape(flip));
    }
    body += table_html(network_table(designs.points[ci * per_cluster]));
    for (std::size_t mi = 0; mi < per_cluster; ++mi) {
      const sweep::PointResult& p = designs.points[ci * per_cluster + mi];
      body += fmt::format("<p>{}, {} sequences of {} tokens{}:</p>\n", escape(p.model_name),
                          report::thousands(static_cast<double>(o.batch)),
                          report::thousands(static_cast<double>(p.seq)),
                          o.train_tokens
                              ? fmt::format(", {} tokens to train", report::count(*o.train_tokens))
                              : "");
      body += table_html(training_table(p, o.train_tokens));
      if (p.invalid) continue;
      // How far such a time has been seen to miss measured runs: the band estimate and plan print
      // for this GPU, stack, model kind and precision (docs/model.md section 10).
      const perf::ErrorBand band =
          perf::error_band(clusters[ci].cluster.gpu.name, models[mi], p.training);
      body += fmt::format(
          "<p class=\"band\">Error band of each time: +-{:.1f}% ({}; hold-outs are published "
          "runs no constant was fitted on).</p>\n",
          100 * band.fraction, escape(band.basis));
    }
  }
  body += "<h3>Assumptions</h3>\n" + assumptions_html(o, network, catalog, clusters);

  section("bom", "Bill of materials");
  for (std::size_t ci = 0; ci < clusters.size(); ++ci) {
    const ClusterCase& cc = clusters[ci];
    body += fmt::format("<h3>{}</h3>\n", escape(cluster_name(cc.cluster)));
    std::vector<cost::DesignReport> rows = designs.points[ci * per_cluster].designs;  // priced
    std::erase_if(rows, [](const cost::DesignReport& d) {
      return d.bom.design == spec::DesignKind::ideal;  // nothing to buy
    });
    report::Table bom = cost::designs_table(cc.cluster, rows, true);
    const auto col = std::find_if(bom.columns.begin(), bom.columns.end(),
                                  [](const report::Column& c) { return c.name == "design"; });
    for (std::size_t r = 0; col != bom.columns.end() && r < bom.rows.size(); ++r)  // as the prose
      bom.rows[r][static_cast<std::size_t>(col - bom.columns.begin())] =
          design_words(rows[r].bom.design);
    body += table_html(bom);
  }

  section("fabric", "The designs, drawn small");
  body += fabric_body(clusters.front().cluster);

  section("traffic", "Traffic of rail-only's best plan");
  body +=
      "<p>Bytes of one iteration of the first model between HB domains (the diagonal is NVLink "
      "traffic) and, of the bytes that leave a domain, between rails: off the rail-to-rail "
      "diagonal would be cross-rail traffic, which a rail-only network forwards through the HB "
      "domain.</p>\n";
  for (std::size_t ci = 0; ci < clusters.size(); ++ci)
    body += traffic_body(clusters[ci], designs.points[ci * per_cluster], models.front(), o.batch);

  if (!studies.empty()) {
    section("studies", "Parameter studies");
    body += studies_body(studies, o, clusters, catalog_name);
  }

  if (o.failures) {
    section("failures", "Goodput under failures");
    for (std::size_t ci = 0; ci < clusters.size(); ++ci)
      body += failures_body(clusters[ci], designs.points[ci * per_cluster], o, network, catalog);
  }

  std::string model_names;
  for (const spec::Model& m : models) model_names += (model_names.empty() ? "" : ", ") + m.name;
  const std::string where =
      o.cluster
          ? cluster_name(clusters.front().cluster)
          : fmt::format("{} GH200 and H100",
                        report::thousands(static_cast<double>(clusters.front().cluster.gpus)));
  const std::string title =
      fmt::format("Rail-only or rail-optimized: {} on {}", model_names, where);
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{0}</title>\n<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n"
      "<p>The networks of Wang et al., \"Rail-only: A Low-Cost High-Performance Network for "
      "Training LLMs with Trillion Parameters\" (arXiv 2307.12169), priced and timed by railsim "
      "{2}.</p>\n<nav>{3}</nav>\n{4}"
      "<p><small>Generated by <code>railsim report</code> {2}.</small></p>\n<script>{5}</script>\n"
      "</body>\n</html>\n",
      escape(title), kStyle, escape(std::string(version())), nav, body, kImageCheck);
}

}  // namespace railsim::html
