#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "../common/picture_files.hpp"
#include "../common/pseudo_terminal.hpp"
#include "../common/scratch.hpp"
#include "railsim/core/error.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/plot.hpp"
#include "railsim/report/progress.hpp"

using namespace railsim;

namespace {
report::LineChart chart() {
  report::LineChart c;
  c.title = "iteration time vs K";
  c.x = {.label = "HB domain K", .log_base = 2};
  c.y = {.label = "iteration time (s)"};
  c.series.push_back({.name = "rail_only", .x = {8, 16, 32}, .y = {4.5, 4.0, 3.5}});
  c.series.push_back({.name = "ideal", .x = {8, 16, 32}, .y = {3.3, 3.3, 3.3}});
  return c;
}
}  // namespace

TEST(Plot, FormatFromExtension) {
  EXPECT_EQ(report::plot_format("a/b.png", "--plot"), report::PlotFormat::png);
  EXPECT_EQ(report::plot_format("b.svg", "--plot"), report::PlotFormat::svg);
  EXPECT_EQ(report::plot_format("b.pdf", "--plot"), report::PlotFormat::pdf);
  EXPECT_THROW(report::plot_format("b.jpeg", "--plot"), InputError);
  EXPECT_THROW(report::plot_format("png", "--plot"), InputError);
}

TEST(Plot, LineScriptHoldsEachSeriesPointsAndDropsWhatALogAxisCannotShow) {
  auto c = chart();
  c.series.push_back({.name = "bad", .x = {0, 64, 128, 256}, .y = {1, NAN, 2.25, -1}});
  c.y.log_base = 10;
  const std::string s = report::gnuplot_script(c, report::PlotFormat::svg, "o.svg");
  EXPECT_EQ(test::data_block(s, "$s0"), (std::vector<std::string>{"8 4.5", "16 4", "32 3.5"}));
  EXPECT_EQ(test::data_block(s, "$s1"), (std::vector<std::string>{"8 3.3", "16 3.3", "32 3.3"}));
  // x = 0 (log x), NaN and y = -1 (log y) are dropped; 128 stays.
  EXPECT_EQ(test::data_block(s, "$s2"), (std::vector<std::string>{"128 2.25"}));
  EXPECT_NE(s.find("set logscale x 2"), std::string::npos);
  EXPECT_NE(s.find("set logscale y 10"), std::string::npos);
  EXPECT_NE(s.find("title 'rail_only'"), std::string::npos);
}

TEST(Plot, TextIsQuotedForGnuplot) {
  // Single-quoted pieces (no `command` substitution there), a quote doubled, line breaks joined.
  EXPECT_EQ(report::gnuplot_quote("a \"b\" \\ it's\nd"), "'a \"b\" \\ it''s'.\"\\n\".'d'");
  EXPECT_EQ(report::gnuplot_quote("M`touch x`"), "'M`touch x`'");
  const std::string s =
      report::gnuplot_terminal(report::PlotFormat::png, 300, 200, "/tmp/it's.png");
  EXPECT_NE(s.find("set output '/tmp/it''s.png'"), std::string::npos) << s;
  EXPECT_NE(s.find("pngcairo size 300,200"), std::string::npos);
}

TEST(Plot, ACutShortPictureIsRefused) {
  report::LineChart c;
  c.series.push_back({.name = "a", .x = {1, 2}, .y = {1, 2}});
  for (const auto f : {report::PlotFormat::png, report::PlotFormat::svg, report::PlotFormat::pdf}) {
    const std::string whole = report::render(c, f, "--plot");
    EXPECT_TRUE(report::complete_picture(whole, f)) << report::to_string(f);
    EXPECT_FALSE(report::complete_picture(whole.substr(0, whole.size() / 2), f))
        << report::to_string(f);
    EXPECT_FALSE(report::complete_picture("", f));
  }
}

TEST(Plot, NothingToDrawOrMismatchedSeriesIsAnInputError) {
  report::LineChart c;
  EXPECT_THROW(report::gnuplot_script(c, report::PlotFormat::svg, "o.svg", "--plot"), InputError);
  c.series.push_back({.name = "a", .x = {1, 2}, .y = {1}});
  EXPECT_THROW(report::gnuplot_script(c, report::PlotFormat::svg, "o.svg", "--plot"), InputError);
  report::BarChart b;
  b.categories = {"x", "y"};
  b.series.push_back({.name = "s", .values = {1}});
  EXPECT_THROW(report::gnuplot_script(b, report::PlotFormat::svg, "o.svg", "--plot"), InputError);
  auto big = chart();
  big.width = 50;
  EXPECT_THROW(report::render(big, report::PlotFormat::png, "--plot"), InputError);
}

