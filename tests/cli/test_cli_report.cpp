#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
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
  EXPECT_EQ(r.out, "report written to " + out + "\n");
  const std::string page = slurp(out);
  std::remove(out.c_str());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  // 1 cluster x 2 maps, and both designs drawn small where Graphviz is installed (CI has it).
  const bool dot = std::system("command -v dot >/dev/null 2>&1") == 0;
  EXPECT_EQ(count(page, "<img src=\"data:image/svg+xml;base64,"), dot ? 4u : 2u);
  EXPECT_NE(page.find(dot ? "alt=\"rail-only: 64 GPUs on 16-port switches\""
                          : "Graphviz (dot) is not installed"),
            std::string::npos);
  EXPECT_NE(page.find("4,096 x H100-SXM"), std::string::npos);
  EXPECT_EQ(page.find("id=\"studies\""), std::string::npos);
  EXPECT_NE(page.find("</html>"), std::string::npos);
  // The routing every time assumes is stated: the Ethernet switch's default, ecmp.
  EXPECT_NE(
      page.find("Every time on this page assumes routing ecmp (Ethernet&#39;s default), seed 0;"),
      std::string::npos);
  EXPECT_NE(page.find("<b>Inputs</b>: railsim report --gpus 4096 --out "), std::string::npos);
  // So is the stack's context-parallel exchange: megatron-core-2024's ring attention.
  EXPECT_NE(page.find("context parallelism by ring attention (K/V passed around the CP ring "
                      "under the attention)"),
            std::string::npos);
}

TEST(CliReport, TakesTheRoutingOfEverySection) {
  const std::string out =
      testing::TempDir() + "/railsim_cli_report_spray_" + std::to_string(::getpid()) + ".html";
  const auto r = run_cli("report --out " + out +
                         " --gpus 4096 --studies batch --trials 4 --routing spray --seed 3");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = slurp(out);
  std::remove(out.c_str());
  EXPECT_NE(page.find("Every time on this page assumes routing spray;"), std::string::npos);
  // The study states the routing it ran under: the report's.
  EXPECT_NE(page.find("global batch; routing spray, seed 3; rail-only forwarding pipelined via "
                      "hb_first, 8 chunks."),
            std::string::npos);
}

// A GB200 NVL72 cluster with 800G NICs, two models, the days to train: one recommendation per
// model, the cluster's options stated as given, the paper's studies run on this cluster.
TEST(CliReport, DescribesTheUsersOwnCluster) {
  const std::string out =
      testing::TempDir() + "/railsim_cli_report_nvl72_" + std::to_string(::getpid()) + ".html";
  const auto r = run_cli("report --out " + out +
                         " --gpu GB200 --gpus 4608 --hb-domain 72 --nic-gbps 800 --model GPT-1T "
                         "--model GPT-3-175B --train-tokens 2e12 --studies nic-bandwidth "
                         "--no-failures --switch ETH-51.2T-64x800G");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = slurp(out);
  std::remove(out.c_str());
  for (const char* s :
       {"4,608 x GB200 (HB domain K=72, HB 900 GB/s, NIC 800 Gb/s x 1)", "<b>GPT-1T. Rail-",
        "<b>GPT-3-175B. Rail-", "days to train", "2T tokens to train", "switch ETH-51.2T-64x800G",
        "<b>Inputs</b>: railsim report --gpus 4608 --gpu GB200 --hb-domain 72 "
        "--nic-gbps 800 --switch ETH-51.2T-64x800G --model GPT-1T --model GPT-3-175B "
        "--train-tokens 2e12 --out ",
        "GPT-1T on 4,608 x GB200: best iteration time vs NIC bandwidth"})
    EXPECT_NE(page.find(s), std::string::npos) << s;
}

TEST(CliReport, BadInputIsOneLineNamingTheOption) {
  expect_field_error("report", "--out");
  expect_field_error("report --out /tmp/x.txt", "--out");
  expect_field_error("report --out /nonexistent-dir/x.html", "--out");
  expect_field_error("report --out /tmp/railsim_x.html --studies nope --no-failures", "--studies");
  expect_field_error("report --out /tmp/railsim_x.html --gpus 1000 --hb-domain 256", "--hb-domain");
  expect_field_error("report --out /tmp/railsim_x.html --routing sideways --no-failures",
                     "--routing");
  expect_field_error("report --out /tmp/railsim_x.html --seed -2 --no-failures", "--seed");
  expect_field_error("report --out /tmp/railsim_x.html --studies none", "--out",
                     "PATH=/nonexistent-dir");
}
