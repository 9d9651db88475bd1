#include <fmt/format.h>
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
#include "railsim/perf/validation.hpp"
#include "railsim/report/file.hpp"
#include "railsim/report/plot.hpp"
#include "railsim/sweep/sweep.hpp"

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

// A small report: 4,096 H100 (K=8), one cheap study, no failures section.
html::ReportOptions small() {
  html::ReportOptions o;
  o.cluster = spec::ClusterOptions{};
  o.cluster->gpus = 4096;
  o.studies = {"cluster-size"};
  o.failures = false;
  return o;
}

const std::string& small_report() {
  static const std::string page = html::build_report(small());
  return page;
}

// The two designs drawn small, where Graphviz is installed (CI installs it); without it the
// section says how to get them.
std::size_t fabric_pictures() {
  return report::find_dot().empty() ? 0 : 2;
}

// The page without its pictures' base64, where any letters may occur.
std::string text_of(std::string page) {
  for (std::size_t p = 0; (p = page.find("base64,", p)) != std::string::npos;)
    page.erase(p, page.find('"', p) - p);
  return page;
}

// One sweep point of `gpus` GPUs of `gpu` (K = hb_domain) for GPT-1T: its three designs and plans.
sweep::PointResult point(const std::string& gpu, std::int64_t gpus, std::int64_t hb_domain) {
  sweep::SweepOptions so;
  so.axes.gpu = {gpu};
  so.axes.gpus = {gpus};
  so.axes.hb_domain = {hb_domain};
  sweep::SweepResult r = sweep::run_sweep(so);
  return std::move(r.points.front());
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
       {"<h2 id=\"summary\">", "<h2 id=\"bom\">", "<h2 id=\"traffic\">", "<h2 id=\"studies\">",
        "4,096 x H100-SXM", "rail-only", "tp8", "<b>Version</b>: railsim ",
        "<b>Routing</b>: routing", "<b>Catalog</b>: ib-ndr-thirdparty-2024",
        "Every time on this page assumes routing ecmp", "<h2 id=\"fabric\">",
        "64 H100-SXM GPUs in 8 HB domains of 8"})
    EXPECT_NE(page.find(s), std::string::npos) << s;
  EXPECT_EQ(page.find("id=\"failures\""), std::string::npos);
  // 2 heatmaps + 1 study plot (+ both designs drawn by Graphviz), every one an SVG data: URI.
  EXPECT_EQ(count(page, "<img "), 3u + fabric_pictures());
  EXPECT_EQ(count(page, "<img src=\"data:image/svg+xml;base64,"), 3u + fabric_pictures());
  EXPECT_EQ(page.find("http://"), std::string::npos);  // nothing to fetch
  EXPECT_EQ(page.find("https://"), std::string::npos);
  const std::string text = text_of(page);
  EXPECT_EQ(text.find("nan"), std::string::npos);
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  // Ideal is a reference, never priced: no $0 and no 100% saving anywhere.
  EXPECT_EQ(text.find(">$0<"), std::string::npos);
  EXPECT_EQ(text.find("100.0%"), std::string::npos);
  EXPECT_NE(text.find("ideal (reference: one HB domain over every GPU)"), std::string::npos);
  // Plans in words, not knob codes ("mb1 v8 none sp dopt ovl").
  EXPECT_EQ(text.find(" dopt"), std::string::npos);
  EXPECT_NE(text.find("distributed optimizer"), std::string::npos);
  EXPECT_EQ(html::build_report(small()), page);  // deterministic
}

