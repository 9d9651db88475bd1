#include "railsim/report/heatmap.hpp"

#include <fmt/format.h>
#include <png.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "font5x7.hpp"
#include "railsim/core/error.hpp"

namespace railsim::report {

std::array<std::uint8_t, 3> colour(double t) {
  // Anchors (ours): light yellow -> orange -> red -> dark maroon; darker means more bytes, and
  // the lightest colour stays distinct from the white of empty cells.
  static constexpr double kAnchor[][3] = {
      {246, 208, 90}, {240, 140, 40}, {200, 38, 38}, {84, 0, 46}};
  t = std::clamp(t, 0.0, 1.0) * 3.0;
  const int i = std::min(2, static_cast<int>(t));
  const double f = t - i;
  std::array<std::uint8_t, 3> c{};
  for (int k = 0; k < 3; ++k)
    c[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(
        std::lround(kAnchor[i][k] + f * (kAnchor[i + 1][k] - kAnchor[i][k])));
  return c;
}

double log_position(double v, double vmin, double vmax) {
  if (!(v > 0)) return -1;
  if (!(vmax > vmin)) return 1;
  return std::clamp((std::log10(v) - std::log10(vmin)) / (std::log10(vmax) - std::log10(vmin)), 0.0,
                    1.0);
}

std::string si(double v, const std::string& unit) {
  static const char* kPrefix[] = {"", "k", "M", "G", "T", "P", "E"};
  int p = 0;
  double x = v;
  while (std::fabs(x) >= 999.5 && p < 6) {
    x /= 1000.0;
    ++p;
  }
  const int digits = std::fabs(x) >= 99.95 ? 0 : std::fabs(x) >= 9.995 ? 1 : 2;
  std::string s = fmt::format("{:.{}f}", x, digits);
  if (s.find('.') != std::string::npos) {  // 1.50 -> 1.5, 2.00 -> 2
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s + " " + kPrefix[p] + unit;
}

namespace {

using Rgb = std::array<std::uint8_t, 3>;
constexpr Rgb kWhite{255, 255, 255}, kBlack{0, 0, 0}, kGrey{120, 120, 120},
    kSeparator{232, 232, 232};

void check(const Heatmap& h, const std::string& option) {
  if (h.rows < 1 || h.cols < 1 || h.values.size() != static_cast<std::size_t>(h.rows * h.cols))
    throw InputError(option, fmt::format("heatmap needs rows x cols values (got {} x {} and {})",
                                         h.rows, h.cols, h.values.size()));
  for (double v : h.values)
    if (!std::isfinite(v) || v < 0)
      throw InputError(option, fmt::format("heatmap values must be finite and >= 0 (got {})", v));
}

struct Scale {
  double vmin = 0, vmax = 0;  // vmax == 0: all cells empty
};
Scale scale_of(const Heatmap& h) {
  Scale s;
  double lo = 0;
  for (double v : h.values) {
    if (v > s.vmax) s.vmax = v;
    if (v > 0 && (lo == 0 || v < lo)) lo = v;
  }
  // At most max_decades below the largest value, and at least one decade, so that a matrix of
  // nearly equal values reads as nearly uniform rather than spread over the whole scale.
  s.vmin = std::min(std::max(lo, s.vmax / std::pow(10.0, h.max_decades)), s.vmax / 10.0);
  return s;
}

// Ticks on an axis of `items` items: a 1-2-5 step giving at most about `intervals` intervals.
std::vector<std::int64_t> ticks(std::int64_t items, std::int64_t intervals) {
  std::vector<std::int64_t> out;
  if (items <= 1) return {0};
  std::int64_t step = 1;
  for (std::int64_t base = 1;; base *= 10) {
    for (std::int64_t m : {1, 2, 5})
      if (items / (m * base) <= intervals) {
        step = m * base;
        goto found;
      }
  }
found:
  for (std::int64_t v = 0; v < items; v += step) out.push_back(v);
  return out;
}

// Legend entries: the largest and the smallest value, and the decades between them (every other
// one when there are many); render() drops a decade label that would touch an end label.
std::vector<double> legend_values(const Scale& s) {
  std::vector<double> out;
  if (s.vmax <= 0) return out;
  out.push_back(s.vmax);
  if (!(s.vmin < s.vmax)) return out;
  out.push_back(s.vmin);
  const int lo = static_cast<int>(std::ceil(std::log10(s.vmin)));
  const int hi = static_cast<int>(std::floor(std::log10(s.vmax)));
  const int step = hi - lo > 7 ? 2 : 1;
  for (int e = lo; e <= hi; e += step) {
    const double v = std::pow(10.0, e);
    if (v > s.vmin * 1.0001 && v < s.vmax / 1.0001) out.push_back(v);
  }
  return out;
}

struct Layout {
  int width = 0, height = 0;
  int px0 = 0, py0 = 0, cell = 1, pw = 0, ph = 0;  // plot
  int bar_x = 0, bar_w = 18;                       // legend colour bar (height = ph)
  int text = 2;                                    // scale of small text (pixels per font pixel)
};

int text_width(const std::string& s, int scale) {
  return static_cast<int>(s.size()) * (detail::kGlyphW + 1) * scale;
}

Layout layout(const Heatmap& h, const std::vector<std::string>& ytick_labels,
              const std::vector<std::string>& legend_labels) {
  Layout L;
  const std::int64_t cells = std::max(h.rows, h.cols);
  L.cell = static_cast<int>(std::clamp<std::int64_t>(768 / cells, 1, 96));
  L.pw = static_cast<int>(h.cols) * L.cell;
  L.ph = static_cast<int>(h.rows) * L.cell;
  const int t = L.text, line = detail::kGlyphH * t;
  int ytw = 0;
  for (const auto& s : ytick_labels) ytw = std::max(ytw, text_width(s, t));
  int lw = 0;
  for (const auto& s : legend_labels) lw = std::max(lw, text_width(s, t));
  lw = std::max(lw, text_width(h.unit == "B" ? "bytes" : h.unit, t));
  L.px0 = 12 + line + 10 + ytw + 8;
  L.py0 = 12 + line + (h.subtitle.empty() ? 0 : line + 6) + 18;
  L.bar_x = L.px0 + L.pw + 24;
  const int title_w = std::max(text_width(h.title, t), text_width(h.subtitle, t));
  L.width = std::max({L.bar_x + L.bar_w + 8 + lw + 12, L.bar_x + text_width("white = 0", t) + 12,
                      12 + title_w + 12});
  L.height = L.py0 + std::max(L.ph, 160) + 8 + line + 10 + line + 12;
  return L;
}

class Canvas {
 public:
  explicit Canvas(int w, int h)
      : img_{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w * h * 3), 255)} {}
  void set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= img_.width || y >= img_.height) return;
    auto* p = &img_.rgb[static_cast<std::size_t>((y * img_.width + x) * 3)];
    p[0] = c[0];
    p[1] = c[1];
    p[2] = c[2];
  }
  void fill(int x, int y, int w, int h, Rgb c) {
    for (int j = y; j < y + h; ++j)
      for (int i = x; i < x + w; ++i) set(i, j, c);
  }
  // Horizontal text with its top-left corner at (x, y).
  void text(int x, int y, const std::string& s, int scale, Rgb c) {
    for (char ch : s) {
      const auto& g = detail::glyph(ch);
      for (int r = 0; r < detail::kGlyphH; ++r)
        for (int k = 0; k < detail::kGlyphW; ++k)
          if (g[static_cast<std::size_t>(r)] & (1 << (detail::kGlyphW - 1 - k)))
            fill(x + k * scale, y + r * scale, scale, scale, c);
      x += (detail::kGlyphW + 1) * scale;
    }
  }
  // Text rotated 90 degrees counter-clockwise (reads bottom to top), bottom-left at (x, y).
  void text_up(int x, int y, const std::string& s, int scale, Rgb c) {
    for (char ch : s) {
      const auto& g = detail::glyph(ch);
      for (int r = 0; r < detail::kGlyphH; ++r)
        for (int k = 0; k < detail::kGlyphW; ++k)
          if (g[static_cast<std::size_t>(r)] & (1 << (detail::kGlyphW - 1 - k)))
            fill(x + r * scale, y - (k + 1) * scale, scale, scale, c);
      y -= (detail::kGlyphW + 1) * scale;
    }
  }
  Image take() { return std::move(img_); }

