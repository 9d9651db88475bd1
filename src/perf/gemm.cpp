#include "railsim/perf/gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "detail.hpp"
#include "railsim/core/error.hpp"

namespace railsim::perf {

double gemm_time(const GemmCaps& g, double m, double n, double k) {
  if (!(m > 0 && n > 0 && k > 0)) return 0;
  // Tile quantization and wave quantization (NVIDIA, "Matrix Multiplication Background User's
  // Guide"): ceil(m/tm) ceil(n/tn) output tiles run in ceil(tiles/SMs) waves, each wave as long as
  // a full one; the fill is the useful share of the tile-slots paid for.
  const double tiles = std::ceil(m / g.tile_m) * std::ceil(n / g.tile_n);
  const double waves = std::ceil(tiles / g.sms);
  const double fill = m * n / (waves * g.sms * g.tile_m * g.tile_n);
  // Each tile's k-loop pays a fixed prologue/epilogue, worth k0 elements of k (ours).
  const double kfill = k / (k + g.k_overhead);
  const double compute = 2.0 * m * n * k / (g.peak_flops * fill * kfill);
  // Roofline: the operands are read and the output written once at least.
  const double bytes = g.in_bytes * (m * k + k * n) + detail::kActBytes * m * n;
  return std::max(compute, bytes / g.hbm_Bps);
}

double gemm_fwd_bwd_time(const GemmCaps& g, double m, double n, double k, double* bwd) {
  // Forward Y = X W (m x n, reduction k); backward dX = dY W^T (m x k over n) and
  // dW = X^T dY (k x n over m) (Narayanan et al. SC'21: two GEMMs per forward GEMM).
  *bwd += gemm_time(g, m, k, n) + gemm_time(g, k, n, m);
  double fwd = gemm_time(g, m, n, k);
  if (g.in_bytes < detail::kActBytes) {
    // Below bf16 (Transformer Engine): the bf16 input is cast (read 2, write c bytes, c =
    // spec::cast_bytes with its block scales) and kept once more transposed for the weight
    // gradient (c), the same for the output gradient in the backward: 2 + 2c bytes per element
    // of X (m x k) and of dY (m x n) through HBM, 4 for fp8, and before it the scale pass's read
    // where the format needs one (nvfp4) (ours; weights are cast once per iteration and left
    // out).
    const double cast = g.scale_pass_bytes + detail::kActBytes + 2.0 * g.in_bytes;
    fwd += cast * m * k / g.hbm_Bps;
    *bwd += cast * m * n / g.hbm_Bps;
  }
  return fwd;
}

double dtype_peak_flops(const spec::GpuSpec& gpu, Dtype dtype) {
  if (dtype == Dtype::bf16) return gpu.peak_bf16_flops;
  if (spec::block_scaled(dtype) && gpu.peak_fp4_flops <= 0)
    throw InputError("--dtype", fmt::format("{} needs tensor cores that apply block scales "
                                            "(Blackwell); {} has none (use fp8 or bf16)",
                                            spec::to_string(dtype), gpu.name));
  if (gpu.peak_fp8_flops <= 0)
    throw InputError("--dtype", fmt::format("{} needs fp8 tensor cores; {} has none (use bf16)",
                                            spec::to_string(dtype), gpu.name));
  return dtype == Dtype::nvfp4 ? gpu.peak_fp4_flops : gpu.peak_fp8_flops;
}

GemmCaps make_gemm_caps(const spec::GpuSpec& gpu, Dtype dtype) {
  const spec::GpuEfficiency& e = gpu.eff;
  GemmCaps g;
  // Below bf16 the GEMMs reach the fp8 fraction of the precision's peak. MXFP8 runs at the fp8
  // rate times its GPU's published MXFP8-against-fp8 microbenchmark (gemm_bench_mx_over_fp8,
  // the same kernels' times with inputs quantized beforehand), the fp8 rate without one. NVFP4
  // runs at the rate its GPU's published NVFP4-against-MXFP8 microbenchmark gives over the
  // MXFP8 GEMMs' (gemm_bench_fp4_over_fp8); without one, at fp8's fraction of the fp4 peak
  // (ours).
  const bool low = spec::low_precision(dtype);
  const double frac = low && e.gemm_max_fp8 > 0 ? e.gemm_max_fp8 : e.gemm_max;
  const double mx = e.gemm_bench_mx_over_fp8 > 0 ? e.gemm_bench_mx_over_fp8 : 1.0;
  g.peak_flops = dtype_peak_flops(gpu, dtype) * frac;
  if (dtype == Dtype::mxfp8) g.peak_flops *= mx;
  if (dtype == Dtype::nvfp4 && e.gemm_bench_fp4_over_fp8 > 0)
    g.peak_flops =
        std::min(g.peak_flops, gpu.peak_fp8_flops * frac * mx * e.gemm_bench_fp4_over_fp8);
  g.sms = static_cast<double>(e.sm_count);
  g.tile_m = static_cast<double>(e.tile_m);
  g.tile_n = static_cast<double>(e.tile_n);
  g.k_overhead = e.gemm_k_overhead;
  g.in_bytes = spec::cast_bytes(dtype);
  // NVFP4's two-level scaling divides each tensor by one fp32 scale from its global amax before
  // the E4M3 scales of its 16-element blocks: a read of the bf16 tensor before the cast (ours,
  // after NVIDIA's NVFP4 pretraining recipe, arXiv 2509.25149, Sec. 4, and Transformer Engine's
  // NVFP4BlockScaling; the amax of the Hadamard-transformed weight-gradient inputs counted as
  // found in the same pass).
  if (dtype == Dtype::nvfp4) g.scale_pass_bytes = detail::kActBytes;
  g.hbm_Bps = gpu.hbm_bw_Bps * e.hbm;
  return g;
}

}  // namespace railsim::perf
