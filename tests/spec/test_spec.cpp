#include <gtest/gtest.h>

#include <cmath>

#include "../common/error_of.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/spec/switch.hpp"

using namespace railsim;

TEST(Presets, EveryShippedGpuAndSwitchLoads) {
  for (const auto& name : spec::preset_names("gpus")) {
    auto g = spec::load_gpu(name);
    EXPECT_GT(g.peak_bf16_flops, 0) << name;
    EXPECT_GT(g.hb_bw_Bps, g.nic_bw_Bps) << name;  // the HB domain is faster than the NIC
  }
  for (const auto& name : spec::preset_names("switches"))
    EXPECT_GE(spec::load_switch(name).radix, 2);
  EXPECT_GE(spec::preset_names("gpus").size(), 6u);
}

TEST(Presets, H100FiguresAreTheDatasheets) {
  auto g = spec::load_gpu("h100-sxm");  // case-insensitive
  EXPECT_DOUBLE_EQ(g.peak_bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(g.hb_bw_Bps, 450e9);
  EXPECT_DOUBLE_EQ(g.nic_bw_Bps, 50e9);
  EXPECT_EQ(g.default_hb_domain, 8);
  EXPECT_EQ(spec::load_gpu("GH200").default_hb_domain, 256);
}

// Every GPU with published GEMM microbenchmarks, H100 included, carries gemm_max and gemm_max_fp8
// of kGemmBenchFraction of its own bf16 and fp8 benchmarks, to the hundredth, both precisions alike
// (docs/model.md section 1): no preset carries a fraction from anywhere else.
TEST(Presets, GemmFractionsAreOneFractionOfEachGpusMicrobenchmarks) {
  int ruled = 0;
  for (const auto& name : spec::preset_names("gpus")) {
    const auto g = spec::load_gpu(name);
    if (g.eff.gemm_bench_bf16 == 0) continue;
    ++ruled;
    EXPECT_NEAR(g.eff.gemm_max, spec::gemm_fraction_of_bench(g.eff.gemm_bench_bf16), 1e-9) << name;
    EXPECT_NEAR(g.eff.gemm_max_fp8, spec::gemm_fraction_of_bench(g.eff.gemm_bench_fp8), 1e-9)
        << name;
  }
  // H100, H100 96 GB, H200, H800, B200, B300, GB200, GB300, MI300X.
  EXPECT_GE(ruled, 9);
  // So FP8 GEMMs run against BF16's as the microbenchmarks say: 1.79x on H100 (0.50 of 1,979
  // against 0.56 of 989), where the benchmarks measure 1.77x.
  const auto h = spec::load_gpu("H100-SXM");
  EXPECT_NEAR(h.peak_fp8_flops * h.eff.gemm_max_fp8 / (h.peak_bf16_flops * h.eff.gemm_max), 1.79,
              0.01);
  // GB200's faster clock buys less than its peak says: its GEMMs reach 0.73 of 2,500 TFLOP/s,
  // B200's 0.78 of 2,250, so its bf16 GEMMs are about 4% faster, not 11%.
  const auto b = spec::load_gpu("B200"), gb = spec::load_gpu("GB200");
  EXPECT_NEAR(gb.peak_bf16_flops * gb.eff.gemm_max / (b.peak_bf16_flops * b.eff.gemm_max), 1.04,
              0.02);
}

// A Hopper-or-later GPU with no GEMM microbenchmark of its own has no benchmark to take its
// fractions from, so it carries H100's as they are (GH200: the same GH100 die and peak). A refit of
// H100's must move them too; GH200 once kept a gemm_max H100 had dropped.
TEST(Presets, GpusWithoutMicrobenchmarksCarryH100sFractionsAsTheyAre) {
  const auto h = spec::load_gpu("H100-SXM");
  int carried = 0;
  for (const auto& name : spec::preset_names("gpus")) {
    const auto g = spec::load_gpu(name);
    // A100 has no fp8 and its own fit (Korthikanti et al.'s runs); the rest scale by benchmarks.
    if (name == "H100-SXM" || g.peak_fp8_flops <= 0 || g.eff.gemm_bench_bf16 > 0) continue;
    ++carried;
    EXPECT_DOUBLE_EQ(g.eff.gemm_max, h.eff.gemm_max) << name;
    EXPECT_DOUBLE_EQ(g.eff.gemm_max_fp8, h.eff.gemm_max_fp8) << name;
    EXPECT_DOUBLE_EQ(g.eff.flash_attention, h.eff.flash_attention) << name;
    EXPECT_DOUBLE_EQ(g.eff.flash_attention_fa2, h.eff.flash_attention_fa2) << name;
  }
  EXPECT_GE(carried, 1);  // GH200
}

// The Blackwell presets' attention fractions are the TFLOP/s NVIDIA's cuDNN frontend SDPA
// benchmark measured (Llama 3.1's attention, causal, 8,192 tokens, BF16; cuDNN forward and
// backward, then PyTorch's FlashAttention-2) over each chip's BF16 peak, to the thousandth; B300
// carries GB300's (the same chip). H100-class presets keep no backward fraction (0.86 of the
// forward's rate).
TEST(Presets, BlackwellAttentionFractionsAreTheirMicrobenchmarkOverThePeak) {
  struct Measured {
    const char* gpu;
    double fwd, bwd, fa2_fwd, fa2_bwd;  // TFLOP/s
  };
  for (const Measured& m : {Measured{"B200", 1171.278, 942.509, 373.392, 298.867},
                            Measured{"GB200", 1584, 1211, 414, 338},
                            Measured{"GB300", 1495.674, 1130.076, 410.579, 330.096}}) {
    const auto g = spec::load_gpu(m.gpu);
    const double peak = g.peak_bf16_flops / 1e12;
    EXPECT_NEAR(g.eff.flash_attention, m.fwd / peak, 5e-4) << m.gpu;
    EXPECT_NEAR(g.eff.flash_attention_bwd, m.bwd / peak, 5e-4) << m.gpu;
    EXPECT_NEAR(g.eff.flash_attention_fa2, m.fa2_fwd / peak, 5e-4) << m.gpu;
    EXPECT_NEAR(g.eff.flash_attention_fa2_bwd, m.fa2_bwd / peak, 5e-4) << m.gpu;
  }
  const auto b300 = spec::load_gpu("B300"), gb300 = spec::load_gpu("GB300");
  EXPECT_DOUBLE_EQ(b300.eff.flash_attention, gb300.eff.flash_attention);
  EXPECT_DOUBLE_EQ(b300.eff.flash_attention_bwd, gb300.eff.flash_attention_bwd);
  EXPECT_DOUBLE_EQ(b300.eff.flash_attention_fa2, gb300.eff.flash_attention_fa2);
  EXPECT_DOUBLE_EQ(b300.eff.flash_attention_fa2_bwd, gb300.eff.flash_attention_fa2_bwd);
  for (const char* hopper : {"H100-SXM", "H100-SXM-96GB", "H200", "H800", "GH200"}) {
    const auto g = spec::load_gpu(hopper);
    EXPECT_EQ(g.eff.flash_attention_bwd, 0.0) << hopper;
    EXPECT_EQ(g.eff.flash_attention_fa2_bwd, 0.0) << hopper;
  }
}

TEST(Presets, UnknownPresetListsTheValidOnes) {
  try {
    spec::load_gpu("Z100");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--gpu");
    EXPECT_NE(std::string(e.what()).find("H100-SXM"), std::string::npos);
  }
}

TEST(Switch, OddOrTinyRadixIsRejected) {
  EXPECT_THROW(
      spec::switch_from_json(Json::parse(R"({"name":"x","radix":63,"port_gbps":400})"), "switch"),
      InputError);
  EXPECT_THROW(
      spec::switch_from_json(Json::parse(R"({"name":"x","radix":1,"port_gbps":400})"), "switch"),
      InputError);
  EXPECT_THROW(
      spec::switch_from_json(Json::parse(R"({"name":"x","radix":"64","port_gbps":400})"), "switch"),
      InputError);
}

TEST(Cluster, ValidatesSizes) {
  spec::ClusterOptions o;
  o.gpus = 32768;
  auto c = spec::make_cluster(o);
  EXPECT_EQ(c.domains(), 4096);
  EXPECT_EQ(c.rail_of(9), 1);
  EXPECT_EQ(c.domain_of(9), 1);
  o.hb_domain = 7;
  EXPECT_THROW(spec::make_cluster(o), InputError);
  o.hb_domain = 0;
  EXPECT_THROW(spec::make_cluster(o), InputError);
  o.hb_domain.reset();
  o.gpus = 1'000'000'000'000;
  EXPECT_THROW(spec::make_cluster(o), InputError);
  o.gpus = -8;
  EXPECT_THROW(spec::make_cluster(o), InputError);
  o.gpus = 64;
  o.nic_gbps = -400;
  EXPECT_THROW(spec::make_cluster(o), InputError);
}

// The default size follows the GPU's HB domain, and a size that K does not divide is refused with
// the nearest valid ones.
TEST(Cluster, DefaultSizeIsAWholeNumberOfHbDomainsAndBadSizesSuggestTheNearest) {
  spec::ClusterOptions gb200;
  gb200.gpu = "GB200";
  const spec::Cluster c = spec::make_cluster(gb200);
  EXPECT_EQ(c.hb_domain, 72);
  EXPECT_EQ(c.gpus, 32760);  // 455 racks
  spec::ClusterOptions h100;
  EXPECT_EQ(spec::make_cluster(h100).gpus, 32768);
  gb200.gpus = 16384;
  try {
    (void)spec::make_cluster(gb200);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--hb-domain");
    EXPECT_NE(std::string(e.what()).find("16,344 (227 x 72) or 16,416 (228 x 72)"),
              std::string::npos)
        << e.what();
  }
  gb200.gpus = 100;
  gb200.hb_domain = 72;
  try {
    (void)spec::make_cluster(gb200);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the nearest are 72 (1 x 72) or 144 (2 x 72)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Switch, DataSheetWattsOfThe51TPresets) {
  // UfiSpace S9321-64E (Tomahawk 5, 64 x 800G): 913 W typical without transceivers; the 128 x 400G
  // preset is the same box split, so it carries the same figure.
  for (const char* name : {"ETH-51.2T-64x800G", "ETH-51.2T-128x400G"}) {
    const auto sw = spec::load_switch(name);
    EXPECT_DOUBLE_EQ(sw.power.typical_w, 913.0) << name;
    EXPECT_NE(sw.power.source.find("S9321-64E"), std::string::npos) << name;
    // A port mode re-splits the same box: the watts stay.
    EXPECT_DOUBLE_EQ(spec::fit_to_nics(sw, 200).power.typical_w, 913.0) << name;
  }
  // No public data-sheet figure was found for these: the catalog's per-port watts apply.
  for (const char* name : {"QM9700", "Q3400", "TH4-64x400G"})
    EXPECT_FALSE(spec::load_switch(name).power.known()) << name;
}

TEST(Switch, MalformedPowerNamesTheField) {
  auto field_of = [](const std::string& power) {
    try {
      spec::switch_from_json(
          Json::parse(R"({"name":"x","radix":64,"port_gbps":400,"power":)" + power + "}"),
          "switch");
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("no error");
  };
  EXPECT_EQ(field_of("913"), "switch.power");
  EXPECT_EQ(field_of(R"({"typical_w":-5,"source":"s"})"), "switch.power.typical_w");
  EXPECT_EQ(field_of(R"({"typical_w":0,"source":"s"})"), "switch.power.typical_w");
  EXPECT_EQ(field_of(R"({"typical_w":"913","source":"s"})"), "switch.power.typical_w");
  EXPECT_EQ(field_of(R"({"typical_w":913})"), "switch.power.source");
  EXPECT_EQ(field_of(R"({"typical_w":913,"source":""})"), "switch.power.source");
  EXPECT_EQ(field_of(R"({"typical_w":913,"source":"s","max_w":2000})"), "switch.power.max_w");
  EXPECT_EQ(field_of(R"({"typical_w":913,"source":"s"})"), "no error");
}

TEST(Switch, The102TPresetsSplitOneChipAndCarryAssumedWatts) {
  // Tomahawk 6 / Spectrum-6: 512 x 200G SerDes as 64 x 1.6T, 128 x 800G or 512 x 200G (the
  // sources), or 256 x 400G (ours: the lanes in pairs), the same 102.4 Tb/s in every mode; both
  // presets are one chip configured two ways, so every NIC speed gets the same mode from either.
  for (const char* name : {"ETH-102.4T-128x800G", "ETH-102.4T-64x1.6T"}) {
    const auto sw = spec::load_switch(name);
    EXPECT_EQ(sw.family, "ethernet") << name;
    EXPECT_DOUBLE_EQ(sw.radix * sw.port_gbps, 102400.0) << name;
    ASSERT_EQ(sw.modes.size(), 4u) << name;
    for (const auto& [nic, radix] :
         {std::pair{1600.0, 64}, {800.0, 128}, {400.0, 256}, {200.0, 512}}) {
      const auto fit = spec::fit_to_nics(sw, nic);
      EXPECT_EQ(fit.radix, radix) << name << " " << nic;
      EXPECT_DOUBLE_EQ(fit.port_gbps, nic) << name;
    }
    // A 100G NIC has no mode of its own: it runs at 100G on a port of the preset's mode.
    EXPECT_EQ(spec::fit_to_nics(sw, 100).radix, sw.radix) << name;
    // No public data sheet gives a 102.4T box's typical watts: the Tomahawk 5 box's watts per bit
    // are assumed (913 W per 51.2 Tb/s, twice that), in every catalog, and the source says so.
    ASSERT_TRUE(sw.power.known()) << name;
    EXPECT_DOUBLE_EQ(sw.power.typical_w,
                     2.0 * spec::load_switch("ETH-51.2T-128x400G").power.typical_w)
        << name;
    EXPECT_NE(sw.power.source.find("assumed, no data sheet"), std::string::npos) << name;
  }
  EXPECT_THROW(spec::fit_to_nics(spec::load_switch("ETH-102.4T-128x800G"), 3200), InputError);
}

// A job on part of a cluster takes whole HB domains; the nearest whole sizes are named.
TEST(Spec, JobClusterTakesWholeHbDomains) {
  spec::ClusterOptions o;
  o.gpu = "GB200";
  o.gpus = 16416;
  o.hb_domain = 72;
  const spec::Cluster c = spec::make_cluster(o);
  const spec::Cluster job = spec::job_cluster(c, 16344);
  EXPECT_EQ(job.gpus, 16344);
  EXPECT_EQ(job.hb_domain, 72);
  EXPECT_EQ(job.domains(), 227);
  EXPECT_EQ(job.gpu.name, c.gpu.name);
  EXPECT_EQ(spec::job_cluster(c, 16416).gpus, 16416);
  EXPECT_EQ(test::error_of([&] { (void)spec::job_cluster(c, 16384); }),
            "--job-gpus: a job takes whole HB domains of 72 GPUs: 16,384 is not one; the nearest "
            "are 16,344 (227 domains) or 16,416 (228 domains) of the cluster's 16,416");
  EXPECT_EQ(test::field_of([&] { (void)spec::job_cluster(c, 16417); }), "--job-gpus");
  EXPECT_EQ(test::field_of([&] { (void)spec::job_cluster(c, 0); }), "--job-gpus");
  EXPECT_NE(test::error_of([&] { (void)spec::job_cluster(c, 40); }).find("the nearest are 72 (1 "),
            std::string::npos);
}