 private:
  Image img_;
};

struct Prepared {
  Scale scale;
  std::vector<std::int64_t> xt, yt;
  std::vector<std::string> ytl, xtl;
  std::vector<double> legend;
  std::vector<std::string> legend_labels;
  bool centred = false;  // ticks at cell centres (few, large cells: one item per cell)
  Layout L;
};

Prepared prepare(const Heatmap& h) {
  Prepared p;
  p.scale = scale_of(h);
  const std::int64_t xi = h.x_items ? h.x_items : h.cols, yi = h.y_items ? h.y_items : h.rows;
  p.centred = h.items_per_cell <= 1 && std::max(h.rows, h.cols) <= 64;
  p.xt = ticks(xi, p.centred ? 16 : 6);
  p.yt = ticks(yi, p.centred ? 16 : 6);
  for (auto v : p.xt) p.xtl.push_back(std::to_string(v));
  for (auto v : p.yt) p.ytl.push_back(std::to_string(v));
  p.legend = legend_values(p.scale);
  for (double v : p.legend) p.legend_labels.push_back(si(v, h.unit));
  p.L = layout(h, p.ytl, p.legend_labels);
  return p;
}

int tick_px(const Prepared& P, const Heatmap& h, std::int64_t item) {
  const double per = static_cast<double>(std::max<std::int64_t>(1, h.items_per_cell));
  return static_cast<int>(std::lround(static_cast<double>(item) / per * P.L.cell)) +
         (P.centred ? P.L.cell / 2 : 0);
}

