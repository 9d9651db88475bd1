#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "../common/picture_files.hpp"
#include "../common/scratch.hpp"
#include "railsim/core/error.hpp"
#include "railsim/report/csv.hpp"
#include "railsim/report/file.hpp"
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
// Runs f with PATH pointing at an empty directory (no gnuplot), then restores PATH.
template <typename F>
void without_gnuplot(F f) {
  const std::string old = std::getenv("PATH") ? std::getenv("PATH") : "";
  const std::string empty = test::scratch_path("heatmap", "empty_path");
  std::filesystem::create_directories(empty);
  ::setenv("PATH", empty.c_str(), 1);
  try {
    f();
  } catch (...) {
    ::setenv("PATH", old.c_str(), 1);
    throw;
  }
  ::setenv("PATH", old.c_str(), 1);
  std::filesystem::remove_all(empty);
}
}  // namespace

TEST(Heatmap, ScaleSpansTheValuesWithinMaxDecadesAndAtLeastOne) {
  auto h = small();
  auto s = report::heatmap_scale(h);
  EXPECT_DOUBLE_EQ(s.vmax, 1000);
  EXPECT_DOUBLE_EQ(s.vmin, 1);
  h.max_decades = 2;  // 1 and 10 fall below the scale and take its lightest colour
  s = report::heatmap_scale(h);
  EXPECT_DOUBLE_EQ(s.vmin, 10);
  h.values = {0, 500, 600, 0, 0, 0};  // nearly equal values: one decade, not spread
  s = report::heatmap_scale(h);
  EXPECT_DOUBLE_EQ(s.vmin, 60);
  h.values.assign(6, 0.0);
  EXPECT_EQ(report::heatmap_scale(h).vmax, 0.0);
}

TEST(Heatmap, SiFormatting) {
  EXPECT_EQ(report::si(0, "B"), "0 B");
  EXPECT_EQ(report::si(1500, "B"), "1.5 kB");
  EXPECT_EQ(report::si(1e9, "B"), "1 GB");
  EXPECT_EQ(report::si(123.4e12, "B"), "123 TB");
  EXPECT_EQ(report::si(999.7, "B"), "1 kB");
}

