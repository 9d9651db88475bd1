#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "../common/picture_files.hpp"
#include "cli_runner.hpp"

using railsim::test::expect_field_error;
using railsim::test::line_count;
using railsim::test::read_csv;
using railsim::test::run_cli;
using Json = nlohmann::json;

namespace {

Json rows_of(const std::string& args) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  return Json::parse(r.out);
}

}  // namespace

// Every row of a 2 x 3 sweep holds exactly what `compare --json` says of that point and design.
TEST(CliSweep, RowsEqualCompareRunPointByPoint) {
  const Json rows = rows_of("sweep --gpus 1024,2048 --batch 1024,2048,4096 --json")["rows"];
  ASSERT_EQ(rows.size(), 18u);
  std::size_t i = 0;
  for (int gpus : {1024, 2048}) {
    for (int batch : {1024, 2048, 4096}) {
      const Json designs = rows_of("compare --gpus " + std::to_string(gpus) + " --batch " +
                                   std::to_string(batch) + " --json")["designs"];
      ASSERT_EQ(designs.size(), 3u);
      for (const Json& d : designs) {
        const Json& row = rows[i++];
        EXPECT_EQ(row["gpus"], gpus);
        EXPECT_EQ(row["batch"], batch);
        EXPECT_EQ(row["seq"], 2048);
        EXPECT_EQ(row["gpu"], "H100-SXM");
        for (const char* key :
             {"design", "switch", "catalog", "tiers", "switches", "cost_usd", "power_w",
              "cost_saving", "power_saving", "best_iteration_time_s", "vs_rail_optimized_pct",
              "best_plan_mfu", "best_plan", "best_plan_knobs"})
          EXPECT_EQ(row[key], d[key]) << key << " at " << gpus << " GPUs, batch " << batch;
        EXPECT_EQ(row["reason"], d["no_plan_reason"]);
        // The sweep's hb_domain is the cluster's K; compare's ideal row has one domain of N.
        EXPECT_EQ(row["hb_domain"], 8);
        if (d["design"] != "ideal") {
          EXPECT_EQ(row["hb_domain"], d["hb_domain"]);
        }
      }
    }
  }
}

TEST(CliSweep, SameBytesForOneAndTwoThreads) {
  const std::string args =
      "sweep --gpus 512..2048x2 --model GPT-1T,MoE-1.2T --hb-domain 8,16 --csv --threads ";
  const auto one = run_cli(args + "1");
  const auto two = run_cli(args + "2");
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(line_count(one.out), 1 + 3 * 2 * 2 * 3);
}

