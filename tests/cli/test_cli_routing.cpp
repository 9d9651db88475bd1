// --routing and --seed as a user gives them to plan, compare, estimate, optimize and sim: one
// default (auto: the switch family's routing, ecmp on the default Ethernet switch, adaptive on
// InfiniBand) everywhere, the modes change the analytic times where flows leave a leaf, and bad
// values are one line naming the option (exit 2).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.hpp"

using railsim::test::run_cli;

namespace {
// An MoE strategy whose all-to-all spans leaves: hashed flows collide on the uplinks.
const std::string kMoe =
    "--gpus 4096 --model MoE-1.2T --batch 1024 --tp 2 --pp 8 --dp 256 --ep 32 --micro-batch 1 "
    "--interleave 1 --recompute selective --sp on --dist-opt on --dp-overlap on";

double iteration_time(const std::string& args) {
  const auto r = run_cli("estimate " + args + " --json");
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  if (r.code != 0) return 0;
  return nlohmann::json::parse(r.out)["iteration_time_s"].get<double>();
}
}  // namespace

TEST(CliRouting, BadRoutingOrSeedIsOneLineExit2) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plan --routing random", "--routing"},
      {"plan --routing ''", "--routing"},
      {"compare --routing ECMP", "--routing"},
      {"estimate --routing sprayed --tp 8 --pp 16 --dp 256", "--routing"},
      {"optimize --routing hash", "--routing"},
      {"sim --routing bogus", "--routing"},
      {"plan --seed -1", "--seed"},
      {"compare --seed 4611686018427387905", "--seed"},
      {"optimize --seed -3", "--seed"},
      {"sim --seed 99999999999999999999999", "--seed"},
      {"plan --seed x", "--seed"},
      {"sim --routing Spray", "--routing"},
      {"sweep --routing ecmp,hash --no-perf", "--routing"},
      {"report --out /tmp/railsim_routing.html --routing hashed --no-failures", "--routing"},
      {"traffic --gpus 64 --batch 64 --routing none", "--routing"},
      {"fail whatif --gpus 1024 --fail nic:0 --routing sprayed", "--routing"},
      {"fail goodput --gpus 1024 --routing ecmp2", "--routing"},
      // A routing the design cannot use: ideal has no scale-out network.
      {"plan --design ideal --routing ecmp", "--routing"},
      {"estimate --design ideal --routing spray --tp 8 --pp 16 --dp 256", "--routing"},
      {"sim --design ideal --routing adaptive", "--routing"},
  };
  railsim::test::expect_one_line_errors(cases);
}

TEST(CliRouting, SameDefaultEverywhereAndStatedInHelp) {
  for (const char* cmd : {"plan", "compare", "estimate", "optimize", "sim", "sweep", "report",
                          "traffic", "fail whatif", "fail goodput"}) {
    const auto r = run_cli(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(r.out.find("--routing"), std::string::npos) << cmd;
    EXPECT_NE(r.out.find("spray"), std::string::npos) << cmd;
    // sweep's --routing is a list (default auto, in its help text); the others show the default.
    EXPECT_NE(r.out.find(std::string(cmd) == "sweep" ? "--routing TEXT" : "--routing TEXT=auto"),
              std::string::npos)
        << cmd << "\n"
        << r.out;
  }
}

TEST(CliRouting, EcmpCostsTheExpectedCollisionsAdaptiveAndSprayDoNot) {
  const double def = iteration_time(kMoe);
  const double ecmp = iteration_time(kMoe + " --routing ecmp");
  const double adaptive = iteration_time(kMoe + " --routing adaptive");
  const double spray = iteration_time(kMoe + " --routing spray");
  EXPECT_EQ(def, ecmp);  // the default Ethernet switch's routing
  EXPECT_GT(ecmp, adaptive);
  EXPECT_EQ(adaptive, spray);
  // On InfiniBand the default is adaptive routing.
  EXPECT_EQ(iteration_time(kMoe + " --switch QM9700"),
            iteration_time(kMoe + " --switch QM9700 --routing adaptive"));
  EXPECT_GT(iteration_time(kMoe + " --switch QM9700 --routing ecmp"),
            iteration_time(kMoe + " --switch QM9700"));
  // The analytic model takes the expectation over hashes: the seed does not change it.
  EXPECT_EQ(iteration_time(kMoe + " --seed 7"), ecmp);
}

// A one-port GPU's connections each take their own ECMP path above the leaf (RoCE queue pairs,
// Meta's 16 flows per GPU pair): under ecmp, 16 connections spread the pipeline's sends over the
// uplinks and cost less than one flow per transfer, never less than the even spread of adaptive
// routing; one connection is the plain flow; under adaptive routing they change nothing.
TEST(CliRouting, ConnectionsOfOnePortGpusSpreadOverTheUplinksUnderEcmp) {
  const std::string base =
      "--gpus 2048 --model Llama-3-70B --batch 512 --tp 8 --pp 8 --interleave 5";
  const std::string llama = base + " --routing ecmp";
  const double one = iteration_time(llama);
  const double hashed_one = iteration_time(llama + " --port-balance hash --connections 1");
  const double sixteen = iteration_time(llama + " --port-balance hash --connections 16");
  const double adaptive = iteration_time(base + " --routing adaptive");
  EXPECT_EQ(hashed_one, one);
  EXPECT_LT(sixteen, 0.99 * one);
  EXPECT_GE(sixteen, adaptive);
  EXPECT_EQ(iteration_time(base + " --routing adaptive --port-balance hash --connections 16"),
            adaptive);
}
