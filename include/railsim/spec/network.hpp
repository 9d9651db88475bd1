#pragma once
// A network design: which topology is built over the cluster's NICs, from which switch.
#include <string>
#include <string_view>

#include "railsim/spec/switch.hpp"

namespace railsim::spec {

enum class DesignKind { rail_optimized, rail_only, ideal };

std::string_view to_string(DesignKind k);
// Throws InputError(option, ...) listing the valid names.
DesignKind parse_design_kind(std::string_view s, const std::string& option = "--design");

struct NetworkDesign {
  DesignKind kind = DesignKind::rail_optimized;
  SwitchSpec sw;
  // Leaf downlink:uplink ratio (1 = non-blocking; 7 = 1:7 as between Meta's pods). Applies to the
  // tier given by oversubscribed_tier (1 = leaf uplinks, 2 = spine uplinks, ...).
  double oversubscription = 1.0;
  int oversubscribed_tier = 1;
  bool copper_gpu_leaf = false;  // passive DAC for in-rack GPU-leaf links instead of optics
};

}  // namespace railsim::spec
