#pragma once
// Dense, binned views of a TrafficMatrix for pictures: GPU x GPU, HB-domain x HB-domain and
// rail x rail grids of bytes (row = sender, column = receiver).
#include <cstdint>
#include <vector>

#include "railsim/traffic/traffic_matrix.hpp"

namespace railsim::traffic {

struct Grid {
  std::int64_t items = 0;     // GPUs, domains or rails along each axis
  std::int64_t bin = 1;       // items per cell (cells sum the bytes of bin x bin item pairs)
  std::int64_t cells = 0;     // cells along each axis = ceil(items / bin)
  std::vector<double> bytes;  // cells x cells, row-major, [src cell][dst cell]
  double at(std::int64_t r, std::int64_t c) const {
    return bytes[static_cast<std::size_t>(r * cells + c)];
  }
};

// Smallest bin such that ceil(items / bin) <= max_cells.
std::int64_t bin_for(std::int64_t items, std::int64_t max_cells);

// Every byte, by sending and receiving GPU.
Grid gpu_grid(const TrafficMatrix& tm, std::int64_t max_cells);
// Every byte, by sending and receiving HB domain (the diagonal is NVLink traffic).
Grid domain_grid(const TrafficMatrix& tm, const spec::Cluster& cluster, std::int64_t max_cells);
// Inter-domain bytes only (what the NICs carry, before any rail-only forwarding), by the rail
// (local rank) of the sender and of the receiver: off the diagonal is cross-rail traffic.
Grid rail_grid(const TrafficMatrix& tm, const spec::Cluster& cluster, std::int64_t max_cells);

}  // namespace railsim::traffic
