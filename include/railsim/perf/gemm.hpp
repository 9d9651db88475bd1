#pragma once
// The shape-aware GEMM model of one GPU at one precision (docs/model.md section 3).
#include "railsim/perf/model.hpp"
#include "railsim/spec/gpu.hpp"

namespace railsim::perf {

// The GEMM model of one GPU at one precision (docs/model.md section 3), precomputed per context.
struct GemmCaps {
  double peak_flops = 0;  // the precision's peak x the preset's gemm_max (or gemm_max_fp8)
  double sms = 1, tile_m = 128, tile_n = 256;
  double k_overhead = 0;  // elements of k
  double in_bytes = 2;    // bytes per operand element (spec::cast_bytes: 1 for fp8)
  // bf16 bytes read per element before its cast to find a per-tensor scale (nvfp4's global amax
  // of its two-level scaling; 0 where the cast finds its scales as it goes)
  double scale_pass_bytes = 0;
  double hbm_Bps = 1;  // achievable HBM bandwidth
};
GemmCaps make_gemm_caps(const spec::GpuSpec& gpu, Dtype dtype);
// The GPU's dense peak in the precision (nvfp4: the fp4 peak; fp8 and mxfp8: the fp8 peak).
// Throws InputError("--dtype") when the GPU has no tensor cores for it.
double dtype_peak_flops(const spec::GpuSpec& gpu, Dtype dtype);
// Time of one m x n x k GEMM (2 m n k FLOPs): tile and wave quantization over the SMs, the k-loop's
// fixed cost, and a roofline on the operands' HBM traffic.
double gemm_time(const GemmCaps& g, double m, double n, double k);
// The forward GEMM's time; adds its two backward GEMMs (input and weight gradients) to *bwd.
double gemm_fwd_bwd_time(const GemmCaps& g, double m, double n, double k, double* bwd);

}  // namespace railsim::perf
