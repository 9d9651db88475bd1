#pragma once
// The heatmaps of `railsim traffic` (and of the HTML report): one view of a traffic matrix as a
// Heatmap with its title, subtitle (what one cell holds, the binning) and axis labels.
#include <cstdint>
#include <string>

#include "railsim/report/heatmap.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

namespace railsim::report {

enum class TrafficView {
  gpu,     // every byte, GPU x GPU; grey lines at HB-domain boundaries when domains span cells
  domain,  // every byte, HB domain x HB domain (the diagonal is NVLink traffic)
  rail,    // inter-domain bytes, rail x rail (off the diagonal: cross rail)
};

// At most `cells` cells per axis (items are binned beyond it). `title` is the first line (who and
// which strategy).
Heatmap traffic_heatmap(const traffic::TrafficMatrix& tm, const spec::Cluster& c, TrafficView v,
                        std::int64_t cells, const std::string& title);

}  // namespace railsim::report
