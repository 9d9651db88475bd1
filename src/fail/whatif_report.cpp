#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/hash.hpp"
#include "railsim/core/json.hpp"
#include "railsim/fail/rng.hpp"
#include "railsim/fail/whatif.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/report/format.hpp"
#include "railsim/sim/check.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/network_view.hpp"

namespace railsim::fail {

Json to_json(const WhatIfReport& r) {
  Json j{{"model", r.model}, {"gpu", r.gpu}, {"gpus", r.gpus}, {"hb_domain", r.hb_domain}};
  j["designs"] = Json::array();
  for (const auto& d : r.designs) {
    Json x{{"design", std::string(spec::to_string(d.design))},
           {"tiers", d.tiers},
           {"pxn", d.pxn},
           {"spare_domains", d.spare_domains},
           {"spares_auto", d.spares_auto},
           {"failures", d.failures},
           {"not_present", d.not_present},
           {"gpus_dead", d.gpus_dead},
           {"gpus_cut_off", d.gpus_cut_off},
           {"domains_lost", d.domains_lost},
           {"domains_forwarding", d.domains_forwarding},
           {"domains_hb_degraded", d.domains_hb_degraded},
           {"hb_factor", d.hb_factor},
           {"nic_load_factor", d.nic_load_factor},
           {"pairs",
            {{"checked", d.pairs},
             {"direct", d.pairs_direct},
             {"rerouted", d.pairs_rerouted},
             {"forwarded", d.pairs_forwarded},
             {"unreachable", d.pairs_unreachable}}},
           {"examples", d.examples},
           {"runnable", d.runnable}};
    x["capacity"] = Json::array();
    for (const auto& t : d.tiers_lost)
      x["capacity"].push_back({{"tier", t.name},
                               {"links", t.links},
                               {"links_lost", t.links_lost},
                               {"capacity_Bps", t.capacity_Bps},
                               {"lost_Bps", t.lost_Bps}});
    x["uplink_ratio"] = Json::array();
    for (std::size_t t = 1; t < d.uplink_ratio.size(); ++t)
      x["uplink_ratio"].push_back(
          {{"tier", t},
           {"healthy", d.healthy_uplink_ratio[t]},
           {"degraded",
            std::isfinite(d.uplink_ratio[t]) ? Json(d.uplink_ratio[t]) : Json(nullptr)}});
    if (d.plan) {
      x["plan"] = perf::to_json(d.plan->strategy, d.plan->time);
      x["healthy_s"] = d.healthy_s;
      x["degraded_s"] = d.runnable ? Json(d.degraded_s) : Json(nullptr);
      if (d.simulated)
        x["simulated"] = {{"healthy_comm_s", d.sim_healthy_comm_s},
                          {"degraded_comm_s", d.sim_degraded_comm_s},
                          {"degraded_s", d.sim_degraded_s}};
    } else {
      x["no_plan_reason"] = d.no_plan_reason;
    }
    x["options"] = Json::array();
    for (const auto& o : d.options)
      x["options"].push_back({{"name", o.name},
                              {"possible", o.possible},
                              {"throughput", o.possible ? Json(o.throughput) : Json(nullptr)},
                              {"restart", o.restart},
                              {"detail", o.detail}});
    x.update(spec::routing_json(d.network));
    j["designs"].push_back(std::move(x));
  }
  return j;
}

namespace {

// Labelled rows of one cell per design, as aligned columns (trailing blanks trimmed).
std::string side_by_side(const std::vector<std::pair<std::string, std::vector<std::string>>>& rows,
                         std::size_t designs) {
  std::size_t w0 = 0;
  std::vector<std::size_t> w(designs, 0);
  for (const auto& [label, cells] : rows) {
    w0 = std::max(w0, label.size());
    for (std::size_t i = 0; i < cells.size(); ++i) w[i] = std::max(w[i], cells[i].size());
  }
  std::string out;
  for (const auto& [label, cells] : rows) {
    std::string line = fmt::format("{:<{}}", label, w0);
    for (std::size_t i = 0; i < cells.size(); ++i)
      line += fmt::format("  {:<{}}", cells[i], i + 1 < cells.size() ? w[i] : 0);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// The lines under the table: components a design lacks, why there is no plan, the job's options
// and the example paths, each prefixed by its design.
std::string design_notes(const WhatIfReport& r) {
  std::string out;
  for (const auto& d : r.designs) {
    for (const auto& m : d.not_present)
      out += fmt::format("{}: not in this design: {}\n", spec::to_string(d.design), m);
    if (!d.no_plan_reason.empty())
      out += fmt::format("{}: no plan: {}\n", spec::to_string(d.design), d.no_plan_reason);
    for (const auto& o : d.options)
      if (o.possible)
        out += fmt::format("{}: {}: {}\n", spec::to_string(d.design), o.name, o.detail);
    for (const auto& e : d.examples) out += fmt::format("{}: {}\n", spec::to_string(d.design), e);
  }
  return out;
}

}  // namespace

std::string to_text(const WhatIfReport& r) {
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  auto row = [&](std::string label, auto cell) {
    std::vector<std::string> v;
    for (const auto& d : r.designs) v.push_back(cell(d));
    rows.emplace_back(std::move(label), std::move(v));
  };
  auto join = [](const std::vector<std::string>& v) {
    if (v.empty()) return std::string("none");
    std::string s = v[0];
    for (std::size_t i = 1; i < v.size() && i < 6; ++i) s += ", " + v[i];
    if (v.size() > 6) s += fmt::format(", ... ({} in all)", v.size());
    return s;
  };
  auto n = [](std::int64_t x) { return report::thousands(static_cast<double>(x)); };
  row("design", [](const DesignWhatIf& d) {
    return fmt::format("{} ({} tier{})", spec::to_string(d.design), d.tiers,
                       d.tiers == 1 ? "" : "s");
  });
  row("failures", [&](const DesignWhatIf& d) { return join(d.failures); });
  row("network", [](const DesignWhatIf& d) { return spec::describe_routing(d.network); });
  row("forwarding through HB peers", [](const DesignWhatIf& d) { return d.pxn ? "on" : "off"; });
  row("GPUs dead / cut off",
      [&](const DesignWhatIf& d) { return n(d.gpus_dead) + " / " + n(d.gpus_cut_off); });
  row("HB domains lost / forwarding",
      [&](const DesignWhatIf& d) { return n(d.domains_lost) + " / " + n(d.domains_forwarding); });
  std::vector<std::string> tier_names;
  for (const auto& d : r.designs)
    for (const auto& t : d.tiers_lost)
      if (std::find(tier_names.begin(), tier_names.end(), t.name) == tier_names.end())
        tier_names.push_back(t.name);
  for (const auto& name : tier_names)
    row("links lost, " + name, [&](const DesignWhatIf& d) {
      for (const auto& t : d.tiers_lost)
        if (t.name == name)
          return fmt::format(
              "{} of {} ({})", n(t.links_lost), n(t.links),
              report::percent(t.capacity_Bps > 0 ? t.lost_Bps / t.capacity_Bps : 0.0, 2));
      return std::string("-");
    });
  row("HB domains with a dead switch plane", [&](const DesignWhatIf& d) {
    return d.domains_hb_degraded == 0
               ? std::string("0")
               : fmt::format("{} (HB bandwidth x{:.4f})", n(d.domains_hb_degraded), d.hb_factor);
  });
  row("NIC load factor, worst domain",
      [](const DesignWhatIf& d) { return fmt::format("{:.4f}", d.nic_load_factor); });
  row("oversubscription, worst block", [&](const DesignWhatIf& d) {
    std::vector<std::string> v;
    for (std::size_t t = 1; t < d.uplink_ratio.size(); ++t)
      v.push_back(fmt::format("t{} {:.3g} -> {}", t, d.healthy_uplink_ratio[t],
                              std::isfinite(d.uplink_ratio[t])
                                  ? fmt::format("{:.3g}", d.uplink_ratio[t])
                                  : std::string("cut")));
    return v.empty() ? std::string("-") : join(v);
  });
  row("plan pairs direct / rerouted",
      [&](const DesignWhatIf& d) { return n(d.pairs_direct) + " / " + n(d.pairs_rerouted); });
  row("plan pairs forwarded / no path",
      [&](const DesignWhatIf& d) { return n(d.pairs_forwarded) + " / " + n(d.pairs_unreachable); });
  row("plan (healthy network)", [](const DesignWhatIf& d) {
    return d.plan ? fmt::format("tp {} pp {} dp {} ep {}", d.plan->strategy.tp, d.plan->strategy.pp,
                                d.plan->strategy.dp, d.plan->strategy.ep)
                  : std::string("none");
  });
  row("iteration, healthy", [](const DesignWhatIf& d) {
    return d.plan ? fmt::format("{:.4f} s", d.healthy_s) : std::string("-");
  });
  row("iteration, degraded (analytic)", [](const DesignWhatIf& d) {
    if (!d.plan) return std::string("-");
    if (!d.runnable) return std::string("cannot run");
    return fmt::format("{:.4f} s ({:+.2f}%)", d.degraded_s, 100 * (d.degraded_s / d.healthy_s - 1));
  });
  row("iteration, degraded (simulated)", [](const DesignWhatIf& d) {
    if (!d.simulated) return std::string("-");
    return fmt::format("{:.4f} s ({:+.2f}%)", d.sim_degraded_s,
                       100 * (d.sim_degraded_s / d.healthy_s - 1));
  });
  row("communication, simulated", [](const DesignWhatIf& d) {
    if (!d.simulated) return std::string("-");
    return fmt::format("{:.4f} -> {:.4f} s", d.sim_healthy_comm_s, d.sim_degraded_comm_s);
  });
  for (std::size_t o = 0; o < 3; ++o) {
    const std::string name = r.designs.empty() || r.designs[0].options.size() <= o
                                 ? std::string()
                                 : r.designs[0].options[o].name;
    if (name.empty()) continue;
    row("option: " + name, [&](const DesignWhatIf& d) {
      if (d.options.size() <= o) return std::string("-");
      const JobOption& x = d.options[o];
      return x.possible ? fmt::format("{:.2f}% of healthy{}", 100 * x.throughput,
                                      x.restart ? " after a restart" : "")
                        : "no: " + x.detail;
    });
  }
  return fmt::format("Failure what-if: {} on {} x {} (HB domain {})\n\n", r.model, n(r.gpus), r.gpu,
                     r.hb_domain) +
         side_by_side(rows, r.designs.size()) + design_notes(r);
}

}  // namespace railsim::fail
