#include <cmath>
#include <cstdlib>

#include "commands.hpp"
#include "railsim/core/json.hpp"

namespace railsim::cli {

std::int64_t parse_integer_option(const std::string& option, const std::string& text,
                                  std::int64_t min, std::int64_t max) {
  // Accept "32768" and also "1e12"/"3.2e4", so that a huge or fractional value gets the range
  // message instead of a bare conversion failure.
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(v))
    throw InputError(option, "'" + text + "' is not a number; expected an integer from " +
                                 std::to_string(min) + " to " + std::to_string(max));
  if (v != std::floor(v))
    throw InputError(option, "got " + text + ", expected an integer from " + std::to_string(min) +
                                 " to " + std::to_string(max));
  if (v < static_cast<double>(min) || v > static_cast<double>(max))
    throw InputError(option, "got " + text + ", expected an integer from " + std::to_string(min) +
                                 " to " + std::to_string(max));
  return static_cast<std::int64_t>(v);
}

void add_cluster_options(CLI::App& cmd, spec::ClusterOptions& opt) {
  cmd.add_option_function<std::string>(
         "--gpus",
         [&opt](const std::string& s) {
           opt.gpus = parse_integer_option("--gpus", s, 1, spec::kMaxGpus);
         },
         "Number of GPUs N (default 32768, rounded down to a multiple of the HB-domain size K: "
         "32760 for K = 72)")
      ->type_name("INT");
  cmd.add_option("--gpu", opt.gpu, "GPU preset name or JSON file (see `railsim presets`)")
      ->capture_default_str();
  cmd.add_option_function<std::string>(
         "--hb-domain",
         [&opt](const std::string& s) {
           opt.hb_domain = parse_integer_option("--hb-domain", s, 1, spec::kMaxGpus);
         },
         "GPUs per HB (NVLink) domain K; must divide N (default: the GPU preset's)")
      ->type_name("INT");
  cmd.add_option("--nic-gbps", opt.nic_gbps,
                 "NIC speed per GPU in Gb/s (default: the GPU preset's)");
  cmd.add_option("--hb-GBps", opt.hb_gbytes_per_s,
                 "HB-domain bandwidth per GPU per direction in GB/s (default: the GPU preset's)");
  cmd.add_option_function<std::string>(
         "--nics-per-gpu",
         [&opt](const std::string& s) {
           opt.nics_per_gpu = parse_integer_option("--nics-per-gpu", s, 1, 64);
         },
         "NICs per GPU (default: the GPU preset's)")
      ->type_name("INT");
}

}  // namespace railsim::cli
