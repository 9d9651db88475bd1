#pragma once
// The cluster: N GPUs in HB domains of K GPUs (D = N/K domains). GPU g sits in domain g / K and
// has local rank (rail) g % K. Each GPU has `nics_per_gpu` NICs of nic_bw_Bps each.
#include <cstdint>
#include <optional>
#include <string>

#include "railsim/spec/gpu.hpp"

namespace railsim::spec {

// Largest cluster accepted; beyond it inputs are treated as a typo (10^12 GPUs), not a design.
inline constexpr std::int64_t kMaxGpus = std::int64_t{1} << 24;  // 16,777,216
inline constexpr std::int64_t kDefaultGpus = 32768;              // the paper's cluster size
inline constexpr const char* kDefaultGpu = "H100-SXM";

// The paper's reference clusters: 32,768 GH200 in HB domains of 256 (NVLink Switch System) and
// 32,768 H100 in domains of 8 (DGX H100), the two that compare, the studies and the HTML report
// show; and the cluster sizes of its studies and savings table (1k to 128k GPUs).
struct ReferenceCluster {
  const char* gpu;
  std::int64_t gpus;
  std::int64_t hb_domain;
};
inline constexpr ReferenceCluster kPaperClusters[] = {{"GH200", kDefaultGpus, 256},
                                                      {kDefaultGpu, kDefaultGpus, 8}};
inline constexpr std::int64_t kPaperClusterSizes[] = {1024,  2048,  4096,  8192,
                                                      16384, 32768, 65536, 131072};

struct Cluster {
  GpuSpec gpu;
  std::int64_t gpus = 0;       // N
  std::int64_t hb_domain = 8;  // K
  double hb_bw_Bps = 0;        // per GPU per direction inside the HB domain
  double nic_bw_Bps = 0;       // per NIC per direction
  int nics_per_gpu = 1;

  std::int64_t domains() const { return gpus / hb_domain; }
  std::int64_t domain_of(std::int64_t g) const { return g / hb_domain; }
  std::int64_t rail_of(std::int64_t g) const { return g % hb_domain; }
  std::int64_t gpu_at(std::int64_t domain, std::int64_t rail) const {
    return domain * hb_domain + rail;
  }
  double nic_bw_per_gpu_Bps() const { return nic_bw_Bps * nics_per_gpu; }
};

// What the user asked for; an unset field takes the GPU preset's default.
struct ClusterOptions {
  std::string gpu = kDefaultGpu;
  // 0: about kDefaultGpus, rounded down to a whole number of HB domains (32,768 GPUs for K = 8 or
  // 256; 32,760 = 455 NVL72 racks for K = 72).
  std::int64_t gpus = 0;
  std::optional<std::int64_t> hb_domain;
  std::optional<double> nic_gbps;
  std::optional<double> hb_gbytes_per_s;
  std::optional<std::int64_t> nics_per_gpu;
};

// Validates: N in [1, kMaxGpus], K in [1, N] dividing N (else the error names the nearest
// multiples of K), bandwidths > 0. Errors name the option ("--gpus", "--hb-domain", ...).
Cluster make_cluster(const GpuSpec& gpu, std::int64_t gpus, std::int64_t hb_domain, double nic_gbps,
                     double hb_gbytes_per_s, int nics_per_gpu);
// Resolves the GPU preset, then calls make_cluster. Unset fields (0) take the preset's values.
Cluster make_cluster(const ClusterOptions& opt);

// A job on part of a cluster (--job-gpus J): the same GPUs, HB domains and NICs, J of them, in
// whole HB domains (a scheduler hands out whole NVLink domains: an NVL72 rack is one), placed on
// the first J / K domains of the network. Errors name --job-gpus: J below K, above N, or not a
// multiple of K (with the nearest whole numbers of domains).
Cluster job_cluster(const Cluster& cluster, std::int64_t job_gpus);

}  // namespace railsim::spec
