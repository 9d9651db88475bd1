#pragma once
// The views of a traffic matrix: the columns of `railsim traffic --csv` (one row per GPU pair), and
// the heatmaps of `railsim traffic` (and of the HTML report) as a Heatmap with its title, subtitle
// (what one cell holds, the binning) and axis labels.
#include <cstdint>
#include <string>
#include <vector>

#include "railsim/report/heatmap.hpp"
#include "railsim/report/table.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

namespace railsim::traffic {

// The columns of traffic --csv: one row per GPU pair with traffic; cp_bytes only `with_cp` (a
// strategy with context parallelism); then the software the bytes rest on (spec::software_columns:
// the stack, dtype, EP dispatch and CP exchange decide what is sent), the same on every row.
std::vector<report::Column> traffic_pair_columns(bool with_cp = false);
// The software columns' cells of every row, as one CSV suffix (",megatron-core-2024,bf16,...").
std::string traffic_pair_software_suffix(const spec::Training& tr);

enum class TrafficView {
  gpu,     // every byte, GPU x GPU; grey lines at HB-domain boundaries when domains span cells
  domain,  // every byte, HB domain x HB domain (the diagonal is NVLink traffic)
  rail,    // inter-domain bytes, rail x rail (off the diagonal: cross rail)
};

// At most `cells` cells per axis (items are binned beyond it). `title` is the first line (who and
// which strategy).
report::Heatmap traffic_heatmap(const TrafficMatrix& tm, const spec::Cluster& c, TrafficView v,
                                std::int64_t cells, const std::string& title);

}  // namespace railsim::traffic
