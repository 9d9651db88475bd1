#include "railsim/cost/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "railsim/core/units.hpp"
#include "railsim/report/format.hpp"

namespace railsim::cost {

std::string tier_names(int tiers) {
  static const char* names[] = {"leaf", "spine", "core"};
  std::string s;
  for (int t = 0; t < tiers; ++t) {
    if (t) s += '/';
    s += t < 3 ? std::string(names[t]) : fmt::format("tier{}", t + 1);
  }
  return s;
}

std::string cluster_line(const spec::Cluster& c) {
  return fmt::format("{} x {}, HB domain K={} ({} domain{}), {} x {:g} Gb/s NIC per GPU",
                     report::thousands(double(c.gpus)), c.gpu.name, c.hb_domain,
                     report::thousands(double(c.domains())), c.domains() == 1 ? "" : "s",
                     c.nics_per_gpu, units::Bps_to_gbps(c.nic_bw_Bps));
}

std::string design_table(const spec::Cluster& c, const DesignReport& r) {
  const BillOfMaterials& b = r.bom;
  std::string s;
  spec::Cluster shown = c;
  if (b.design == spec::DesignKind::ideal) shown.hb_domain = c.gpus;  // one HB domain over all
  s += fmt::format("design {}: {}\n", spec::to_string(b.design), cluster_line(shown));
  s += fmt::format("switch {} ({} x {:g}G), catalog {}, {} switch counting\n", r.switch_name,
                   b.radix, b.port_gbps, r.catalog_name, to_string(r.counting));
  if (b.tiers == 0) {
    s += "one HB domain over all GPUs: no scale-out network, no NICs (the performance reference)\n";
    return s;
  }
  s += fmt::format("{} Clos network{} of {} tier{}", b.clos_networks,
                   b.clos_networks > 1 ? "s" : "", b.tiers, b.tiers > 1 ? "s" : "");
  if (b.planes > 1)
    s += fmt::format(" in {} planes ({} per plane)", b.planes, b.clos_networks / b.planes);
  if (b.nic_ports > 1) s += fmt::format("; each NIC as {} x {:g}G ports", b.nic_ports, b.nic_gbps);
  if (b.dual_tor) s += "; dual ToR (a GPU's ports in a plane on different leaves)";
  if (b.split_down > 0)
    s += fmt::format("; tier-{} switches of {} down and {} up ports ({:.3g}:1)",
                     b.oversubscribed_tier, b.split_down, b.split_up, b.oversubscription);
  else if (b.oversubscription > 1.0)
    s += fmt::format("; tier-{} uplinks oversubscribed {:g}:1", b.oversubscribed_tier,
                     b.oversubscription);
  s += "\n\n";
  s += fmt::format("{:<8} {:>12} {:>14} {:>16}\n", "tier", "switches", "ports used", "links below");
  for (int t = 0; t < b.tiers; ++t) {
    static const char* names[] = {"leaf", "spine", "core"};
    const std::string name = t < 3 ? names[t] : "tier " + std::to_string(t + 1);
    s += fmt::format("{:<8} {:>12} {:>14} {:>16}\n", name,
                     report::thousands(double(b.switches_per_tier[t])),
                     report::thousands(double(b.ports_used_per_tier[t])),
                     report::thousands(double(b.links_per_tier[t])));
  }
  s += fmt::format("{:<8} {:>12} {:>14} {:>16}\n\n", "total", report::thousands(double(b.switches)),
                   report::thousands(double(b.switch_ports_used)),
                   report::thousands(double(b.links)));
  s +=
      fmt::format("switch ports       {} of {} used ({:.1f} switch equivalents by port counting)\n",
                  report::thousands(double(b.switch_ports_used)),
                  report::thousands(double(b.switch_ports)), b.switch_equivalents());
  if (r.co_packaged_ports > 0)
    s += fmt::format(
        "transceivers       {} modules, NIC side; switch side co-packaged: optics on {} switch "
        "ports, in the switches' cost and power; {} ends\n",
        report::thousands(double(b.transceivers())), report::thousands(double(r.co_packaged_ports)),
        report::thousands(double(b.transceiver_ends)));
  else
    s += fmt::format(
        "transceivers       {} modules: {} NIC side, {} switch side ({} ports per module); {} "
        "ends\n",
        report::thousands(double(b.transceivers())),
        report::thousands(double(b.nic_side_transceivers)),
        report::thousands(double(b.switch_side_transceivers)), b.switch_ports_per_module,
        report::thousands(double(b.transceiver_ends)));
  s += fmt::format("cables             {} optical, {} copper DAC",
                   report::thousands(double(b.optical_links)),
                   report::thousands(double(b.copper_links)));
  if (b.management_links > 0) s += fmt::format(" ({} management links)", b.management_links);
  s += fmt::format("\nNICs               {}", report::thousands(double(b.nics)));
  if (b.nic_ports > 1)
    s += fmt::format(" ({} ports cabled)", report::thousands(double(b.nic_links)));
  s += "\n";
  s += fmt::format(
      "cost               {}, {} per GPU (switches {}, transceivers {}, cables {}); NICs apart: "
      "{}\n",
      report::money(r.cost.cost_usd()), report::money(r.cost_per_gpu_usd()),
      report::money(r.cost.usd.switches), report::money(r.cost.usd.transceivers),
      report::money(r.cost.usd.cables), report::money(r.cost.nic_usd));
  s += fmt::format("power              {}, {} per GPU (switches {}, transceivers {}, cables {})\n",
                   report::watts(r.cost.power_w()), report::watts(r.power_per_gpu_w()),
                   report::watts(r.cost.watts.switches), report::watts(r.cost.watts.transceivers),
                   report::watts(r.cost.watts.cables));
  s += fmt::format("switch power       {}\n", r.switch_power_basis);
  return s;
}

std::string compare_heading(const spec::Cluster& c, const std::vector<DesignReport>& rows) {
  std::string s = cluster_line(c) + "\n";
  if (!rows.empty())
    s += fmt::format("switch {} ({} x {:g}G), catalog {}, {} switch counting\n",
                     rows[0].switch_name, rows[0].bom.radix, rows[0].bom.port_gbps,
                     rows[0].catalog_name, to_string(rows[0].counting));
  if (!rows.empty()) s += fmt::format("switch power {}\n", rows[0].switch_power_basis);
  return s;
}

std::string compare_notes(const std::vector<DesignReport>& rows) {
  std::string s;
  const std::string note = saving_note(rows);
  if (!note.empty()) s += "  note: " + note + "\n";
  if (!rows.empty() && rows[0].co_packaged_ports > 0)
    s += fmt::format(
        "  note: catalog {} has co-packaged switch optics: they are in the switches' cost and "
        "power, on every switch port paid for; transceivers are the NIC side's\n",
        rows[0].catalog_name);
  for (const auto& r : rows)
    if (r.bom.design == spec::DesignKind::ideal)
      s += "  note: ideal = one HB domain over all GPUs, a performance reference; its HB-domain "
           "cost is not modelled\n";
  return s;
}

std::string saving_note(const std::vector<DesignReport>& rows) {
  const DesignReport* ro = nullptr;
  const DesignReport* ra = nullptr;
  for (const auto& r : rows) {
    if (r.bom.design == spec::DesignKind::rail_optimized) ro = &r;
    if (r.bom.design == spec::DesignKind::rail_only) ra = &r;
  }
  if (!ro || !ra) return "";
  const std::int64_t rail = ro->bom.gpus / ro->bom.hb_domain;
  if (ra->bom.tiers == ro->bom.tiers)
    return fmt::format(
        "rail_only saves nothing in tiers: a rail of {} GPUs needs {} tier{} of {}-port "
        "switches, as many as the whole cluster; a larger radix would help",
        report::thousands(double(rail)), ra->bom.tiers, ra->bom.tiers > 1 ? "s" : "",
        ra->bom.radix);
  return fmt::format("rail_only removes {} of {} tiers: each rail of {} GPUs fits in {} tier{}",
                     ro->bom.tiers - ra->bom.tiers, ro->bom.tiers, report::thousands(double(rail)),
                     ra->bom.tiers, ra->bom.tiers > 1 ? "s" : "");
}

std::vector<SavingsCell> savings_grid(const spec::Cluster& like,
                                      const std::vector<std::int64_t>& gpus,
                                      const std::vector<std::int64_t>& hb_domains,
                                      const spec::NetworkDesign& base, const Catalog& cat,
                                      SwitchCounting counting) {
  std::vector<SavingsCell> out;
  for (std::int64_t n : gpus) {
    for (std::int64_t k : hb_domains) {
      const std::int64_t domains = std::max<std::int64_t>(1, (n + k / 2) / k);
      const spec::Cluster c =
          spec::make_cluster(like.gpu, domains * k, k, units::Bps_to_gbps(like.nic_bw_Bps),
                             like.hb_bw_Bps / 1e9, like.nics_per_gpu);
      const auto rows = compare_designs(c, base, cat, counting);
      SavingsCell cell;
      cell.gpus = c.gpus;
      cell.hb_domain = k;
      cell.tiers_rail_optimized = rows[0].bom.tiers;
      cell.tiers_rail_only = rows[1].bom.tiers;
      cell.cost_saving = rows[1].cost_saving;
      cell.power_saving = rows[1].power_saving;
      out.push_back(cell);
    }
  }
  return out;
}

std::string savings_markdown(const std::vector<SavingsCell>& grid,
                             const std::vector<std::int64_t>& hb_domains) {
  std::string s = "| GPUs (K=8 / K=72 / K=256) |";
  for (auto k : hb_domains) s += fmt::format(" K={}: tiers, cost saving, power saving |", k);
  s += "\n|---|";
  for (std::size_t i = 0; i < hb_domains.size(); ++i) s += "---|";
  s += "\n";
  for (std::size_t i = 0; i < grid.size(); i += hb_domains.size()) {
    std::string sizes;
    for (std::size_t j = 0; j < hb_domains.size() && i + j < grid.size(); ++j)
      sizes += (j ? " / " : "") + report::thousands(double(grid[i + j].gpus));
    s += "| " + sizes + " |";
    for (std::size_t j = 0; j < hb_domains.size() && i + j < grid.size(); ++j) {
      const SavingsCell& c = grid[i + j];
      s += fmt::format(" {}->{}: {}, {} |", c.tiers_rail_optimized, c.tiers_rail_only,
                       report::percent(c.cost_saving, 1), report::percent(c.power_saving, 1));
    }
    s += "\n";
  }
  return s;
}

}  // namespace railsim::cost
