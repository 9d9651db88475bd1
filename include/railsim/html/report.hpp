#pragma once
// The one-file HTML report (`railsim report`) of one cluster (or the paper's two: GH200 with HB
// domains of 256 and H100 with 8, 32,768 GPUs each) for one or more models. It opens with the
// answer: which design to buy and why (the savings, the speed, the time to train) and every
// assumption it rests on (network, routing, software, catalog, failure rates, railsim's version,
// the options given). Then the detail: the bill of materials, the traffic heatmaps of rail-only's
// best plan, the studies of the paper on this cluster (sweep/study.hpp) and the goodput under
// failures as tables and a chart.
//
// Self-contained: CSS inline, pictures as SVG in data: URIs (drawn by gnuplot), no network, no
// timestamp (the same inputs give the same bytes). A small inline script checks, once the page has
// loaded, that every picture decoded: it logs a console error for each one that did not and sets
// `data-images="N of M"` on <body> (what the headless-browser test reads).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/cost/cost.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/report/table.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/stack.hpp"
#include "railsim/sweep/sweep.hpp"

namespace railsim::html {

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string escape(std::string_view text);
// RFC 4648 base64 (with padding).
std::string base64(std::string_view bytes);
// A table for people: the columns with `human` set and a value in some row, cells as the text
// table shows them (units, separators, "-" when missing), numbers right-aligned.
std::string table_html(const report::Table& t);
// <img> of an SVG picture as a data: URI, with its alternative text.
std::string svg_img(std::string_view svg, std::string_view alt);

// Two iteration times this close are the same speed: rail-only is recommended when it is no more
// than 1% slower than rail-optimized and costs less (compare's verdict band, perf::kVerdictBand).
inline constexpr double kSameSpeed = perf::kVerdictBand;

// Which design to buy for one model on one cluster, and why, in words.
struct Recommendation {
  std::optional<spec::DesignKind> design;  // none: no design trains the model
  std::string headline;                    // "Rail-only: 38.2% less network cost, same speed"
  std::string reason;                      // the figures behind it, one or two sentences
};
// From a sweep point's designs and best plans (rail_optimized, rail_only, ideal): rail-only when
// its best plan is within `same_speed` of rail-optimized's and its network costs less;
// rail-optimized when rail-only is slower than that, costs more, or has no plan.
Recommendation recommend(const sweep::PointResult& p, double same_speed = kSameSpeed);

struct ReportOptions {
  // The cluster, as `compare` takes it; none: the paper's two clusters.
  std::optional<spec::ClusterOptions> cluster;
  // The designs' switch, oversubscription, planes, routing and forwarding (design is ignored:
  // every design is built).
  spec::NetworkOptions network;
  std::string catalog;  // empty: the default catalog
  cost::SwitchCounting counting = cost::SwitchCounting::whole;
  std::vector<std::string> models = {spec::kDefaultModel};  // presets or JSON files
  std::int64_t batch = spec::kDefaultGlobalBatch;
  std::optional<std::int64_t> seq;  // none: each model's own
  spec::Stack stack;
  std::optional<spec::Dtype> dtype;
  std::optional<bool> flash_attention;
  std::optional<double> train_tokens;  // the days each best plan takes to train them
  std::vector<std::string> studies;    // names of sweep::study_names() to run and plot
  bool failures = true;                // the goodput section
  std::int64_t failure_trials = 200;   // Monte Carlo trials per design
  int threads = 0;                     // 0: every core
  std::string inputs;                  // the options given, stated with the assumptions
};

// The whole page. Throws InputError naming the option (--gpus, --model, --batch, --catalog,
// --routing, --switch, --studies, ...) for bad input, and "--out" when gnuplot is missing.
std::string build_report(const ReportOptions& o);

}  // namespace railsim::html
