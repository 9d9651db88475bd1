#pragma once
// Human text about designs (the CLI prints these; the library formats them so that the command
// files stay free of logic).
#include <string>
#include <utility>
#include <vector>

#include "railsim/cost/cost.hpp"
#include "railsim/spec/cluster.hpp"

namespace railsim::cost {

std::string cluster_line(const spec::Cluster& c);

std::string design_table(const spec::Cluster& c, const DesignReport& r);

// "leaf/spine/core"
std::string tier_names(int tiers);
// The two lines above a human comparison: the cluster, then switch, catalog and counting.
std::string compare_heading(const spec::Cluster& c, const std::vector<DesignReport>& rows);
// The lines under it: why rail_only saves what it saves, what ideal stands for.
std::string compare_notes(const std::vector<DesignReport>& rows);
// Why rail_only saves what it saves (tier counts), one line; empty when nothing to say.
std::string saving_note(const std::vector<DesignReport>& rows);

// Savings of rail_only against rail_optimized over a grid of cluster sizes and HB-domain sizes
// (docs/design.md's table). N that K does not divide is rounded to the nearest multiple of K.
struct SavingsCell {
  std::int64_t gpus = 0, hb_domain = 0;
  int tiers_rail_optimized = 0, tiers_rail_only = 0;
  double cost_saving = 0, power_saving = 0;
};
std::vector<SavingsCell> savings_grid(const spec::Cluster& like,
                                      const std::vector<std::int64_t>& gpus,
                                      const std::vector<std::int64_t>& hb_domains,
                                      const spec::NetworkDesign& base, const Catalog& cat,
                                      SwitchCounting counting);
// Markdown: one row per N, one column per K; cells "tiers 3->2: cost 36.1%, power 34.6%".
std::string savings_markdown(const std::vector<SavingsCell>& grid,
                             const std::vector<std::int64_t>& hb_domains);

}  // namespace railsim::cost
