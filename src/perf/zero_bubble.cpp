#include "railsim/perf/zero_bubble.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace railsim::perf {
namespace {

enum class Pass : std::uint8_t { f, i, w };

// One operation of a GPU's order: a pass of micro-batch `mb` through the GPU's chunk `chunk` (0:
// chunk r on the way down the V, 1: chunk 2 p - 1 - r on the way back up).
struct ZbvOp {
  Pass pass;
  std::uint8_t chunk;
  std::int32_t mb;
};

// GPU r's order among p for n >= 2 p - 1 micro-batches (written after PyTorch's
// ScheduleZBVZeroBubble._calculate_single_rank_operations): a warm-up of 2 (p - r) - 1 forwards
// of chunk 0, r pairs (F1, F0), p - r triples (F1, I1, W1); a steady phase of (F0, I0, W0, F1,
// I1, W1) rounds; a cool-down of r pairs (I0, I1), p - r pairs (I0, W0) and the W passes left,
// chunk 1's first. Operations of micro-batches >= m are dropped, as PyTorch drops them.
void append_order(std::int64_t p, std::int64_t r, std::int64_t m, std::vector<ZbvOp>& out) {
  const std::int64_t n = std::max(2 * p - 1, m);
  std::int64_t f0 = 0, f1 = 0, i0 = 0, i1 = 0;
  auto put = [&](Pass pass, int chunk, std::int64_t mb) {
    if (mb < m)
      out.push_back({pass, static_cast<std::uint8_t>(chunk), static_cast<std::int32_t>(mb)});
  };
  for (std::int64_t k = 0; k < 2 * (p - r) - 1; ++k) put(Pass::f, 0, f0++);
  for (std::int64_t k = 0; k < r; ++k) {
    put(Pass::f, 1, f1++);
    put(Pass::f, 0, f0++);
  }
  for (std::int64_t k = 0; k < p - r; ++k) {
    put(Pass::f, 1, f1++);
    put(Pass::i, 1, i1);
    put(Pass::w, 1, i1++);
  }
  while (f1 < f0 || f0 < n) {
    if (f0 < n) put(Pass::f, 0, f0++);
    put(Pass::i, 0, i0);
    put(Pass::w, 0, i0++);
    put(Pass::f, 1, f1++);
    put(Pass::i, 1, i1);
    put(Pass::w, 1, i1++);
  }
  std::int64_t w0 = i0, w1 = i1;
  for (std::int64_t k = 0; k < r; ++k) {
    put(Pass::i, 0, i0++);
    put(Pass::i, 1, i1++);
  }
  for (std::int64_t k = 0; k < p - r; ++k) {
    put(Pass::i, 0, i0++);
    put(Pass::w, 0, w0++);
  }
  while (w1 < i1) put(Pass::w, 1, w1++);
  while (w0 < i0) put(Pass::w, 0, w0++);
}

struct Scratch {
  std::vector<ZbvOp> ops;
  std::vector<std::size_t> begin, next;
  std::vector<double> end, clock;
};

}  // namespace

double zbv_span(std::int64_t p, std::int64_t m, double f, double i, double w) {
  if (p < 2 || m < 1) return 0.0;
  thread_local Scratch s;
  s.ops.clear();
  s.begin.assign(static_cast<std::size_t>(p) + 1, 0);
  for (std::int64_t r = 0; r < p; ++r) {
    s.begin[static_cast<std::size_t>(r)] = s.ops.size();
    append_order(p, r, m, s.ops);
  }
  s.begin[static_cast<std::size_t>(p)] = s.ops.size();
  s.next.assign(s.begin.begin(), s.begin.end() - 1);
  s.clock.assign(static_cast<std::size_t>(p), 0.0);
  // End times of the F and I passes, [pass][chunk][gpu][micro-batch]; -1 until run.
  s.end.assign(static_cast<std::size_t>(4 * p * m), -1.0);
  auto at = [&](Pass pass, int chunk, std::int64_t r, std::int64_t mb) -> double& {
    const std::int64_t k = (static_cast<std::int64_t>(pass) * 2 + chunk) * p + r;
    return s.end[static_cast<std::size_t>(k * m + mb)];
  };
  // What an operation waits for on another GPU (or on its own, at the bottom of the V and for
  // the loss): the forward comes down chunk 0 from GPU r - 1 and back up chunk 1 from GPU r + 1;
  // the input gradient goes the other way; W follows its own I.
  auto dependency = [&](const ZbvOp& op, std::int64_t r) -> double {
    const std::int64_t j = op.mb;
    switch (op.pass) {
      case Pass::f:
        if (op.chunk == 0) return r == 0 ? 0.0 : at(Pass::f, 0, r - 1, j);
        return r == p - 1 ? at(Pass::f, 0, r, j) : at(Pass::f, 1, r + 1, j);
      case Pass::i:
        if (op.chunk == 1) return r == 0 ? at(Pass::f, 1, 0, j) : at(Pass::i, 1, r - 1, j);
        return r == p - 1 ? at(Pass::i, 1, r, j) : at(Pass::i, 0, r + 1, j);
      case Pass::w:
      default:
        return at(Pass::i, op.chunk, r, j);
    }
  };
  std::size_t left = s.ops.size();
  while (left > 0) {
    std::size_t progress = 0;
    for (std::int64_t r = 0; r < p; ++r) {
      const auto ru = static_cast<std::size_t>(r);
      for (; s.next[ru] < s.begin[ru + 1]; ++s.next[ru]) {
        const ZbvOp& op = s.ops[s.next[ru]];
        const double ready = dependency(op, r);
        if (ready < 0.0) break;  // its input is not computed yet
        const double cost = op.pass == Pass::f ? f : op.pass == Pass::i ? i : w;
        const double done = std::max(s.clock[ru], ready) + cost;
        s.clock[ru] = done;
        if (op.pass != Pass::w) at(op.pass, op.chunk, r, op.mb) = done;
        ++progress;
      }
    }
    if (progress == 0) throw std::logic_error("zbv_idle: the ZB-V order does not make progress");
    left -= progress;
  }
  return *std::max_element(s.clock.begin(), s.clock.end());
}

double zbv_idle(std::int64_t p, std::int64_t m, double f, double i, double w) {
  if (p < 2 || m < 1) return 0.0;
  auto idle = [&](std::int64_t stages) {
    const std::int64_t n = std::min(m, 2 * stages - 1);
    return std::max(0.0, zbv_span(stages, n, f, i, w) - static_cast<double>(n) * 2.0 * (f + i + w));
  };
  // Each further stage adds the same idle time (ours, checked by tests against the whole order):
  // with m >= 2 p - 1 from two stages on, with fewer micro-batches from m + 2 stages on; deep
  // pipelines are timed from the last two stages of that range.
  const std::int64_t q = m >= 2 * p - 1 ? 4 : std::max<std::int64_t>(6, m + 2);
  if (p <= q) return idle(p);
  const double at_q = idle(q);
  return at_q + static_cast<double>(p - q) * (at_q - idle(q - 1));
}

}  // namespace railsim::perf
