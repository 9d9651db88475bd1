#pragma once
// Component catalog: price and watts of each thing a bill of materials counts. A catalog is a
// named scenario with a source for each figure (presets in data/catalogs/, or a user's JSON file).
//
// Switch and transceiver figures are per 400G-equivalent port and scale linearly with the port
// speed (an 800G port costs twice a 400G one; ours, docs/design.md).
#include <string>
#include <string_view>

#include "railsim/core/json_fwd.hpp"

namespace railsim::spec {

struct PricePower {
  double price_usd = 0;
  double power_w = 0;
  std::string source;
};

// Where a switch box's watts come from: the switch preset's data-sheet figure when it has one
// (`preset`, the default), or always the catalog's own per-switch and per-port figures
// (`catalog`: a scenario that fixes its own ratios, like paper-ratio). "power_from" in the
// catalog's "switch" object; docs/design.md section 4.
enum class SwitchPowerFrom { preset, catalog };
std::string_view to_string(SwitchPowerFrom f);

struct Catalog {
  std::string name;
  std::string about;
  PricePower switch_fixed;  // per switch box, whatever its radix
  PricePower switch_port;   // per 400G-equivalent port
  SwitchPowerFrom switch_power_from = SwitchPowerFrom::preset;
  PricePower nic_transceiver;        // per single-port module on the NIC side, 400G-equivalent
  PricePower switch_transceiver;     // per module on the switch side, 400G-equivalent per port
  int switch_transceiver_ports = 2;  // switch ports one module serves (twin-port OSFP: 2)
  // Co-packaged optics ("co_packaged": true in "switch_transceiver"): the switch-side optics are
  // in the switch package, not modules. switch_transceiver is then per switch port (ports 1),
  // counted on every switch port paid for (whole switches: every port bought; port counting:
  // the cabled ones), and part of the switch's cost and power; there are no switch-side
  // modules, and every port is optical (no copper GPU-leaf links). docs/design.md section 4.
  bool switch_optics_co_packaged = false;
  PricePower optical_cable;  // fibre per optical link
  PricePower copper_dac;     // passive DAC per copper link
  PricePower nic;            // per NIC (reported apart: equal in rail_optimized and rail_only)
};

Catalog catalog_from_json(const Json& j, const std::string& path);
// arg: preset name (data/catalogs/) or JSON file; option names the CLI option for errors.
Catalog load_catalog(const std::string& arg, const std::string& option = "--catalog");

inline constexpr const char* kDefaultCatalog = "ib-ndr-thirdparty-2024";

}  // namespace railsim::spec
