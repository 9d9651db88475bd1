#pragma once
// Charts drawn by gnuplot: a description (title, axes, series of (x, y) points or bars, legend)
// becomes a gnuplot script with the data inline (`$s0 << EOD` blocks), which the `gnuplot`
// program found on PATH renders to PNG (pngcairo), SVG or PDF (pdfcairo). The output is
// deterministic: fixed size and fonts, gnuplot's own initialisation files ignored (-d), no
// timestamps (the PDF's creation date is fixed), so the same chart gives the same SVG bytes.
//
// Text is drawn as given (gnuplot's enhanced text mode is off: _ ^ @ & have no meaning), and SVG
// output escapes it for XML. Files are written atomically (report/file.hpp).
//
// Graphs (a network's nodes and links, as DOT text) are drawn by Graphviz's `dot` the same way:
// render_dot_svg at the end.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace railsim::report {

enum class PlotFormat { png, svg, pdf };

// The format named by the file's extension (.png, .svg or .pdf); InputError(option) otherwise.
PlotFormat plot_format(const std::string& path, const std::string& option);
std::string_view to_string(PlotFormat f);  // "png", "svg", "pdf"

struct PlotAxis {
  std::string label;
  int log_base = 0;  // 0: linear; 2 or 10: logarithmic with that base (ticks at its powers)
  // The tick labels' printf format as gnuplot reads it ("%.1f", "%.2f%%"); empty: "%g", which
  // writes 1e+06 on a large or fine axis. Quoted like every text (gnuplot_quote).
  std::string format = {};
  bool from_zero = false;  // linear axes: start at 0 so that a small spread looks small
};

// Where the legend (gnuplot's key) goes.
enum class Legend { top_right, top_left, bottom_right, bottom_left, outside_right };

struct Series {
  std::string name;
  std::vector<double> x, y;  // the same length; drawn in this order (non-finite points skipped)
  // Empty, or one per point: written beside it (a data string of the script's data block, with
  // quotes, backquotes and line breaks replaced, never a command).
  std::vector<std::string> labels = {};
};

// Lines with points, one per series; colours, point shapes and dash patterns follow the series'
// order, so that two series lying on top of each other stay distinguishable.
struct LineChart {
  std::string title, subtitle;
  PlotAxis x, y;
  std::vector<Series> series;
  Legend legend = Legend::top_right;
  int width = 900, height = 560;  // pixels (PDF: hundredths of an inch)
};

struct BarSeries {
  std::string name;
  std::vector<double> values;  // one per category
};

// Clustered bars: one group per category, one bar per series in each group.
struct BarChart {
  std::string title, subtitle;
  std::vector<std::string> categories;
  PlotAxis y;
  std::vector<BarSeries> series;
  Legend legend = Legend::top_right;
  int width = 900, height = 560;
};

// The gnuplot script that draws the chart into `output` (a path written in the script). Throws
// InputError(option) when there is nothing to draw or the sizes do not match.
std::string gnuplot_script(const LineChart& c, PlotFormat f, const std::string& output,
                           const std::string& option = "--plot");
std::string gnuplot_script(const BarChart& c, PlotFormat f, const std::string& output,
                           const std::string& option = "--plot");

// The chart's bytes in the format (runs gnuplot in a temporary directory).
std::string render(const LineChart& c, PlotFormat f, const std::string& option);
std::string render(const BarChart& c, PlotFormat f, const std::string& option);

// Writes the chart to `path`, in the format of its extension, atomically.
void write_plot(const LineChart& c, const std::string& path, const std::string& option);
void write_plot(const BarChart& c, const std::string& path, const std::string& option);

// --- shared by the chart kinds (heatmap.cpp) ---

// The gnuplot program on PATH, or "" when there is none.
std::string find_gnuplot();
// Throws InputError(option, "... install gnuplot-nox ...") when gnuplot is not on PATH.
void require_gnuplot(const std::string& option);
// Runs gnuplot on the script that `script(output)` returns for an output path in a temporary
// directory and returns what it wrote. Throws InputError(option) when gnuplot is missing or fails
// (with the first line of its error).
std::string run_gnuplot(const std::function<std::string(const std::string&)>& script, PlotFormat f,
                        const std::string& option);
// "set terminal ..." and "set output ..." lines for a picture of width x height pixels.
std::string gnuplot_terminal(PlotFormat f, int width, int height, const std::string& output);
// A gnuplot string expression holding `text` literally: single-quoted pieces (a quote doubled),
// joined by "\n" where the text breaks a line; other control characters become spaces. Never
// double quotes around the text: gnuplot runs `command` substitution inside double-quoted strings
// (a model named M`touch x` would run `touch x`), not inside single-quoted ones. Every string of a
// script (titles, labels, legends, the output path) goes through it; fuzz/fuzz_plot.cpp checks
// that no text reaches gnuplot otherwise.
std::string gnuplot_quote(std::string_view text);
// Whether `bytes` is a whole picture of format f (a PNG's IEND chunk, an SVG's </svg>, a PDF's
// %%EOF at the end): gnuplot can exit 0 with a picture cut short.
bool complete_picture(std::string_view bytes, PlotFormat f);
// A number as gnuplot reads it back exactly (shortest round-trip form).
std::string gnuplot_number(double v);

// --- graphs drawn by Graphviz ---

// The `dot` program of Graphviz on PATH, or "" when there is none.
std::string find_dot();
// Throws InputError(option, "... graphviz (dot) is not installed ...") when dot is not on PATH.
void require_dot(const std::string& option);
// The SVG that Graphviz's dot draws of the DOT text `dot` (topo::write_graph's, for one): dot runs
// in a temporary directory, as gnuplot does, and stops when cancelled. Throws InputError(option)
// when dot is missing, fails (with the first line of its error) or writes an incomplete SVG. The
// text is dot's to trust: attributes such as image or fontpath make it read files, which
// write_graph's DOT never names.
std::string render_dot_svg(std::string_view dot, const std::string& option);

}  // namespace railsim::report
