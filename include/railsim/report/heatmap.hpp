#pragma once
// Heatmaps of a square or rectangular matrix of non-negative values, drawn by gnuplot
// (report/plot.hpp) as PNG, SVG or PDF, on a logarithmic colour scale with a colour bar.
//
// Zero cells stay white so that sparsity is visible; every non-zero value gets a colour from
// light yellow (smallest) to dark red (largest). The scale spans at most `max_decades` decades
// below the largest value; smaller non-zero values take the lightest colour.
#include <cstdint>
#include <string>
#include <vector>

#include "railsim/report/format.hpp"
#include "railsim/report/plot.hpp"

namespace railsim::report {

struct Heatmap {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> values;  // rows x cols, row-major; row 0 at the top
  std::string title;
  std::string subtitle;  // second line under the title (e.g. what one cell holds)
  std::string x_label, y_label;
  std::string unit = "B";  // colour-bar values carry SI prefixes and this unit ("B": bytes)
  // Axis ticks are labelled in items (GPUs, domains, rails): cell i covers items
  // [i * items_per_cell, (i + 1) * items_per_cell).
  std::int64_t x_items = 0, y_items = 0;  // 0: same as cols / rows
  std::int64_t items_per_cell = 1;
  // Thin separator lines every `separator_every` cells (e.g. HB-domain boundaries); 0 = none.
  std::int64_t separator_every = 0;
  double max_decades = 6;
  int width = 860, height = 760;  // pixels
};

// The colour scale: [vmin, vmax] on a log axis; vmax == 0 when every cell is empty.
struct HeatmapScale {
  double vmin = 0, vmax = 0;
};
// At most max_decades below the largest value and at least one decade, so that a matrix of
// nearly equal values reads as nearly uniform rather than spread over the whole scale.
HeatmapScale heatmap_scale(const Heatmap& h);

// The gnuplot script drawing the heatmap into `output`: the matrix is the `$matrix` data block,
// one line per row, the values exactly as given (zeros included; the plot leaves them white).
// Throws InputError(option, ...) when the matrix is malformed (sizes, negative or non-finite).
std::string gnuplot_script(const Heatmap& h, PlotFormat f, const std::string& output,
                           const std::string& option);
std::string render(const Heatmap& h, PlotFormat f, const std::string& option);
// Writes the heatmap to `path` in the format of its extension (.png, .svg, .pdf), atomically.
void write_heatmap(const Heatmap& h, const std::string& path, const std::string& option);

}  // namespace railsim::report