// Whether legend label i is drawn: the end labels always, a decade only clear of both ends.
bool legend_shown(const Prepared& P, std::size_t i, int line) {
  if (i < 2) return true;
  auto y = [&](double v) {
    return (1.0 - log_position(v, P.scale.vmin, P.scale.vmax)) * (P.L.ph - 1);
  };
  const double yi = y(P.legend[i]);
  return std::fabs(yi - y(P.scale.vmax)) > line + 3 && std::fabs(yi - y(P.scale.vmin)) > line + 3;
}

// Vertical pixel of value v on the legend bar (top = vmax).
int legend_y(const Layout& L, const Scale& s, double v) {
  const double t = log_position(v, s.vmin, s.vmax);
  return L.py0 + static_cast<int>(std::lround((1.0 - t) * (L.ph - 1)));
}

}  // namespace

Image render(const Heatmap& h, PlotArea* area) {
  check(h, "heatmap");
  const Prepared P = prepare(h);
  const Layout& L = P.L;
  const int t = L.text, line = detail::kGlyphH * t;
  Canvas cv(L.width, L.height);
  cv.text(12, 12, h.title, t, kBlack);
  if (!h.subtitle.empty()) cv.text(12, 12 + line + 6, h.subtitle, t, kGrey);
  // Plot frame, separators (only visible on empty cells), cells.
  cv.fill(L.px0 - 1, L.py0 - 1, L.pw + 2, 1, kGrey);
  cv.fill(L.px0 - 1, L.py0 + L.ph, L.pw + 2, 1, kGrey);
  cv.fill(L.px0 - 1, L.py0 - 1, 1, L.ph + 2, kGrey);
  cv.fill(L.px0 + L.pw, L.py0 - 1, 1, L.ph + 2, kGrey);
  if (h.separator_every > 0 && h.separator_every * L.cell >= 8) {
    for (std::int64_t c = h.separator_every; c < h.cols; c += h.separator_every)
      cv.fill(L.px0 + static_cast<int>(c) * L.cell, L.py0, 1, L.ph, kSeparator);
    for (std::int64_t r = h.separator_every; r < h.rows; r += h.separator_every)
      cv.fill(L.px0, L.py0 + static_cast<int>(r) * L.cell, L.pw, 1, kSeparator);
  }
  for (std::int64_t r = 0; r < h.rows; ++r)
    for (std::int64_t c = 0; c < h.cols; ++c) {
      const double pos = log_position(h.values[static_cast<std::size_t>(r * h.cols + c)],
                                      P.scale.vmin, P.scale.vmax);
      if (pos < 0) continue;
      cv.fill(L.px0 + static_cast<int>(c) * L.cell, L.py0 + static_cast<int>(r) * L.cell, L.cell,
              L.cell, colour(pos));
    }
  // Ticks and labels.
  for (std::size_t i = 0; i < P.xt.size(); ++i) {
    const int x = L.px0 + tick_px(P, h, P.xt[i]);
    cv.fill(x, L.py0 + L.ph + 1, 1, 4, kBlack);
    cv.text(x - text_width(P.xtl[i], t) / 2, L.py0 + L.ph + 7, P.xtl[i], t, kBlack);
  }
  for (std::size_t i = 0; i < P.yt.size(); ++i) {
    const int y = L.py0 + tick_px(P, h, P.yt[i]);
    cv.fill(L.px0 - 5, y, 4, 1, kBlack);
    cv.text(L.px0 - 8 - text_width(P.ytl[i], t), y - line / 2, P.ytl[i], t, kBlack);
  }
  const int plot_h = std::max(L.ph, 160);
  cv.text(L.px0 + L.pw / 2 - text_width(h.x_label, t) / 2, L.py0 + plot_h + 8 + line + 10,
          h.x_label, t, kBlack);
  cv.text_up(12, L.py0 + L.ph / 2 + text_width(h.y_label, t) / 2, h.y_label, t, kBlack);
  // Legend: a colour bar on the log scale with decade labels.
  if (P.scale.vmax > 0) {
    for (int y = 0; y < L.ph; ++y) {
      const double pos = L.ph > 1 ? 1.0 - static_cast<double>(y) / (L.ph - 1) : 1.0;
      cv.fill(L.bar_x, L.py0 + y, L.bar_w, 1, colour(pos));
    }
    cv.fill(L.bar_x - 1, L.py0 - 1, L.bar_w + 2, 1, kGrey);
    cv.fill(L.bar_x - 1, L.py0 + L.ph, L.bar_w + 2, 1, kGrey);
    for (std::size_t i = 0; i < P.legend.size(); ++i) {
      if (!legend_shown(P, i, line)) continue;
      const int y = legend_y(L, P.scale, P.legend[i]);
      cv.fill(L.bar_x + L.bar_w, y, 4, 1, kBlack);
      cv.text(L.bar_x + L.bar_w + 7, y - line / 2, P.legend_labels[i], t, kBlack);
    }
    cv.text(L.bar_x, L.py0 + L.ph + line / 2 + 10, "white = 0", t, kGrey);
  } else {
    cv.text(L.bar_x, L.py0, "no traffic", t, kGrey);
  }
  if (area) *area = {L.px0, L.py0, L.cell};
  return cv.take();
}

