// libFuzzer target: the spec loaders (GPU, switch, catalog, model, stack, failure rates, and
// Calculon's application and system files as `--model` and `--gpu` detect them) on arbitrary
// bytes. The first byte picks the loader, the rest is the file's text. A loader either throws
// railsim::InputError or returns a spec whose figures are finite and positive and whose names and
// notes are printable text (they reach terminals and reports); anything else (another exception,
// a crash, a sanitizer report, a NaN) is a bug and aborts.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "check_error.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/spec/calculon.hpp"
#include "railsim/spec/catalog.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/stack.hpp"
#include "railsim/spec/switch.hpp"

namespace {

using railsim_fuzz::require;

bool positive(double x) {
  return std::isfinite(x) && x > 0;
}
void printable(const std::string& text) {
  require(!railsim::find_unprintable(text));
}

void load(int which, std::string_view text) {
  using namespace railsim;
  const Json j = parse_json(text, "fuzz");
  switch (which) {
    case 0: {
      const spec::GpuSpec g = spec::gpu_from_json(j, "gpu");
      printable(g.name);
      printable(g.source);
      require(positive(g.peak_bf16_flops) && positive(g.hbm_bytes) && positive(g.hb_bw_Bps) &&
              positive(g.nic_bw_Bps) && g.default_hb_domain >= 1);
      // The loaded GPU in a cluster of one HB domain: the derived rates stay finite.
      const spec::Cluster c =
          spec::make_cluster(g, g.default_hb_domain, g.default_hb_domain, g.nic_bw_Bps * 8e-9,
                             g.hb_bw_Bps * 1e-9, g.nics_per_gpu);
      require(positive(c.nic_bw_per_gpu_Bps()));
      break;
    }
    case 1: {
      const spec::SwitchSpec s = spec::switch_from_json(j, "switch");
      printable(s.name);
      printable(s.power.source);
      require(s.radix >= 1 && positive(s.port_gbps) && !s.modes.empty());
      break;
    }
    case 2:
      printable(spec::catalog_from_json(j, "catalog").name);
      break;
    case 3: {
      const spec::Model m = spec::model_from_json(j, "model");
      printable(m.name);
      printable(m.source);
      require(positive(m.total_params()) && positive(m.active_params()) &&
              m.active_params() <= m.total_params());
      break;
    }
    case 4:
      printable(spec::stack_from_json(j, "stack").name);
      break;
    case 5: {
      const spec::FailureRates r = spec::failure_rates_from_json(j, "rates");
      printable(r.name);
      for (const auto& c : r.classes) printable(c.name);
      break;
    }
    case 6:  // as --model: Calculon's format when its keys are there (both formats: an error)
      if (spec::is_calculon_application(j)) {
        const spec::Model m = spec::model_from_calculon(j, "calculon", "model");
        require(positive(m.total_params()) && m.layers >= 1);
      }
      break;
    default:  // as --gpu
      if (spec::is_calculon_system(j)) {
        const spec::GpuSpec g = spec::gpu_from_calculon(j, "calculon", "gpu");
        require(positive(g.peak_bf16_flops) && positive(g.hbm_bytes) && positive(g.nic_bw_Bps));
      }
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    load(data[0] % 8, text);
  } catch (const railsim::InputError& e) {
    railsim_fuzz::check_error(e);
  }
  return 0;
}
