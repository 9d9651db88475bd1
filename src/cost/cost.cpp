#include "railsim/cost/cost.hpp"

#include <fmt/format.h>

#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/topo/builders.hpp"

namespace railsim::cost {

namespace {
constexpr EnumNames<SwitchCounting, 2> kCountingNames{
    {{{SwitchCounting::whole, "whole"}, {SwitchCounting::ports, "ports"}}}};
}  // namespace

std::string_view to_string(SwitchCounting s) {
  return kCountingNames.name(s);
}

SwitchCounting parse_switch_counting(std::string_view s, const std::string& option) {
  return kCountingNames.parse(s, option, "switch counting");
}

double saving(double x, double reference) {
  return reference > 0 ? 1.0 - x / reference : 0.0;
}

double switch_box_watts(const spec::SwitchSpec& sw, const Catalog& cat) {
  if (cat.switch_power_from == spec::SwitchPowerFrom::catalog || !sw.power.known()) return 0;
  return sw.power.typical_w;
}

DesignCost price(const BillOfMaterials& b, const Catalog& cat, SwitchCounting counting,
                 double box_w) {
  DesignCost r;
  const double port_scale = b.port_gbps / 400.0;
  const double nic_scale = std::min(b.nic_gbps, b.port_gbps) / 400.0;
  const double boxes =
      counting == SwitchCounting::whole ? double(b.switches) : b.switch_equivalents();
  const double ports =
      counting == SwitchCounting::whole ? double(b.switch_ports) : double(b.switch_ports_used);
  r.usd.switches =
      boxes * cat.switch_fixed.price_usd + ports * port_scale * cat.switch_port.price_usd;
  r.watts.switches =
      box_w > 0 ? boxes * box_w
                : boxes * cat.switch_fixed.power_w + ports * port_scale * cat.switch_port.power_w;
  // Co-packaged optics are part of the switch: every port paid for carries its own (the box's
  // data-sheet watts are without optics, so they add to those too); no switch-side modules.
  const bool cpo = cat.switch_optics_co_packaged;
  const double switch_modules = cpo ? 0.0 : double(b.switch_side_transceivers);
  if (cpo) {
    r.usd.switches += ports * port_scale * cat.switch_transceiver.price_usd;
    r.watts.switches += ports * port_scale * cat.switch_transceiver.power_w;
  }
  r.usd.transceivers = double(b.nic_side_transceivers) * nic_scale * cat.nic_transceiver.price_usd +
                       switch_modules * port_scale * cat.switch_transceiver.price_usd;
  r.watts.transceivers = double(b.nic_side_transceivers) * nic_scale * cat.nic_transceiver.power_w +
                         switch_modules * port_scale * cat.switch_transceiver.power_w;
  r.usd.cables = double(b.optical_links) * cat.optical_cable.price_usd +
                 double(b.copper_links) * cat.copper_dac.price_usd;
  r.watts.cables = double(b.optical_links) * cat.optical_cable.power_w +
                   double(b.copper_links) * cat.copper_dac.power_w;
  r.nic_usd = double(b.nics) * cat.nic.price_usd;
  r.nic_w = double(b.nics) * cat.nic.power_w;
  return r;
}

DesignReport evaluate(const spec::Cluster& cluster, const spec::NetworkDesign& design,
                      const Catalog& cat, SwitchCounting counting) {
  DesignReport r;
  const topo::Network n = topo::resolve_network(cluster, design);
  r.bom = bill_of_materials(n, cat.switch_transceiver_ports);
  if (cat.switch_optics_co_packaged) {
    // A co-packaged port is fibre only: a DAC cannot plug into it.
    if (r.bom.copper_links > 0)
      throw InputError("--copper-gpu-leaf",
                       fmt::format("catalog {} has co-packaged switch optics: every switch port "
                                   "is optical, so GPU-leaf links cannot be copper DAC; drop "
                                   "--copper-gpu-leaf or use a catalog with pluggable optics",
                                   cat.name));
    r.bom.switch_side_transceivers = 0;
    r.co_packaged_ports =
        counting == SwitchCounting::whole ? r.bom.switch_ports : r.bom.switch_ports_used;
  }
  const spec::SwitchSpec& sw = n.design.sw;
  r.switch_box_w = switch_box_watts(sw, cat);
  r.switch_power_source = r.switch_box_w > 0 ? sw.power.source : cat.switch_port.source;
  r.switch_power_basis =
      r.switch_box_w > 0
          ? fmt::format("{:g} W per switch, typical without transceivers (its data sheet)",
                        r.switch_box_w)
          : fmt::format("{:g} W per switch + {:g} W per 400G port (catalog {}{})",
                        cat.switch_fixed.power_w, cat.switch_port.power_w, cat.name,
                        sw.power.known() ? ", which keeps its own figures" : "");
  if (cat.switch_optics_co_packaged)
    r.switch_power_basis += fmt::format(" + {:g} W per 400G port of co-packaged optics",
                                        cat.switch_transceiver.power_w);
  r.cost = price(r.bom, cat, counting, r.switch_box_w);
  r.switch_name = sw.describe();
  r.catalog_name = cat.name;
  r.counting = counting;
  return r;
}

std::vector<DesignReport> compare_designs(const spec::Cluster& cluster,
                                          const spec::NetworkDesign& base, const Catalog& cat,
                                          SwitchCounting counting) {
  std::vector<DesignReport> out;
  for (auto kind :
       {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only, spec::DesignKind::ideal}) {
    spec::NetworkDesign d = base;
    d.kind = kind;
    out.push_back(evaluate(cluster, d, cat, counting));
  }
  for (auto& r : out) {
    r.cost_saving = saving(r.cost.cost_usd(), out.front().cost.cost_usd());
    r.power_saving = saving(r.cost.power_w(), out.front().cost.power_w());
  }
  return out;
}

Json design_document(const spec::Cluster& cluster, const DesignReport& r) {
  Json j = to_json(r, false);
  j["gpu"] = cluster.gpu.name;
  return j;
}

Json to_json(const DesignReport& r, bool with_savings) {
  const BillOfMaterials& b = r.bom;
  Json j;
  j["design"] = std::string(spec::to_string(b.design));
  j["gpus"] = b.gpus;
  j["hb_domain"] = b.hb_domain;
  j["tiers"] = b.tiers;
  j["clos_networks"] = b.clos_networks;
  j["switch"] = {{"name", r.switch_name}, {"radix", b.radix}, {"port_gbps", b.port_gbps}};
  j["catalog"] = r.catalog_name;
  j["switch_counting"] = std::string(to_string(r.counting));
  j["switches"] = {{"total", b.switches},
                   {"per_tier", b.switches_per_tier},
                   {"ports_total", b.switch_ports},
                   {"ports_used", b.switch_ports_used},
                   {"ports_used_per_tier", b.ports_used_per_tier},
                   {"equivalents", b.switch_equivalents()}};
  j["links"] = {{"total", b.links},
                {"per_tier", b.links_per_tier},
                {"optical", b.optical_links},
                {"copper", b.copper_links},
                {"management", b.management_links}};
  j["transceivers"] = b.transceivers();
  j["transceiver_ends"] = b.transceiver_ends;
  j["transceivers_nic_side"] = b.nic_side_transceivers;
  j["transceivers_switch_side"] = b.switch_side_transceivers;
  j["cables"] = {{"optical", b.optical_links}, {"copper", b.copper_links}};
  j["nics"] = b.nics;
  j["nic_ports"] = b.nic_ports;
  j["planes"] = b.planes;
  j["clos_per_plane"] = b.planes > 0 ? b.clos_networks / b.planes : 0;
  j["dual_tor"] = b.dual_tor;
  j["oversubscription"] = b.oversubscription;
  j["oversubscribed_tier"] = b.oversubscribed_tier;
  j["port_split"] =
      b.split_down > 0 ? Json(fmt::format("{}:{}", b.split_down, b.split_up)) : Json(nullptr);
  j["cost_usd"] = r.cost.cost_usd();
  j["cost_per_gpu_usd"] = r.cost_per_gpu_usd();
  j["power_w"] = r.cost.power_w();
  j["power_per_gpu_w"] = r.power_per_gpu_w();
  j["cost_breakdown_usd"] = {{"switches", r.cost.usd.switches},
                             {"transceivers", r.cost.usd.transceivers},
                             {"cables", r.cost.usd.cables}};
  j["power_breakdown_w"] = {{"switches", r.cost.watts.switches},
                            {"transceivers", r.cost.watts.transceivers},
                            {"cables", r.cost.watts.cables}};
  j["switch_power"] = {{"from", r.switch_box_w > 0 ? "preset" : "catalog"},
                       {"w_per_switch", r.switch_box_w},
                       {"source", r.switch_power_source}};
  j["nic_cost_usd"] = r.cost.nic_usd;
  j["nic_power_w"] = r.cost.nic_w;
  if (with_savings) {
    j["cost_saving"] = r.cost_saving;
    j["power_saving"] = r.power_saving;
  }
  return j;
}

}  // namespace railsim::cost
