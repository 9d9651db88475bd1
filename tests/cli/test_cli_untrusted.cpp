// Untrusted inputs through the program: names from spec files never reach the terminal as
// control sequences, errors name the option (or the JSON field) that was wrong, impossible
// values are refused, and a Calculon file's warning never comes with an error (one line).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "cli_runner.hpp"

using railsim::test::expect_input_error;
using railsim::test::line_count;
using railsim::test::run_cli;

namespace {

// A railsim model file named `name` (JSON string, already escaped as JSON wants).
std::string model_named(const std::string& file, const std::string& json_name) {
  return railsim::test::write_temp_file(
      "untrusted", file, R"({"name": ")" + json_name + R"(", "layers": 4, "hidden": 1024,
      "heads": 16, "ffn_hidden": 4096, "vocab": 32000, "seq_len": 2048})");
}

}  // namespace

TEST(CliUntrusted, NamesInSpecFilesMustBePrintable) {
  // An escape sequence (here one that sets the terminal's title), a C1 control and a bidi
  // override in a model's name: refused where the file is read, naming the field and the
  // character; the line itself holds no control byte.
  const std::string osc = model_named("osc.json", "M\\u001b]0;pwned\\u0007");
  const auto r = run_cli("estimate --gpus 64 --batch 64 --tp 8 --pp 1 --dp 8 --model " + osc);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("railsim: error: model.name: 'M\\x1b]0;pwned\\x07' holds U+001B (a control "
                       "character) at byte 1"),
            std::string::npos)
      << r.err;
  const std::string c1 = model_named("c1.json", "M\\u009b31m");
  expect_input_error("plan --gpus 64 --batch 64 --model " + c1, "",
                     "model.name: 'M\\u009b31m' holds U+009B (a control character)");
  const std::string bidi = model_named("bidi.json", "GPT\\u202e1T");
  expect_input_error("plan --gpus 64 --batch 64 --model " + bidi, "",
                     "U+202E (a bidirectional-text control) at byte 3");
  // A source note is text too.
  const std::string src = railsim::test::write_temp_file(
      "untrusted", "src.json",
      R"({"name": "M", "layers": 4, "hidden": 1024, "heads": 16, "ffn_hidden": 4096,
      "vocab": 32000, "seq_len": 2048, "source": "paper\n\u001b[2J"})");
  expect_input_error("plan --gpus 64 --batch 64 --model " + src, "", "model.source:");
  // Plain UTF-8 stays welcome.
  const std::string ok = model_named("utf8.json", "Modèle-🚀");
  const auto fine = run_cli("estimate --gpus 64 --batch 64 --tp 8 --pp 1 --dp 8 --model " + ok);
  EXPECT_EQ(fine.code, 0) << fine.err;
  EXPECT_NE(fine.out.find("Modèle-🚀"), std::string::npos);
  for (const auto& f : {osc, c1, bidi, src, ok}) std::remove(f.c_str());
}

TEST(CliUntrusted, ErrorsNameTheOptionThatWasWrong) {
  // An empty value names the option it was given to, not the word before it.
  expect_input_error("design --gpus 64 --export json ''", "--export", "empty value");
  expect_input_error("design --gpus 64 --export=", "--export", "empty value");
  // An unknown command at any level names what was typed and lists what there is.
  expect_input_error("fail bogus", "unknown fail command 'bogus'", "valid: whatif, goodput");
  expect_input_error("fail", "a fail command is required", "valid: whatif, goodput");
  expect_input_error("bogus", "unknown command 'bogus'", "valid: presets, design");
}

