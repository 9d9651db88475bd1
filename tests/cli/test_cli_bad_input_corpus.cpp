// The bad-input corpus: one case per class of bad input, each run as a user would, each held to
// the same promise: exit 2, exactly one line on stderr that starts `railsim: error: <field>`, and
// no file left behind in the folder the command was told to write into. And work that is bounded
// before it starts: a simulation whose pipelining chunks multiply its flows past --max-flows, a
// plan search over a model at the allowed maximums, inputs that are FIFOs or devices.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"

using railsim::test::line_count;
using railsim::test::run_cli;

namespace {

namespace fs = std::filesystem;

// A scratch folder per test, removed at the end.
struct CorpusScratch {
  fs::path dir;
  explicit CorpusScratch(const std::string& name)
      : dir(fs::temp_directory_path() /
            ("railsim_corpus_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir / "out");
  }
  ~CorpusScratch() { fs::remove_all(dir); }
  std::string file(const std::string& name, const std::string& text) const {
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string out(const std::string& name) const { return (dir / "out" / name).string(); }
  std::size_t outputs() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir / "out")) ++n;
    return n;
  }
};

struct Case {
  std::string what;   // the class of bad input
  std::string args;   // the command line
  std::string field;  // what the one line must name first
};

void expect_refused(const CorpusScratch& s, const Case& c) {
  const auto r = run_cli(c.args);
  EXPECT_EQ(r.code, 2) << c.what << ": " << c.args << "\n" << r.err;
  EXPECT_EQ(line_count(r.err), 1) << c.what << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("railsim: error: " + c.field, 0), 0u) << c.what << " -> " << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << c.what << " -> " << r.err;
  EXPECT_EQ(s.outputs(), 0u) << c.what << ": a file was left in " << (s.dir / "out");
}

const char* kGpu =
    R"({"name": "g", "peak_bf16_tflops": 989, "hbm_gib": 80, "hbm_gbytes_per_s": 3350,)"
    R"( "hb_gbytes_per_s_per_direction": 450, "default_hb_domain": 8, "nic_gbps": 400)";

}  // namespace

TEST(CliBadInputCorpus, EveryClassIsOneLineExit2NamingTheFieldAndLeavesNoFile) {
  using namespace std::string_literals;
  const CorpusScratch s("classes");
  const auto shipped = run_cli("presets catalogs ib-ndr-thirdparty-2024");
  ASSERT_EQ(shipped.code, 0) << shipped.err;
  std::string negative = shipped.out;
  const std::string key = "\"price_usd_per_switch\": 0";
  ASSERT_NE(negative.find(key), std::string::npos);
  negative.replace(negative.find(key), key.size(), "\"price_usd_per_switch\": -1");

  const std::string deep = s.file(
      "deep.json", "{\"name\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  const std::string wide = s.file(
      "wide.json",
      R"({"name": "wide", "layers": 65536, "hidden": 16777216, "heads": 16777216, "vocab": 1000,)"
      R"( "ffn_hidden": 1024, "seq_len": 2048})");
  const std::string dup =
      s.file("dup.json", R"({"name": "x", "radix": 64, "port_gbps": 400, "radix": 128})");
  const std::string nul = s.file("nul.json", "{\"name\": \"x\0y\"}"s);
  const std::string neg = s.file("negative.json", negative);
  const std::string tiny = s.file("tiny.json", kGpu + R"(, "hbm_gib": 1e-308})"s);
  const std::string ctrl = s.file("ctrl.json", R"({"name": "a\u001b[31mb", "radix": 0,)"
                                               R"( "port_gbps": 400})");
  ASSERT_EQ(::mkfifo((s.dir / "fifo.json").c_str(), 0600), 0);
  const std::string fifo = (s.dir / "fifo.json").string();
  const std::string g = " --export json " + s.out("graph.json");  // what design would write

  const std::vector<Case> cases = {
      {"deep nesting", "design --gpus 64 --gpu " + deep + g, "--gpu"},
      {"deep nesting (model)", "plan --gpus 64 --model " + deep, "--model"},
      {"overflowing products",
       "estimate --gpus 1024 --model " + wide + " --tp 16777216 --pp 65536 --dp 16777216", "--dp"},
      {"overflowing sizes", "design --gpus 99999999999999999999" + g, "--gpus"},
      {"empty option value", "design --gpus ''" + g, "--gpus"},
      {"empty option value after =", "design --switch=" + g, "--switch"},
      {"negative price", "design --gpus 64 --catalog " + neg + g,
       "catalog.switch.price_usd_per_switch"},
      {"negative count", "design --gpus -64" + g, "--gpus"},
      {"ignored option", "compare --gpus 64 --no-perf --model GPT-1T", "--model"},
      {"duplicate key", "design --gpus 64 --switch " + dup + g, "--switch"},
      {"NUL byte", "design --gpus 64 --switch " + nul + g, "--switch"},
      {"tiny bandwidth", "design --gpus 64 --nic-gbps 1e-308" + g, "--nic-gbps"},
      {"tiny figure in a spec file", "design --gpus 64 --gpu " + tiny + g, "--gpu"},
      {"unwritable output path",
       "design --gpus 64 --export json " + (s.dir / "missing" / "g.json").string(), "--export"},
      {"output path is a folder", "design --gpus 64 --export json " + s.out(""), "--export"},
      {"control characters in a value",
       "design --gpus 64 --design \"$(printf 'rail\\n\\033[2Jonly')\"" + g, "--design"},
      {"control characters in a spec file", "design --gpus 64 --switch " + ctrl + g, "switch"},
      {"directory as JSON file", "design --gpus 64 --gpu " + s.dir.string() + g, "--gpu"},
      {"FIFO as JSON file", "design --gpus 64 --switch " + fifo + g, "--switch"},
      {"device as JSON file", "plan --gpus 64 --model /dev/zero", "--model"},
      {"device as stack file", "plan --gpus 64 --stack /dev/zero", "--stack"},
      {"unknown subcommand", "frobnicate --gpus 64", "unknown command 'frobnicate'"},
  };
  for (const Case& c : cases) expect_refused(s, c);
}

// A full stdout (a full disk): exit 2 and one line naming stdout, whatever the command printed.
TEST(CliBadInputCorpus, FullStdoutIsOneLineNamingStdout) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const CorpusScratch s("full");
  for (const std::string args :
       {"design --gpus 64 --json", "plan --gpus 64 --model Llama-3-8B --csv",
        "traffic --gpus 64 --model Llama-3-8B --json", "presets models GPT-1T"}) {
    const std::string err = (s.dir / "err").string();
    const std::string cmd = std::string(RAILSIM_CLI_PATH) + " " + args + " >/dev/full 2>" + err;
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << args;
    EXPECT_EQ(WEXITSTATUS(status), 2) << args;
    const std::string text = railsim::test::slurp(err);
    EXPECT_EQ(line_count(text), 1) << args << "\n" << text;
    EXPECT_NE(text.find("railsim: error: stdout:"), std::string::npos) << args << "\n" << text;
  }
}