void write_png(const Heatmap& h, const std::string& path, const std::string& option) {
  check(h, option);
  const Image img = render(h);
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f)
    throw InputError(option, fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("libpng: out of memory");
  }
  if (setjmp(png_jmpbuf(png))) {  // libpng reports errors by longjmp; nothing below owns memory
    png_destroy_write_struct(&png, &info);
    throw InputError(option, fmt::format("writing PNG '{}' failed", path));
  }
  png_init_io(png, f.get());
  png_set_IHDR(png, info, static_cast<png_uint_32>(img.width), static_cast<png_uint_32>(img.height),
               8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < img.height; ++y)
    png_write_row(png, img.rgb.data() + static_cast<std::size_t>(y) * img.width * 3);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fflush(f.get()) != 0)
    throw InputError(option, fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
}

namespace {
std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
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
      default:
        o += c;
    }
  }
  return o;
}
std::string hex(Rgb c) {
  return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
}
}  // namespace

void write_svg(const Heatmap& h, const std::string& path, const std::string& option) {
  check(h, option);
  const Prepared P = prepare(h);
  const Layout& L = P.L;
  const int t = L.text, line = detail::kGlyphH * t;
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f)
    throw InputError(option, fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  FILE* o = f.get();
  fmt::print(o,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" "
             "height=\"{1}\" viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans Mono, monospace\" "
             "font-size=\"{2}\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
             L.width, L.height, line + 2);
  fmt::print(o, "<text x=\"12\" y=\"{}\">{}</text>\n", 12 + line, xml_escape(h.title));
  if (!h.subtitle.empty())
    fmt::print(o, "<text x=\"12\" y=\"{}\" fill=\"#787878\">{}</text>\n", 12 + 2 * line + 6,
               xml_escape(h.subtitle));
  fmt::print(o,
             "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
             "stroke=\"#787878\"/>\n",
             L.px0 - 0.5, L.py0 - 0.5, L.pw + 1, L.ph + 1);
  // Cells: one rect per run of equal colour along a row (colours quantised to 256 steps).
  fmt::print(o, "<g shape-rendering=\"crispEdges\">\n");
  for (std::int64_t r = 0; r < h.rows; ++r) {
    std::int64_t c = 0;
    while (c < h.cols) {
      const double pos = log_position(h.values[static_cast<std::size_t>(r * h.cols + c)],
                                      P.scale.vmin, P.scale.vmax);
      if (pos < 0) {
        ++c;
        continue;
      }
      const long q = std::lround(pos * 255.0);
      std::int64_t e = c + 1;
      while (e < h.cols) {
        const double pe = log_position(h.values[static_cast<std::size_t>(r * h.cols + e)],
                                       P.scale.vmin, P.scale.vmax);
        if (pe < 0 || std::lround(pe * 255.0) != q) break;
        ++e;
      }
      fmt::print(o, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
                 L.px0 + c * L.cell, L.py0 + r * L.cell, (e - c) * L.cell, L.cell,
                 hex(colour(static_cast<double>(q) / 255.0)));
      c = e;
    }
  }
  fmt::print(o, "</g>\n");
  for (std::size_t i = 0; i < P.xt.size(); ++i) {
    const int x = L.px0 + tick_px(P, h, P.xt[i]);
    fmt::print(o, "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000\"/>\n", x + 0.5,
               L.py0 + L.ph + 1, L.py0 + L.ph + 5);
    fmt::print(o, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x,
               L.py0 + L.ph + 7 + line, P.xtl[i]);
  }
  for (std::size_t i = 0; i < P.yt.size(); ++i) {
    const int y = L.py0 + tick_px(P, h, P.yt[i]);
    fmt::print(o, "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#000\"/>\n",
               L.px0 - 5, L.px0 - 1, y + 0.5);
    fmt::print(o, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", L.px0 - 8,
               y + line / 2, P.ytl[i]);
  }
  const int plot_h = std::max(L.ph, 160);
  fmt::print(o, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", L.px0 + L.pw / 2,
             L.py0 + plot_h + 8 + 2 * line + 10, xml_escape(h.x_label));
  fmt::print(o,
             "<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
             12 + line, L.py0 + L.ph / 2, xml_escape(h.y_label));
  if (P.scale.vmax > 0) {
    fmt::print(o, "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">");
    for (int k = 0; k <= 8; ++k)
      fmt::print(o, "<stop offset=\"{}\" stop-color=\"{}\"/>", k / 8.0, hex(colour(k / 8.0)));
    fmt::print(o, "</linearGradient></defs>\n");
    fmt::print(o,
               "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#scale)\" "
               "stroke=\"#787878\"/>\n",
               L.bar_x, L.py0, L.bar_w, L.ph);
    for (std::size_t i = 0; i < P.legend.size(); ++i) {
      if (!legend_shown(P, i, line)) continue;
      const int y = legend_y(L, P.scale, P.legend[i]);
      fmt::print(o, "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#000\"/>\n",
                 L.bar_x + L.bar_w, L.bar_x + L.bar_w + 4, y + 0.5);
      fmt::print(o, "<text x=\"{}\" y=\"{}\">{}</text>\n", L.bar_x + L.bar_w + 7, y + line / 2,
                 xml_escape(P.legend_labels[i]));
    }
    fmt::print(o, "<text x=\"{}\" y=\"{}\" fill=\"#787878\">white = 0</text>\n", L.bar_x,
               L.py0 + L.ph + line / 2 + 10 + line);
  } else {
    fmt::print(o, "<text x=\"{}\" y=\"{}\" fill=\"#787878\">no traffic</text>\n", L.bar_x,
               L.py0 + line);
  }
  fmt::print(o, "</svg>\n");
  if (std::fflush(o) != 0 || std::ferror(o))
    throw InputError(option, fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
}

void write_heatmap(const Heatmap& h, const std::string& path, const std::string& option) {
  auto ends_with = [&](const char* ext) {
    const std::size_t n = std::strlen(ext);
    if (path.size() < n) return false;
    for (std::size_t i = 0; i < n; ++i)
      if (std::tolower(static_cast<unsigned char>(path[path.size() - n + i])) != ext[i])
        return false;
    return true;
  };
  if (ends_with(".png")) return write_png(h, path, option);
  if (ends_with(".svg")) return write_svg(h, path, option);
  throw InputError(option, fmt::format("'{}' must end in .png or .svg", path));
}

}  // namespace railsim::report
