#pragma once
// The paper's parameter studies (Wang et al., "Rail-only", arXiv 2307.12169) as named presets of
// the sweep engine: each study is a set of sweep axes (GPT-1T on 32,768 GH200 and H100 unless the
// study varies it) and the chart that shows it (x and y columns of sweep_table, one line per
// design and GPU). Options given on the command line replace the study's values of that option.
//
//   hb-domain      iteration time vs HB-domain size K (8..256); ideal (one HB domain over all
//                  GPUs) is the reference line
//   hb-bandwidth   iteration time vs HB bandwidth per GPU (150..900 GB/s)
//   nic-bandwidth  iteration time vs NIC bandwidth (100..800 Gb/s)
//   batch          iteration time vs global batch (512..16384 sequences)
//   cluster-size   network cost vs cluster size (1,024..131,072 GPUs), no plan search
//   moe-alltoall   rail-only's all-to-all slowdown against rail-optimized vs K (simulated,
//                  two-phase forwarding, HB 450 and 900 GB/s), no plan search
#include <string>
#include <vector>

#include "railsim/report/plot.hpp"
#include "railsim/report/table.hpp"
#include "railsim/sweep/sweep.hpp"

namespace railsim::sweep {

// What to plot from a sweep table: one line per series, points (x, y) from two numeric columns.
struct StudyPlot {
  std::string x, y;  // column names of sweep_table ("hb_domain", "best_iteration_time_s")
  // Columns whose values name a line; empty: the design and every other input column that takes
  // more than one value.
  std::vector<std::string> series;
  std::vector<std::string> designs;  // rows of these designs only; empty: all
  int x_log_base = 0, y_log_base = 0;
  std::string title;  // empty: "<y> vs <x>"
  report::Legend legend = report::Legend::top_right;
};

struct Study {
  std::string name;
  std::string summary;  // one line: what it shows
  SweepOptions options;
  StudyPlot plot;
};

// The study names, in the order of the list above.
std::vector<std::string> study_names();
// Throws InputError(option, "unknown study 'x'; valid: ...").
Study make_study(const std::string& name, const std::string& option = "--study");

// The sweep_table column of a swept option: "--hb-domain" or "hb-domain" -> "hb_domain",
// "--switch" -> "switch"; anything else is returned as written (a column name).
std::string column_of(const std::string& option_or_column);

// The plot of a sweep: the study's (when `study` is set), with x and y replaced by those given
// (non-empty; options or column names). Throws InputError: no study and x or y missing (naming
// --plot), a column that does not exist in tables of these options or is not numeric (naming
// --plot-x or --plot-y, listing the numeric columns), a study's y column that the options removed
// (--no-perf on a timing study).
StudyPlot resolve_plot(const Study* study, const std::string& x, const std::string& y,
                       const SweepOptions& opt);

// The line chart of a sweep table under a plot: rows grouped into series by the series columns
// (first appearance order), each series sorted by x; rows without an x or a y value are left out.
// Labels come from the columns ("HB domain", "best iteration time (s)"); the title says what the
// points share (model, GPUs) when the plot has none. Throws InputError("--plot") when no row has
// both values.
report::LineChart sweep_chart(const report::Table& t, const StudyPlot& p);

}  // namespace railsim::sweep
