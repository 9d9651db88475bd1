#pragma once
// The table of designs the commands print (report::Table: aligned text, CSV and JSON from the same
// columns). docs/cli.md lists its columns.
#include <vector>

#include "railsim/cost/cost.hpp"
#include "railsim/report/table.hpp"
#include "railsim/spec/cluster.hpp"

namespace railsim::cost {

// One row per design: design --csv, compare --csv and --json, and the human compare. cost_saving
// and power_saving are missing unless `with_savings`.
report::Table designs_table(const spec::Cluster& c, const std::vector<cost::DesignReport>& rows,
                            bool with_savings);

}  // namespace railsim::cost
