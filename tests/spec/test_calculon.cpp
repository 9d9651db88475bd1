// Calculon's application and system files read as railsim's Model and GpuSpec.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../common/error_of.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/spec/calculon.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/model.hpp"

using namespace railsim;

namespace {
const std::string kDir = std::string(RAILSIM_TEST_DATA_DIR) + "/calculon/";

std::vector<std::string> g_lines;
void capture(const std::string& line) {
  g_lines.push_back(line);
}

// The warning lines of running f: each of them, even one that the default sink, which prints a
// line once (a sweep's points load the same file again), would not print.
template <class F>
std::vector<std::string> warnings_of(F f) {
  spec::set_warning_sink(&capture);
  g_lines.clear();
  f();
  spec::set_warning_sink(nullptr);
  return g_lines;
}

Json app() {
  return Json{{"hidden", 25600},   {"feedforward", 102400}, {"seq_size", 2048},
              {"attn_heads", 160}, {"attn_size", 160},      {"num_blocks", 128}};
}
}  // namespace

TEST(Calculon, ApplicationFileIsTheSameModelAsThePreset) {
  spec::Model c;
  const auto lines = warnings_of([&] { c = spec::load_model(kDir + "models/megatron-1T.json"); });
  const spec::Model p = spec::load_model("Megatron-1T");
  EXPECT_EQ(c.name, "megatron-1T");
  for (auto f :
       {&spec::Model::layers, &spec::Model::hidden, &spec::Model::heads, &spec::Model::kv_heads,
        &spec::Model::ffn_hidden, &spec::Model::seq_len, &spec::Model::vocab})
    EXPECT_EQ(c.*f, p.*f);
  EXPECT_EQ(c.total_params(), p.total_params());
  // Nothing unmapped, but the vocabulary is assumed: one line saying so.
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("--model: "), std::string::npos);
  EXPECT_NE(lines[0].find("assumed: vocab 51200"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("not mapped"), std::string::npos) << lines[0];
}

TEST(Calculon, GqaAndVocabularyAreMappedAndOtherFieldsNamed) {
  spec::CalculonImport info;
  const Json j = read_json_file(kDir + "models/llama-3-70B.json", "f");
  ASSERT_TRUE(spec::is_calculon_application(j));
  const spec::Model m = spec::model_from_calculon(j, "llama", "model", &info);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.ffn_hidden, 28672);
  EXPECT_EQ(info.unmapped, std::vector<std::string>{"rope_theta"});
  EXPECT_TRUE(info.assumed.empty());
  EXPECT_EQ(spec::calculon_warning("--model", "l.json", "application", info),
            "--model: l.json read as a Calculon application file; not mapped: rope_theta");
}

TEST(Calculon, SystemFileMapsToTheGpuPresetsFigures) {
  spec::GpuSpec c;
  const auto lines = warnings_of([&] { c = spec::load_gpu(kDir + "systems/a100-sxm-80gb.json"); });
  const spec::GpuSpec p = spec::load_gpu("A100-SXM-80GB");
  EXPECT_EQ(c.name, "a100-sxm-80gb");
  EXPECT_EQ(c.peak_fp8_flops, 0);
  // The NIC: 25 GB/s = 200 Gb/s.
  for (auto f : {&spec::GpuSpec::peak_bf16_flops, &spec::GpuSpec::hbm_bytes,
                 &spec::GpuSpec::hbm_bw_Bps, &spec::GpuSpec::hb_bw_Bps, &spec::GpuSpec::nic_bw_Bps})
    EXPECT_DOUBLE_EQ(c.*f, p.*f);
  EXPECT_EQ(c.default_hb_domain, p.default_hb_domain);
  for (auto f : {&spec::GpuEfficiency::gemm_max, &spec::GpuEfficiency::hbm,
                 &spec::GpuEfficiency::hb, &spec::GpuEfficiency::nic})
    EXPECT_DOUBLE_EQ(c.eff.*f, p.eff.*f);
  EXPECT_DOUBLE_EQ(c.eff.collective_latency_s, 8e-6);  // the larger of the two latencies
  ASSERT_EQ(lines.size(), 1u);
  const std::string& w = lines[0];
  for (const char* f : {"--gpu: ", "not mapped: ", "vector", "mem2", "processing_mode",
                        "networks[0].ops", "networks[1].processor_usage", "assumed: "})
    EXPECT_NE(w.find(f), std::string::npos) << f << " in " << w;
  EXPECT_EQ(w.find('\n'), std::string::npos);
}

