#include "railsim/spec/catalog.hpp"

#include <fmt/format.h>

#include "railsim/core/enum.hpp"
#include "railsim/core/json.hpp"
#include "railsim/spec/preset.hpp"

namespace railsim::spec {

namespace {

constexpr EnumNames<SwitchPowerFrom, 2> kPowerFromNames{
    {{{SwitchPowerFrom::preset, "preset"}, {SwitchPowerFrom::catalog, "catalog"}}}};

PricePower item(JsonObject& parent, std::string_view key) {
  JsonObject o = parent.object(key);
  PricePower p;
  p.price_usd = o.number("price_usd", Range::non_negative(1e8));
  p.power_w = o.number("power_w", Range::non_negative(1e6));
  p.source = o.source();
  o.finish();
  return p;
}

// A catalog that names a preset (or file) in "extends" takes every figure it does not give from
// it (a JSON merge patch, RFC 7386: its objects replace the base's keys one by one); an object it
// changes states the base's source after its own, or says it was overridden. One level only.
Json resolve_extends(const Json& j, const std::string& path) {
  if (!j.is_object() || !j.contains("extends")) return j;
  const Json& base_name = j.at("extends");
  const std::string field = path + ".extends";
  if (!base_name.is_string())
    throw InputError(field, "expected the name of a catalog preset or a JSON file");
  Json base = load_preset_or_file("catalogs", base_name.get<std::string>(), field);
  if (base.is_object() && base.contains("extends"))
    throw InputError(field, fmt::format("'{}' extends another catalog itself; extend a catalog "
                                        "that gives every figure (one level)",
                                        printable(base_name.get<std::string>())));
  Json merged = base;
  Json patch = j;
  patch.erase("extends");
  const std::string base_label = printable(base_name.get<std::string>());
  for (auto& [key, value] : patch.items()) {
    if (!value.is_object() || !merged.contains(key) || !merged[key].is_object()) continue;
    const Json& old = merged[key];
    if (!value.contains("source")) {
      const std::string was = old.contains("source") && old["source"].is_string()
                                  ? old["source"].get<std::string>()
                                  : std::string();
      value["source"] = fmt::format("overridden over {}{}{}", base_label,
                                    was.empty() ? "" : "; its source: ", was);
    }
  }
  merged.merge_patch(patch);
  merged["about"] = fmt::format("{} (extends {})",
                                patch.contains("about") && patch["about"].is_string()
                                    ? patch["about"].get<std::string>()
                                    : std::string("figures over a preset"),
                                base_label);
  return merged;
}

}  // namespace

std::string_view to_string(SwitchPowerFrom f) {
  return kPowerFromNames.name(f);
}

Catalog catalog_from_json(const Json& given, const std::string& path) {
  const Json j = resolve_extends(given, path);
  JsonObject o(j, path);
  Catalog c;
  c.name = o.string("name");
  c.about = o.string_or("about", "");
  {
    JsonObject s = o.object("switch");
    // A switch's fixed price and power (chassis, fans, CPU) cannot be negative: a negative figure
    // would make larger networks cheaper.
    c.switch_fixed.price_usd = s.number_or("price_usd_per_switch", 0, Range::non_negative(1e8));
    c.switch_fixed.power_w = s.number_or("power_w_per_switch", 0, Range::non_negative(1e6));
    // A quote may be per switch or per port: one of the two prices is enough (the other 0); the
    // watts may come from the switch presets' data sheets (power_from preset), so both default 0.
    if (!s.has("price_usd_per_switch") && !s.has("price_usd_per_port"))
      throw InputError(s.field("price_usd_per_port"),
                       "missing; give price_usd_per_port or price_usd_per_switch (or both)");
    c.switch_port.price_usd = s.number_or("price_usd_per_port", 0, Range::non_negative(1e7));
    c.switch_port.power_w = s.number_or("power_w_per_port", 0, Range::non_negative(1e5));
    if (s.has("power_from")) {
      const Json& v = s.raw("power_from");
      if (!v.is_string())
        throw InputError(s.field("power_from"), "expected \"preset\" or \"catalog\"");
      c.switch_power_from =
          kPowerFromNames.parse(v.get<std::string>(), s.field("power_from"), "switch power source");
    }
    c.switch_port.source = c.switch_fixed.source = s.source();
    s.finish();
  }
  c.nic_transceiver = item(o, "nic_transceiver");
  {
    JsonObject s = o.object("switch_transceiver");
    c.switch_transceiver_ports = static_cast<int>(s.integer("ports", 1, 8));
    c.switch_optics_co_packaged = s.boolean_or("co_packaged", false);
    // Co-packaged optics sit behind each switch port: one per port, never shared by several.
    if (c.switch_optics_co_packaged && c.switch_transceiver_ports != 1)
      throw InputError(s.field("ports"),
                       fmt::format("got {}, expected 1 with \"co_packaged\": true (co-packaged "
                                   "optics are counted per switch port, not per module)",
                                   c.switch_transceiver_ports));
    c.switch_transceiver.price_usd = s.number("price_usd", Range::non_negative(1e8));
    c.switch_transceiver.power_w = s.number("power_w", Range::non_negative(1e6));
    c.switch_transceiver.source = s.source();
    s.finish();
  }
  c.optical_cable = item(o, "optical_cable");
  c.copper_dac = item(o, "copper_dac");
  c.nic = item(o, "nic");
  o.finish();
  return c;
}

Catalog load_catalog(const std::string& arg, const std::string& option) {
  return catalog_from_json(spec::load_preset_or_file("catalogs", arg, option), "catalog");
}

}  // namespace railsim::spec
