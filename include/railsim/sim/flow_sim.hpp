#pragma once
// Event-driven flow-level simulation over directed channels.
//
// A Workload is a set of flows, each a path of directed channels (topo::Fabric numbers them
// 2 * link + direction), a size in bytes and a weight: `weight` identical flows that travel
// together (aggregation of symmetric flows; weight 1 is one flow). A flow may depend on others:
// it is released when all of them have been delivered. Bandwidth is shared max-min fairly
// (progressive filling) among the flows in progress, and the allocation is recomputed whenever a
// flow starts or ends, only for the flows whose bottleneck the change touched (each fill records
// every flow's bottleneck channels; a flow whose records stay valid keeps its rate exactly). A
// flow's data is delivered `hop_latency_s` per channel after its last byte left the source.
// A component (flows joined by channels) whose flows have all been released and on which no
// other flow waits is closed: nothing can change it any more, and it runs its remaining events
// on its own, the closed components in parallel (oneTBB), with the same result on any number of
// threads. docs/sim.md states the algorithm, its cost and its memory per flow.
//
// Fluid model (ours, the usual flow-level abstraction as in SimGrid or htsim's flow mode):
// no packets, no queues, no congestion control transients; a flow sends at its max-min fair
// rate from release to completion.
#include <cstdint>
#include <span>
#include <vector>

#include "railsim/core/big_vector.hpp"

namespace railsim::report {
class ProgressBar;
}

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

  // Room for this many flows, channel entries and dependencies (an upper bound costs address
  // space only: pages never written are never backed).
  void reserve(std::size_t flows, std::size_t path_entries, std::size_t dependencies = 0);
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
  double release_s(FlowId f) const {
    const auto u = static_cast<std::size_t>(f);
    return u < release_.size() ? release_[u] : 0.0;
  }
  const core::BigVector<std::pair<FlowId, FlowId>>& dependencies() const { return deps_; }
  // Sum of weights: how many individual flows the workload stands for.
  double represented_flows() const;

 private:
  std::vector<double> capacity_;
  core::BigVector<ChannelId> path_;
  core::BigVector<std::uint32_t> path_off_{0};  // checked < 2^32 entries
  core::BigVector<double> bytes_, weight_;
  core::BigVector<double> release_, latency_;  // allocated when a flow has a non-zero value
  core::BigVector<std::pair<FlowId, FlowId>> deps_;
};

struct EngineOptions {
  double hop_latency_s = 0.0;  // per channel crossed, added on delivery
  // Flows whose finishing times are within this relative distance complete in one event
  // (1e-9: far below any figure reported; merges ties broken only by rounding).
  double batch_tolerance = 1e-9;
  // The engine: true re-fills only the flows whose rate can change after flows end, with the
  // channels in a heap of fair shares; false is the reference engine (whole components re-filled
  // by a pass over every channel per level), kept for tests. Both are exact; their finishing
  // times agree to 1e-9 relative.
  bool incremental = true;
  // When set, told after each event the flows delivered of the workload's (update: nothing at
  // all when its stream is not a terminal, a clock read otherwise; the event loop's own thread).
  report::ProgressBar* progress = nullptr;
};

struct SimResult {
  double completion_time_s = 0;                  // last delivery
  std::vector<double> finish_s;                  // delivery time per flow
  std::vector<double> channel_bytes;             // bytes carried per channel (weights included)
  std::vector<double> channel_peak_utilisation;  // max over time of allocated / capacity
  // Event times processed; a closed component's own events are counted apart.
  std::int64_t events = 0;
  std::int64_t refills = 0;          // component re-fillings
  std::int64_t refilled_flows = 0;   // flows given a new rate, summed over events
  std::int64_t flows_simulated = 0;  // flows in the workload
  double flows_represented = 0;      // with weights
};

// Peak memory of building and simulating a workload of `flows` flows with `path_entries`
// channel entries and `dependencies` dependencies in all: the workload, the merging index of the
// builder, the engine's state and the result (constants measured as peak RSS of the flow-by-flow
// rail-only all-to-all of docs/sim.md, Scale). Used to refuse a simulation before it starts.
double estimated_memory_bytes(double flows, double path_entries, double dependencies);

// Deterministic: the same workload gives the same result bit for bit.
// Throws std::logic_error on an inconsistent workload (bad channel id, dependency cycle).
SimResult simulate(const Workload& w, const EngineOptions& opt = {});

}  // namespace railsim::sim
