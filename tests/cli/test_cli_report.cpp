#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cli_runner.hpp"

using railsim::test::expect_field_error;
using railsim::test::line_count;
using railsim::test::run_cli;
using railsim::test::slurp;

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

}  // namespace

TEST(CliReport, WritesOneSelfContainedHtmlFile) {
  const std::string out =
      testing::TempDir() + "/railsim_cli_report_" + std::to_string(::getpid()) + ".html";
  const auto r = run_cli("report --out " + out + " --gpus 4096 --studies none --no-failures");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const std::string page = slurp(out);
  std::remove(out.c_str());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(page, "<img src=\"data:image/svg+xml;base64,"), 4u);  // 2 clusters x 2 maps
  EXPECT_NE(page.find("4,096 x GH200"), std::string::npos);
  EXPECT_EQ(page.find("id=\"studies\""), std::string::npos);
  EXPECT_NE(page.find("</html>"), std::string::npos);
  // The routing every time assumes is stated: the Ethernet switch's default, ecmp.
  EXPECT_NE(page.find("Every time on this page assumes routing ecmp, seed 0;"), std::string::npos);
}

TEST(CliReport, TakesTheRoutingOfEverySection) {
  const std::string out =
      testing::TempDir() + "/railsim_cli_report_spray_" + std::to_string(::getpid()) + ".html";
  const auto r = run_cli("report --out " + out +
                         " --gpus 4096 --studies batch --trials 4 --routing spray --seed 3");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = slurp(out);
  std::remove(out.c_str());
  EXPECT_NE(page.find("Every time on this page assumes routing spray, seed 3;"), std::string::npos);
  EXPECT_NE(page.find("routing spray, seed 3; rail-only forwarding pipelined via hb_first, 8 "
                      "chunks: <code>railsim sweep --study batch --routing spray"),
            std::string::npos);
}

TEST(CliReport, BadInputIsOneLineNamingTheOption) {
  expect_field_error("report", "--out");
  expect_field_error("report --out /tmp/x.txt", "--out");
  expect_field_error("report --out /nonexistent-dir/x.html", "--out");
  expect_field_error("report --out /tmp/railsim_x.html --studies nope --no-failures", "--studies");
  expect_field_error("report --out /tmp/railsim_x.html --gpus 1000", "--hb-domain");
  expect_field_error("report --out /tmp/railsim_x.html --routing sideways --no-failures",
                     "--routing");
  expect_field_error("report --out /tmp/railsim_x.html --seed -2 --no-failures", "--seed");
  expect_field_error("report --out /tmp/railsim_x.html --studies none", "--out",
                     "PATH=/nonexistent-dir");
}
