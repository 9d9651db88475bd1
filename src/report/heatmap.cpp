#include "railsim/report/heatmap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "railsim/core/error.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/format.hpp"

namespace railsim::report {

namespace {

void check(const Heatmap& h, const std::string& option) {
  if (h.rows < 1 || h.cols < 1 || h.values.size() != static_cast<std::size_t>(h.rows * h.cols))
    throw InputError(option, fmt::format("heatmap needs rows x cols values (got {} x {} and {})",
                                         h.rows, h.cols, h.values.size()));
  for (double v : h.values)
    if (!std::isfinite(v) || v < 0)
      throw InputError(option, fmt::format("heatmap values must be finite and >= 0 (got {})", v));
  if (h.items_per_cell < 1)
    throw InputError(option,
                     fmt::format("items per cell must be at least 1 (got {})", h.items_per_cell));
}

// Ticks on an axis of `items` items: a 1-2-5 step giving at most about `intervals` intervals.
std::vector<std::int64_t> ticks(std::int64_t items, std::int64_t intervals) {
  std::int64_t step = 1;
  if (items > intervals)  // the first 1-2-5 step that fits (72 items in 8: every 10th)
    for (std::int64_t base = 1; step == 1; base *= 10)
      for (std::int64_t m : {1, 2, 5})
        if (items / (m * base) <= intervals) {
          step = m * base;
          break;
        }
  std::vector<std::int64_t> out;
  for (std::int64_t v = 0; v < items; v += step) out.push_back(v);
  return out;
}

}  // namespace

HeatmapScale heatmap_scale(const Heatmap& h) {
  HeatmapScale s;
  double lo = 0;
  for (double v : h.values) {
    if (v > s.vmax) s.vmax = v;
    if (v > 0 && (lo == 0 || v < lo)) lo = v;
  }
  if (s.vmax <= 0) return s;
  s.vmin = std::min(std::max(lo, s.vmax / std::pow(10.0, h.max_decades)), s.vmax / 10.0);
  return s;
}

std::string gnuplot_script(const Heatmap& h, PlotFormat f, const std::string& output,
                           const std::string& option) {
  check(h, option);
  const HeatmapScale sc = heatmap_scale(h);
  const std::int64_t bin = h.items_per_cell;
  const std::int64_t xi = h.x_items ? h.x_items : h.cols * bin;
  const std::int64_t yi = h.y_items ? h.y_items : h.rows * bin;
  std::string s = gnuplot_terminal(f, h.width, h.height, output);
  std::string title = h.title;
  if (!h.subtitle.empty()) title += (title.empty() ? "" : "\n") + h.subtitle;
  if (!title.empty()) s += fmt::format("set title {}\n", gnuplot_quote(title));
  if (!h.x_label.empty()) s += fmt::format("set xlabel {}\n", gnuplot_quote(h.x_label));
  if (!h.y_label.empty()) s += fmt::format("set ylabel {}\n", gnuplot_quote(h.y_label));
  // Cell (i, j) is drawn at (i, j), so gnuplot reads the matrix without an expression per cell
  // (fast for a million cells); the ticks name items: a cell's centre when it holds one item,
  // item boundaries when cells sum `bin` items.
  s += "unset key\nset size ratio -1\nset tics out nomirror\n";
  s += fmt::format("set xrange [-0.5:{}]\nset yrange [{}:-0.5]\n",
                   gnuplot_number(static_cast<double>(h.cols) - 0.5),
                   gnuplot_number(static_cast<double>(h.rows) - 0.5));
  auto at = [&](std::int64_t item) {
    return bin == 1 ? static_cast<double>(item)
                    : static_cast<double>(item) / static_cast<double>(bin) - 0.5;
  };
  for (const auto& [axis, items] : {std::pair{'x', xi}, {'y', yi}}) {
    std::string tics;
    for (std::int64_t v : ticks(items, bin == 1 && items <= 64 ? 16 : 8))
      tics += fmt::format("{}\"{}\" {}", tics.empty() ? "" : ", ", v, gnuplot_number(at(v)));
    s += fmt::format("set {}tics ({})\n", axis, tics);
  }
  // Colours (ours): light yellow -> orange -> red -> dark maroon; darker means more, and the
  // lightest colour stays distinct from the white of empty cells.
  s += "set palette defined (0 '#f6d05a', 1 '#f08c28', 2 '#c82626', 3 '#54002e')\n";
  s += "set logscale cb 10\n";
  const double vmax = sc.vmax > 0 ? sc.vmax : 10, vmin = sc.vmax > 0 ? sc.vmin : 1;
  s += fmt::format("set cbrange [{}:{}]\n", gnuplot_number(vmin), gnuplot_number(vmax));
  // Labelled ticks at 1-2-5 steps of each decade in the range (every step when the range spans
  // less than a decade and a half, so that the bar never shows a single labelled value), written
  // as the tables write them ("200 MB").
  std::string cbtics;
  for (const std::vector<int>& steps : {std::vector<int>{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    cbtics.clear();
    int n = 0;
    for (double decade = std::pow(10.0, std::floor(std::log10(vmin))); decade <= vmax; decade *= 10)
      for (int m : steps) {
        const double v = m * decade;
        if (v < vmin * (1 - 1e-9) || v > vmax * (1 + 1e-9)) continue;
        cbtics += fmt::format("{}{} {}", n++ ? ", " : "", gnuplot_quote(si(v, h.unit)),
                              gnuplot_number(v));
      }
    if (n >= 3) break;
  }
  s += fmt::format("set cbtics ({})\n", cbtics);
  s += fmt::format("set cblabel {} offset 1.5,0\n",
                   gnuplot_quote(h.unit == "B" ? "bytes (white: none)" : h.unit + " (white: 0)"));
  if (h.separator_every > 0) {
    for (std::int64_t v = h.separator_every; v < h.cols; v += h.separator_every)
      s += fmt::format(
          "set arrow from {0},graph 0 to {0},graph 1 nohead front lc rgb '#b0b0b0' lw 0.6\n",
          gnuplot_number(static_cast<double>(v) - 0.5));
    for (std::int64_t v = h.separator_every; v < h.rows; v += h.separator_every)
      s += fmt::format(
          "set arrow from graph 0,first {0} to graph 1,first {0} nohead front lc rgb '#b0b0b0' "
          "lw 0.6\n",
          gnuplot_number(static_cast<double>(v) - 0.5));
  }
  // A "0" field is missing data: zero cells stay unpainted (white) and every value in the block is
  // the matrix's own.
  s += "set datafile missing \"0\"\n$matrix << EOD\n";
  std::string line;
  for (std::int64_t r = 0; r < h.rows; ++r) {
    line.clear();
    for (std::int64_t c = 0; c < h.cols; ++c) {
      if (c) line += ' ';
      const double v = h.values[static_cast<std::size_t>(r * h.cols + c)];
      line += v == 0 ? std::string(1, '0') : gnuplot_number(v);
    }
    s += line;
    s += '\n';
  }
  s += "EOD\n";
  if (sc.vmax > 0)
    // Up to 128 x 128 cells each is a rectangle, crisp at any zoom; larger matrices are one
    // embedded bitmap (fast, small files).
    s += h.rows * h.cols <= 128 * 128 ? "plot $matrix matrix with image pixels\n"
                                      : "plot $matrix matrix with image\n";
  else  // nothing to colour: the empty frame and colour bar
    s += "set colorbox\nplot NaN with lines\n";
  return s;
}

std::string render(const Heatmap& h, PlotFormat f, const std::string& option) {
  gnuplot_script(h, f, "check", option);  // bad input before any process runs
  return run_gnuplot([&](const std::string& out) { return gnuplot_script(h, f, out, option); }, f,
                     option);
}

void write_heatmap(const Heatmap& h, const std::string& path, const std::string& option) {
  const PlotFormat f = plot_format(path, option);
  check(h, option);
  check_writable(path, option);
  write_file_atomic(path, render(h, f, option), option);
}

}  // namespace railsim::report
