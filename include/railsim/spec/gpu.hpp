#pragma once
// One GPU model: compute, memory and the two networks it attaches to (HB domain and NIC).
#include <cmath>
#include <string>

#include "railsim/core/json_fwd.hpp"

namespace railsim::spec {

// The one fraction of its published GEMM microbenchmarks (gemm_bench_bf16, gemm_bench_fp8) that
// a GPU's GEMMs reach in training, both precisions alike: what the GEMM model does not see
// (kernel choice, concurrent kernels, clocks under load). Fitted on H100's three fit runs, the
// hundredth that minimises the worst of their errors (docs/model.md section 1, docs/validation.md).
inline constexpr double kGemmBenchFraction = 0.70;

// The GEMM fraction (gemm_max or gemm_max_fp8) a preset carries for a microbenchmark `bench` at
// the fraction `e` of it: e x bench to the hundredth, the rule every preset with benchmarks keeps.
inline double gemm_fraction_of_bench(double bench, double e = kGemmBenchFraction) {
  return std::round(100 * e * bench) / 100;
}

// Efficiency constants of the iteration-time model, set once per GPU preset (never per case);
// see docs/model.md for what each one means and where it comes from.
struct GpuEfficiency {
  // GEMMs (docs/model.md section 3): a kernel tiles the m x n output into tile_m x tile_n tiles,
  // runs them in waves over the SMs, and loops over k; its time is the larger of the tensor-core
  // time at gemm_max of peak, derated by the tiles' fill and the k-loop's fixed cost, and the HBM
  // time of its operands.
  double gemm_max = 0.80;   // fraction of the bf16 peak reached by large, well-shaped GEMMs
  double gemm_max_fp8 = 0;  // the same for fp8 GEMMs (of the fp8 peak); 0: gemm_max
  int sm_count = 108;       // streaming multiprocessors (tiles run in waves of this many)
  int tile_m = 128;         // output tile of the GEMM kernels (rows x columns)
  int tile_n = 256;
  double gemm_k_overhead = 0;  // fixed cost of a tile's prologue/epilogue, in elements of k
  double attention = 0.50;     // fraction of peak reached by unfused attention score/context GEMMs
  double flash_attention = 0;  // fraction of peak of fused (flash) attention; 0: gemm_max
  // The same for FlashAttention-2-class kernels (PyTorch's SDPA) on stacks that run them
  // (Stack::attention_kernel fa2); 0: flash_attention. On Hopper they reach less than the fused
  // kernels of Transformer Engine and cuDNN (Shah et al. 2024, FlashAttention-3: FA2 35% of
  // H100's peak, FA3 75%).
  double flash_attention_fa2 = 0;
  // The same for FlashAttention-1-class kernels (FlashAttention 2022 in CUDA, and its Triton port
  // that LLM Foundry ran; Stack::attention_kernel fa1); 0: half the FlashAttention-2-class
  // fraction (FlashAttention-2 "around 2x" FlashAttention's speed, 50-73% of A100's peak against
  // 25-40%: Dao 2023). Their backward keeps the FlashAttention-2-class kernels' ratio to it.
  double flash_attention_fa1 = 0;
  // The backward kernels' fraction of peak, for each of the two (of the 2.5x forward FLOPs they
  // run, Dao 2023); 0: 0.86 of the forward's, as FlashAttention-2, cuDNN and FlashAttention-3
  // all measure on H100 (Shah et al. 2024). A published attention microbenchmark of the GPU sets
  // them where the ratio differs (Blackwell: 0.76 to 0.81, docs/model.md section 3).
  double flash_attention_bwd = 0;
  double flash_attention_fa2_bwd = 0;
  double hbm = 0.80;                   // fraction of HBM bandwidth reached by element-wise kernels
  double kernel_gap_s = 0;             // idle time between two dependent kernels (launch, tail)
  double collective_latency_s = 8e-6;  // fixed cost per collective step
  double nic = 0.85;                   // fraction of NIC line rate a collective reaches
  double hb = 0.80;                    // fraction of HB-domain bandwidth a collective reaches
  // Published GEMM microbenchmarks: the fraction of the dense peak that the best-shaped large GEMM
  // reached (a brute-force shape search with torch.mm, or the vendor's own measurement), bf16 and
  // fp8; 0 when none is published. A preset's gemm_max and gemm_max_fp8 are
  // gemm_fraction_of_bench of these (docs/model.md section 1); tests/spec checks every preset
  // against that rule.
  double gemm_bench_bf16 = 0;
  double gemm_bench_fp8 = 0;
  // A published microbenchmark of NVFP4 GEMMs against MXFP8 ones on the same shapes (kernels
  // alone, inputs quantized beforehand): how many times faster NVFP4 ran. NVFP4 GEMMs then reach
  // that many times the MXFP8 GEMMs' rate (below), gemm_max_fp8 x gemm_bench_mx_over_fp8 x this
  // x peak_fp8 / peak_fp4 of the fp4 peak; 0 when none is published: fp8's fraction of the fp4
  // peak (docs/model.md section 3).
  double gemm_bench_fp4_over_fp8 = 0;
  // A published microbenchmark of MXFP8 GEMMs against per-tensor-scaled fp8 ones on the same
  // shapes (kernels alone, inputs quantized beforehand): the fp8 kernels' time over the MXFP8
  // kernels' (below 1: MXFP8 slower, its block scales read and applied in the main loop). MXFP8
  // GEMMs, and the NVFP4 ones measured against them, reach that fraction of the fp8 GEMMs' rate;
  // 0 when none is published: the fp8 rate (docs/model.md section 3).
  double gemm_bench_mx_over_fp8 = 0;
};

struct GpuSpec {
  std::string name;
  double peak_bf16_flops = 0;  // dense
  double peak_fp8_flops = 0;   // dense; 0 when the GPU has no fp8 tensor cores
  double peak_fp4_flops = 0;   // dense NVFP4 / MXFP4; 0 when not given (not yet a training dtype)
  double power_w = 0;          // board power (TDP / TGP), W; 0 when not given
  double hbm_bytes = 0;
  double hbm_bw_Bps = 0;
  double hb_bw_Bps = 0;       // HB-domain (NVLink) bandwidth per GPU per direction
  int default_hb_domain = 8;  // GPUs per HB domain in the reference system
  double nic_bw_Bps = 0;      // per NIC, per direction
  int nics_per_gpu = 1;
  // Switch planes of the HB domain of the reference system (NVSwitch chips of an HGX board, NVLink
  // switch trays of an NVL72 rack), each GPU's links spread over them; 0 when not given. A dead
  // plane takes 1/hb_planes of every GPU's HB bandwidth in its domain.
  int hb_planes = 0;
  // The link to host memory (PCIe, or NVLink-C2C on Grace superchips), per direction, as the
  // datasheet gives it; 0 when not given (activation offload then cannot be timed).
  double host_bw_Bps = 0;
  // Host memory per GPU in the reference system (its CPU memory over its GPUs), bytes; 0 when not
  // given (activation offload then cannot be checked for room).
  double host_memory_bytes = 0;
  GpuEfficiency eff;
  std::string source;
};

GpuSpec gpu_from_json(const Json& j, const std::string& path);
// arg: preset name or JSON file; option: CLI option for errors ("--gpu").
GpuSpec load_gpu(const std::string& arg, const std::string& option = "--gpu");

}  // namespace railsim::spec
