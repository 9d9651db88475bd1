#pragma once
// Heatmaps of a square or rectangular matrix of non-negative values, on a logarithmic colour
// scale with a legend, written as PNG (libpng) or SVG (written here, SVG 1.1).
//
// Zero cells stay white so that sparsity is visible; every non-zero value gets a colour from
// light yellow (smallest) to dark red (largest). The scale spans at most `max_decades` decades
// below the largest value; smaller non-zero values take the lightest colour.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace railsim::report {

struct Heatmap {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> values;  // rows x cols, row-major; row 0 at the top
  std::string title;
  std::string subtitle;  // second line under the title (e.g. what one cell holds)
  std::string x_label, y_label;
  std::string unit = "B";  // legend values are formatted with SI prefixes and this unit
  // Axis ticks are labelled in items (GPUs, domains, rails): cell i covers items
  // [i * items_per_cell, (i + 1) * items_per_cell).
  std::int64_t x_items = 0, y_items = 0;  // 0: same as cols / rows
  std::int64_t items_per_cell = 1;
  // Thin separator lines every `separator_every` cells (e.g. HB-domain boundaries); 0 = none.
  std::int64_t separator_every = 0;
  double max_decades = 6;
};

// Linear colour for t in [0, 1] on the scale (ours: light yellow, orange, red, dark maroon).
std::array<std::uint8_t, 3> colour(double t);

// Position in [0, 1] of value v on the log scale [vmin, vmax]; -1 for v <= 0 (no colour).
double log_position(double v, double vmin, double vmax);

// "1.5 GB", "320 MB", "12 B": three significant figures and an SI prefix (decimal).
std::string si(double v, const std::string& unit);

// Rasterised picture (RGB, 8 bits per channel), for tests and PNG output.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // width x height x 3
  std::array<std::uint8_t, 3> pixel(int x, int y) const {
    const auto i = static_cast<std::size_t>((y * width + x) * 3);
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};
// Where the cells lie in the rendered image (for tests).
struct PlotArea {
  int x0 = 0, y0 = 0;  // top-left pixel of cell (0, 0)
  int cell_px = 1;     // pixels per cell side
};

Image render(const Heatmap& h, PlotArea* area = nullptr);

// Throw InputError(option, ...) when the matrix is malformed or the file cannot be written.
void write_png(const Heatmap& h, const std::string& path, const std::string& option);
void write_svg(const Heatmap& h, const std::string& path, const std::string& option);
// Chooses the format by the file's extension (.png or .svg; anything else is an InputError).
void write_heatmap(const Heatmap& h, const std::string& path, const std::string& option);

}  // namespace railsim::report
