#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <regex>
#include <string>

#include "../common/error_of.hpp"
#include "../common/picture_files.hpp"
#include "railsim/core/error.hpp"
#include "railsim/html/report.hpp"
#include "railsim/report/file.hpp"

using namespace railsim;
using railsim::test::error_of;
using railsim::test::slurp_binary;

namespace {

std::string tmp(const std::string& name) {
  return testing::TempDir() + "/railsim_html_" + std::to_string(::getpid()) + "_" + name;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

// A small report: both clusters at 4,096 GPUs, one cheap study, no failures section.
html::ReportOptions small() {
  html::ReportOptions o;
  o.gpus = 4096;
  o.studies = {"cluster-size"};
  o.failures = false;
  return o;
}

const std::string& small_report() {
  static const std::string page = html::build_report(small());
  return page;
}

}  // namespace

TEST(Html, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(html::escape("a<b>&\"c\" 'd'"), "a&lt;b&gt;&amp;&quot;c&quot; &#39;d&#39;");
  EXPECT_EQ(html::escape("plain"), "plain");
}

TEST(Html, Base64OfTheRfcVectors) {
  EXPECT_EQ(html::base64(""), "");
  EXPECT_EQ(html::base64("f"), "Zg==");
  EXPECT_EQ(html::base64("fo"), "Zm8=");
  EXPECT_EQ(html::base64("foo"), "Zm9v");
  EXPECT_EQ(html::base64("foob"), "Zm9vYg==");
  EXPECT_EQ(html::base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(html::base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(html::base64(std::string("\xff\x00\xfe", 3)), "/wD+");
}

TEST(Html, TableShowsHumanColumnsEscapedAndNumbersRight) {
  report::Table t;
  t.columns = {{.name = "name", .label = "name <x>"},
               {.name = "n", .label = "n", .type = report::Type::integer},
               {.name = "hidden", .label = "hidden", .type = report::Type::integer, .human = false},
               {.name = "empty", .label = "empty", .type = report::Type::real}};
  t.add_row({std::string("a & b"), std::int64_t{12345}, std::int64_t{1}, report::Missing{}});
  const std::string h = html::table_html(t);
  EXPECT_NE(h.find("<th>name &lt;x&gt;</th><th>n</th></tr>"), std::string::npos) << h;
  EXPECT_NE(h.find("<td>a &amp; b</td><td class=\"n\">12,345</td></tr>"), std::string::npos) << h;
  EXPECT_EQ(h.find("hidden"), std::string::npos);
  EXPECT_EQ(h.find("empty"), std::string::npos);  // no value in any row
}

TEST(Html, ReportHoldsEverySectionAndOnlyInlinePictures) {
  const std::string& page = small_report();
  for (const char* s :
       {"<h2 id=\"designs\">", "<h2 id=\"bom\">", "<h2 id=\"traffic\">", "<h2 id=\"studies\">",
        "railsim sweep --study cluster-size", "rail_only", "GH200", "H100-SXM", "tp8"})
    EXPECT_NE(page.find(s), std::string::npos) << s;
  EXPECT_EQ(page.find("id=\"failures\""), std::string::npos);
  // 2 clusters x 2 heatmaps + 1 study plot, every one an SVG data: URI.
  EXPECT_EQ(count(page, "<img "), 5u);
  EXPECT_EQ(count(page, "<img src=\"data:image/svg+xml;base64,"), 5u);
  EXPECT_EQ(page.find("http://"), std::string::npos);  // nothing to fetch
  EXPECT_EQ(page.find("https://"), std::string::npos);
  std::string text = page;  // without the pictures' base64, where any letters may occur
  for (std::size_t p = 0; (p = text.find("base64,", p)) != std::string::npos;)
    text.erase(p, text.find('"', p) - p);
  EXPECT_EQ(text.find("nan"), std::string::npos);
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_EQ(html::build_report(small()), page);  // deterministic
}

TEST(Html, BadInputNamesTheOption) {
  auto o = small();
  o.studies = {"nope"};
  EXPECT_EQ(error_of([&] { html::build_report(o); }).rfind("--studies: unknown study 'nope'", 0),
            0u);
  o = small();
  o.gpus = 1000;  // not a multiple of 256
  EXPECT_EQ(error_of([&] { html::build_report(o); }).rfind("--hb-domain: ", 0), 0u);
  o = small();
  o.model = "no-such-model";
  EXPECT_EQ(error_of([&] { html::build_report(o); }).rfind("--model: ", 0), 0u);
}

// Loads the page in headless Chromium (when installed): no console message (the page logs an
// error for any picture that does not decode, and scripts errors would show) and every picture
// decoded, as the page's own check reports it on <body data-images="N of M">.
TEST(Html, ChromiumLoadsThePageWithEveryPictureAndNoConsoleError) {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "chromium is not installed";
  const std::string page = tmp("report.html"), dom = tmp("dom.txt"), log = tmp("log.txt");
  report::write_file_atomic(page, small_report(), "--out");
  const std::string cmd =
      "timeout 120 chromium --headless --disable-gpu --no-sandbox --no-first-run "
      "--disable-extensions --enable-logging=stderr --v=0 --user-data-dir=" +
      tmp("profile") + " --dump-dom 'file://" + page + "' >" + dom + " 2>" + log;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp_binary(log);
  const std::string out = slurp_binary(dom), err = slurp_binary(log);
  EXPECT_NE(out.find("data-images=\"5 of 5\""), std::string::npos) << out.substr(0, 400) << "\n"
                                                                   << err;
  EXPECT_EQ(err.find("CONSOLE"), std::string::npos) << err;
  EXPECT_EQ(err.find("Uncaught"), std::string::npos) << err;
  std::remove(page.c_str());
  std::remove(dom.c_str());
  std::remove(log.c_str());
  std::system(("rm -rf '" + tmp("profile") + "'").c_str());
}
