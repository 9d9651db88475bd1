// Training precisions below bf16: fp8, MXFP8 and NVFP4 (spec::Dtype): each GPU's peak for them,
// the bytes their casts move and keep, which GPUs and stacks have them (docs/model.md sections 1,
// 3 and 7).
#include <gtest/gtest.h>

#include "../common/error_of.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/spec/preset.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;
using test::field_of;

TEST(Precision, EachRunsAtItsOwnPeakAndCastSize) {
  const spec::GpuSpec g = spec::load_gpu("GB300");
  const GemmCaps fp8 = make_gemm_caps(g, Dtype::fp8), mx = make_gemm_caps(g, Dtype::mxfp8),
                 fp4 = make_gemm_caps(g, Dtype::nvfp4), bf16 = make_gemm_caps(g, Dtype::bf16);
  // MXFP8 runs at the fp8 rate times its chip's published MXFP8-against-fp8 microbenchmark,
  // 0.951 (Transformer Engine's GEMM profiling on B300, inputs quantized beforehand: FP8
  // CurrentScaling 163.493 ms, MXFP8 171.869 ms); NVFP4 at the rate its NVFP4-against-MXFP8
  // microbenchmark gives over MXFP8's, 1.903x (90.337 ms), where the peaks are 3x apart (15 PF
  // dense on GB300 against 5 PF fp8).
  EXPECT_DOUBLE_EQ(g.eff.gemm_bench_mx_over_fp8, 0.951);
  EXPECT_NEAR(163.493 / 171.869, g.eff.gemm_bench_mx_over_fp8, 5e-4);
  EXPECT_DOUBLE_EQ(mx.peak_flops / fp8.peak_flops, 0.951);
  EXPECT_DOUBLE_EQ(g.eff.gemm_bench_fp4_over_fp8, 1.903);
  EXPECT_DOUBLE_EQ(fp4.peak_flops / mx.peak_flops, 1.903);
  EXPECT_DOUBLE_EQ(g.peak_fp4_flops / g.peak_fp8_flops, 3.0);
  // Without an NVFP4 microbenchmark (GB200: none published), fp8's fraction of the fp4 peak;
  // its MXFP8 GEMMs carry B300's ratio (the same tensor cores' block-scaled MMA, the transfer
  // stated in its preset's efficiency source), and a GPU with no such figure runs MXFP8 at the fp8
  // rate.
  const spec::GpuSpec gb200 = spec::load_gpu("GB200");
  ASSERT_DOUBLE_EQ(gb200.eff.gemm_bench_fp4_over_fp8, 0.0);
  EXPECT_DOUBLE_EQ(make_gemm_caps(gb200, Dtype::nvfp4).peak_flops,
                   gb200.peak_fp4_flops * gb200.eff.gemm_max_fp8);
  EXPECT_DOUBLE_EQ(make_gemm_caps(gb200, Dtype::mxfp8).peak_flops,
                   make_gemm_caps(gb200, Dtype::fp8).peak_flops * 0.951);
  spec::GpuSpec plain = gb200;
  plain.eff.gemm_bench_mx_over_fp8 = 0;
  EXPECT_DOUBLE_EQ(make_gemm_caps(plain, Dtype::mxfp8).peak_flops,
                   make_gemm_caps(plain, Dtype::fp8).peak_flops);
  EXPECT_DOUBLE_EQ(bf16.in_bytes, 2.0);
  EXPECT_DOUBLE_EQ(fp8.in_bytes, 1.0);
  EXPECT_DOUBLE_EQ(mx.in_bytes, 1.0 + 1.0 / 32);
  EXPECT_DOUBLE_EQ(fp4.in_bytes, 0.5 + 1.0 / 16);
  // A large GEMM: NVFP4's forward is faster than fp8's, by less than the microbenchmarks' ratio
  // (the casts through HBM); MXFP8's is slower, by about the kernels' 5% and its block scales'
  // bytes.
  double b8 = 0, bmx = 0, b4 = 0;
  const double t8 = gemm_fwd_bwd_time(fp8, 8192, 8192, 8192, &b8);
  const double tmx = gemm_fwd_bwd_time(mx, 8192, 8192, 8192, &bmx);
  const double t4 = gemm_fwd_bwd_time(fp4, 8192, 8192, 8192, &b4);
  EXPECT_GT(tmx, 1.03 * t8);
  EXPECT_LT(tmx, 1.06 * t8);
  EXPECT_LT(t4, t8 / 1.5);
  EXPECT_GT(t4, t8 / (0.951 * 1.903));
  // The cast traffic: 2 + 2c bytes per input element through HBM (fp8: 4).
  const double m = 8192, k = 8192;
  EXPECT_NEAR(
      tmx - t8,
      (2.0 * (1.0 / 32)) * m * k / fp8.hbm_Bps + (gemm_time(mx, m, m, k) - gemm_time(fp8, m, m, k)),
      1e-12);
  // NVFP4 reads each input once more first, for the global amax of its two-level scaling:
  // 4 + 2c bytes per element (c = 1/2 + 1/16), the fp8 casts none.
  EXPECT_DOUBLE_EQ(fp4.scale_pass_bytes, 2.0);
  EXPECT_DOUBLE_EQ(fp8.scale_pass_bytes + mx.scale_pass_bytes + bf16.scale_pass_bytes, 0.0);
  EXPECT_NEAR(t4 - gemm_time(fp4, m, m, k), (4.0 + 2.0 * (0.5 + 1.0 / 16)) * m * k / fp4.hbm_Bps,
              1e-12);
}