TEST(Heatmap, ScriptDataBlockHoldsExactlyTheMatrix) {
  report::Heatmap h;
  h.rows = 3;
  h.cols = 4;
  h.values = {0, 1.0 / 3, 2e15, 7, 123456789.125, 0, 0, 1e-300, 5, 6, 0.1, 9.999999999999999e99};
  const std::string s = report::gnuplot_script(h, report::PlotFormat::svg, "out.svg", "--x");
  const auto lines = test::data_block(s, "$matrix");
  ASSERT_EQ(lines.size(), 3u) << s;
  std::size_t k = 0;
  for (const std::string& line : lines) {
    std::istringstream in(line);
    std::string word;
    int cols = 0;
    while (in >> word) {
      ASSERT_LT(k, h.values.size());
      EXPECT_EQ(std::strtod(word.c_str(), nullptr), h.values[k]) << word;  // exact round trip
      ++k;
      ++cols;
    }
    EXPECT_EQ(cols, 4) << line;
  }
  EXPECT_EQ(k, h.values.size());
  // The colour scale is the one heatmap_scale computes; zeros are left unpainted.
  const auto sc = report::heatmap_scale(h);
  EXPECT_DOUBLE_EQ(sc.vmin, 9.999999999999999e99 / 1e6);  // six decades below the largest
  EXPECT_NE(s.find("set cbrange [" + report::gnuplot_number(sc.vmin) + ":" +
                   report::gnuplot_number(sc.vmax) + "]"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("set datafile missing \"0\""), std::string::npos);  // zero cells: white
  EXPECT_NE(s.find("set logscale cb 10"), std::string::npos);
}

TEST(Heatmap, SeparatorsFallOnDomainBoundaries) {
  report::Heatmap h;
  h.rows = h.cols = 16;
  h.values.assign(256, 1.0);
  h.items_per_cell = 2;   // 32 GPUs, 2 per cell
  h.separator_every = 4;  // HB domains of 8 GPUs: lines at 8, 16, 24 on each axis
  const std::string s = report::gnuplot_script(h, report::PlotFormat::png, "o.png", "--x");
  std::size_t arrows = 0;
  for (std::size_t p = 0; (p = s.find("set arrow", p)) != std::string::npos; ++p) ++arrows;
  EXPECT_EQ(arrows, 6u);
  EXPECT_NE(s.find("set arrow from 3.5,graph 0"), std::string::npos) << s;  // after cell 3
  EXPECT_NE(s.find("set arrow from graph 0,first 11.5"), std::string::npos) << s;
  EXPECT_NE(s.find("set xrange [-0.5:15.5]"), std::string::npos);
  // Ticks name GPUs at cell boundaries: GPU 10 starts cell 5.
  EXPECT_NE(s.find("set xtics (\"0\" -0.5, \"5\" 2, \"10\" 4.5,"), std::string::npos) << s;
}

// The colour bar names several values as the tables write them: a range within one decade and a
// half still gets at least three labelled ticks (a single "1 GB" tick told nothing).
TEST(Heatmap, ColourBarHasSeveralLabelledTicksInSiUnits) {
  report::Heatmap h = small();
  h.values = {0, 1.5e8, 3e8, 6e8, 1.2e9, 0};  // 1.2e8 .. 1.2e9 after the one-decade floor
  const std::string s = report::gnuplot_script(h, report::PlotFormat::svg, "out.svg", "--plot");
  const auto at = s.find("set cbtics (");
  ASSERT_NE(at, std::string::npos) << s;
  const std::string line = s.substr(at, s.find('\n', at) - at);
  EXPECT_EQ(line, "set cbtics ('200 MB' 200000000, '500 MB' 500000000, '1 GB' 1000000000)");
  h.values = {0, 1, 10, 100, 1000, 0};  // three decades: 1-2-5 steps
  const std::string wide = report::gnuplot_script(h, report::PlotFormat::svg, "o.svg", "--plot");
  EXPECT_NE(wide.find("'1 B' 1, '2 B' 2, '5 B' 5, '10 B' 10"), std::string::npos) << wide;
  EXPECT_NE(wide.find("'1 kB' 1000)"), std::string::npos) << wide;
}

// 72 rails (an NVL72 cluster) get a tick every 10th, not 72 labels run together.
TEST(Heatmap, SeventyTwoItemsGetATickEveryTenth) {
  report::Heatmap h;
  h.rows = h.cols = 72;
  h.values.assign(72 * 72, 1.0);
  const std::string s = report::gnuplot_script(h, report::PlotFormat::svg, "o.svg", "--x");
  EXPECT_NE(s.find("set xtics (\"0\" 0, \"10\" 10, \"20\" 20, \"30\" 30, \"40\" 40, \"50\" 50, "
                   "\"60\" 60, \"70\" 70)\n"),
            std::string::npos)
      << s;
}

TEST(Heatmap, WritesAPngOfTheRequestedSize) {
  auto h = small();
  h.width = 640;
  h.height = 520;
  const std::string path = test::scratch_path("heatmap", "h.png");
  report::write_heatmap(h, path, "--heatmap-gpu");
  const auto size = test::png_size(test::slurp_binary(path));
  std::remove(path.c_str());
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(size->width, 640u);
  EXPECT_EQ(size->height, 520u);
}

TEST(Heatmap, SvgIsXmlWithTheTitleAndTheSameBytesEveryTime) {
  auto h = small();
  h.title = "a <b> & \"c\"";
  h.subtitle = "second line";
  const std::string p1 = test::scratch_path("heatmap", "h1.svg"),
                    p2 = test::scratch_path("heatmap", "h2.svg");
  report::write_heatmap(h, p1, "--heatmap-domain");
  report::write_heatmap(h, p2, "--heatmap-domain");
  const std::string a = test::slurp_binary(p1), b = test::slurp_binary(p2);
  EXPECT_EQ(a, b);  // deterministic: no timestamp, fixed size and fonts
  const auto text = test::xml_text(p1);
  std::remove(p1.c_str());
  std::remove(p2.c_str());
  ASSERT_TRUE(text.has_value()) << "not well-formed XML";
  EXPECT_NE(text->find("a <b> & \"c\""), std::string::npos) << *text;
  EXPECT_NE(text->find("second line"), std::string::npos);
  EXPECT_NE(text->find("destination"), std::string::npos);
  EXPECT_NE(text->find("1 kB"), std::string::npos) << *text;  // colour bar's top decade
}

TEST(Heatmap, AllEmptyMatrixStillDraws) {
  auto h = small();
  h.values.assign(6, 0.0);
  const std::string svg = report::render(h, report::PlotFormat::svg, "--x");
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(Heatmap, BadInputNamesTheOption) {
  auto h = small();
  try {
    report::write_heatmap(h, test::scratch_path("heatmap", "x.jpg"), "--heatmap-rail");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--heatmap-rail");
    EXPECT_NE(std::string(e.what()).find(".png, .svg or .pdf"), std::string::npos);
  }
  EXPECT_THROW(report::write_heatmap(h, "/nonexistent-dir/x.png", "--heatmap-gpu"), InputError);
  h.values[0] = -1;
  EXPECT_THROW(report::write_heatmap(h, test::scratch_path("heatmap", "x.png"), "--heatmap-gpu"),
               InputError);
  h.values.pop_back();
  EXPECT_THROW(report::render(h, report::PlotFormat::png, "--x"), InputError);
}

TEST(Heatmap, MissingGnuplotIsAnInputErrorAndLeavesTheOldFile) {
  const std::string path = test::scratch_path("heatmap", "keep.svg");
  report::write_file_atomic(path, "old", "--x");
  without_gnuplot([&] {
    try {
      report::write_heatmap(small(), path, "--heatmap-domain");
      FAIL();
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "--heatmap-domain");
      EXPECT_NE(std::string(e.what()).find("install gnuplot-nox"), std::string::npos) << e.what();
    }
  });
  EXPECT_EQ(test::slurp_binary(path), "old");
  std::remove(path.c_str());
}

TEST(File, AtomicWriteReplacesTheFileAndLeavesNoTemporary) {
  const std::string dir = test::scratch_path("heatmap", "atomic");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/out.txt";
  report::write_file_atomic(path, "first", "--out");
  report::write_file_atomic(path, std::string(100000, 'x'), "--out");
  EXPECT_EQ(test::slurp_binary(path), std::string(100000, 'x'));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  EXPECT_THROW(report::write_file_atomic(dir, "x", "--out"), InputError);  // a directory
  EXPECT_THROW(report::check_writable(dir + "/no/such/dir/x", "--out"), InputError);
  EXPECT_THROW(report::check_writable("", "--out"), InputError);
  std::filesystem::remove_all(dir);
}

TEST(Csv, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(report::csv_field("tp"), "tp");
  EXPECT_EQ(report::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(report::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_THROW(report::CsvFile("/nonexistent-dir/x.csv", "--csv"), InputError);
}

TEST(Csv, FileAppearsWholeOnCloseAndNotAtAllWithout) {
  const std::string dir = test::scratch_path("heatmap", "csv");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/pairs.csv";
  auto files = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
    return n;
  };
  {
    report::CsvFile f(path, "--csv");
    f.line("a,b");
    EXPECT_FALSE(std::filesystem::exists(path));  // not under its name before close()
  }  // destroyed without close(), as when an error interrupts the writing
  EXPECT_EQ(files(), 0);
  report::CsvFile f(path, "--csv");
  f.line("a,b");
  f.line("1,2");
  f.close();
  EXPECT_EQ(test::slurp_binary(path), "a,b\n1,2\n");
  EXPECT_EQ(files(), 1);
  std::filesystem::remove_all(dir);
}
