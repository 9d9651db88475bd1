#pragma once
// One switch model for the scale-out (NIC) network.
#include <optional>
#include <string>
#include <vector>

#include "railsim/core/json_fwd.hpp"

namespace railsim::spec {

// One way to configure a switch's ports: radix ports at port_gbps (e.g. a 51.2 Tb/s chip as
// 64 x 800G, 128 x 400G or 256 x 200G, by port splitting or breakout cables).
struct PortMode {
  int radix = 0;
  double port_gbps = 0;
};

// Watts of one switch box, typical, without transceivers, as its data sheet gives them ("power" in
// the JSON: {"typical_w": W, "source": "..."}). typical_w is 0 when the preset has no published
// figure; the catalog's per-port figure applies then (docs/design.md section 4).
struct SwitchPower {
  double typical_w = 0;
  std::string source;
  bool known() const { return typical_w > 0; }
};

struct SwitchSpec {
  std::string name;
  int radix = 64;          // ports at port_gbps (the configured mode)
  double port_gbps = 400;  // per port, per direction
  std::string family;      // "infiniband" or "ethernet"; informational
  std::string source;
  // The box's data-sheet watts; the same in every port mode (the same chip and lanes; ours).
  SwitchPower power;
  // Every supported mode, the configured one included ("port_modes" in the JSON; by default the
  // configured one only).
  std::vector<PortMode> modes;
  // Set when the switch runs in a mode other than its preset's (see fit_to_nics): the preset's
  // configured mode, for reports ("ETH-51.2T-128x400G as 64 x 800G").
  PortMode preset_mode;
  bool remoded() const { return preset_mode.radix > 0; }
  std::string describe() const;    // the name, or "ETH-51.2T-128x400G in 64 x 800G mode"
  std::string modes_text() const;  // "128 x 400G, 64 x 800G, 256 x 200G" (the configured one alone
                                   // when no modes are listed)
};

SwitchSpec switch_from_json(const Json& j, const std::string& path);
SwitchSpec load_switch(const std::string& arg, const std::string& option = "--switch");

// The switch as it must be configured to serve NICs of nic_gbps: the mode whose port speed equals
// the NIC speed when the switch has one (an 800G NIC on a 51.2T switch sold as 128 x 400G runs it
// as 64 x 800G); otherwise the configured mode, where a NIC slower than the port runs its link at
// the NIC's speed. A NIC faster than every port mode cannot be cabled at full speed: InputError
// naming `option` (the NIC speed's option) and both speeds.
// The switch run in its port mode of exactly `port_gbps` (the configured one or another of its
// modes), or nullopt when it has none.
std::optional<SwitchSpec> in_port_mode(const SwitchSpec& sw, double port_gbps);
SwitchSpec fit_to_nics(const SwitchSpec& sw, double nic_gbps,
                       const std::string& option = "--nic-gbps");

}  // namespace railsim::spec
