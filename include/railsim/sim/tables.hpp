#pragma once
// The tables of simulations the commands print (report::Table: aligned text, CSV and JSON from the
// same columns). docs/cli.md lists their columns.
#include <vector>

#include "railsim/report/table.hpp"
#include "railsim/sim/check.hpp"

namespace railsim::sim {

// sim --schedule: one row per op of the schedule, simulated and analytic time of one occurrence.
report::Table schedule_check_table(const ScheduleCheck& r);

// sim --schedule: one row per op of the schedule, simulated and analytic time of one occurrence.
report::Table schedule_check_table(const ScheduleCheck& r);
// sim: the phases of one simulated collective, its link classes (peak utilisation and bytes) and
// its busiest links.
report::Table sim_phases_table(const CollectiveResult& r);

report::Table sim_links_table(const std::vector<TierStat>& tiers);
report::Table sim_links_table(const std::vector<BusyChannel>& links);

}  // namespace railsim::sim
