#include "railsim/perf/pipeline_order.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "railsim/core/hash.hpp"

namespace railsim::perf {

std::int64_t stage_layers(std::int64_t layers, std::int64_t p, std::int64_t r) {
  const std::int64_t lo = layers / p, rem = layers % p;
  // Spare layer i (0 .. rem - 1) goes to stage i + 1 while i < p - 2, then to stage 0.
  const bool spare = r == 0 ? rem >= p - 1 : r < p - 1 && r <= rem;
  return lo + (spare && rem > 0 ? 1 : 0);
}

std::int64_t model_stage_layers(std::int64_t layers, std::int64_t mtp, std::int64_t p,
                                std::int64_t r) {
  if (p <= 1) return layers;
  return stage_layers(layers + 2 * mtp, p, r) - (r == p - 1 ? 2 * mtp : 0);
}

std::int64_t chunk_layers(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t r,
                          std::int64_t c, bool embedding_chunk) {
  const std::int64_t n = stage_layers(layers, p, r);
  if (embedding_chunk && r == 0) c = v - 1 - c;  // the smaller chunks first
  return n / v + (c < n % v ? 1 : 0);
}

namespace {

// A position in the schedule table: micro-batch group g, model chunk c, micro-batch j of the
// group (micro-batch g p + j); entries run j fastest, then c, then g.
struct TableCursor {
  std::int64_t g = 0, c = 0, j = 0;
  void advance(std::int64_t p, std::int64_t v) {
    if (++j < p) return;
    j = 0;
    if (++c < v) return;
    c = 0;
    ++g;
  }
};

// Forward chunk passes stage r runs before its first backward, of the m v it has: 1F1B
// min(p - 1 - r, m); interleaved Megatron's 2 (p - 1 - r) + (v - 1) p.
std::int64_t warmup_forwards(std::int64_t p, std::int64_t v, std::int64_t r, std::int64_t total) {
  return std::min(total, v == 1 ? p - 1 - r : 2 * (p - 1 - r) + (v - 1) * p);
}

struct StageState {
  std::int64_t pass = 0, warm = 0;
  TableCursor fwd, bwd;  // the next forward and backward entries
  double clock = 0;
};

struct OrderScratch {
  std::vector<double> cost_f, cost_b;  // per layer block
  std::vector<double> f_done, b_done;  // finish times per (micro-batch, block); -1 not yet
  std::vector<StageState> stage;
  std::vector<std::int64_t> queue;
  std::vector<char> queued;
};

// A key of the order's caches: the layout (layers, p, v, the embedding's chunk), the micro-batches
// and one more index (the forward share's grid point, or the stage).
struct OrderKey {
  std::int64_t layers, p, v, m;
  int index;  // the forward share's grid point, or the stage
  bool embedding_chunk;
  bool operator==(const OrderKey&) const = default;
};
struct OrderKeyHash {
  std::size_t operator()(const OrderKey& k) const {
    std::uint64_t h = kSplitMix64Gamma;
    for (const std::int64_t x :
         {k.layers, k.p, k.v, k.m, std::int64_t{k.index}, std::int64_t{k.embedding_chunk}})
      h = hash_combine(h, static_cast<std::uint64_t>(x));
    return static_cast<std::size_t>(h);
  }
};

// A value per key, computed once for the process: a small direct-mapped table per thread in
// front of a shared map (the search asks for the same few keys millions of times).
struct OrderCache {
  std::shared_mutex mu;
  std::unordered_map<OrderKey, double, OrderKeyHash> map;
};
using RecentSlots = std::array<std::pair<OrderKey, double>, 64>;

template <class Compute>
double cached(OrderCache& cache, RecentSlots& recent, const OrderKey& key, Compute&& compute) {
  auto& slot = recent[OrderKeyHash{}(key) % recent.size()];
  if (slot.first == key) return slot.second;
  {
    const std::shared_lock<std::shared_mutex> lock(cache.mu);
    if (auto it = cache.map.find(key); it != cache.map.end()) {
      slot = *it;
      return it->second;
    }
  }
  const double value = compute();
  const std::unique_lock<std::shared_mutex> lock(cache.mu);
  slot = *cache.map.emplace(key, value).first;
  return slot.second;
}

double count_peak_layers(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t m,
                         std::int64_t r, bool embedding_chunk) {
  const std::int64_t total = m * v, warm = warmup_forwards(p, v, r, total);
  auto n = [&](std::int64_t c) {
    return static_cast<double>(chunk_layers(layers, p, v, r, c, embedding_chunk));
  };
  TableCursor fwd, bwd;  // the next forward and backward entries, as megatron_span walks them
  double held = 0.0;
  for (std::int64_t k = 0; k < warm; ++k, fwd.advance(p, v)) held += n(fwd.c);
  double peak = held;
  // The steady pairs F(warm + j), B(j): periodic in j with period p v (v = 1: every pair alike);
  // a backward frees chunk v - 1 - c of its entry.
  const std::int64_t pairs = std::min(total - warm, v == 1 ? 1 : p * v);
  for (std::int64_t j = 0; j < pairs; ++j, fwd.advance(p, v), bwd.advance(p, v)) {
    held += n(fwd.c);
    peak = std::max(peak, held);
    held -= n(v - 1 - bwd.c);
  }
  return peak;
}

}  // namespace

double peak_layers_in_flight(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t m,
                             std::int64_t r, bool embedding_chunk) {
  if (p < 1 || v < 1 || m < 1 || r < 0 || r >= p) return 0.0;
  static OrderCache cache;
  thread_local RecentSlots recent{};
  // The count no longer changes once the warm-up and a period fit in the m v chunks.
  const std::int64_t m_key = std::min(m, 3 * p + 2);
  return cached(cache, recent, {layers, p, v, m_key, static_cast<int>(r), embedding_chunk},
                [&] { return count_peak_layers(layers, p, v, m_key, r, embedding_chunk); });
}

double megatron_span(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t m, double f,
                     double b, bool embedding_chunk) {
  if (p < 1 || v < 1 || m < 1) return 0.0;
  if (v > 1 && m % p != 0)
    throw std::logic_error("megatron_span: the interleaved order needs m a multiple of p");
  thread_local OrderScratch s;
  const std::int64_t blocks = p * v, total = m * v;  // forward chunk passes per stage
  const auto ub = static_cast<std::size_t>(blocks), up = static_cast<std::size_t>(p);
  s.cost_f.resize(ub);
  s.cost_b.resize(ub);
  for (std::int64_t r = 0; r < p; ++r)
    for (std::int64_t c = 0; c < v; ++c) {
      const auto n = static_cast<double>(chunk_layers(layers, p, v, r, c, embedding_chunk));
      s.cost_f[static_cast<std::size_t>(c * p + r)] = n * f;
      s.cost_b[static_cast<std::size_t>(c * p + r)] = n * b;
    }
  s.f_done.assign(static_cast<std::size_t>(m) * ub, -1.0);
  s.b_done.assign(static_cast<std::size_t>(m) * ub, -1.0);
  s.stage.assign(up, StageState{});
  for (std::int64_t r = 0; r < p; ++r)
    s.stage[static_cast<std::size_t>(r)].warm = warmup_forwards(p, v, r, total);
  // Runs stage r as far as its inputs allow; whether it ran anything. Its passes: `warm`
  // forwards, then a forward and a backward in turn while forwards are left, then backwards.
  auto advance = [&](std::int64_t r) {
    StageState& st = s.stage[static_cast<std::size_t>(r)];
    const std::int64_t steady_end = st.warm + 2 * (total - st.warm), passes = 2 * total;
    bool ran = false;
    for (; st.pass < passes; ++st.pass) {
      const bool forward =
          st.pass < st.warm || (st.pass < steady_end && (st.pass - st.warm) % 2 == 0);
      const TableCursor& at = forward ? st.fwd : st.bwd;
      const std::int64_t c = forward ? at.c : v - 1 - at.c;
      const std::int64_t block = c * p + r;
      const std::size_t row = static_cast<std::size_t>(at.g * p + at.j) * ub;
      const auto ubk = static_cast<std::size_t>(block);
      double ready = 0.0;
      if (forward) {
        if (block > 0) ready = s.f_done[row + ubk - 1];
      } else {
        ready = block + 1 < blocks ? s.b_done[row + ubk + 1] : s.f_done[row + ubk];
      }
      if (ready < 0.0) break;  // its input is not computed yet
      st.clock = std::max(st.clock, ready) + (forward ? s.cost_f[ubk] : s.cost_b[ubk]);
      (forward ? s.f_done : s.b_done)[row + ubk] = st.clock;
      (forward ? st.fwd : st.bwd).advance(p, v);
      ran = true;
    }
    return ran;
  };
  // A stage waits only on its neighbours (blocks g - 1 and g + 1 sit on stages r - 1 and r + 1,
  // cyclically across chunk boundaries) or on itself: after a stage runs, its neighbours retry.
  s.queue.clear();
  s.queued.assign(up, 1);
  for (std::int64_t r = p - 1; r >= 0; --r) s.queue.push_back(r);
  auto push = [&](std::int64_t r) {
    if (!s.queued[static_cast<std::size_t>(r)]) {
      s.queued[static_cast<std::size_t>(r)] = 1;
      s.queue.push_back(r);
    }
  };
  while (!s.queue.empty()) {
    const std::int64_t r = s.queue.back();
    s.queue.pop_back();
    s.queued[static_cast<std::size_t>(r)] = 0;
    if (advance(r) && p > 1) {
      push((r + 1) % p);
      push((r + p - 1) % p);
    }
  }
  double span = 0.0;
  for (const StageState& st : s.stage) {
    if (st.pass < 2 * total)
      throw std::logic_error("megatron_span: the pipeline order does not make progress");
    span = std::max(span, st.clock);
  }
  return span;
}

namespace {

// fwd_share's grid, steps of 1/48: it holds 1/4, 1/3 and 1/2 (backward 3, 2 and 1 times the
// forward), where the order's growth per round changes slope.
constexpr int kShareGrid = 48;

// The order's span less the closed form at key.m micro-batches, one layer's forward and backward
// taking `share` and 1 - share.
double timed_excess(const OrderKey& key, double share) {
  const std::int64_t layers = key.layers, p = key.p, v = key.v, m = key.m;
  const std::int64_t n_max = (layers + p - 1) / p;  // the fullest stage's
  const double closed = static_cast<double>(m) * static_cast<double>(n_max) +
                        static_cast<double>(p - 1) / static_cast<double>(v) *
                            static_cast<double>(layers) / static_cast<double>(p);
  return megatron_span(layers, p, v, m, share, 1.0 - share, key.embedding_chunk) - closed;
}

// The order's excess at key.m micro-batches, cached for the process (excess_at says where).
double cached_excess(const OrderKey& key) {
  static OrderCache cache;
  thread_local RecentSlots recent{};
  return cached(cache, recent, key,
                [&] { return timed_excess(key, static_cast<double>(key.index) / kShareGrid); });
}

double excess_at(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t m, int share,
                 bool embedding_chunk) {
  auto at = [&](std::int64_t mb) {
    return cached_excess({layers, p, v, mb, share, embedding_chunk});
  };
  // 1F1B: the excess no longer changes from p micro-batches on.
  if (v == 1) return at(std::min(m, p));
  // Interleaved: timed up to 8 rounds of p micro-batches; beyond, the growth per round of the
  // last two, doubling the rounds timed while it is negative (the fullest stage still using
  // the slack of its warm-up: it cannot last, since a round takes that stage's work at least).
  std::int64_t k = 8 * p;
  while (m > k) {
    const double last = at(k), slope = (last - at(k - 2 * p)) / static_cast<double>(2 * p);
    if (slope >= 0.0 || 2 * std::min(m, 2 * k) * v * p > kOrderMaxPasses)
      return last + static_cast<double>(m - k) * std::max(0.0, slope);
    k = std::min(m, 2 * k);
  }
  return at(m);
}

}  // namespace

double uneven_chunk_stall(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t m,
                          double fwd_share, bool embedding_chunk) {
  if (p < 2 || v < 1 || m < 1 || layers % (p * v) == 0) return 0.0;
  if (v > 1 && m % p != 0) return 0.0;  // not a schedule Megatron-Core runs (validate refuses it)
  if (2 * std::min(m, v == 1 ? p : 8 * p) * v * p > kOrderMaxPasses) return 0.0;
  const double x = std::clamp(fwd_share, 0.0, 1.0) * kShareGrid;
  const int j = std::min(kShareGrid - 1, static_cast<int>(std::floor(x)));
  const double w = x - j;
  const double lo = excess_at(layers, p, v, m, j, embedding_chunk);
  return w > 0.0 ? lo + w * (excess_at(layers, p, v, m, j + 1, embedding_chunk) - lo) : lo;
}

}  // namespace railsim::perf