TEST(CliUntrusted, CalculonFilesAreToldApartByTheirOwnKeys) {
  // A Calculon application file missing attn_heads: its error names attn_heads.
  const std::string partial = railsim::test::write_temp_file(
      "untrusted", "partial.json", R"({"hidden": 1024, "feedforward": 4096, "seq_size": 2048,
          "attn_size": 64, "num_blocks": 4})");
  expect_input_error("plan --gpus 64 --batch 64 --model " + partial, "model.attn_heads",
                     "missing required field");
  // Keys of both formats: refused, naming one of each.
  const std::string both = railsim::test::write_temp_file(
      "untrusted", "both.json",
      R"({"name": "M", "layers": 4, "hidden": 1024, "heads": 16, "ffn_hidden": 4096,
          "vocab": 32000, "seq_len": 2048, "num_blocks": 4})");
  expect_input_error("plan --gpus 64 --batch 64 --model " + both, "model",
                     "mixes railsim's model fields (\"layers\") and Calculon's application "
                     "fields (\"num_blocks\")");
  // A Calculon file that imports with a warning, then an error later: the error line alone.
  const std::string calc = railsim::test::write_temp_file(
      "untrusted", "calc.json",
      R"({"hidden": 1024, "feedforward": 4096, "seq_size": 2048, "attn_heads": 16,
          "attn_size": 64, "num_blocks": 4, "extra": 1})");
  expect_input_error("estimate --gpus 64 --batch 64 --tp 3 --pp 1 --dp 8 --model " + calc, "--tp",
                     "");
  // ... and on success the warning is printed, once.
  const auto ok = run_cli("estimate --gpus 64 --batch 64 --tp 8 --pp 1 --dp 8 --model " + calc);
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(line_count(ok.err), 1) << ok.err;
  EXPECT_NE(ok.err.find("railsim: warning: --model: "), std::string::npos) << ok.err;
  EXPECT_NE(ok.err.find("not mapped: extra"), std::string::npos) << ok.err;
  for (const auto& f : {partial, both, calc}) std::remove(f.c_str());
}

TEST(CliUntrusted, ImpossibleValuesAreRefused) {
  // Integers are read in decimal within 64 bits: never saturated, never octal or hexadecimal.
  expect_input_error("sweep --no-perf --max-points 99999999999999999999", "--max-points",
                     "'99999999999999999999' is beyond the range of a 64-bit integer");
  expect_input_error("design --gpus 010", "--gpus", "'010' has a leading zero");
  expect_input_error("design --gpus 0x40", "--gpus", "cannot read '0x40' as an integer");
  // One bound for every thread count.
  expect_input_error(
      "report --threads 4097 --out " + railsim::test::temp_path("untrusted", "r.html"), "--threads",
      "expected an integer from 0 to 4096");
  expect_input_error("sweep --no-perf --threads 5000", "--threads", "from 0 to 4096");
  expect_input_error("fail goodput --threads 5000", "--threads", "from 0 to 4096");
  // Options that contradict each other.
  expect_input_error("optimize --within 1 --first --all", "--all", "choose one of them");
  // A checkpoint more often than once a second would be a run of checkpoints only.
  expect_input_error("fail goodput --checkpoint-interval-min 1e-300", "--checkpoint-interval-min",
                     "expected a number >= 0.0166667");
  // A component index is digits only.
  expect_input_error(
      "fail whatif --gpus 64 --model Megatron-22B --batch 64 --sim off --fail gpu:-0", "--fail",
      "index '-0' is not a non-negative integer");
  expect_input_error(
      "fail whatif --gpus 64 --model Megatron-22B --batch 64 --sim off --fail gpu:+1", "--fail",
      "index '+1' is not a non-negative integer");
  // A repair takes time.
  const std::string rates = railsim::test::write_temp_file(
      "untrusted", "rates.json", R"({"name": "r", "classes": [{"name": "gpu", "scope": "gpu",
          "events": 10, "unit_hours": 1000000, "repair_h": 0}]})");
  expect_input_error("fail goodput --gpus 64 --rates " + rates, "", "repair_h: got 0");
  // A pair matrix that sends nothing over any link.
  const std::string diag = railsim::test::write_temp_file(
      "untrusted", "diag.json",
      "[[1,0,0,0,0,0,0,0],[0,1,0,0,0,0,0,0],[0,0,1,0,0,0,0,0],[0,0,0,1,0,0,0,0],"
      "[0,0,0,0,1,0,0,0],[0,0,0,0,0,1,0,0],[0,0,0,0,0,0,1,0],[0,0,0,0,0,0,0,1]]");
  expect_input_error("sim --gpus 8 --hb-domain 8 --collective alltoall --pair-matrix " + diag,
                     "--pair-matrix", "only the diagonal");
  // A list with a newline in it.
  expect_input_error("sweep --no-perf --gpus \"$(printf '64\\n128')\"", "--gpus",
                     "'64\\n128' is not a number");
  for (const auto& f : {rates, diag}) std::remove(f.c_str());
}