// The recommendation follows the figures: rail-only when it is as fast (within 1%) and cheaper,
// rail-optimized when it is slower, costs more or has no plan.
TEST(Html, RecommendationFollowsTheTimesAndTheCosts) {
  const sweep::PointResult base = point("H100-SXM", 16384, 8);  // rail-only: 3 tiers to 2
  ASSERT_EQ(base.designs.size(), 3u);
  ASSERT_TRUE(base.plans[0].best && base.plans[1].best);
  const double t_ro = base.plans[0].best->time.iteration_time_s;
  sweep::PointResult p = base;
  p.plans[1].best->time.iteration_time_s = t_ro * 1.005;  // 0.5% slower: the same speed
  html::Recommendation r = html::recommend(p);
  ASSERT_TRUE(r.design.has_value());
  EXPECT_EQ(*r.design, spec::DesignKind::rail_only);
  EXPECT_EQ(r.headline.rfind("Rail-only: ", 0), 0u) << r.headline;
  EXPECT_NE(r.headline.find("the same speed within 1%"), std::string::npos) << r.headline;
  EXPECT_NE(r.reason.find("(+0.50%)"), std::string::npos) << r.reason;
  p.plans[1].best->time.iteration_time_s = t_ro * 1.05;  // 5% slower
  r = html::recommend(p);
  EXPECT_EQ(*r.design, spec::DesignKind::rail_optimized);
  EXPECT_EQ(r.headline, "Rail-optimized: rail-only is 5.0% slower");
  p.plans[1].best->time.iteration_time_s = t_ro * 0.9;  // faster
  r = html::recommend(p);
  EXPECT_EQ(*r.design, spec::DesignKind::rail_only);
  EXPECT_NE(r.headline.find("10.0% faster"), std::string::npos) << r.headline;
  p = base;
  p.designs[1].cost = p.designs[0].cost;  // as fast, not cheaper
  p.designs[1].cost.usd.switches *= 2;
  p.plans[1].best->time.iteration_time_s = t_ro;
  r = html::recommend(p);
  EXPECT_EQ(*r.design, spec::DesignKind::rail_optimized);
  EXPECT_EQ(r.headline, "Rail-optimized: as fast, and rail-only costs more on this cluster");
  p = base;
  p.designs[1].cost = p.designs[0].cost;  // as fast, the same price
  p.plans[1].best->time.iteration_time_s = t_ro;
  EXPECT_EQ(html::recommend(p).headline, "Rail-optimized: rail-only saves nothing on this cluster");
  p = base;
  p.plans[1].best.reset();
  p.plans[1].no_plan_reason = "no feasible strategy: needs 99 GiB";
  r = html::recommend(p);
  EXPECT_EQ(*r.design, spec::DesignKind::rail_optimized);
  EXPECT_NE(r.reason.find("needs 99 GiB"), std::string::npos) << r.reason;
  p.plans[0].best.reset();
  p.plans[0].no_plan_reason = "no valid strategy";
  r = html::recommend(p);
  EXPECT_FALSE(r.design.has_value());
}

// With no cluster option the report covers the paper's two clusters, 32,768 GPUs each.
TEST(Html, WithoutAClusterTheReportCoversThePapersTwo) {
  html::ReportOptions o;
  o.studies = {};
  o.failures = false;
  const std::string page = html::build_report(o);
  EXPECT_NE(page.find("32,768 x GH200 (HB domain K=256"), std::string::npos);
  EXPECT_NE(page.find("32,768 x H100-SXM (HB domain K=8"), std::string::npos);
  EXPECT_EQ(count(page, "<div class=\"verdict"), 2u);
  EXPECT_EQ(count(page, "<img "), 4u + fabric_pictures());  // 2 clusters x 2 heatmaps
}

// Several models: a recommendation and a training table each; goodput as a table and a chart,
// with the days to train the tokens at each design's best plan.
TEST(Html, SeveralModelsAndTheGoodputTableAndChart) {
  html::ReportOptions o = small();
  o.models = {"GPT-1T", "GPT-3-175B"};
  o.studies = {};
  o.failures = true;
  o.failure_trials = 8;
  o.train_tokens = 1e12;
  const std::string page = html::build_report(o);
  EXPECT_EQ(count(page, "<div class=\"verdict"), 2u);
  EXPECT_NE(page.find("<b>GPT-3-175B. Rail-"), std::string::npos);
  EXPECT_NE(page.find("<th>days to train</th>"), std::string::npos);
  EXPECT_NE(page.find("<th>goodput (ETTR)</th>"), std::string::npos);
  EXPECT_NE(page.find("where the GPU-hours of a 90-day run go"), std::string::npos);
  EXPECT_EQ(count(page, "<img "), 3u + fabric_pictures());    // 2 heatmaps + the goodput chart
  EXPECT_EQ(text_of(page).find("<pre>"), std::string::npos);  // no pasted text block
}