// The CSV read back has the header's field count on every row and the JSON's values.
TEST(CliSweep, CsvReadsBackAsTheJson) {
  const std::string args = "sweep --gpus 1001,8192 --nic-gbps 400,800 --batch 4097 ";
  const auto csv = run_cli(args + "--csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  const Json rows = rows_of(args + "--json")["rows"];
  const auto records = read_csv(csv.out);
  ASSERT_EQ(records.size(), rows.size() + 1);
  const auto& header = records.front();
  for (std::size_t r = 1; r < records.size(); ++r) {
    ASSERT_EQ(records[r].size(), header.size()) << "row " << r;
    const Json& obj = rows[r - 1];
    ASSERT_EQ(obj.size(), header.size());
    for (std::size_t c = 0; c < header.size(); ++c) {
      const std::string& field = records[r][c];
      const Json& v = obj.at(header[c]);
      if (v.is_null())
        EXPECT_EQ(field, "") << header[c];
      else if (v.is_string())
        EXPECT_EQ(field, v.get<std::string>()) << header[c];
      else if (v.is_boolean())
        EXPECT_EQ(field, v.get<bool>() ? "true" : "false") << header[c];
      else
        EXPECT_EQ(std::strtod(field.c_str(), nullptr), v.get<double>()) << header[c];
    }
  }
  // The invalid point (1001 GPUs) and the batch no dp divides both say why.
  EXPECT_NE(csv.out.find("--hb-domain: 1,001 GPUs"), std::string::npos);
  EXPECT_NE(csv.out.find("no valid strategy"), std::string::npos);
}

// --routing is an axis like the others: one row per routing and design, each stating it; auto
// resolves to the switch's default.
TEST(CliSweep, RoutingIsASweptAxis) {
  const auto r =
      run_cli("sweep --gpus 1024 --batch 1024 --routing auto,spray --switch QM9700 --csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(line_count(r.out), 1 + 2 * 3);
  EXPECT_NE(r.out.find(",adaptive,0,pipelined,hb_first,8,spray,1,rail_only,"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(",spray,0,pipelined,hb_first,8,spray,1,rail_only,"), std::string::npos)
      << r.out;
}

TEST(CliSweep, HumanTableShowsTheInputsThatVary) {
  const auto r = run_cli("sweep --gpus 1024,2048 --no-perf");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(line_count(r.out), 2 + 6);  // the routing, the header, 6 rows
  EXPECT_EQ(r.out.rfind("routing ecmp, seed 0; rail-only forwarding pipelined via hb_first, 8 "
                        "chunks\n",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("GPUs"), std::string::npos);
  EXPECT_EQ(r.out.find("catalog"), std::string::npos);
  EXPECT_EQ(r.out.find("best iteration time"), std::string::npos);
}

TEST(CliSweep, BadInputIsOneLineNamingTheOption) {
  expect_field_error("sweep --gpus 800:200:200", "--gpus");
  expect_field_error("sweep --gpus 8,,16", "--gpus");
  expect_field_error("sweep --hb-domain 8,7.5", "--hb-domain");
  expect_field_error("sweep --batch 1024..8192x1", "--batch");
  expect_field_error("sweep --seq 1:10:0", "--seq");
  expect_field_error("sweep --model GPT-1T,no-such-model", "--model");
  expect_field_error("sweep --gpus 1024,2048 --batch 1,2,3 --zip", "--batch");
  expect_field_error("sweep --gpus 1:100:1 --batch 1:200:1 --no-perf", "--max-points");
  expect_field_error("sweep --gpus 1:20:1 --max-points 10", "--gpus");
  expect_field_error("sweep --no-perf --max-points 100000000", "--max-points");
  expect_field_error("sweep --gpus 1001,1003 --no-perf", "--hb-domain");  // every point invalid
  expect_field_error("sweep --json --csv", "--csv");
  expect_field_error("sweep --study hb_domain", "--study");
  expect_field_error("sweep --study hb-domain --no-perf --plot /tmp/x.svg", "--no-perf");
  expect_field_error("sweep --gpus 1024 --no-perf --plot /tmp/x.svg", "--plot");
  expect_field_error("sweep --gpus 1024 --no-perf --plot-x gpus", "--plot-x");
  expect_field_error("sweep --no-perf --plot /tmp/x.svg --plot-x gpus --plot-y design", "--plot-y");
  expect_field_error("sweep --no-perf --plot /tmp/x.gif --plot-x gpus --plot-y cost_usd", "--plot");
  expect_field_error(
      "sweep --no-perf --plot /nonexistent-dir/x.svg --plot-x gpus --plot-y cost_usd", "--plot");
  expect_field_error("sweep --no-perf --plot /tmp/x.svg --plot-x gpus --plot-y cost_usd", "--plot",
                     "PATH=/nonexistent-dir");
  expect_field_error("sweep --no-perf --forwarding store", "--forwarding");
  expect_field_error("sweep --no-perf --alltoall 0", "--alltoall");
  expect_field_error("sweep --no-perf --alltoall 1GB --forwarding sideways", "--forwarding");
  expect_field_error("sweep --no-perf --split blocks", "--split");
  expect_field_error("sweep --no-perf --routing ecmp,sideways", "--routing");
  expect_field_error("sweep --gpus 1024 --batch 1024 --seed -1", "--seed");
  expect_field_error("sweep --gpus 1024 --batch 1024 --chunks 0", "--chunks");
  expect_field_error("sweep --no-perf --gpus 0", "--gpus");  // not the default of 32,768
  expect_field_error("sweep --perf --no-perf", "--perf");
}

// A study with options of the user's: they replace the study's, and --plot draws its chart.
TEST(CliSweep, StudyWithOverridesPrintsItsRowsAndWritesItsPlot) {
  const std::string svg =
      testing::TempDir() + "/railsim_cli_sweep_" + std::to_string(::getpid()) + "_cluster.svg";
  const auto r = run_cli(
      "sweep --study cluster-size --gpus 1024,4096 --catalog paper-ratio --csv "
      "--plot " +
      svg);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto records = read_csv(r.out);
  ASSERT_EQ(records.size(), 1u + 2 * 2 * 3);  // GH200 and H100 x 2 sizes x 3 designs
  EXPECT_EQ(records[1][0], "GH200");
  EXPECT_EQ(records[1][1], "1024");
  EXPECT_EQ(records[1][7], "paper-ratio");
  const auto text = railsim::test::xml_text(svg);
  ASSERT_TRUE(text.has_value());
  for (const char* name : {"rail_only, GH200", "rail_optimized, H100-SXM", "cost ($M)"})
    EXPECT_NE(text->find(name), std::string::npos) << name << " in " << *text;
  EXPECT_EQ(text->find("ideal"), std::string::npos);  // the study leaves ideal's cost out
  // Millions of dollars on the axis, not 1e+08 in dollars.
  EXPECT_EQ(text->find("e+0"), std::string::npos) << *text;
  std::remove(svg.c_str());
}

// A plain sweep plots any option against any numeric column: one line per design (and per other
// input that varies), the option given with or without its dashes.
TEST(CliSweep, PlainSweepPlotsTheChosenAxes) {
  const std::string svg =
      testing::TempDir() + "/railsim_cli_sweep_" + std::to_string(::getpid()) + "_plain.svg";
  for (const char* x : {"hb-domain", "--plot-x=--hb-domain"}) {
    const std::string arg = std::string(x).rfind("--", 0) == 0 ? x : std::string("--plot-x ") + x;
    const auto r = run_cli("sweep --gpus 4096 --hb-domain 8,16,32 --no-perf --csv --plot " + svg +
                           " " + arg + " --plot-y power_w");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_csv(r.out).size(), 1u + 3 * 3);
    const auto text = railsim::test::xml_text(svg);
    ASSERT_TRUE(text.has_value());
    for (const char* t : {"power (MW)", "HB domain", "rail_only", "rail_optimized", "ideal"})
      EXPECT_NE(text->find(t), std::string::npos) << t << " in " << *text;
    std::remove(svg.c_str());
  }
}

// A cost-only study searches no plan (no plan columns); --perf adds the search back, with the
// same cost columns.
TEST(CliSweep, PerfAndNoPerfDecideThePlanColumns) {
  const Json cost_only =
      rows_of("sweep --study cluster-size --gpu H100-SXM --gpus 1024,2048 --json")["rows"];
  const Json with_plans =
      rows_of("sweep --study cluster-size --gpu H100-SXM --gpus 1024,2048 --perf --json")["rows"];
  ASSERT_EQ(cost_only.size(), 6u);
  ASSERT_EQ(with_plans.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_FALSE(cost_only[i].contains("best_iteration_time_s"));
    ASSERT_TRUE(with_plans[i].contains("best_iteration_time_s"));
    EXPECT_GT(with_plans[i]["best_iteration_time_s"].get<double>(), 0);
    EXPECT_EQ(cost_only[i]["cost_usd"], with_plans[i]["cost_usd"]);
  }
  // A timing study with --no-perf has no timing columns either.
  const Json batch =
      rows_of("sweep --study batch --gpu H100-SXM --batch 512 --no-perf --json")["rows"];
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_FALSE(batch[0].contains("best_plan"));
}

// Under an MPI launcher, ranks other than 0 print nothing, not even the errors every rank meets
// before the sweep starts (the environment says the rank; no MPI starts for a parse error).
TEST(CliSweep, RanksOtherThanZeroArePrintingNothing) {
  for (const char* env :
       {"OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2", "PMIX_RANK=3", "PMI_RANK=1 PMI_SIZE=2"}) {
    const auto bad = run_cli("sweep --no-such-option", env);
    EXPECT_EQ(bad.code, 2) << env;
    EXPECT_TRUE(bad.err.empty()) << env << ": " << bad.err;
    EXPECT_TRUE(bad.out.empty()) << env;
    const auto help = run_cli("sweep --help", env);
    EXPECT_EQ(help.code, 0) << env;
    EXPECT_TRUE(help.out.empty()) << env;
  }
  // Rank 0 prints the one line; other commands are not affected.
  const auto root =
      run_cli("sweep --no-such-option", "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2");
  EXPECT_EQ(root.code, 2);
  EXPECT_EQ(line_count(root.err), 1) << root.err;
  EXPECT_EQ(run_cli("plan --no-such-option", "PMIX_RANK=1").err.rfind("railsim: error: ", 0), 0u);
}
