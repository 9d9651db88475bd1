#include "railsim/spec/cluster.hpp"

#include <fmt/format.h>

#include "railsim/core/units.hpp"

namespace railsim::spec {

Cluster make_cluster(const GpuSpec& gpu, std::int64_t gpus, std::int64_t hb_domain, double nic_gbps,
                     double hb_gbytes_per_s, int nics_per_gpu) {
  Cluster c;
  c.gpu = gpu;
  c.gpus = check_integer("--gpus", gpus, 1, kMaxGpus);
  c.hb_domain = check_integer("--hb-domain", hb_domain, 1, c.gpus);
  if (c.gpus % c.hb_domain != 0)
    throw InputError("--hb-domain",
                     fmt::format("{} GPUs cannot be split into HB domains of {}: --gpus must be a "
                                 "multiple of --hb-domain",
                                 c.gpus, c.hb_domain));
  c.nic_bw_Bps = units::gbps_to_Bps(check_number("--nic-gbps", nic_gbps, Range::positive(1e6)));
  c.hb_bw_Bps =
      units::GBps_to_Bps(check_number("--hb-GBps", hb_gbytes_per_s, Range::positive(1e6)));
  c.nics_per_gpu = static_cast<int>(check_integer("--nics-per-gpu", nics_per_gpu, 1, 64));
  return c;
}

Cluster make_cluster(const ClusterOptions& opt) {
  const GpuSpec gpu = load_gpu(opt.gpu, "--gpu");
  const std::int64_t nics =
      check_integer("--nics-per-gpu", opt.nics_per_gpu.value_or(gpu.nics_per_gpu), 1, 64);
  return make_cluster(gpu, opt.gpus, opt.hb_domain.value_or(gpu.default_hb_domain),
                      opt.nic_gbps.value_or(units::Bps_to_gbps(gpu.nic_bw_Bps)),
                      opt.hb_gbytes_per_s.value_or(gpu.hb_bw_Bps / 1e9), static_cast<int>(nics));
}

}  // namespace railsim::spec
