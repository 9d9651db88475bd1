#include <gtest/gtest.h>
#include <png.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "railsim/core/error.hpp"
#include "railsim/report/csv.hpp"
#include "railsim/report/heatmap.hpp"

using namespace railsim;

namespace {
report::Heatmap small() {
  report::Heatmap h;
  h.rows = 2;
  h.cols = 3;
  h.values = {0, 1, 10, 100, 1000, 0};
  h.title = "bytes per pair";
  h.x_label = "destination";
  h.y_label = "source";
  return h;
}
std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST(Heatmap, LogScaleMapsDecadesEvenly) {
  EXPECT_DOUBLE_EQ(report::log_position(1, 1, 1000), 0.0);
  EXPECT_NEAR(report::log_position(10, 1, 1000), 1.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(report::log_position(1000, 1, 1000), 1.0);
  EXPECT_DOUBLE_EQ(report::log_position(0.1, 1, 1000), 0.0);  // clamped, still coloured
  EXPECT_EQ(report::log_position(0, 1, 1000), -1.0);          // empty
}

TEST(Heatmap, ColoursRunFromLightToDarkAndNeverWhite) {
  auto lum = [](std::array<std::uint8_t, 3> c) { return 0.3 * c[0] + 0.59 * c[1] + 0.11 * c[2]; };
  double prev = 1e9;
  for (int i = 0; i <= 20; ++i) {
    const auto c = report::colour(i / 20.0);
    EXPECT_LT(lum(c), prev) << i;  // monotone: darker means more bytes
    EXPECT_LT(lum(c), 240.0);      // distinct from the white of empty cells
    prev = lum(c);
  }
}

TEST(Heatmap, SiFormatting) {
  EXPECT_EQ(report::si(0, "B"), "0 B");
  EXPECT_EQ(report::si(1500, "B"), "1.5 kB");
  EXPECT_EQ(report::si(1e9, "B"), "1 GB");
  EXPECT_EQ(report::si(123.4e12, "B"), "123 TB");
  EXPECT_EQ(report::si(999.7, "B"), "1 kB");
}

TEST(Heatmap, RenderPutsEachCellsColourWhereItBelongs) {
  const auto h = small();
  report::PlotArea a;
  const auto img = report::render(h, &a);
  ASSERT_GT(a.cell_px, 10);
  auto centre = [&](int r, int c) {
    return img.pixel(a.x0 + c * a.cell_px + a.cell_px / 2, a.y0 + r * a.cell_px + a.cell_px / 2);
  };
  const std::array<std::uint8_t, 3> white{255, 255, 255};
  EXPECT_EQ(centre(0, 0), white);
  EXPECT_EQ(centre(1, 2), white);
  EXPECT_EQ(centre(0, 1), report::colour(0.0));      // 1: the smallest value
  EXPECT_EQ(centre(1, 1), report::colour(1.0));      // 1000: the largest
  EXPECT_EQ(centre(0, 2), report::colour(1.0 / 3));  // 10
}

TEST(Heatmap, WritesAValidPngOfTheRenderedSize) {
  const auto h = small();
  const std::string path = testing::TempDir() + "/railsim_heatmap_test.png";
  report::write_heatmap(h, path, "--heatmap-gpu");
  const auto img = report::render(h);
  FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_read_info(png, info);
  EXPECT_EQ(static_cast<int>(png_get_image_width(png, info)), img.width);
  EXPECT_EQ(static_cast<int>(png_get_image_height(png, info)), img.height);
  EXPECT_EQ(png_get_color_type(png, info), PNG_COLOR_TYPE_RGB);
  png_destroy_read_struct(&png, &info, nullptr);
  std::fclose(f);
  std::remove(path.c_str());
}

TEST(Heatmap, SvgHoldsOneRectPerColourRunAndTheLegend) {
  auto h = small();
  h.title = "a <b> & c";
  const std::string path = testing::TempDir() + "/railsim_heatmap_test.svg";
  report::write_heatmap(h, path, "--heatmap-domain");
  const std::string svg = slurp(path);
  std::remove(path.c_str());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("a &lt;b&gt; &amp; c"), std::string::npos);
  std::size_t cells = 0;
  for (std::size_t p = 0; (p = svg.find("<rect x=", p)) != std::string::npos; ++p) ++cells;
  // 4 coloured cells (all different colours) + the frame + the legend bar.
  EXPECT_EQ(cells, 4u + 2u);
  EXPECT_NE(svg.find("1 kB"), std::string::npos);  // legend label of the largest decade
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(Heatmap, BadInputNamesTheOption) {
  auto h = small();
  try {
    report::write_heatmap(h, "/tmp/x.jpg", "--heatmap-rail");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--heatmap-rail");
    EXPECT_NE(std::string(e.what()).find(".png or .svg"), std::string::npos);
  }
  EXPECT_THROW(report::write_heatmap(h, "/nonexistent-dir/x.png", "--heatmap-gpu"), InputError);
  h.values[0] = -1;
  EXPECT_THROW(report::write_heatmap(h, "/tmp/x.png", "--heatmap-gpu"), InputError);
  h.values.pop_back();
  EXPECT_THROW(report::render(h), InputError);
}

TEST(Csv, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(report::csv_field("tp"), "tp");
  EXPECT_EQ(report::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(report::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_THROW(report::CsvFile("/nonexistent-dir/x.csv", "--csv"), InputError);
}
