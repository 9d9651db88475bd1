#include "railsim/cost/tables.hpp"

#include <fmt/format.h>

#include <string>

#include "railsim/cost/report.hpp"
#include "railsim/report/columns.hpp"

namespace railsim::cost {

using report::Cell;
using report::Column;
using report::Missing;
using report::Style;
using report::Table;
using report::Type;
using namespace report::columns;

report::Table designs_table(const spec::Cluster& c, const std::vector<cost::DesignReport>& rows,
                            bool with_savings) {
  report::Table t;
  t.columns = {
      text("gpu", "GPU", false),
      count("gpus", "GPUs", false),
      count("hb_domain", "HB domain", false),
      text("design", "design"),
      text("switch", "switch", false),
      count("switch_radix", "switch radix", false),
      real("switch_port_gbps", "switch port", "Gb/s", 0, false),
      text("catalog", "catalog", false),
      text("switch_counting", "switch counting", false),
      count("tiers", "tiers"),
      text("tier_names", "tier names"),
      count("clos_networks", "Clos networks", false),
      count("switches", "switches"),
      counts("switches_per_tier", "switches per tier"),
      count("switch_ports", "switch ports", false),
      count("switch_ports_used", "switch ports used", false),
      counts("switch_ports_used_per_tier", "ports used per tier", false),
      real("switch_equivalents", "switch equivalents", "", 1, false),
      count("links", "links", false),
      counts("links_per_tier", "links per tier"),
      count("optical_links", "optical links", false),
      count("copper_links", "copper links", false),
      count("management_links", "management links", false),
      count("transceivers", "transceivers"),
      count("transceivers_nic_side", "transceivers NIC side", false),
      count("transceivers_switch_side", "transceivers switch side", false),
      count("transceiver_ends", "transceiver ends", false),
      count("nics", "NICs", false),
      usd("cost_usd", "cost"),
      usd("cost_per_gpu_usd", "cost per GPU"),
      usd("switch_cost_usd", "switch cost", false),
      usd("transceiver_cost_usd", "transceiver cost", false),
      usd("cable_cost_usd", "cable cost", false),
      watts("power_w", "power"),
      watts("power_per_gpu_w", "power per GPU"),
      watts("switch_power_w", "switch power", false),
      watts("transceiver_power_w", "transceiver power", false),
      watts("cable_power_w", "cable power", false),
      text("switch_power_from", "switch watts from", false),
      real("switch_w_each", "switch watts each", "W", 0, false),
      usd("nic_cost_usd", "NIC cost", false),
      watts("nic_power_w", "NIC power", false),
      fraction("cost_saving", "cost saving"),
      fraction("power_saving", "power saving"),
  };
  for (const cost::DesignReport& r : rows) {
    const cost::BillOfMaterials& b = r.bom;
    auto saving = [&](double v) { return with_savings ? report::Cell(v) : report::Missing{}; };
    t.add_row({c.gpu.name,
               b.gpus,
               b.hb_domain,
               std::string(spec::to_string(b.design)),
               r.switch_name,
               std::int64_t{b.radix},
               b.port_gbps,
               r.catalog_name,
               std::string(cost::to_string(r.counting)),
               std::int64_t{b.tiers},
               b.tiers ? cost::tier_names(b.tiers) : std::string("HB only"),
               b.clos_networks,
               b.switches,
               b.switches_per_tier,
               b.switch_ports,
               b.switch_ports_used,
               b.ports_used_per_tier,
               b.switch_equivalents(),
               b.links,
               b.links_per_tier,
               b.optical_links,
               b.copper_links,
               b.management_links,
               b.transceivers(),
               b.nic_side_transceivers,
               b.switch_side_transceivers,
               b.transceiver_ends,
               b.nics,
               r.cost.cost_usd(),
               r.cost_per_gpu_usd(),
               r.cost.usd.switches,
               r.cost.usd.transceivers,
               r.cost.usd.cables,
               r.cost.power_w(),
               r.power_per_gpu_w(),
               r.cost.watts.switches,
               r.cost.watts.transceivers,
               r.cost.watts.cables,
               std::string(r.switch_box_w > 0 ? "preset" : "catalog"),
               r.switch_box_w,
               r.cost.nic_usd,
               r.cost.nic_w,
               saving(r.cost_saving),
               saving(r.power_saving)});
  }
  return t;
}

}  // namespace railsim::cost
