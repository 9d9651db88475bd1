#pragma once
// The tables of designs, plans and traffic pairs that the commands print (Table: aligned text, CSV
// and JSON from the same columns). docs/cli.md lists their columns.
#include <vector>

#include "railsim/cost/cost.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/report/routing_columns.hpp"
#include "railsim/report/table.hpp"
#include "railsim/sim/check.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"

namespace railsim::report {

// One row per design: design --csv, compare --csv and --json, and the human compare. cost_saving
// and power_saving are missing unless `with_savings`.
Table designs_table(const spec::Cluster& c, const std::vector<cost::DesignReport>& rows,
                    bool with_savings);

// One row per plan, fastest first (plan's human table and --csv; plan --json carries the same
// values in estimate's layout).
Table plans_table(const std::vector<perf::Plan>& plans, perf::PlacementKind placement);

// The columns of traffic --csv: one row per GPU pair with traffic.
std::vector<Column> traffic_pair_columns();

// sim --schedule: one row per op of the schedule, simulated and analytic time of one occurrence.
Table schedule_check_table(const sim::ScheduleCheck& r);
// sim: the phases of one simulated collective, its link classes (peak utilisation and bytes) and
// its busiest links.
Table sim_phases_table(const sim::CollectiveResult& r);
Table sim_links_table(const std::vector<sim::TierStat>& tiers);
Table sim_links_table(const std::vector<sim::BusyChannel>& links);

// estimate: where the iteration time goes (one row per part, with its share), and the
// communication schedule op by op (group shape, time of one occurrence, rail-only forwarding).
Table breakdown_table(const perf::IterationTime& it);
Table comm_table(const perf::CommSchedule& cs, const perf::Placement& pl,
                 const perf::NetworkModel& net);

// plan --explain: one row per plan (the winner first), then one row per later plan with its
// difference from the winner: where the iteration time goes (seconds per part) and the memory of
// the fullest stage by part (GiB). Printed transposed for people (a line per part).
Table explain_table(const std::vector<perf::Plan>& plans);

}  // namespace railsim::report
