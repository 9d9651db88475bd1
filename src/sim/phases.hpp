#pragma once
// Private to src/sim: the phases a collective runs as (rings, direct all-to-all, all-to-all-v,
// point to point, perf's expansion of reductions and gathers), the limits checked before a phase
// is built, and the statistics accumulated over the phases.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/perf/expansion.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/sim/flow_sim.hpp"

namespace railsim::sim::detail {

// Per-channel (or per-class) statistics accumulated over the phases of a collective.
struct Accumulator {
  const SimNetwork& net;
  std::vector<double> ch_peak, ch_bytes, cls_peak, cls_bytes;
  bool any_flow_by_flow = false;
  explicit Accumulator(const SimNetwork& n)
      : net(n),
        ch_peak(n.capacity_Bps.size(), 0.0),
        ch_bytes(n.capacity_Bps.size(), 0.0),
        cls_peak(n.class_names.size(), 0.0),
        cls_bytes(n.class_names.size(), 0.0) {}

  void add(const SimResult& r, bool by_class, double scale) {
    if (by_class) {
      for (std::size_t k = 0; k < cls_peak.size(); ++k) {
        cls_peak[k] = std::max(cls_peak[k], r.channel_peak_utilisation[k]);
        cls_bytes[k] += r.channel_bytes[k] * scale;
      }
      return;
    }
    any_flow_by_flow = true;
    for (std::size_t c = 0; c < ch_peak.size(); ++c) {
      ch_peak[c] = std::max(ch_peak[c], r.channel_peak_utilisation[c]);
      ch_bytes[c] += r.channel_bytes[c] * scale;
      const auto k = static_cast<std::size_t>(net.channel_class[c]);
      cls_peak[k] = std::max(cls_peak[k], r.channel_peak_utilisation[c]);
      cls_bytes[k] += r.channel_bytes[c] * scale;
    }
  }

  void finish(CollectiveResult& out, int busiest) const {
    for (std::size_t k = 0; k < cls_peak.size(); ++k)
      if (cls_bytes[k] > 0) out.tiers.push_back({net.class_names[k], cls_peak[k], cls_bytes[k]});
    std::vector<std::int32_t> idx;
    auto better = [](double pa, double ba, double pb, double bb) {
      return pa != pb ? pa > pb : ba > bb;
    };
    if (any_flow_by_flow) {
      for (std::size_t c = 0; c < ch_peak.size(); ++c)
        if (ch_bytes[c] > 0) idx.push_back(static_cast<std::int32_t>(c));
      const auto n =
          std::min<std::size_t>(idx.size(), static_cast<std::size_t>(std::max(busiest, 0)));
      std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(),
                        [&](std::int32_t a, std::int32_t b) {
                          const auto ua = static_cast<std::size_t>(a),
                                     ub = static_cast<std::size_t>(b);
                          if (ch_peak[ua] != ch_peak[ub] || ch_bytes[ua] != ch_bytes[ub])
                            return better(ch_peak[ua], ch_bytes[ua], ch_peak[ub], ch_bytes[ub]);
                          return a < b;
                        });
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<std::size_t>(idx[i]);
        out.busiest.push_back({net.describe ? net.describe(idx[i]) : fmt::format("channel {}", c),
                               ch_peak[c], ch_bytes[c]});
      }
    } else {
      for (std::size_t k = 0; k < cls_peak.size(); ++k)
        if (cls_bytes[k] > 0) idx.push_back(static_cast<std::int32_t>(k));
      std::stable_sort(idx.begin(), idx.end(), [&](std::int32_t a, std::int32_t b) {
        const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
        return better(cls_peak[ua], cls_bytes[ua], cls_peak[ub], cls_bytes[ub]);
      });
      for (std::size_t i = 0; i < idx.size() && static_cast<int>(i) < busiest; ++i) {
        const auto k = static_cast<std::size_t>(idx[i]);
        out.busiest.push_back(
            {"all " + net.class_names[k] + " (class average)", cls_peak[k], cls_bytes[k]});
      }
    }
  }
};

void alltoall_phase(const SimNetwork& net, const SimConfig& cfg, const std::vector<Group>& groups,
                    double bytes, CollectiveResult& out, Accumulator& acc);

void alltoallv_phase(const SimNetwork& net, const SimConfig& cfg, const std::vector<Group>& groups,
                     const AllToAllV& a, CollectiveResult& out, Accumulator& acc);

void p2p_phase(const SimNetwork& net, const SimConfig& cfg, const std::vector<Group>& groups,
               double bytes, CollectiveResult& out, Accumulator& acc);

// The rail_then_domain all-to-all: perf's expansion of every group (along the rails and inside
// the HB domains; the direct exchange for a group that is not rail-aligned), every exchange of
// both phases and of every group at once (the domain phase forwards as the rail phase delivers),
// flow by flow.
void rail_domain_alltoall(const SimNetwork& net, const SimConfig& cfg, const CollectiveRequest& req,
                          CollectiveResult& out, Accumulator& acc);

// Reductions and gathers: perf's expansion of every group (perf/expansion.hpp), its phases run
// one after another, each phase's rings of every group concurrently.
void reduction_collective(const SimNetwork& net, const SimConfig& cfg, const CollectiveRequest& req,
                          CollectiveResult& out, Accumulator& acc);

}  // namespace railsim::sim::detail