// Pipelined forwarding cuts each forwarded transfer into --chunks pieces on two legs: the flows
// built are counted against --max-flows, so a chunk count that would build hundreds of millions
// of flows is refused naming --chunks and the limit, before the engine runs.
TEST(CliBadInputCorpus, SimChunksAreCountedAgainstMaxFlows) {
  // Flow by flow (--aggregate off), 4,096 chunks per forwarded pair on 1,024 GPUs are counted
  // before anything is built and refused in one line with the count and the limit.
  const auto r = run_cli(
      "sim --gpus 1024 --design rail_only --collective alltoall --forwarding pipelined "
      "--chunks 4096 --aggregate off");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("railsim: error: --aggregate:", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("exceeds --max-flows 4000000"), std::string::npos) << r.err;
  // The same all-to-all with few chunks stays under the limit and runs.
  const auto ok = run_cli(
      "sim --gpus 64 --design rail_only --collective alltoall --forwarding pipelined --chunks 4 "
      "--json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_GT(nlohmann::json::parse(ok.out)["completion_time_s"].get<double>(), 0.0);
  // A limit the chunks exceed at a smaller size: 64 GPUs in 8 domains of 8 have 64 x 63 - 8 x 8 x 7
  // - 8 x 8 x 7 = 3,136 forwarded (other rail, other domain) ordered pairs; pipelined in 16 chunks
  // with first legs merged per source and peer (64 x 7 = 448) the builder makes
  // 4,032 - 3,136 + 16 x (3,136 + 448) = 58,240 flows > 50,000.
  const auto small = run_cli(
      "sim --gpus 64 --design rail_only --collective alltoall --forwarding pipelined --chunks 16 "
      "--max-flows 50000 --aggregate off");
  EXPECT_EQ(small.code, 2) << small.err;
  EXPECT_NE(small.err.find("an all-to-all of 58240 flows exceeds --max-flows 50000"),
            std::string::npos)
      << small.err;
  // Under --aggregate auto the same request is aggregated by link class instead of refused.
  const auto agg = run_cli(
      "sim --gpus 64 --design rail_only --collective alltoall --forwarding pipelined --chunks 16 "
      "--max-flows 50000 --json");
  ASSERT_EQ(agg.code, 0) << agg.err;
}

// A model at the allowed maximums (100,000 layers: interleaving up to layers / pp, thousands of
// micro-batch sizes) would have the search build billions of candidates up front; the count is
// estimated first and refused over --max-candidates, with the estimate.
TEST(CliBadInputCorpus, PlanAtTheModelMaximumsIsRefusedWithTheEstimate) {
  const CorpusScratch s("plan");
  const std::string big = s.file(
      "big.json", R"({"name": "big", "layers": 100000, "hidden": 256, "heads": 8, "vocab": 1000,)"
                  R"( "seq_len": 2048})");
  const auto r = run_cli("plan --gpus 32768 --batch 1099511627776 --model " + big);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("railsim: error: --max-candidates: the search would visit about ", 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find("more than --max-candidates 10000000"), std::string::npos) << r.err;
  // Pinning the knobs brings the same model under the limit: it runs.
  const auto pinned = run_cli("plan --gpus 32768 --batch 1099511627776 --model " + big +
                              " --tp 8 --pp 4096 --micro-batch 1 --interleave 1 --json");
  ASSERT_EQ(pinned.code, 0) << pinned.err;
  EXPECT_GE(nlohmann::json::parse(pinned.out)["evaluated"].get<int>(), 1);
  // A lower limit refuses a preset's search; the option is validated.
  const auto low = run_cli("plan --gpus 4096 --model GPT-1T --max-candidates 10");
  EXPECT_EQ(low.code, 2);
  EXPECT_NE(low.err.find("--max-candidates: the search would visit about"), std::string::npos)
      << low.err;
  EXPECT_EQ(run_cli("plan --max-candidates 0").code, 2);
}
