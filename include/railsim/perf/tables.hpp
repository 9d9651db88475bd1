#pragma once
// The tables of plans and iteration times the commands print (report::Table: aligned text, CSV
// and JSON from the same columns). docs/cli.md lists their columns.
#include <vector>

#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/report/table.hpp"

namespace railsim::perf {

// One row per plan, fastest first (plan's human table and --csv; plan --json carries the same
// values in estimate's layout).
report::Table plans_table(const std::vector<perf::Plan>& plans, perf::PlacementKind placement);

// estimate: where the iteration time goes (one row per part, with its share), and the
// communication schedule op by op (group shape, time of one occurrence, rail-only forwarding).
report::Table breakdown_table(const perf::IterationTime& it);
// estimate: where the iteration time goes (one row per part, with its share), and the
// communication schedule op by op (group shape, time of one occurrence, rail-only forwarding).
report::Table breakdown_table(const perf::IterationTime& it);
report::Table comm_table(const perf::CommSchedule& cs, const perf::Placement& pl,
                         const perf::NetworkModel& net);

// plan --explain: one row per plan (the winner first), then one row per later plan with its
// difference from the winner: where the iteration time goes (seconds per part) and the memory of
// the fullest stage by part (GiB). Printed transposed for people (a line per part).
report::Table explain_table(const std::vector<perf::Plan>& plans);
// The same with each plan's name in place of "#1", "#2" ("best", "yours": rows "best tp8 ...",
// "yours tp8 ...", "yours - best").
report::Table explain_table(const std::vector<perf::Plan>& plans,
                            const std::vector<std::string>& names);

// What decides between the best plan and another (the user's): whether it fits in memory (its
// need against the HBM and the part that grew most), else how much slower it is and the parts of
// the iteration that make the difference, largest first ("yours is 12.3% slower (5.120 s against
// 4.560 s): pipeline bubble +0.420 s, dp comm (exposed) +0.100 s; it saves tp/sp comm 0.050 s").
std::string explain_versus(const perf::Plan& best, const perf::Plan& other, double hbm_bytes);

// The columns and cells naming one CommOp (the schedule tables of estimate and sim).
std::vector<report::Column> op_columns();
std::vector<report::Cell> op_cells(const CommOp& op);
// A time column of those tables: seconds with an SI prefix and `digits` significant digits.
report::Column seconds_column(const char* name, const char* label, int digits);

}  // namespace railsim::perf