TEST(Plot, LineChartSvgIsDeterministicXmlWithItsText) {
  const auto c = chart();
  const std::string a = report::render(c, report::PlotFormat::svg, "--plot");
  const std::string b = report::render(c, report::PlotFormat::svg, "--plot");
  EXPECT_EQ(a, b);
  const std::string path = test::scratch_path("plot", "line.svg");
  report::write_plot(c, path, "--plot");
  EXPECT_EQ(test::slurp_binary(path), a);
  const auto text = test::xml_text(path);
  std::remove(path.c_str());
  ASSERT_TRUE(text.has_value());
  for (const char* t : {"iteration time vs K", "HB domain K", "rail_only", "ideal"})
    EXPECT_NE(text->find(t), std::string::npos) << t << " in " << *text;
}

TEST(Plot, PngHasTheRequestedSizeAndPdfIsStable) {
  auto c = chart();
  c.width = 700;
  c.height = 400;
  const auto size = test::png_size(report::render(c, report::PlotFormat::png, "--plot"));
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(size->width, 700u);
  EXPECT_EQ(size->height, 400u);
  const std::string p1 = report::render(c, report::PlotFormat::pdf, "--plot");
  EXPECT_EQ(p1.rfind("%PDF", 0), 0u);
  EXPECT_NE(p1.find("/CreationDate (D:20000101000000"), std::string::npos);
}

TEST(Plot, BarChartScriptAndSvg) {
  report::BarChart b;
  b.title = "network cost";
  b.categories = {"rail_optimized", "rail \"only\"", "ideal"};
  b.y = {.label = "USD"};
  b.series.push_back({.name = "H100", .values = {3e8, 1.9e8, 0}});
  b.series.push_back({.name = "GH200", .values = {2.5e8, 0.7e8, NAN}});
  const std::string s = report::gnuplot_script(b, report::PlotFormat::svg, "o.svg");
  EXPECT_EQ(test::data_block(s, "$bars"),
            (std::vector<std::string>{"\"rail_optimized\" 300000000 250000000",
                                      "\"rail 'only'\" 190000000 70000000", "\"ideal\" 0 NaN"}));
  EXPECT_NE(s.find("using 2:xtic(1)"), std::string::npos);
  EXPECT_NE(s.find("using 3 lc"), std::string::npos);
  const std::string path = test::scratch_path("plot", "bars.svg");
  report::write_plot(b, path, "--plot");
  const auto text = test::xml_text(path);
  std::remove(path.c_str());
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("GH200"), std::string::npos);
  EXPECT_NE(text->find("rail_optimized"), std::string::npos);
}

TEST(Progress, DrawsOnATerminalOnlyAndAfterTheDelay) {
  EXPECT_EQ(report::ProgressBar::line("sweep", 0, 4, 0),
            "sweep [..............................] 0/4 0%");
  EXPECT_EQ(report::ProgressBar::line("sweep", 1, 4, 3),
            "sweep [#######.......................] 1/4 25%, 9 s left");
  EXPECT_EQ(report::ProgressBar::line("sweep", 4, 4, 3),
            "sweep [##############################] 4/4 100%");
  EXPECT_EQ(report::ProgressBar::line("s", 1, 1000, 100),
            "s [..............................] 1/1000 0%, 1665 min left");
  // A file (as a pipe): nothing is ever written, even with no delay.
  EXPECT_EQ(test::written_to_file(test::scratch_path("plot", "progress.txt"),
                                  [](std::FILE* f) {
                                    report::ProgressBar bar(f, "sweep", 3, 0.0);
                                    EXPECT_FALSE(bar.enabled());
                                    for (int i = 0; i < 3; ++i) bar.step();
                                  }),
            "");
  // A terminal (a pseudo-terminal here): the bar, then a cleared line.
  test::PseudoTerminal pt;
  ASSERT_TRUE(pt.ok());
  std::FILE* tty = pt.tty;
  {
    report::ProgressBar bar(tty, "sweep", 2, 0.0);
    EXPECT_TRUE(bar.enabled());
    bar.step();
    bar.step();
    report::ProgressBar quiet(tty, "late", 2, 3600.0);  // within its delay: draws nothing
    quiet.step();
  }
  const std::string got = pt.drain();
  ASSERT_FALSE(got.empty());
  EXPECT_NE(got.find("sweep [###############...............] 1/2 50%"), std::string::npos) << got;
  EXPECT_NE(got.find("\r\x1b[K"), std::string::npos);
  EXPECT_EQ(got.find("late"), std::string::npos);
}