// Each model's times carry the error band estimate and plan print for them: the band of the
// cluster's GPU and the stack, for the model's kind and the run's precision.
TEST(Html, EachModelsTimesCarryTheirErrorBand) {
  html::ReportOptions o = small();
  o.models = {"GPT-3-175B", "Mixtral-8x7B"};
  o.studies = {};
  o.dtype = spec::Dtype::fp8;
  const std::string page = html::build_report(o);
  EXPECT_EQ(count(page, "<p class=\"band\">Error band of each time: +-"), 2u);
  for (const bool moe : {false, true}) {
    const perf::ErrorBand b = perf::error_band("H100-SXM", "megatron-core-2024", {moe, true});
    EXPECT_NE(page.find(fmt::format("Error band of each time: +-{:.1f}% ({};", 100 * b.fraction,
                                    html::escape(b.basis))),
              std::string::npos)
        << b.basis;
    EXPECT_NE(b.basis.find(moe ? "mixture-of-experts models in FP8" : "dense models in FP8"),
              std::string::npos);
  }
}

// 18,432 GB200 in NVL72 racks with 800G NICs: rail-only is 36.1% cheaper and, under ECMP, faster
// (its rails need 2 tiers against rail-optimized's 3); under adaptive routing it is 3.2% slower.
// The recommendation says that the routing decides it.
TEST(Html, RecommendationSaysWhenTheRoutingDecidesIt) {
  html::ReportOptions o;
  o.cluster = spec::ClusterOptions{};
  o.cluster->gpu = "GB200";
  o.cluster->gpus = 18432;
  o.cluster->hb_domain = 72;
  o.cluster->nic_gbps = 800;
  o.studies = {};
  o.failures = false;
  const std::string page = html::build_report(o);
  EXPECT_NE(page.find("<b>Note</b>: the routing decides the verdict: against rail_optimized, "
                      "rail_only is faster here"),
            std::string::npos);
  EXPECT_NE(page.find("and slower under --routing adaptive"), std::string::npos);
}

TEST(Html, BadInputNamesTheOption) {
  auto o = small();
  o.studies = {"nope"};
  EXPECT_EQ(error_of([&] { html::build_report(o); }).rfind("--studies: unknown study 'nope'", 0),
            0u);
  o = small();
  o.cluster->gpus = 1000;
  o.cluster->hb_domain = 256;  // 1000 is not a multiple of 256
  EXPECT_EQ(error_of([&] { html::build_report(o); }).rfind("--hb-domain: ", 0), 0u);
  o = small();
  o.models = {"no-such-model"};
  EXPECT_EQ(error_of([&] { html::build_report(o); }).rfind("--model: ", 0), 0u);
  o.models = {};
  EXPECT_EQ(error_of([&] { html::build_report(o); }).rfind("--model: ", 0), 0u);
  o = small();
  o.train_tokens = -1;
  EXPECT_EQ(error_of([&] { html::build_report(o); }).rfind("--train-tokens: ", 0), 0u);
  o = small();
  o.network.sw = "no-such-switch";
  EXPECT_EQ(error_of([&] { html::build_report(o); }).rfind("--switch: ", 0), 0u);
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
  const std::string images = std::to_string(3 + fabric_pictures());
  EXPECT_NE(out.find("data-images=\"" + images + " of " + images + "\""), std::string::npos)
      << out.substr(0, 400) << "\n"
      << err;
  EXPECT_EQ(err.find("CONSOLE"), std::string::npos) << err;
  EXPECT_EQ(err.find("Uncaught"), std::string::npos) << err;
  std::remove(page.c_str());
  std::remove(dom.c_str());
  std::remove(log.c_str());
  std::system(("rm -rf '" + tmp("profile") + "'").c_str());
}
