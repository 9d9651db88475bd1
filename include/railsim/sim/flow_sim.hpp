#pragma once
// Event-driven flow-level simulation over directed channels.
//
// A Workload is a set of flows, each a path of directed channels (topo::Fabric numbers them
// 2 * link + direction), a size in bytes and a weight: `weight` identical flows that travel
// together (aggregation of symmetric flows; weight 1 is one flow). A flow may depend on others:
// it is released when all of them have been delivered. Bandwidth is shared max-min fairly
// (progressive filling) among the flows in progress, and the allocation is recomputed whenever a
// flow starts or ends, only in the part of the network that the change can affect (channels
// joined by flows form components; a change re-fills only its component). A flow's data is
// delivered `hop_latency_s` per channel after its last byte left the source.
//
// Fluid model (ours, the usual flow-level abstraction as in SimGrid or htsim's flow mode):
// no packets, no queues, no congestion control transients; a flow sends at its max-min fair
// rate from release to completion.
#include <cstdint>
#include <span>
#include <vector>

namespace railsim::sim {

using ChannelId = std::int32_t;
using FlowId = std::int32_t;

class Workload {
 public:
  Workload() = default;
  explicit Workload(std::vector<double> channel_capacity_Bps);

  std::int32_t channel_count() const { return static_cast<std::int32_t>(capacity_.size()); }
  std::int32_t flow_count() const { return static_cast<std::int32_t>(bytes_.size()); }
  const std::vector<double>& capacity_Bps() const { return capacity_; }

  void reserve(std::size_t flows, std::size_t path_entries);
  // Adds `weight` identical flows of `bytes` each along `path` (may be empty: delivered on
  // release), released at `release_s` once every dependency has been delivered.
  FlowId add_flow(std::span<const ChannelId> path, double bytes, double weight = 1.0,
                  double release_s = 0.0);
  // Extra delay between a flow's last byte and its delivery (e.g. a software cost per transfer),
  // on top of EngineOptions::hop_latency_s per channel.
  void set_latency(FlowId f, double latency_s);
  double latency_s(FlowId f) const {
    const auto u = static_cast<std::size_t>(f);
    return u < latency_.size() ? latency_[u] : 0.0;
  }
  // `to` is released only after `from` has been delivered.
  void add_dependency(FlowId from, FlowId to);
  // Adds weight to an existing flow (merging an identical flow into it).
  void add_weight(FlowId f, double weight) { weight_[static_cast<std::size_t>(f)] += weight; }

  std::span<const ChannelId> path(FlowId f) const {
    const auto b = path_off_[static_cast<std::size_t>(f)];
    const auto e = path_off_[static_cast<std::size_t>(f) + 1];
    return {path_.data() + b, static_cast<std::size_t>(e - b)};
  }
  double bytes(FlowId f) const { return bytes_[static_cast<std::size_t>(f)]; }
  double weight(FlowId f) const { return weight_[static_cast<std::size_t>(f)]; }
  double release_s(FlowId f) const { return release_[static_cast<std::size_t>(f)]; }
  const std::vector<std::pair<FlowId, FlowId>>& dependencies() const { return deps_; }
  // Sum of weights: how many individual flows the workload stands for.
  double represented_flows() const;

 private:
  std::vector<double> capacity_;
  std::vector<ChannelId> path_;
  std::vector<std::int64_t> path_off_{0};
  std::vector<double> bytes_, weight_, release_, latency_;
  std::vector<std::pair<FlowId, FlowId>> deps_;
};

struct EngineOptions {
  double hop_latency_s = 0.0;  // per channel crossed, added on delivery
  // Flows whose finishing times are within this relative distance complete in one event
  // (1e-9: far below any figure reported; merges ties broken only by rounding).
  double batch_tolerance = 1e-9;
  // Re-fill only the flows whose rate can change after flows end (exact; false re-fills whole
  // components, for tests).
  bool incremental = true;
};

struct SimResult {
  double completion_time_s = 0;                  // last delivery
  std::vector<double> finish_s;                  // delivery time per flow
  std::vector<double> channel_bytes;             // bytes carried per channel (weights included)
  std::vector<double> channel_peak_utilisation;  // max over time of allocated / capacity
  std::int64_t events = 0;                       // distinct event times processed
  std::int64_t refills = 0;                      // component re-fillings
  std::int64_t flows_simulated = 0;              // flows in the workload
  double flows_represented = 0;                  // with weights
};

// Deterministic: the same workload gives the same result bit for bit.
// Throws std::logic_error on an inconsistent workload (bad channel id, dependency cycle).
SimResult simulate(const Workload& w, const EngineOptions& opt = {});

}  // namespace railsim::sim
