#pragma once
// Human tables and CSV of designs (the CLI prints these; the library formats them so that the
// command files stay free of logic).
#include <string>
#include <utility>
#include <vector>

#include "railsim/core/json.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/spec/cluster.hpp"

namespace railsim::cost {

// Extra per-design figures added by other modules (e.g. the best plan's iteration time): a name
// and one value per design, in the order of the designs.
struct ExtraColumn {
  std::string name;
  std::vector<Json> values;
};

std::string cluster_line(const spec::Cluster& c);
// "1,234,567"
std::string with_commas(double v);

std::string design_table(const spec::Cluster& c, const DesignReport& r);
std::string compare_table(const spec::Cluster& c, const std::vector<DesignReport>& rows,
                          const std::vector<ExtraColumn>& extra = {});
// One header line and one line per design.
std::string csv_header(const std::vector<ExtraColumn>& extra = {});
std::string csv_row(const spec::Cluster& c, const DesignReport& r, bool with_savings,
                    const std::vector<ExtraColumn>& extra = {}, std::size_t index = 0);
// Why rail_only saves what it saves (tier counts), one line; empty when nothing to say.
std::string saving_note(const std::vector<DesignReport>& rows);

}  // namespace railsim::cost
