#pragma once
// The one-file HTML report (`railsim report`): the paper's two clusters (GH200 with HB domains of
// 256 and H100 with 8, the same GPU count) side by side — the designs with their cost, power and
// rail-only's saving, the bill of materials, the best plan of each design, the traffic heatmaps of
// rail-only's best plan, the studies' plots (sweep/study.hpp) and the goodput under failures.
//
// Self-contained: CSS inline, pictures as SVG in data: URIs (drawn by gnuplot), no network, no
// timestamp (the same inputs give the same bytes). A small inline script checks, once the page has
// loaded, that every picture decoded: it logs a console error for each one that did not and sets
// `data-images="N of M"` on <body> (what the headless-browser test reads).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/report/table.hpp"
#include "railsim/spec/cluster.hpp"

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

struct ReportOptions {
  std::int64_t gpus = spec::kDefaultGpus;
  std::string model = "GPT-1T";
  std::int64_t batch = 4096;
  std::string catalog;                // empty: the default catalog
  std::string routing = "auto";       // every section's: auto (the switch's default) or a name
  std::int64_t seed = 0;              // the ECMP hash seed
  std::vector<std::string> studies;   // names of sweep::study_names() to run and plot
  bool failures = true;               // the goodput section
  std::int64_t failure_trials = 200;  // Monte Carlo trials per design
  int threads = 0;                    // 0: every core
};

// The whole page. Throws InputError naming the option (--gpus, --model, --batch, --catalog,
// --routing, --seed, --studies) for bad input, and "--out" when gnuplot is missing.
std::string build_report(const ReportOptions& o);

}  // namespace railsim::html
