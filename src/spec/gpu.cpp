#include "railsim/spec/gpu.hpp"

#include <filesystem>
#include <utility>

#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"
#include "railsim/spec/calculon.hpp"
#include "railsim/spec/preset.hpp"

namespace railsim::spec {

namespace {
// Rates (TFLOP/s, GB/s, Gb/s) from 1 to 10^6: below 1 a figure is a typo or a unit mix-up and
// would only turn into infinite times downstream.
const Range kRate = Range::between(1.0, 1e6);
// Achieved fractions of a peak: from 1% (below it a figure is a typo, and times would run to
// infinity) to 100%.
const Range kFraction = Range::between(0.01, 1.0);
}  // namespace

GpuSpec gpu_from_json(const Json& j, const std::string& path) {
  JsonObject o(j, path);
  GpuSpec g;
  g.name = o.string("name");
  g.peak_bf16_flops = units::tflops_to_flops(o.number("peak_bf16_tflops", kRate));
  // 0 (the default) is a GPU without fp8; otherwise a rate like the others.
  const double fp8 = o.number_or("peak_fp8_tflops", 0, Range::non_negative(1e6));
  if (fp8 != 0) check_number(o.field("peak_fp8_tflops"), fp8, kRate);
  g.peak_fp8_flops = units::tflops_to_flops(fp8);
  const double fp4 = o.number_or("peak_fp4_tflops", 0, Range::non_negative(1e6));
  if (fp4 != 0) check_number(o.field("peak_fp4_tflops"), fp4, kRate);
  g.peak_fp4_flops = units::tflops_to_flops(fp4);
  const double power = o.number_or("power_w", 0, Range::non_negative(1e5));
  if (power != 0) check_number(o.field("power_w"), power, Range::between(1.0, 1e5));
  g.power_w = power;
  g.hbm_bytes = o.number("hbm_gib", Range::between(1.0, 1e5)) * units::kGiB;
  g.hbm_bw_Bps = units::GBps_to_Bps(o.number("hbm_gbytes_per_s", kRate));
  g.hb_bw_Bps = units::GBps_to_Bps(o.number("hb_gbytes_per_s_per_direction", kRate));
  g.default_hb_domain = static_cast<int>(o.integer("default_hb_domain", 1, 1 << 20));
  g.nic_bw_Bps = units::gbps_to_Bps(o.number("nic_gbps", kRate));
  g.nics_per_gpu = static_cast<int>(o.integer_or("nics_per_gpu", 1, 1, 64));
  g.hb_planes = static_cast<int>(o.integer_or("hb_planes", 0, 0, 1024));
  const double host = o.number_or("host_gbytes_per_s_per_direction", 0, Range::non_negative(1e6));
  if (host != 0) check_number(o.field("host_gbytes_per_s_per_direction"), host, kRate);
  g.host_bw_Bps = units::GBps_to_Bps(host);
  const double host_mem = o.number_or("host_memory_gib", 0, Range::non_negative(1e7));
  if (host_mem != 0) check_number(o.field("host_memory_gib"), host_mem, Range::between(1.0, 1e7));
  g.host_memory_bytes = host_mem * units::kGiB;
  if (auto e = o.object_opt("efficiency")) {
    g.eff.gemm_max = e->number_or("gemm_max", g.eff.gemm_max, kFraction);
    const double fp8_max = e->number_or("gemm_max_fp8", 0, Range::non_negative(1.0));
    if (fp8_max != 0) check_number(e->field("gemm_max_fp8"), fp8_max, kFraction);
    g.eff.gemm_max_fp8 = fp8_max;
    g.eff.sm_count = static_cast<int>(e->integer_or("sm_count", g.eff.sm_count, 1, 1 << 16));
    g.eff.tile_m = static_cast<int>(e->integer_or("tile_m", g.eff.tile_m, 1, 4096));
    g.eff.tile_n = static_cast<int>(e->integer_or("tile_n", g.eff.tile_n, 1, 4096));
    g.eff.gemm_k_overhead =
        e->number_or("gemm_k_overhead", g.eff.gemm_k_overhead, Range::non_negative(1e6));
    // A figure that is 0 where none is published (absent or 0), else a number in `r`: a value
    // outside both is refused with `r`, the range a published figure must be in.
    const auto zero_or = [&](const char* key, Range r) {
      const double v = e->number_or(key, 0, Range{});
      if (v != 0) check_number(e->field(key), v, r);
      return v;
    };
    g.eff.attention = e->number_or("attention", g.eff.attention, kFraction);
    g.eff.flash_attention = zero_or("flash_attention", kFraction);
    g.eff.flash_attention_fa2 = zero_or("flash_attention_fa2", kFraction);
    g.eff.flash_attention_fa1 = zero_or("flash_attention_fa1", kFraction);
    g.eff.flash_attention_bwd = zero_or("flash_attention_bwd", kFraction);
    g.eff.flash_attention_fa2_bwd = zero_or("flash_attention_fa2_bwd", kFraction);
    g.eff.kernel_gap_s =
        e->number_or("kernel_gap_s", g.eff.kernel_gap_s, Range::non_negative(1e-2));
    g.eff.hbm = e->number_or("hbm", g.eff.hbm, kFraction);
    g.eff.collective_latency_s =
        e->number_or("collective_latency_s", g.eff.collective_latency_s, Range::non_negative(1.0));
    g.eff.nic = e->number_or("nic", g.eff.nic, kFraction);
    g.eff.hb = e->number_or("hb", g.eff.hb, kFraction);
    g.eff.gemm_bench_bf16 = zero_or("gemm_bench_bf16", kFraction);
    g.eff.gemm_bench_fp8 = zero_or("gemm_bench_fp8", kFraction);
    g.eff.gemm_bench_fp4_over_fp8 = zero_or("gemm_bench_fp4_over_fp8", Range::between(1.0, 16.0));
    g.eff.gemm_bench_mx_over_fp8 = zero_or("gemm_bench_mx_over_fp8", Range::between(0.1, 2.0));
    e->finish();
  }
  g.source = o.source();
  o.finish();
  return g;
}

GpuSpec load_gpu(const std::string& arg, const std::string& option) {
  const Json j = load_preset_or_file("gpus", arg, option);
  if (is_calculon_system(j)) {  // a Calculon system file (spec/calculon.hpp)
    CalculonImport info;
    GpuSpec g =
        gpu_from_calculon(j, printable(std::filesystem::path(arg).stem().string()), "gpu", &info);
    if (const std::string w = calculon_warning(option, arg, "system", info); !w.empty()) warn(w);
    return g;
  }
  return gpu_from_json(j, "gpu");
}

}  // namespace railsim::spec
