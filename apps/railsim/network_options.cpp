#include "network_options.hpp"

namespace railsim::cli {

void add_network_options(CLI::App& cmd, NetworkOptions& opt, bool with_design) {
  if (with_design)
    cmd.add_option("--design", opt.design, "Network design: rail_optimized, rail_only or ideal")
        ->capture_default_str();
  cmd.add_option("--switch", opt.sw,
                 "Switch preset name or JSON file (see `railsim presets switches`)")
      ->capture_default_str();
  cmd.add_option("--oversubscription", opt.oversubscription,
                 "Down:up port ratio R (R:1) at the oversubscribed tier; 1 = non-blocking")
      ->capture_default_str();
  cmd.add_option("--oversubscribed-tier", opt.oversubscribed_tier,
                 "Tier whose uplinks are oversubscribed: 1 = leaf, 2 = spine, ...")
      ->capture_default_str();
  cmd.add_flag("--copper-gpu-leaf", opt.copper_gpu_leaf,
               "Passive copper DAC for in-rack GPU-leaf links (no transceivers on them)");
  cmd.add_option("--management-links", opt.management_links,
                 "Extra leaf links to non-GPU endpoints such as the UFM fabric manager (DGX H100 "
                 "SuperPOD RA: 4)")
      ->capture_default_str();
}

void add_routing_options(CLI::App& cmd, NetworkOptions& opt) {
  cmd.add_option("--routing", opt.routing, kRoutingHelp)->capture_default_str();
  cmd.add_option("--seed", opt.seed, kSeedHelp)->capture_default_str();
  cmd.add_option("--forwarding", opt.forwarding,
                 "Rail-only forwarding of cross-rail transfers through an HB-domain peer: store "
                 "(each transfer whole, leg after leg), pipelined (in --chunks pieces, the legs "
                 "overlapping) or two-phase (every first leg, a barrier, then the rest: the "
                 "paper's non-overlapped all-to-all)")
      ->capture_default_str();
  cmd.add_option("--forward-via", opt.forward_via,
                 "Forwarding peer: hb_first (HB hop, then the destination's rail) or rail_first")
      ->capture_default_str();
  cmd.add_option("--chunks", opt.chunks, "Pieces per forwarded transfer when pipelined")
      ->capture_default_str();
}

spec::NetworkDesign resolve_network(const NetworkOptions& opt) {
  return spec::make_network_design(opt);
}

}  // namespace railsim::cli
