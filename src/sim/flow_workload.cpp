#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "railsim/sim/flow_sim.hpp"

// sim::Workload: the flows of a simulation (paths of channels, bytes, weights, release times,
// latencies, dependencies), checked as they are added.

namespace railsim::sim {

Workload::Workload(std::vector<double> channel_capacity_Bps)
    : capacity_(std::move(channel_capacity_Bps)) {
  for (double c : capacity_)
    if (!(c > 0) || !std::isfinite(c))
      throw std::logic_error("Workload: channel capacities must be positive and finite");
}

void Workload::reserve(std::size_t flows, std::size_t path_entries, std::size_t dependencies) {
  deps_.reserve(dependencies);
  path_.reserve(path_entries);
  path_off_.reserve(flows + 1);
  bytes_.reserve(flows);
  weight_.reserve(flows);
}

FlowId Workload::add_flow(std::span<const ChannelId> path, double bytes, double weight,
                          double release_s) {
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw std::logic_error("Workload: flow bytes must be finite and >= 0");
  if (!(weight > 0) || !std::isfinite(weight))
    throw std::logic_error("Workload: flow weight must be finite and > 0");
  if (!(release_s >= 0) || !std::isfinite(release_s))
    throw std::logic_error("Workload: release time must be finite and >= 0");
  if (bytes_.size() >= static_cast<std::size_t>(std::numeric_limits<FlowId>::max()))
    throw std::logic_error("Workload: too many flows");
  for (ChannelId c : path)
    if (c < 0 || c >= channel_count()) throw std::logic_error("Workload: channel id out of range");
  if (path_.size() + path.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::logic_error("Workload: more than 2^32 channel entries");
  path_.insert(path_.end(), path.begin(), path.end());
  path_off_.push_back(static_cast<std::uint32_t>(path_.size()));
  bytes_.push_back(bytes);
  weight_.push_back(weight);
  if (release_s > 0) {
    release_.resize(bytes_.size(), 0.0);
    release_.back() = release_s;
  }
  return static_cast<FlowId>(bytes_.size() - 1);
}

void Workload::set_latency(FlowId f, double latency_s) {
  if (f < 0 || f >= flow_count() || !(latency_s >= 0) || !std::isfinite(latency_s))
    throw std::logic_error("Workload: bad latency");
  if (latency_.size() < bytes_.size()) latency_.resize(bytes_.size(), 0.0);
  latency_[static_cast<std::size_t>(f)] = latency_s;
}

void Workload::add_dependency(FlowId from, FlowId to) {
  if (from < 0 || from >= flow_count() || to < 0 || to >= flow_count() || from == to)
    throw std::logic_error("Workload: bad dependency");
  deps_.emplace_back(from, to);
}

double Workload::represented_flows() const {
  return std::accumulate(weight_.begin(), weight_.end(), 0.0);
}

}  // namespace railsim::sim