TEST(Precision, GpusWithoutTheTensorCoresRefuseIt) {
  const spec::GpuSpec h100 = spec::load_gpu("H100-SXM"), a100 = spec::load_gpu("A100-SXM-80GB");
  EXPECT_EQ(field_of([&] { (void)dtype_peak_flops(h100, Dtype::nvfp4); }), "--dtype");
  EXPECT_EQ(field_of([&] { (void)dtype_peak_flops(h100, Dtype::mxfp8); }), "--dtype");
  EXPECT_EQ(field_of([&] { (void)dtype_peak_flops(a100, Dtype::fp8); }), "--dtype");
  EXPECT_DOUBLE_EQ(dtype_peak_flops(h100, Dtype::fp8), h100.peak_fp8_flops);
  const spec::GpuSpec b200 = spec::load_gpu("B200");
  EXPECT_DOUBLE_EQ(dtype_peak_flops(b200, Dtype::nvfp4), b200.peak_fp4_flops);
  EXPECT_DOUBLE_EQ(dtype_peak_flops(b200, Dtype::mxfp8), b200.peak_fp8_flops);
}

TEST(Precision, ActivationsKeepTheCasts) {
  // Llama 3 8B, one stage, tp 1, one sequence of 8,192 tokens, selective recompute with fused
  // attention (nothing recomputed): per layer, below bf16 the QKV and FC1 inputs (h each), FC2's
  // input (f) are kept as casts of c bytes instead of 2, and the projection keeps a cast of its
  // input (h) besides the bf16 attention output.
  const Model m = spec::load_model("Llama-3-8B");
  Strategy s{.tp = 1, .pp = 1, .dp = 8, .recompute = Recompute::selective};
  const spec::Stack nemo = spec::load_stack("nemo-perf-2025");
  const double T = 8192, h = 4096, f = 14336, L = 32;
  const MemoryUse bf16 = memory_use(m, make_training(8, 8192, nemo, Dtype::bf16), s);
  for (const Dtype d : {Dtype::fp8, Dtype::mxfp8, Dtype::nvfp4}) {
    const double c = spec::cast_bytes(d);
    const MemoryUse low = memory_use(m, make_training(8, 8192, nemo, d), s);
    EXPECT_NEAR(bf16.activations_bytes - low.activations_bytes,
                L * T * (2.0 * (2.0 - c) * h + (2.0 - c) * f - c * h), 1.0)
        << spec::to_string(d);
    EXPECT_DOUBLE_EQ(low.weights_bytes, bf16.weights_bytes);
  }
}

TEST(Precision, Nvfp4TrainsFasterThanMxfp8WhereTheGemmsDominate) {
  // Llama 3 70B on 64 GB300 as Megatron-Bridge's 26.02 recipe lays it out (tp 1, pp 4, v 5).
  const Model m = spec::load_model("Llama-3-70B");
  const spec::Cluster c = test::cluster("GB300", 64, 64, 400);
  Strategy s = test::megatron_core_strategy(1, 4, 16, 5);
  const spec::Stack nemo = spec::load_stack("nemo-perf-2025");
  auto time = [&](Dtype d) {
    return estimate(m, make_training(256, 8192, nemo, d), s, c,
                    test::design_spread(spec::DesignKind::rail_optimized))
        .iteration_time_s;
  };
  const double mx = time(Dtype::mxfp8), fp4 = time(Dtype::nvfp4), bf = time(Dtype::bf16);
  EXPECT_LT(fp4, mx);
  EXPECT_LT(mx, bf);
  // Less than the 3x of the peaks: attention, element-wise kernels, the bf16 output layer and
  // communication do not speed up.
  EXPECT_GT(fp4, mx / 3.0);
}