// Point labels are data strings of the series' block (quote, backquote and line breaks
// replaced), drawn beside their points; an axis from 0 and a given tick format reach the script;
// one labelled point at 0 (an empty range to gnuplot, which once crashed on an all-NaN side of
// the labels) still draws.
TEST(Plot, PointLabelsAreDataStringsAndOnePointStillDraws) {
  report::LineChart c;
  c.x = {.label = "cost ($ millions)", .format = "%.1f"};
  c.y = {.label = "% above the fastest", .format = "%.1f%%", .from_zero = true};
  c.series.push_back(
      {.name = "f", .x = {1, 2}, .y = {0.5, 0}, .labels = {"a \"b\" `c`\nd", "plain $1.0M"}});
  const std::string s = report::gnuplot_script(c, report::PlotFormat::svg, "o.svg");
  EXPECT_NE(s.find("1 0.5 \"a 'b' 'c' d\"\n"), std::string::npos) << s;
  EXPECT_NE(s.find("2 0 \"plain $1.0M\"\n"), std::string::npos) << s;
  EXPECT_NE(s.find("with labels left"), std::string::npos);
  EXPECT_NE(s.find("with labels right"), std::string::npos);
  EXPECT_NE(s.find("set yrange [0:*]"), std::string::npos);
  EXPECT_NE(s.find("set format y '%.1f%%'"), std::string::npos);
  c.series.front().labels.pop_back();
  EXPECT_THROW(report::gnuplot_script(c, report::PlotFormat::svg, "o.svg"), InputError);
  report::LineChart one = c;
  one.series = {{.name = "f", .x = {1.75}, .y = {0}, .labels = {"rail_only $1.8M"}}};
  const std::string s1 = report::gnuplot_script(one, report::PlotFormat::svg, "o.svg");
  EXPECT_EQ(s1.find("with labels left"), std::string::npos) << s1;  // no all-NaN side
  if (report::find_gnuplot().empty()) GTEST_SKIP() << "gnuplot is not installed";
  const std::string svg = report::render(one, report::PlotFormat::svg, "--plot");
  EXPECT_NE(svg.find("rail_only $1.8M"), std::string::npos);
  EXPECT_EQ(svg.find("e+0"), std::string::npos);
}

// update(): a loop's owner reports its count and total (which may change); on a file nothing is
// written and nothing is kept (the cost is one test), on a terminal the count is kept and drawn.
TEST(Progress, UpdateSetsTheCountAndDrawsOnATerminalOnly) {
  EXPECT_EQ(test::written_to_file(test::scratch_path("plot", "progress_update.txt"),
                                  [](std::FILE* f) {
                                    report::ProgressBar bar(f, "sim", 1, 0.0);
                                    for (int i = 1; i <= 1000; ++i) bar.update(i, 1000);
                                    EXPECT_EQ(bar.done(), 0);
                                  }),
            "");
  test::PseudoTerminal pt;
  ASSERT_TRUE(pt.ok());
  std::FILE* tty = pt.tty;
  {
    report::ProgressBar bar(tty, "sim", 1, 0.0);
    bar.update(3, 4);
    EXPECT_EQ(bar.done(), 3);
    EXPECT_EQ(bar.total(), 4);
    bar.update(10, 10);
    EXPECT_EQ(bar.done(), bar.total());
  }
  const std::string got = pt.drain();
  EXPECT_NE(got.find("sim [######################........] 3/4 75%"), std::string::npos) << got;
}

// Graphviz draws DOT text as SVG, as the HTML report can use it: the labels come back as text of
// the picture; a missing dot or a broken graph is a one-line error naming the option.
TEST(DotSvg, GraphvizDrawsDotTextAsSvg) {
  if (report::find_dot().empty()) GTEST_SKIP() << "graphviz (dot) is not installed";
  const std::string svg = report::render_dot_svg(
      "graph g { rankdir=LR; \"gpu0\" [shape=box]; \"gpu0\" -- \"leaf0.r0\" [label=\"2 x "
      "400G\"]; }",
      "--graph");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u) << svg.substr(0, 200);
  EXPECT_TRUE(report::complete_picture(svg, report::PlotFormat::svg));
  for (const char* text : {">gpu0</text>", ">leaf0.r0</text>", ">2 x 400G</text>"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  EXPECT_EQ(report::render_dot_svg("graph g { a -- b; }", "--graph"),
            report::render_dot_svg("graph g { a -- b; }", "--graph"));  // deterministic
  try {
    (void)report::render_dot_svg("graph g { a -- ", "--graph");
    ADD_FAILURE() << "a broken graph was drawn";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--graph");
    EXPECT_NE(std::string(e.what()).find("graphviz (dot) failed: "), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(DotSvg, WithoutGraphvizTheErrorSaysWhatToInstall) {
  const std::string old = std::getenv("PATH") ? std::getenv("PATH") : "";
  const std::string empty = test::scratch_path("plot", "no_dot_path");
  std::filesystem::create_directories(empty);
  ::setenv("PATH", empty.c_str(), 1);
  std::string message, required;
  try {
    (void)report::render_dot_svg("graph g { a -- b; }", "--graph");
  } catch (const InputError& e) {
    message = e.what();
  }
  try {
    report::require_dot("--graph");
  } catch (const InputError& e) {
    required = e.what();
  }
  ::setenv("PATH", old.c_str(), 1);
  std::filesystem::remove_all(empty);
  EXPECT_EQ(message.rfind("--graph: ", 0), 0u) << message;
  EXPECT_NE(message.find("graphviz (dot) is not installed"), std::string::npos) << message;
  EXPECT_NE(message.find("apt-get install graphviz"), std::string::npos) << message;
  EXPECT_EQ(required, message);
}
