#include "railsim/spec/network.hpp"

#include <fmt/format.h>

namespace railsim::spec {

std::string_view to_string(DesignKind k) {
  switch (k) {
    case DesignKind::rail_optimized:
      return "rail_optimized";
    case DesignKind::rail_only:
      return "rail_only";
    case DesignKind::ideal:
      return "ideal";
  }
  return "?";
}

DesignKind parse_design_kind(std::string_view s, const std::string& option) {
  for (DesignKind k : {DesignKind::rail_optimized, DesignKind::rail_only, DesignKind::ideal})
    if (s == to_string(k)) return k;
  throw InputError(
      option, "unknown design '" + std::string(s) + "'; valid: rail_optimized, rail_only, ideal");
}

NetworkDesign make_network_design(DesignKind kind, const SwitchSpec& sw, double oversubscription,
                                  int oversubscribed_tier, bool copper_gpu_leaf,
                                  int management_links) {
  NetworkDesign d;
  d.kind = kind;
  d.sw = sw;
  if (sw.radix < 2 || sw.radix % 2 != 0)
    throw InputError("--switch", fmt::format("radix {} of switch '{}' is invalid; expected an even "
                                             "number >= 2",
                                             sw.radix, sw.name));
  // 1:1 up to 1:63 covers every production design (Meta uses 1:7 between pods).
  d.oversubscription =
      check_number("--oversubscription", oversubscription, Range::between(1.0, 63.0));
  d.oversubscribed_tier =
      static_cast<int>(check_integer("--oversubscribed-tier", oversubscribed_tier, 1, 8));
  d.copper_gpu_leaf = copper_gpu_leaf;
  d.management_links =
      static_cast<int>(check_integer("--management-links", management_links, 0, 1 << 20));
  return d;
}

NetworkDesign make_network_design(const NetworkOptions& opt) {
  const DesignKind kind = parse_design_kind(opt.design, "--design");
  return make_network_design(kind, load_switch(opt.sw, "--switch"), opt.oversubscription,
                             opt.oversubscribed_tier, opt.copper_gpu_leaf, opt.management_links);
}

}  // namespace railsim::spec
