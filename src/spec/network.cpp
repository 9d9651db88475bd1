#include "railsim/spec/network.hpp"

namespace railsim::spec {

std::string_view to_string(DesignKind k) {
  switch (k) {
    case DesignKind::rail_optimized: return "rail_optimized";
    case DesignKind::rail_only: return "rail_only";
    case DesignKind::ideal: return "ideal";
  }
  return "?";
}

DesignKind parse_design_kind(std::string_view s, const std::string& option) {
  for (DesignKind k : {DesignKind::rail_optimized, DesignKind::rail_only, DesignKind::ideal})
    if (s == to_string(k)) return k;
  throw InputError(option, "unknown design '" + std::string(s) +
                               "'; valid: rail_optimized, rail_only, ideal");
}

}  // namespace railsim::spec
