// Bad input of every kind ends as one line `railsim: error: <field>: <reason>` and exit 2: spec
// files that are not what they claim, integers whose product overflows, rates below any physical
// value, options the command would ignore, and values that would break the line or the terminal.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_runner.hpp"

using railsim::test::expect_input_error;
using railsim::test::line_count;
using railsim::test::run_cli;

namespace {}  // namespace

TEST(CliBadInput, SpecFilesNestedTooDeepAreRefusedWithoutCrashing) {
  // 55,000 levels overflowed the stack of a recursive walk (exit 139).
  const std::string deep = railsim::test::write_temp_file(
      "bad_input", "deep.json",
      "{\"name\": " + std::string(55000, '[') + std::string(55000, ']') + "}");
  const std::string out = railsim::test::temp_path("bad_input", "deep_graph.json");
  expect_input_error("design --gpus 64 --gpu " + deep + " --export json " + out, "--gpu",
                     "nested deeper than 64 levels at name");
  EXPECT_FALSE(std::filesystem::exists(out));
  expect_input_error("plan --model " + deep, "--model", "nested deeper than 64 levels");
  std::remove(deep.c_str());
}

TEST(CliBadInput, DuplicateKeysAreRefusedNamingTheKey) {
  const std::string dup = railsim::test::write_temp_file(
      "bad_input", "dup.json", R"({"name": "x", "radix": 64, "port_gbps": 400, "radix": 128})");
  expect_input_error("design --gpus 64 --switch " + dup, "--switch", "duplicate key 'radix'");
  std::remove(dup.c_str());
}

TEST(CliBadInput, BytesAfterTheValueAreRefused) {
  using namespace std::string_literals;
  const std::string nul =
      railsim::test::write_temp_file("bad_input", "nul.json", "{}\0{\"garbage\": 1}"s);
  expect_input_error("design --gpus 64 --catalog " + nul, "--catalog", "a NUL byte at offset 2");
  const std::string trailing =
      railsim::test::write_temp_file("bad_input", "trailing.json", "{} {}");
  expect_input_error("design --gpus 64 --catalog " + trailing, "--catalog", "malformed JSON");
  std::remove(nul.c_str());
  std::remove(trailing.c_str());
}

