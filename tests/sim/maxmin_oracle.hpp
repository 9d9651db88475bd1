#pragma once
// A textbook max-min fair allocation, written from the definition and sharing no code with the
// engine in src/sim: the independent check of sim::simulate (test_maxmin_oracle.cpp). Slow
// (a pass over every flow and link per level, a whole allocation per finishing flow) and plain
// on purpose.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace maxmin_oracle {

using Route = std::vector<int>;  // the links a flow crosses, each at most once

// Progressive filling (Bertsekas and Gallager, Data Networks, 2nd ed., 6.5.2): every flow starts
// at rate 0; the rates of all flows not yet frozen rise together until a link is full; every
// flow crossing a full link is frozen at its rate; repeat until every flow is frozen. Links
// within 1e-12 of their capacity count as full (rounding).
inline std::vector<double> max_min_rates(const std::vector<double>& capacity,
                                         const std::vector<Route>& routes) {
  const std::size_t flows = routes.size(), links = capacity.size();
  for (const Route& r : routes)
    if (r.empty()) throw std::invalid_argument("max_min_rates: a flow without links");
  std::vector<double> rate(flows, 0.0);
  std::vector<bool> frozen(flows, false);
  std::size_t unfrozen_flows = flows;
  while (unfrozen_flows > 0) {
    // Per link: the capacity the current rates leave, and how many unfrozen flows cross it.
    std::vector<double> room = capacity;
    std::vector<int> unfrozen(links, 0);
    for (std::size_t f = 0; f < flows; ++f)
      for (int l : routes[f]) {
        room[static_cast<std::size_t>(l)] -= rate[f];
        if (!frozen[f]) ++unfrozen[static_cast<std::size_t>(l)];
      }
    // The common increase that fills the first link.
    double increase = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < links; ++l)
      if (unfrozen[l] > 0) increase = std::min(increase, std::max(room[l], 0.0) / unfrozen[l]);
    for (std::size_t f = 0; f < flows; ++f)
      if (!frozen[f]) rate[f] += increase;
    std::vector<bool> full(links, false);
    for (std::size_t l = 0; l < links; ++l)
      full[l] = unfrozen[l] > 0 && room[l] - unfrozen[l] * increase <= 1e-12 * capacity[l];
    for (std::size_t f = 0; f < flows; ++f) {
      if (frozen[f]) continue;
      for (int l : routes[f])
        if (full[static_cast<std::size_t>(l)]) {
          frozen[f] = true;
          --unfrozen_flows;
          break;
        }
    }
  }
  return rate;
}

// Finishing times of flows all started at time 0, flow f with bytes[f] to send: the rates are
// the max-min fair ones of the flows still sending, computed again each time flows finish.
// Flows finishing within 1e-12 (relative) of the first finish with it.
inline std::vector<double> finish_times(const std::vector<double>& capacity,
                                        const std::vector<Route>& routes,
                                        const std::vector<double>& bytes) {
  std::vector<double> finish(routes.size(), 0.0), left = bytes;
  std::vector<std::size_t> sending(routes.size());
  for (std::size_t f = 0; f < routes.size(); ++f) sending[f] = f;
  double t = 0;
  while (!sending.empty()) {
    std::vector<Route> now;
    for (std::size_t f : sending) now.push_back(routes[f]);
    const std::vector<double> rate = max_min_rates(capacity, now);
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < sending.size(); ++j)
      step = std::min(step, left[sending[j]] / rate[j]);
    std::vector<std::size_t> still;
    for (std::size_t j = 0; j < sending.size(); ++j) {
      const std::size_t f = sending[j];
      const double to_end = left[f] / rate[j];
      if (to_end <= step * (1 + 1e-12)) {
        finish[f] = t + to_end;
      } else {
        left[f] -= rate[j] * step;
        still.push_back(f);
      }
    }
    t += step;
    sending = std::move(still);
  }
  return finish;
}

}  // namespace maxmin_oracle
