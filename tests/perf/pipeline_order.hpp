#pragma once
// A reference for the pipeline model's closed forms (tests only): Megatron-Core's 1F1B and
// interleaved 1F1B orders, every forward and backward chunk pass in the order each stage issues
// it, timed by its dependencies. The closed forms of the time model (bubble (p - 1)/v of a stage's
// time per micro-batch) and of the memory model (chunks in flight at the peak) are checked
// against it.
//
// The orders follow Megatron-Core's pipeline_parallel/schedules.py:
// - 1F1B (forward_backward_pipelining_without_interleaving): stage r runs min(p - 1 - r, m)
//   forwards, then alternates one forward and one backward, then the remaining backwards.
// - interleaved (forward_backward_pipelining_with_interleaving): the schedule table takes the
//   micro-batches in groups of `group` (microbatch_group_size_per_vp_stage, p by default), every
//   model chunk of a group in turn (get_schedule_table); stage r runs 2 (p - 1 - r) +
//   (v - 1) group forward chunks (all of them if fewer), then alternates forward k + warm-up and
//   backward k of the table, backward chunks in reverse order.
// Model chunk c of stage r is layer block c p + r. A forward needs the previous block's forward
// of the same micro-batch; a backward the next block's backward, or, for the last block, its own
// forward. Sends take no time and never block.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace railsim::test {

struct PipelineOrderTiming {
  bool deadlock = false;  // some stage waits on a pass that waits on it
  double span = 0;        // first forward to last backward
  double idle = 0;        // span less the busiest stage's work (m v (f + b) when even)
  // Per stage, the most chunk passes whose forward ran and whose backward has not: the
  // activations it holds at its peak, in chunks.
  std::vector<std::int64_t> peak_in_flight;
  // Per stage, the most forward time of such chunk passes held at once: with a block's forward
  // time its layer count, the layer-micro-batches it holds at its peak.
  std::vector<double> peak_held_forward;
};

// p stages, m micro-batches, v model chunks per stage (1: plain 1F1B), micro-batches grouped by
// `group` (interleaved only); block_f[g] and block_b[g] the forward and backward time of layer
// block g = c p + r (model chunk c of stage r), p v of each.
inline PipelineOrderTiming time_megatron_order(std::int64_t p, std::int64_t m, std::int64_t v,
                                               std::int64_t group,
                                               const std::vector<double>& block_f,
                                               const std::vector<double>& block_b) {
  struct Pass {
    bool forward;
    std::int64_t mb, chunk;
  };
  // The schedule table: (micro-batch, chunk) in forward order.
  std::vector<Pass> table;
  for (std::int64_t g0 = 0; g0 < m; g0 += group)
    for (std::int64_t c = 0; c < v; ++c)
      for (std::int64_t mb = g0; mb < std::min(m, g0 + group); ++mb) table.push_back({true, mb, c});
  const auto total = static_cast<std::int64_t>(table.size());
  auto at = [&](std::int64_t k) { return table[static_cast<std::size_t>(k)]; };
  auto backward = [&](std::int64_t k) { return Pass{false, at(k).mb, v - 1 - at(k).chunk}; };
  std::vector<std::vector<Pass>> order(static_cast<std::size_t>(p));
  for (std::int64_t r = 0; r < p; ++r) {
    const std::int64_t warm =
        std::min(total, v == 1 ? p - 1 - r : 2 * (p - 1 - r) + (v - 1) * group);
    auto& o = order[static_cast<std::size_t>(r)];
    for (std::int64_t k = 0; k < warm; ++k) o.push_back(at(k));
    for (std::int64_t k = 0; k + warm < total; ++k) {
      o.push_back(at(k + warm));
      o.push_back(backward(k));
    }
    for (std::int64_t k = std::max<std::int64_t>(0, total - warm); k < total; ++k)
      o.push_back(backward(k));
  }
  // Finish times by (direction, micro-batch, layer block); negative: not run yet.
  const std::int64_t blocks = v * p;
  std::vector<double> done(static_cast<std::size_t>(2 * m * blocks), -1.0);
  auto slot = [&](bool fwd, std::int64_t mb, std::int64_t block) -> double& {
    return done[static_cast<std::size_t>(((fwd ? 0 : 1) * m + mb) * blocks + block)];
  };
  PipelineOrderTiming out;
  out.peak_in_flight.assign(static_cast<std::size_t>(p), 0);
  out.peak_held_forward.assign(static_cast<std::size_t>(p), 0.0);
  std::vector<double> held_forward(static_cast<std::size_t>(p), 0.0);
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<double> free(static_cast<std::size_t>(p), 0.0);
  std::vector<std::int64_t> held(static_cast<std::size_t>(p), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::int64_t r = 0; r < p; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      const auto& o = order[ri];
      while (next[ri] < o.size()) {
        const Pass& x = o[next[ri]];
        const std::int64_t block = x.chunk * p + r;
        double ready = 0;
        if (x.forward && block > 0)
          ready = slot(true, x.mb, block - 1);
        else if (!x.forward)
          ready = block + 1 < blocks ? slot(false, x.mb, block + 1) : slot(true, x.mb, block);
        if (ready < 0) break;  // its input has not been computed yet
        const auto bi = static_cast<std::size_t>(block);
        free[ri] = std::max(free[ri], ready) + (x.forward ? block_f[bi] : block_b[bi]);
        slot(x.forward, x.mb, block) = free[ri];
        held[ri] += x.forward ? 1 : -1;
        out.peak_in_flight[ri] = std::max(out.peak_in_flight[ri], held[ri]);
        // A backward frees its own chunk's activations: those its forward made.
        held_forward[ri] += x.forward ? block_f[bi] : -block_f[bi];
        out.peak_held_forward[ri] = std::max(out.peak_held_forward[ri], held_forward[ri]);
        ++next[ri];
        progress = true;
      }
    }
  }
  for (std::int64_t r = 0; r < p; ++r) {
    const auto ri = static_cast<std::size_t>(r);
    out.deadlock = out.deadlock || next[ri] < order[ri].size();
    out.span = std::max(out.span, free[ri]);
  }
  // The busiest stage's work: m times its chunks' forward and backward.
  double busiest = 0;
  for (std::int64_t r = 0; r < p; ++r) {
    double stage = 0;
    for (std::int64_t c = 0; c < v; ++c) {
      const auto bi = static_cast<std::size_t>(c * p + r);
      stage += block_f[bi] + block_b[bi];
    }
    busiest = std::max(busiest, stage);
  }
  out.idle = out.span - static_cast<double>(m) * busiest;
  return out;
}

// Every chunk pass alike: f forward, b backward.
inline PipelineOrderTiming time_megatron_order(std::int64_t p, std::int64_t m, std::int64_t v,
                                               std::int64_t group, double f, double b) {
  const auto blocks = static_cast<std::size_t>(p * v);
  return time_megatron_order(p, m, v, group, std::vector<double>(blocks, f),
                             std::vector<double>(blocks, b));
}

}  // namespace railsim::test
