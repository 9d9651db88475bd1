#include "railsim/spec/switch.hpp"

#include <fmt/format.h>

#include <cmath>

#include "railsim/core/json.hpp"
#include "railsim/spec/preset.hpp"

namespace railsim::spec {

SwitchSpec switch_from_json(const Json& j, const std::string& path) {
  JsonObject o(j, path);
  SwitchSpec s;
  s.name = o.string("name");
  const auto radix = o.integer("radix", 2, 1 << 16);
  if (radix % 2 != 0)
    throw InputError(o.field("radix"),
                     fmt::format("got {}, expected an even number >= 2 (a folded Clos splits ports "
                                 "half down, half up)",
                                 radix));
  s.radix = static_cast<int>(radix);
  s.port_gbps = o.number("port_gbps", Range::between(1.0, 1e6));
  s.family = o.string_or("family", "");
  s.modes.push_back({s.radix, s.port_gbps});
  if (o.has("port_modes")) {
    const Json& arr = o.raw("port_modes");
    const std::string f = o.field("port_modes");
    if (!arr.is_array())
      throw InputError(f, "expected an array of {\"radix\": R, \"port_gbps\": G} objects");
    const double capacity = s.radix * s.port_gbps;
    for (std::size_t i = 0; i < arr.size(); ++i) {
      JsonObject m(arr[i], fmt::format("{}[{}]", f, i));
      PortMode pm;
      const auto r = m.integer("radix", 2, 1 << 16);
      if (r % 2 != 0)
        throw InputError(m.field("radix"), fmt::format("got {}, expected an even number >= 2", r));
      pm.radix = static_cast<int>(r);
      pm.port_gbps = m.number("port_gbps", Range::between(1.0, 1e6));
      m.finish();
      // A mode splits or joins the same lanes: the switching capacity does not change.
      if (std::abs(pm.radix * pm.port_gbps - capacity) > 1e-9 * capacity)
        throw InputError(m.path(), fmt::format("{} x {:g}G is {:g} Gb/s but the switch has {} x "
                                               "{:g}G = {:g} Gb/s; a port mode keeps the capacity",
                                               pm.radix, pm.port_gbps, pm.radix * pm.port_gbps,
                                               s.radix, s.port_gbps, capacity));
      bool dup = false;
      for (const PortMode& x : s.modes) dup = dup || x.port_gbps == pm.port_gbps;
      if (!dup) s.modes.push_back(pm);
    }
  }
  if (o.has("power")) {
    const std::string f = o.field("power");
    if (!o.raw("power").is_object())
      throw InputError(f,
                       "expected an object {\"typical_w\": W, \"source\": \"...\"}: the watts "
                       "of one switch, typical, without transceivers, and the data sheet they "
                       "come from");
    JsonObject p = o.object("power");
    s.power.typical_w = p.number("typical_w", Range::positive(1e6));
    if (!p.has("source") || (s.power.source = p.source()).empty())
      throw InputError(p.field("source"), "expected a non-empty string naming the data sheet");
    p.finish();
  }
  s.source = o.source();
  o.finish();
  return s;
}

std::string SwitchSpec::describe() const {
  if (remoded()) return fmt::format("{} in {} x {:g}G mode", name, radix, port_gbps);
  return name;
}

std::optional<SwitchSpec> in_port_mode(const SwitchSpec& sw, double port_gbps) {
  auto same = [port_gbps](double g) { return std::abs(g - port_gbps) <= 1e-9 * port_gbps; };
  if (same(sw.port_gbps)) return sw;
  for (const PortMode& m : sw.modes) {
    if (!same(m.port_gbps)) continue;
    SwitchSpec out = sw;
    if (!out.remoded()) out.preset_mode = {sw.radix, sw.port_gbps};
    out.radix = m.radix;
    out.port_gbps = m.port_gbps;
    if (out.preset_mode.radix == out.radix) out.preset_mode = {};  // back to the preset's mode
    return out;
  }
  return std::nullopt;
}

SwitchSpec fit_to_nics(const SwitchSpec& sw, double nic_gbps, const std::string& option) {
  if (std::optional<SwitchSpec> fitted = in_port_mode(sw, nic_gbps)) return *fitted;
  if (nic_gbps < sw.port_gbps) return sw;  // the port runs the link at the NIC's speed
  const std::string modes = sw.modes_text();
  throw InputError(option,
                   fmt::format("{:g} Gb/s NICs are faster than the {:g} Gb/s ports of "
                               "switch {} (its port modes: {}); use a switch with {:g}G "
                               "ports (e.g. --switch ETH-51.2T-64x800G for 800G) or "
                               "NICs of at most {:g} Gb/s",
                               nic_gbps, sw.port_gbps, sw.name, modes, nic_gbps, sw.port_gbps));
}

std::string SwitchSpec::modes_text() const {
  std::string s;
  for (const PortMode& m : modes)
    s += fmt::format("{}{} x {:g}G", s.empty() ? "" : ", ", m.radix, m.port_gbps);
  return s.empty() ? fmt::format("{} x {:g}G", radix, port_gbps) : s;
}

SwitchSpec load_switch(const std::string& arg, const std::string& option) {
  return switch_from_json(load_preset_or_file("switches", arg, option), "switch");
}

}  // namespace railsim::spec
