#include "commands.hpp"

namespace railsim::cli {

void add_cluster_options(CLI::App& cmd, spec::ClusterOptions& opt) {
  cmd.add_option("--gpus", opt.gpus, "Number of GPUs N")->capture_default_str();
  cmd.add_option("--gpu", opt.gpu, "GPU preset name or JSON file (see `railsim presets`)")
      ->capture_default_str();
  cmd.add_option("--hb-domain", opt.hb_domain,
                 "GPUs per HB (NVLink) domain K; must divide N (default: the GPU preset's)");
  cmd.add_option("--nic-gbps", opt.nic_gbps, "NIC speed per GPU in Gb/s (default: the GPU preset's)");
  cmd.add_option("--hb-GBps", opt.hb_gbytes_per_s,
                 "HB-domain bandwidth per GPU per direction in GB/s (default: the GPU preset's)");
  cmd.add_option("--nics-per-gpu", opt.nics_per_gpu, "NICs per GPU (default: the GPU preset's)");
}

}  // namespace railsim::cli
