#include "railsim/traffic/aggregate.hpp"

#include <stdexcept>

namespace railsim::traffic {

std::int64_t bin_for(std::int64_t items, std::int64_t max_cells) {
  if (items < 1 || max_cells < 1) throw std::logic_error("traffic: bin_for needs positive sizes");
  return (items + max_cells - 1) / max_cells;
}

namespace {
template <class Key>
Grid make_grid(const TrafficMatrix& tm, std::int64_t items, std::int64_t max_cells, Key key) {
  Grid g;
  g.items = items;
  g.bin = bin_for(items, max_cells);
  g.cells = (items + g.bin - 1) / g.bin;
  g.bytes.assign(static_cast<std::size_t>(g.cells * g.cells), 0.0);
  for (std::size_t i = 0; i < tm.size(); ++i) {
    const TrafficEntry e = tm[i];
    std::int64_t r = 0, c = 0;
    if (!key(e, r, c)) continue;
    g.bytes[static_cast<std::size_t>((r / g.bin) * g.cells + c / g.bin)] += e.bytes;
  }
  return g;
}
}  // namespace

Grid gpu_grid(const TrafficMatrix& tm, std::int64_t max_cells) {
  return make_grid(tm, tm.gpus(), max_cells,
                   [](const TrafficEntry& e, std::int64_t& r, std::int64_t& c) {
                     r = e.src;
                     c = e.dst;
                     return true;
                   });
}

Grid domain_grid(const TrafficMatrix& tm, const spec::Cluster& cl, std::int64_t max_cells) {
  return make_grid(tm, cl.domains(), max_cells,
                   [&](const TrafficEntry& e, std::int64_t& r, std::int64_t& c) {
                     r = cl.domain_of(e.src);
                     c = cl.domain_of(e.dst);
                     return true;
                   });
}

Grid rail_grid(const TrafficMatrix& tm, const spec::Cluster& cl, std::int64_t max_cells) {
  return make_grid(tm, cl.hb_domain, max_cells,
                   [&](const TrafficEntry& e, std::int64_t& r, std::int64_t& c) {
                     if (cl.domain_of(e.src) == cl.domain_of(e.dst)) return false;
                     r = cl.rail_of(e.src);
                     c = cl.rail_of(e.dst);
                     return true;
                   });
}

}  // namespace railsim::traffic