TEST(CliBadInput, OnlyRegularFilesAreRead) {
  expect_input_error("design --gpus 64 --gpu /tmp/", "--gpu", "it is a directory");
  expect_input_error("design --gpus 64 --catalog /dev/zero", "--catalog", "not a regular file");
  // A FIFO with no writer: opening it would block for ever.
  const std::string fifo = railsim::test::temp_path("bad_input", "fifo.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_input_error("plan --model " + fifo, "--model", "not a regular file");
  std::remove(fifo.c_str());
}

TEST(CliBadInput, ProductsOfDegreesAreCheckedNotWrapped) {
  // tp x pp x dp = 2^24 x 2^16 x 2^24 = 2^64 wrapped to 0 in int64.
  const std::string wide = railsim::test::write_temp_file(
      "bad_input", "wide.json",
      R"({"name": "wide", "layers": 65536, "hidden": 16777216, "heads": 16777216, "vocab": 1000,)"
      R"( "ffn_hidden": 1024, "seq_len": 2048})");
  expect_input_error(
      "estimate --gpus 1024 --model " + wide + " --tp 16777216 --pp 65536 --dp 16777216", "--dp",
      "tp x pp x dp = 16777216 x 65536 x 16777216 is beyond 2^63");
  std::remove(wide.c_str());
}

TEST(CliBadInput, RatesBelowAnyPhysicalValueAreRefused) {
  expect_input_error("design --gpus 64 --hb-GBps 1e-308", "--hb-GBps", "expected a number >= 1");
  expect_input_error("design --gpus 64 --nic-gbps 5e-324", "--nic-gbps", "expected a number >= 1");
  const std::string gpu = railsim::test::write_temp_file(
      "bad_input", "gpu.json",
      R"({"name": "g", "peak_bf16_tflops": 989, "hbm_gib": 80, "hbm_gbytes_per_s": 3350,)"
      R"( "hb_gbytes_per_s_per_direction": 450, "default_hb_domain": 8, "nic_gbps": 5e-324})");
  expect_input_error("design --gpus 64 --gpu " + gpu, "gpu.nic_gbps", "expected a number >= 1");
  // An achieved fraction of 1e-308 turned every time into inf (null in --json).
  const std::string eff = railsim::test::write_temp_file(
      "bad_input", "gpu_eff.json",
      R"({"name": "g", "peak_bf16_tflops": 989, "hbm_gib": 80, "hbm_gbytes_per_s": 3350,)"
      R"( "hb_gbytes_per_s_per_direction": 450, "default_hb_domain": 8, "nic_gbps": 400,)"
      R"( "efficiency": {"hb": 1e-308}})");
  expect_input_error("estimate --gpus 64 --json --gpu " + eff, "gpu.efficiency.hb",
                     "expected a number >= 0.01");
  // An NVFP4 speedup over MXFP8 below 1 (slower than the fp8 GEMMs it replaces) is not one.
  const std::string fp4 = railsim::test::write_temp_file(
      "bad_input", "gpu_fp4.json",
      R"({"name": "g", "peak_bf16_tflops": 2250, "peak_fp8_tflops": 4500,)"
      R"( "peak_fp4_tflops": 13125, "hbm_gib": 268, "hbm_gbytes_per_s": 8000,)"
      R"( "hb_gbytes_per_s_per_direction": 900, "default_hb_domain": 8, "nic_gbps": 800,)"
      R"( "efficiency": {"gemm_bench_fp4_over_fp8": 0.5}})");
  expect_input_error("estimate --gpus 64 --json --gpu " + fp4,
                     "gpu.efficiency.gemm_bench_fp4_over_fp8", "expected a number >= 1");
  std::remove(fp4.c_str());
  // An MXFP8-against-fp8 ratio is a fraction near 1: a negative one, or one that would make the
  // block-scaled GEMMs 20x faster than the fp8 ones they share tensor cores with, is refused.
  for (const char* bad : {"-0.9", "20"}) {
    const std::string mx = railsim::test::write_temp_file(
        "bad_input", "gpu_mx.json",
        std::string(R"({"name": "g", "peak_bf16_tflops": 2250, "peak_fp8_tflops": 4500,)"
                    R"( "peak_fp4_tflops": 9000, "hbm_gib": 180, "hbm_gbytes_per_s": 8000,)"
                    R"( "hb_gbytes_per_s_per_direction": 900, "default_hb_domain": 8,)"
                    R"( "nic_gbps": 400, "efficiency": {"gemm_bench_mx_over_fp8": )") +
            bad + "}}");
    expect_input_error("estimate --gpus 64 --json --dtype mxfp8 --stack nemo-perf-2025 --gpu " + mx,
                       "gpu.efficiency.gemm_bench_mx_over_fp8",
                       "expected a number >= 0.1 and <= 2");
    std::remove(mx.c_str());
  }
  // An attention kernel's fraction of peak (a backward's, a FlashAttention-1-class one's) is a
  // fraction: 1.5 or -0.4 is refused by name; a tiny one (1e-9, which would make attention take
  // years) too.
  for (const char* key : {"flash_attention_bwd", "flash_attention_fa2_bwd", "flash_attention_fa1"})
    for (const char* bad : {"1.5", "-0.4", "1e-9"}) {
      const std::string bwd = railsim::test::write_temp_file(
          "bad_input", "gpu_bwd.json",
          std::string(R"({"name": "g", "peak_bf16_tflops": 989, "hbm_gib": 80,)"
                      R"( "hbm_gbytes_per_s": 3350, "hb_gbytes_per_s_per_direction": 450,)"
                      R"( "default_hb_domain": 8, "nic_gbps": 400, "efficiency": {")") +
              key + "\": " + bad + "}}");
      expect_input_error("estimate --gpus 64 --json --gpu " + bwd,
                         std::string("gpu.efficiency.") + key,
                         "expected a number >= 0.01 and <= 1");
      std::remove(bwd.c_str());
    }
  expect_input_error("optimize --gpus 1024 --within 1 --nic-gbps 400,5e-324", "--nic-gbps",
                     "expected a number >= 1");
  std::remove(gpu.c_str());
  std::remove(eff.c_str());
}

TEST(CliBadInput, NegativeSwitchPriceOrPowerIsRefused) {
  const auto shipped = run_cli("presets catalogs ib-ndr-thirdparty-2024");
  ASSERT_EQ(shipped.code, 0) << shipped.err;
  for (const std::string key : {"price_usd_per_switch", "power_w_per_switch"}) {
    std::string text = shipped.out;
    const auto at = text.find("\"" + key + "\": 0");
    ASSERT_NE(at, std::string::npos) << key;
    text.replace(at, key.size() + 5, "\"" + key + "\": -5000");
    const std::string cat = railsim::test::write_temp_file("bad_input", "catalog.json", text);
    expect_input_error("design --gpus 64 --catalog " + cat, "catalog.switch." + key,
                       "got -5000, expected a number >= 0");
    std::remove(cat.c_str());
  }
}

TEST(CliBadInput, OptionsTheCommandWouldIgnoreAreRefused) {
  expect_input_error("compare --gpus 64 --no-perf --model bogus", "--model",
                     "has no effect with --no-perf");
  expect_input_error("compare --savings-table --batch 8", "--batch",
                     "has no effect with --savings-table");
  expect_input_error("sim --gpus 64 --batch -5", "--batch", "has no effect without --schedule");
  expect_input_error("sim --gpus 64 --placement shuffled", "--placement",
                     "has no effect without --schedule");
}

TEST(CliBadInput, EchoedValuesAreEscapedAndCut) {
  // A newline and an escape sequence in a value: still one line, and no ESC byte reaches stderr.
  const auto r = run_cli("design --gpus 64 --design \"$(printf 'rail\\n\\033[31monly')\"");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'rail\\n\\x1b[31monly'"), std::string::npos) << r.err;
  expect_input_error("design --gpus 64 --design " + std::string(5000, 'x'), "--design",
                     std::string(80, 'x') + "...'");
  const auto long_value = run_cli("design --gpus 64 --design " + std::string(5000, 'x'));
  EXPECT_LT(long_value.err.size(), 400u);
  expect_input_error("design --gpus 64 --gpu \"$(printf 'no\\rsuch')\"", "--gpu",
                     "unknown preset 'no\\rsuch'");
}
