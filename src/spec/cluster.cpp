#include "railsim/spec/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "railsim/core/checks.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/units.hpp"

namespace railsim::spec {

namespace {
std::string with_thousands(std::int64_t v) {
  const std::string digits = std::to_string(v);
  const std::size_t sign = digits[0] == '-' ? 1 : 0;
  std::string s;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}
}  // namespace

Cluster make_cluster(const GpuSpec& gpu, std::int64_t gpus, std::int64_t hb_domain, double nic_gbps,
                     double hb_gbytes_per_s, int nics_per_gpu) {
  Cluster c;
  c.gpu = gpu;
  c.gpus = check_integer("--gpus", gpus, 1, kMaxGpus);
  c.hb_domain = check_integer("--hb-domain", hb_domain, 1, c.gpus);
  if (c.gpus % c.hb_domain != 0) {
    const std::int64_t below = c.gpus / c.hb_domain, above = below + 1;
    std::string near = below > 0
                           ? fmt::format("{} ({} x {}) or ", with_thousands(below * c.hb_domain),
                                         below, c.hb_domain)
                           : "";
    throw InputError("--hb-domain",
                     fmt::format("{} GPUs cannot be split into HB domains of {}: --gpus must be a "
                                 "multiple of --hb-domain; the nearest are {}{} ({} x {})",
                                 with_thousands(c.gpus), c.hb_domain, near,
                                 with_thousands(above * c.hb_domain), above, c.hb_domain));
  }
  c.nic_bw_Bps = units::gbps_to_Bps(check_number("--nic-gbps", nic_gbps, Range::between(1.0, 1e6)));
  c.hb_bw_Bps =
      units::GBps_to_Bps(check_number("--hb-GBps", hb_gbytes_per_s, Range::between(1.0, 1e6)));
  c.nics_per_gpu = static_cast<int>(check_integer("--nics-per-gpu", nics_per_gpu, 1, 64));
  return c;
}

Cluster make_cluster(const ClusterOptions& opt) {
  const GpuSpec gpu = load_gpu(opt.gpu, "--gpu");
  const std::int64_t nics =
      check_integer("--nics-per-gpu", opt.nics_per_gpu.value_or(gpu.nics_per_gpu), 1, 64);
  const std::int64_t k = opt.hb_domain.value_or(gpu.default_hb_domain);
  // Unset: the paper's 32,768 GPUs, in whole HB domains of the GPU's K.
  const std::int64_t gpus =
      opt.gpus != 0 ? opt.gpus
                    : (k >= 1 && k <= kDefaultGpus ? kDefaultGpus / k * k : kDefaultGpus);
  return make_cluster(gpu, gpus, k, opt.nic_gbps.value_or(units::Bps_to_gbps(gpu.nic_bw_Bps)),
                      opt.hb_gbytes_per_s.value_or(gpu.hb_bw_Bps / 1e9), static_cast<int>(nics));
}

Cluster job_cluster(const Cluster& cluster, std::int64_t job_gpus) {
  const std::int64_t k = cluster.hb_domain;
  const std::int64_t j = check_integer("--job-gpus", job_gpus, 1, cluster.gpus);
  if (j % k != 0 || j < k) {
    const std::int64_t below = j / k, above = std::min(below + 1, cluster.domains());
    throw InputError(
        "--job-gpus",
        fmt::format(
            "a job takes whole HB domains of {} GPUs: {} is not one; the nearest are {}{} "
            "({} domains) of the cluster's {}",
            k, with_thousands(j),
            below > 0 ? fmt::format("{} ({} domains) or ", with_thousands(below * k), below) : "",
            with_thousands(above * k), above, with_thousands(cluster.gpus)));
  }
  Cluster job = cluster;
  job.gpus = j;
  return job;
}

}  // namespace railsim::spec
