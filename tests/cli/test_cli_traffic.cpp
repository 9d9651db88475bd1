#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../common/picture_files.hpp"
#include "cli_runner.hpp"

using railsim::test::line_count;
using railsim::test::run_cli;
using railsim::test::slurp;

namespace {
std::string tmp(const std::string& name) {
  return testing::TempDir() + "/railsim_cli_traffic_" + std::to_string(::getpid()) + "_" + name;
}
void expect_traffic_error(const std::string& args, const std::string& field) {
  const auto r = run_cli("traffic " + args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  EXPECT_EQ(line_count(r.err), 1) << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("railsim: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(field), std::string::npos) << args << " -> " << r.err;
}
}  // namespace

TEST(CliTraffic, JsonHasTheLocalitySplitAndThePairFraction) {
  const auto r = run_cli("traffic --gpus 1024 --gpu H100-SXM --design rail_only --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& loc = j.at("bytes_by_locality");
  const double total = j.at("total_bytes").get<double>();
  EXPECT_GT(total, 0);
  EXPECT_EQ(loc.at("cross_rail").get<double>(), 0.0);  // the best dense plan stays on rails
  EXPECT_GT(loc.at("same_rail").get<double>(), 0.0);
  EXPECT_NEAR(loc.at("same_domain").get<double>() + loc.at("same_rail").get<double>() +
                  loc.at("cross_rail").get<double>(),
              total, 1e-9 * total);
  double by_par = 0;
  for (const char* p : {"tp", "sp", "pp", "dp", "ep"})
    by_par += j.at("bytes_by_parallelism").at(p).get<double>();
  EXPECT_NEAR(by_par, total, 1e-9 * total);
  const double pairs = j.at("pairs_with_traffic").get<double>();
  EXPECT_DOUBLE_EQ(j.at("ordered_pairs").get<double>(), 1024.0 * 1023.0);
  EXPECT_DOUBLE_EQ(j.at("pair_fraction_with_traffic").get<double>(), pairs / (1024.0 * 1023.0));
  EXPECT_EQ(j.at("strategy_source").get<std::string>().rfind("best plan", 0), 0u);
  EXPECT_EQ(j.at("strategy").at("placement").get<std::string>(), "rail_aligned");
}

// The busiest NIC's bytes over the iteration at its line rate: GPT-1T tp 8 pp 16 on 4,096 H100,
// about 50 GB each way in a 32.6 s iteration at 400 Gb/s, some 3% (a user worked the same
// figure out by hand for another run).
TEST(CliTraffic, BusiestNicUtilisationOverTheIteration) {
  const std::string args = "traffic --model GPT-1T --gpus 4096 --tp 8 --pp 16";
  const auto r = run_cli(args + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& nic = j.at("busiest_nic");
  const double bytes = std::max(nic.at("tx_bytes").get<double>(), nic.at("rx_bytes").get<double>());
  const double u = j.at("busiest_nic_utilisation").get<double>();
  EXPECT_NEAR(u, bytes / (j.at("iteration_time_s").get<double>() * 50e9), 1e-12);
  EXPECT_GT(u, 0.02);
  EXPECT_LT(u, 0.05);
  const auto text = run_cli(args);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("% of the iteration at 400 Gb/s"), std::string::npos) << text.out;
  // The ideal design has no NIC network.
  const auto ideal = run_cli(args + " --design ideal --json");
  ASSERT_EQ(ideal.code, 0) << ideal.err;
  EXPECT_EQ(nlohmann::json::parse(ideal.out).at("busiest_nic_utilisation").get<double>(), 0.0);
}

TEST(CliTraffic, HumanSummaryNamesEveryFigure) {
  const auto r = run_cli("traffic --gpus 256 --tp 8 --pp 4 --design rail_only");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"strategy (given): tp 8 pp 4 dp 8", "same_domain", "same_rail",
                        "cross_rail", "GPU pairs with traffic", "ordered pairs", "busiest pair",
                        "busiest NIC", "rail-only forwarding"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(CliTraffic, ShuffledPlacementPutsBytesAcrossRails) {
  const auto r = run_cli("traffic --gpus 256 --tp 8 --pp 4 --placement shuffled --seed 5 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j.at("share_by_locality").at("cross_rail").get<double>(), 0.5);
  EXPECT_EQ(j.at("strategy").at("placement").get<std::string>(), "shuffled");
}

TEST(CliTraffic, CsvHoldsOneRowPerPairAndTheSameBytes) {
  const std::string csv = tmp("pairs.csv");
  const auto r =
      run_cli("traffic --gpus 128 --tp 4 --pp 2 --model Mixtral-8x7B --ep 4 --json --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::istringstream in(slurp(csv));
  std::remove(csv.c_str());
  // No field of these rows needs quoting: split at the commas.
  auto fields = [](const std::string& line) {
    std::vector<std::string> out;
    std::istringstream ls(line);
    for (std::string f; std::getline(ls, f, ',');) out.push_back(f);
    return out;
  };
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("src,dst,src_domain,src_rail,dst_domain,dst_rail,locality,tp_bytes", 0), 0u);
  const std::vector<std::string> header = fields(line);
  auto at = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw std::runtime_error("no column " + name);
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t total_col = at("total_bytes"), locality = at("locality");
  // Every row states the software the bytes rest on, as the JSON does.
  std::vector<std::pair<std::size_t, std::string>> software;
  for (const char* key : {"stack", "dtype", "flash_attention", "attention_kernel", "compile",
                          "elementwise_kernels", "ep_dispatch", "ep_overlap", "cp_comm"}) {
    const auto& v = j.at(key);
    software.emplace_back(
        at(key), v.is_boolean() ? (v.get<bool>() ? "true" : "false") : v.get<std::string>());
  }
  std::int64_t rows = 0;
  double total = 0, cross = 0;
  while (std::getline(in, line)) {
    ++rows;
    const std::vector<std::string> f = fields(line);
    ASSERT_EQ(f.size(), header.size()) << line;
    total += std::stod(f[total_col]);
    if (f[locality] == "cross_rail") cross += std::stod(f[total_col]);
    for (const auto& [col, want] : software) EXPECT_EQ(f[col], want) << header[col];
  }
  EXPECT_EQ(rows, j.at("pairs_with_traffic").get<std::int64_t>());
  const double want = j.at("total_bytes").get<double>();
  EXPECT_NEAR(total, want, 1e-9 * want);
  const double want_cross = j.at("bytes_by_locality").at("cross_rail").get<double>();
  EXPECT_NEAR(cross, want_cross, 1e-9 * want + 1e-9);
}

TEST(CliTraffic, WritesHeatmapsAsPngAndSvg) {
  const std::string g = tmp("g.png"), d = tmp("d.svg"), r = tmp("r.png");
  const auto res = run_cli("traffic --gpus 512 --tp 8 --pp 4 --heatmap-gpu " + g +
                           " --heatmap-domain " + d + " --heatmap-rail " + r);
  ASSERT_EQ(res.code, 0) << res.err;
  for (const auto& f : {g, r}) {
    const auto size = railsim::test::png_size(railsim::test::slurp_binary(f));
    ASSERT_TRUE(size.has_value()) << f;
    EXPECT_EQ(size->width, 860u);
    EXPECT_EQ(size->height, 760u);
  }
  const auto text = railsim::test::xml_text(d);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("HB domain to HB domain"), std::string::npos) << *text;
  EXPECT_NE(text->find("receiving domain"), std::string::npos);
  for (const auto& f : {g, d, r}) std::remove(f.c_str());
}

// A name from a spec file reaches the heatmap's title as text, never as a command: gnuplot runs
// `...` inside double-quoted strings, so every string railsim gives it is single-quoted.
TEST(CliTraffic, NamesInHeatmapTitlesAreTextNotCommands) {
  const std::string model = tmp("evil_model.json"), pwned = tmp("PWNED"), svg = tmp("evil.svg");
  std::remove(pwned.c_str());
  FILE* f = std::fopen(model.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fprintf(f,
               R"({"name":"M`touch %s`'\" x","layers":4,"hidden":256,"heads":4,"vocab":1000,)"
               R"("seq_len":128})",
               pwned.c_str());
  std::fclose(f);
  const auto res =
      run_cli("traffic --gpus 64 --batch 64 --model " + model + " --heatmap-rail " + svg);
  ASSERT_EQ(res.code, 0) << res.err;
  FILE* p = std::fopen(pwned.c_str(), "r");
  EXPECT_EQ(p, nullptr) << "gnuplot ran a command from the model's name";
  if (p) std::fclose(p);
  const auto text = railsim::test::xml_text(svg);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("M`touch " + pwned + "`'\" x"), std::string::npos) << *text;
  for (const auto& x : {model, svg, pwned}) std::remove(x.c_str());
}

TEST(CliTraffic, MissingGnuplotIsOneLineNamingTheOptionAndWritesNothing) {
  const std::string r = tmp("nognuplot.png");
  const auto res = run_cli("traffic --gpus 64 --tp 8 --heatmap-rail " + r, "PATH=/nonexistent-dir");
  EXPECT_EQ(res.code, 2) << res.err;
  EXPECT_EQ(line_count(res.err), 1) << res.err;
  EXPECT_EQ(res.err.rfind("railsim: error: --heatmap-rail: ", 0), 0u) << res.err;
  EXPECT_NE(res.err.find("install gnuplot-nox"), std::string::npos) << res.err;
  EXPECT_TRUE(res.out.empty()) << res.out;  // checked before anything is computed or printed
  EXPECT_NE(::access(r.c_str(), F_OK), 0);
}

TEST(CliTraffic, BadInputIsOneLineNamingTheField) {
  expect_traffic_error("--gpus 64 --tp 8 --placement sideways", "--placement");
  expect_traffic_error("--gpus 64 --tp 3", "--tp");
  expect_traffic_error("--gpus 0", "--gpus");
  expect_traffic_error("--gpus 64 --tp 8 --seed -1", "--seed");
  expect_traffic_error("--gpus 64 --tp 8 --heatmap-cells 0", "--heatmap-cells");
  expect_traffic_error("--gpus 64 --tp 8 --heatmap-domain out.jpg", "--heatmap-domain");
  expect_traffic_error("--gpus 64 --tp 8 --csv /nonexistent-dir/x.csv", "--csv");
  expect_traffic_error("--gpus 64 --tp 8 --heatmap-rail /nonexistent-dir/x.png", "--heatmap-rail");
  expect_traffic_error("--gpus 16384 --tp 8 --heatmap-gpu x.png", "--heatmap-gpu");
  expect_traffic_error("--gpus 64 --tp 8 --model NoSuchModel", "--model");
  expect_traffic_error("--gpus 64 --tp 8 --design mesh", "--design");
  expect_traffic_error("--gpus 64 --tp 8 --ep 3 --model Mixtral-8x7B", "--ep");
  expect_traffic_error("--gpus 64 --tp 8 --batch nan", "--batch");
}
