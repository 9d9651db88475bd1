#include "railsim/html/report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/cost/tables.hpp"
#include "railsim/fail/model.hpp"
#include "railsim/fail/monte_carlo.hpp"
#include "railsim/fail/report.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/strategy.hpp"
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
#include "railsim/traffic/tables.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

namespace railsim::html {

namespace {

// The paper's two clusters: GH200 with HB domains of 256 and H100 with 8 (the presets' K).
constexpr const char* kGpus[] = {spec::kPaperClusters[0].gpu, spec::kPaperClusters[1].gpu};

// Cells per axis of the report's heatmaps: enough to see the structure, small pictures.
constexpr std::int64_t kHeatmapCells = 256;

constexpr std::string_view kStyle = R"(
body { font-family: 'DejaVu Sans', Arial, sans-serif; margin: 2em auto; max-width: 1150px;
       color: #222; line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.6em; border-bottom: 2px solid #0072B2; padding-bottom: .2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; font-size: .82em; margin: .6em 0 1em; }
th, td { border: 1px solid #ddd; padding: .25em .55em; vertical-align: top; }
th { background: #f3f6fa; text-align: left; }
td.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0 1.6em; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .85em; color: #555; }
code, pre { font-family: 'DejaVu Sans Mono', monospace; font-size: .85em; }
pre { background: #f7f7f7; padding: .8em; overflow-x: auto; }
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

bool numeric(report::Type t) {
  return t == report::Type::integer || t == report::Type::real;
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

// The traffic heatmaps of rail_only's best plan on each cluster (HB domain to HB domain, rail to
// rail).
std::string traffic_body(const std::vector<spec::Cluster>& clusters,
                         const sweep::SweepResult& designs, const spec::Model& model,
                         std::int64_t batch) {
  std::string body =
      "<p>Bytes of one iteration between HB domains (the diagonal is NVLink traffic) and, of the "
      "bytes that leave a domain, between rails: off the rail-to-rail diagonal would be "
      "cross-rail traffic, which a rail-only network forwards through the HB domain.</p>\n";
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    const spec::Cluster& c = clusters[i];
    const sweep::DesignPlan& dp = designs.points[i].plans[1];  // rail_only
    body += fmt::format("<h3>{}</h3>\n", escape(cluster_name(c)));
    if (!dp.best) {
      body += fmt::format("<p>No plan: {}</p>\n", escape(dp.no_plan_reason));
      continue;
    }
    const perf::Strategy& s = dp.best->strategy;
    perf::Training tr;
    tr.global_batch = batch;
    tr.seq_len = model.seq_len;
    const perf::Placement pl(c, s.degrees(), perf::PlacementKind::rail_aligned);
    const perf::CommSchedule cs = perf::build_comm_schedule(model, tr, s, pl);
    const traffic::TrafficMatrix tm = traffic::TrafficMatrix::build(cs, pl, c);
    const std::string title =
        fmt::format("{}, {} x {} (K={}), rail_only: {}", model.name,
                    report::thousands(static_cast<double>(c.gpus)), c.gpu.name, c.hb_domain,
                    fmt::format("tp{}{} pp{} dp{}", s.tp,
                                s.cp > 1 ? fmt::format(" cp{}", s.cp) : "", s.pp, s.dp));
    body += "<div class=\"pair\">\n";
    for (const auto& [view, what] :
         {std::pair{traffic::TrafficView::domain, "HB domain to HB domain"},
          {traffic::TrafficView::rail, "rail to rail"}}) {
      auto h = traffic::traffic_heatmap(tm, c, view, kHeatmapCells, title);
      h.width = 760;
      h.height = 680;
      body += figure(report::render(h, report::PlotFormat::svg, "--out"),
                     fmt::format("{}: bytes per iteration, {}", c.gpu.name, what));
    }
    body += "</div>\n";
  }

  return body;
}

// Each study's chart, run under the report's routing and seed.
std::string studies_body(std::vector<sweep::Study>& studies, const ReportOptions& o) {
  std::string body =
      "<p>The paper's studies, each one <code>railsim sweep --study NAME</code> "
      "(docs/studies.md has their tables).</p>\n";
  for (sweep::Study& st : studies) {
    st.options.threads = o.threads;
    st.options.axes.routing = {o.routing};
    st.options.network.seed = o.seed;
    const report::Table t = sweep::sweep_table(sweep::run_sweep(st.options));
    body += fmt::format(
        "<h3>{}</h3>\n<p>{}; {}: <code>railsim sweep --study {} --routing {} --plot "
        "{}.svg</code></p>\n",
        escape(st.name), escape(st.summary), escape(sweep::routing_line(t)), escape(st.name),
        escape(o.routing), escape(st.name));
    body += figure(report::render(sweep::sweep_chart(t, st.plot), report::PlotFormat::svg, "--out"),
                   st.plot.title);
  }
  return body;
}

// Goodput over a 90-day run on cluster c, both designs, under the default failure rates.
std::string failures_body(const spec::Cluster& c, const ReportOptions& o,
                          const spec::Catalog& catalog) {
  const spec::FailureRates rates = spec::load_failure_rates(spec::kDefaultFailureRates, "--rates");
  fail::GoodputReport rep;
  rep.gpu = c.gpu.name;
  rep.rates = rates.name;
  fail::MonteCarloOptions mc;
  mc.trials = o.failure_trials;
  mc.threads = o.threads;
  fail::validate(mc);
  spec::NetworkOptions no;
  no.routing = o.routing;
  no.seed = o.seed;
  const spec::NetworkDesign base = spec::make_network_design(no);
  for (spec::DesignKind kind : {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only}) {
    spec::NetworkDesign d = base;
    d.kind = kind;
    rep.designs.push_back(
        fail::run_goodput(fail::make_failure_model(c, d, rates, fail::RunParams{}), mc));
    rep.network_cost_usd.push_back(cost::evaluate(c, d, catalog).cost.cost_usd());
  }
  return fmt::format(
      "<p>{}, a 90-day run under the <code>{}</code> failure rates, {} Monte Carlo trials per "
      "design (<code>railsim fail goodput --gpus {} --trials {}</code>):</p>\n<pre>{}</pre>\n",
      escape(cluster_name(c)), escape(rates.name), o.failure_trials, c.gpus, o.failure_trials,
      escape(fail::to_text(rep)));
}

}  // namespace

std::string build_report(const ReportOptions& o) {
  // Inputs first: a bad option fails before any work.
  const std::string catalog_name = o.catalog.empty() ? spec::kDefaultCatalog : o.catalog;
  const spec::Catalog catalog = spec::load_catalog(catalog_name, "--catalog");
  const spec::Model model = spec::load_model(o.model, "--model");
  const std::int64_t batch = check_integer("--batch", o.batch, 1, std::int64_t{1} << 40);
  std::vector<sweep::Study> studies;
  for (const std::string& name : o.studies) studies.push_back(sweep::make_study(name, "--studies"));
  std::vector<spec::Cluster> clusters;
  for (const char* gpu : kGpus) {
    spec::ClusterOptions co;
    co.gpu = gpu;
    co.gpus = o.gpus;
    clusters.push_back(spec::make_cluster(co));
  }
  report::require_gnuplot("--out");

  // The designs of both clusters with their best plans: one sweep.
  sweep::SweepOptions so;
  so.axes.gpu = {kGpus[0], kGpus[1]};
  so.axes.gpus = {o.gpus};
  so.axes.model = {o.model};
  so.axes.batch = {batch};
  so.axes.catalog = {catalog_name};
  so.axes.routing = {o.routing};
  so.network.seed = o.seed;
  so.threads = o.threads;
  const sweep::SweepResult designs = sweep::run_sweep(so);
  for (const auto& p : designs.points)
    if (p.invalid) throw *p.invalid;

  const report::Table designs_table = sweep::sweep_table(designs);
  std::string body;
  std::string nav;
  auto section = [&](const std::string& id, const std::string& title) {
    nav += fmt::format("<a href=\"#{}\">{}</a>", id, escape(title));
    body += fmt::format("<h2 id=\"{}\">{}</h2>\n", id, escape(title));
  };

  section("designs", "Designs, savings and best plans");
  body += fmt::format(
      "<p>{} with a global batch of {} sequences of {} tokens, on {} GPUs: rail-optimized (the "
      "Clos with a spine), rail-only (no spine: one Clos per rail) and ideal (one HB domain over "
      "every GPU). Cost and power under the <code>{}</code> catalog; the saving is rail-only's "
      "against rail-optimized; the best plan is the fastest parallelization that fits in "
      "memory. Every time on this page assumes {} (<code>--routing</code>).</p>\n",
      escape(model.name), report::thousands(static_cast<double>(batch)),
      report::thousands(static_cast<double>(model.seq_len)),
      report::thousands(static_cast<double>(o.gpus)), escape(catalog.name),
      escape(sweep::routing_line(designs_table)));
  body += table_html(designs_table);

  section("bom", "Bill of materials");
  for (const spec::Cluster& c : clusters) {
    body += fmt::format("<h3>{}</h3>\n", escape(cluster_name(c)));
    const auto rows =
        cost::compare_designs(c, spec::make_network_design(spec::NetworkOptions{}), catalog);
    body += table_html(cost::designs_table(c, rows, true));
  }

  section("traffic", "Traffic of rail-only's best plan");
  body += traffic_body(clusters, designs, model, batch);

  if (!studies.empty()) {
    section("studies", "Parameter studies");
    body += studies_body(studies, o);
  }

  if (o.failures) {
    section("failures", "Goodput under failures");
    body += failures_body(clusters.back(), o, catalog);  // H100, K=8
  }

  const std::string title = fmt::format("railsim report: {} on {} GPUs", model.name,
                                        report::thousands(static_cast<double>(o.gpus)));
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{0}</title>\n<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n"
      "<p>Rail-only against rail-optimized networks after Wang et al., \"Rail-only: A Low-Cost "
      "High-Performance Network for Training LLMs with Trillion Parameters\" (arXiv "
      "2307.12169): {2} and {3}.</p>\n<nav>{4}</nav>\n{5}"
      "<p><small>Generated by <code>railsim report</code>.</small></p>\n<script>{6}</script>\n"
      "</body>\n</html>\n",
      escape(title), kStyle, escape(cluster_name(clusters[0])), escape(cluster_name(clusters[1])),
      nav, body, kImageCheck);
}

}  // namespace railsim::html
