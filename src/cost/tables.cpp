#include "railsim/cost/tables.hpp"

#include <fmt/format.h>

#include <string>

#include "railsim/cost/report.hpp"

namespace railsim::cost {

using namespace report;  // Table, Column, Cell and the column makers

namespace {
Column watts(const char* name, const char* label, bool human = true) {
  return si_column(name, label, "W", 4, human);
}
}  // namespace

report::Table designs_table(const spec::Cluster& c, const std::vector<cost::DesignReport>& rows,
                            bool with_savings) {
  report::Table t;
  t.columns = {
      text_column("gpu", "GPU", false),
      integer_column("gpus", "GPUs", false),
      integer_column("hb_domain", "HB domain", false),
      text_column("design", "design"),
      text_column("switch", "switch", false),
      integer_column("switch_radix", "switch radix", false),
      real_column("switch_port_gbps", "switch port", "Gb/s", 0, false),
      text_column("catalog", "catalog", false),
      text_column("switch_counting", "switch counting", false),
      integer_column("tiers", "tiers"),
      text_column("tier_names", "tier names"),
      integer_column("clos_networks", "Clos networks", false),
      integer_column("planes", "planes", false),
      integer_column("nic_ports", "NIC ports", false),
      boolean_column("dual_tor", "dual ToR", false),
      integer_column("switches", "switches"),
      integers_column("switches_per_tier", "switches per tier"),
      integer_column("switch_ports", "switch ports", false),
      integer_column("switch_ports_used", "switch ports used", false),
      integers_column("switch_ports_used_per_tier", "ports used per tier", false),
      real_column("switch_equivalents", "switch equivalents", "", 1, false),
      integer_column("links", "links", false),
      integers_column("links_per_tier", "links per tier"),
      integer_column("optical_links", "optical links", false),
      integer_column("copper_links", "copper links", false),
      integer_column("management_links", "management links", false),
      integer_column("transceivers", "transceivers"),
      integer_column("transceivers_nic_side", "transceivers NIC side", false),
      integer_column("transceivers_switch_side", "transceivers switch side", false),
      integer_column("transceiver_ends", "transceiver ends", false),
      integer_column("nics", "NICs", false),
      usd_column("cost_usd", "cost"),
      usd_column("cost_per_gpu_usd", "cost per GPU"),
      usd_column("switch_cost_usd", "switch cost", false),
      usd_column("transceiver_cost_usd", "transceiver cost", false),
      usd_column("cable_cost_usd", "cable cost", false),
      watts("power_w", "power"),
      watts("power_per_gpu_w", "power per GPU"),
      watts("switch_power_w", "switch power", false),
      watts("transceiver_power_w", "transceiver power", false),
      watts("cable_power_w", "cable power", false),
      text_column("switch_power_from", "switch watts from", false),
      real_column("switch_w_each", "switch watts each", "W", 0, false),
      usd_column("nic_cost_usd", "NIC cost", false),
      watts("nic_power_w", "NIC power", false),
      fraction_column("cost_saving", "cost saving"),
      fraction_column("power_saving", "power saving"),
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
               std::int64_t{b.planes},
               std::int64_t{b.nic_ports},
               b.dual_tor,
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