TEST(Calculon, PerDatatypeMatrixGivesFp8AndTheGemmCurve) {
  spec::CalculonImport info;
  const spec::GpuSpec g = spec::gpu_from_calculon(
      read_json_file(kDir + "systems/h100-sxm.json", "f"), "h100", "gpu", &info);
  const spec::GpuSpec p = spec::load_gpu("H100-SXM");
  EXPECT_DOUBLE_EQ(g.peak_bf16_flops, p.peak_bf16_flops);
  EXPECT_DOUBLE_EQ(g.peak_fp8_flops, p.peak_fp8_flops);
  EXPECT_DOUBLE_EQ(g.eff.gemm_max, p.eff.gemm_max);
  EXPECT_DOUBLE_EQ(g.nic_bw_Bps, p.nic_bw_Bps);
  EXPECT_EQ(info.unmapped, std::vector<std::string>{"matrix.float8.gflops_efficiency"});
}

TEST(Calculon, DetectionReadsTheKeysOnlyOneFormatHas) {
  EXPECT_TRUE(spec::is_calculon_application(app()));
  // One of Calculon's keys is enough: a file missing attn_heads is still Calculon's, and its
  // error names attn_heads (not railsim's "name").
  Json partial = app();
  partial.erase("attn_heads");
  ASSERT_TRUE(spec::is_calculon_application(partial));
  EXPECT_EQ(test::field_of([&] { (void)spec::model_from_calculon(partial, "m", "model"); }),
            "model.attn_heads");
  // Keys of both formats: an error naming one of each, not a guess.
  Json both = app();
  both["layers"] = 2;
  EXPECT_EQ(test::error_of([&] { (void)spec::is_calculon_application(both); }),
            "model: the file mixes railsim's model fields (\"layers\") and Calculon's "
            "application fields (\"num_blocks\"); give one format (docs/calculon.md)");
  EXPECT_FALSE(spec::is_calculon_application(Json{{"name", "M"}, {"layers", 2}, {"hidden", 8}}));
  EXPECT_FALSE(spec::is_calculon_application(Json::array()));
  EXPECT_TRUE(spec::is_calculon_system(Json{{"matrix", 1}}));
  EXPECT_TRUE(spec::is_calculon_system(Json{{"mem1", 1}, {"networks", 1}}));
  EXPECT_FALSE(spec::is_calculon_system(Json{{"name", "G"}, {"hbm_gib", 80}}));
  EXPECT_EQ(test::field_of([] {
              (void)spec::is_calculon_system(Json{{"matrix", 1}, {"peak_bf16_tflops", 989}});
            }),
            "gpu");
}

TEST(Calculon, BadFieldsAreNamed) {
  auto model = [](Json j) { return [j] { (void)spec::model_from_calculon(j, "m", "model"); }; };
  Json j = app();
  j["attn_size"] = 100;  // 160 x 100 != 25600
  EXPECT_EQ(test::field_of(model(j)), "model.attn_size");
  j = app();
  j["num_blocks"] = -3;
  EXPECT_EQ(test::field_of(model(j)), "model.num_blocks");
  j = app();
  j["hidden"] = "big";
  EXPECT_EQ(test::field_of(model(j)), "model.hidden");
  j = app();
  j.erase("seq_size");
  EXPECT_EQ(test::field_of(model(j)), "model.seq_size");

  const Json sys = read_json_file(kDir + "systems/a100-sxm-80gb.json", "f");
  auto gpu = [](Json j) { return [j] { (void)spec::gpu_from_calculon(j, "g", "gpu"); }; };
  Json s = sys;
  s["networks"].erase(1);
  EXPECT_EQ(test::field_of(gpu(s)), "gpu.networks");
  s = sys;
  s["networks"][1]["bandwidth"] = 0;
  EXPECT_EQ(test::field_of(gpu(s)), "gpu.networks[1].bandwidth");
  s = sys;
  s["matrix"]["gflops_efficiency"]["float16"][1] = Json::array({20, 1.5});
  EXPECT_EQ(test::field_of(gpu(s)), "gpu.matrix.gflops_efficiency.float16[1][1]");
  s = sys;
  s["mem1"]["GiB"] = -80;
  EXPECT_EQ(test::field_of(gpu(s)), "gpu.mem1.GiB");
  s = sys;
  s["matrix"].erase("tflops");
  EXPECT_EQ(test::field_of(gpu(s)), "gpu.matrix.float16");
}
