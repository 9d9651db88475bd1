#include "railsim/traffic/traffic_matrix.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "railsim/core/error.hpp"

namespace railsim::traffic {

std::string_view to_string(Locality l) {
  switch (l) {
    case Locality::same_domain:
      return "same_domain";
    case Locality::same_rail:
      return "same_rail";
    case Locality::cross_rail:
      return "cross_rail";
  }
  return "?";
}

namespace {

using perf::Algorithm;
using perf::CollectiveOp;

[[noreturn]] void bad_pair(const perf::CommOp& op) {
  // A schedule that pairs an operation with an algorithm that cannot carry it is a bug in its
  // producer, not bad user input.
  throw std::logic_error(fmt::format("traffic: {} cannot run with the {} algorithm",
                                     perf::to_string(op.op), perf::to_string(op.algorithm)));
}

// Bytes each member sends to its ring neighbour for a ring of n members on a buffer of b bytes.
double ring_bytes(const perf::CommOp& op, std::int64_t n, double b) {
  const double nd = static_cast<double>(n);
  switch (op.op) {
    case CollectiveOp::all_reduce:
      return 2.0 * (nd - 1.0) / nd * b;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      return (nd - 1.0) / nd * b;
    default:
      bad_pair(op);
  }
}

void ring(const perf::CommOp& op, const std::int64_t* m, std::int64_t n, double b,
          std::vector<Transfer>& out) {
  if (n < 2) return;
  const double per = ring_bytes(op, n, b);
  for (std::int64_t i = 0; i < n; ++i) out.push_back({m[i], m[(i + 1) % n], per});
}

// Records one group of `op` can produce at most (for the memory budget).
std::int64_t max_transfers(const perf::CommOp& op, std::int64_t n) {
  switch (op.algorithm) {
    case Algorithm::ring:
      return n;
    case Algorithm::hierarchical:
      return 2 * n;
    case Algorithm::direct:
      return n * (n - 1);
    case Algorithm::p2p:
      return n;  // n - 1 stages hand over, plus the wrap of interleaved pipelines
  }
  return 0;
}

}  // namespace

namespace {

// Expands one group of `op`; b = B x count (per adjacent pair for p2p), wrap = B x wrap_count.
void expand(const perf::CommOp& op, const perf::Placement& pl, std::int64_t group, double b,
            double wrap, std::vector<Transfer>& out, std::vector<std::int64_t>& scratch) {
  const std::int64_t n = pl.axis_size(op.axis);
  scratch.resize(static_cast<std::size_t>(2 * n));
  std::int64_t* m = scratch.data();
  for (std::int64_t i = 0; i < n; ++i) m[i] = pl.gpu_of(pl.rank_in_group(op.axis, group, i));
  if (n < 2) return;
  const double nd = static_cast<double>(n);
  switch (op.algorithm) {
    case Algorithm::ring:
      if (op.op == CollectiveOp::all_to_all || op.op == CollectiveOp::send_recv) bad_pair(op);
      if (b > 0) ring(op, m, n, b, out);
      return;
    case Algorithm::direct: {
      double per = 0;
      switch (op.op) {
        case CollectiveOp::all_to_all:
        case CollectiveOp::all_gather:
        case CollectiveOp::reduce_scatter:
          per = b / nd;
          break;
        case CollectiveOp::all_reduce:  // reduce-scatter then all-gather
          per = 2.0 * b / nd;
          break;
        case CollectiveOp::send_recv:
          bad_pair(op);
      }
      if (!(per > 0)) return;
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          if (i != j) out.push_back({m[i], m[j], per});
      return;
    }
    case Algorithm::p2p: {
      if (op.op != CollectiveOp::send_recv) bad_pair(op);
      const bool back = op.phase == perf::Phase::backward;
      if (b > 0)
        for (std::int64_t i = 0; i + 1 < n; ++i)
          out.push_back(back ? Transfer{m[i + 1], m[i], b} : Transfer{m[i], m[i + 1], b});
      // Interleaved pipelines: the last stage hands the next model chunk back to the first.
      if (wrap > 0)
        out.push_back(back ? Transfer{m[0], m[n - 1], wrap} : Transfer{m[n - 1], m[0], wrap});
      return;
    }
    case Algorithm::hierarchical: {
      if (op.op == CollectiveOp::all_to_all || op.op == CollectiveOp::send_recv) bad_pair(op);
      if (!(b > 0)) return;
      // Members ordered by (HB domain, local rank), i.e. by GPU id: the j-th member of each
      // domain then sits on the same rail whenever the group is rail-aligned.
      const std::int64_t k = pl.hb_domain();
      std::int64_t* g = m + n;
      std::copy(m, m + n, g);
      std::sort(g, g + n);
      // Same number of members p in every touched domain, or no hierarchy to exploit.
      std::int64_t p = 1;
      while (p < n && g[p] / k == g[0] / k) ++p;
      bool regular = n % p == 0;
      for (std::int64_t s = 0; regular && s < n; s += p)
        regular = g[s] / k == g[s + p - 1] / k && (s + p == n || g[s + p] / k != g[s] / k);
      if (!regular) {
        ring(op, m, n, b, out);
        return;
      }
      const std::int64_t q = n / p;
      auto member = [&](std::int64_t dom, std::int64_t j) { return g[dom * p + j]; };
      if (p > 1) {  // steps 1 and 3 inside each domain (both send to the same neighbour)
        const double per = ring_bytes(op, p, b);
        for (std::int64_t dom = 0; dom < q; ++dom)
          for (std::int64_t j = 0; j < p; ++j)
            out.push_back({member(dom, j), member(dom, (j + 1) % p), per});
      }
      if (q > 1) {  // step 2: along each rail on the B/p shard
        const double per = ring_bytes(op, q, b / static_cast<double>(p));
        for (std::int64_t j = 0; j < p; ++j)
          for (std::int64_t dom = 0; dom < q; ++dom)
            out.push_back({member(dom, j), member((dom + 1) % q, j), per});
      }
      return;
    }
  }
}

}  // namespace

void expand_group(const perf::CommOp& op, const perf::Placement& pl, std::int64_t group,
                  std::vector<Transfer>& out, std::vector<std::int64_t>& scratch) {
  expand(op, pl, group, op.bytes * op.count, op.bytes * op.wrap_count, out, scratch);
}

namespace {

struct Record {
  std::uint64_t key;
  double bytes;
};

// Operations that expand into the same pairs (same collective, algorithm, axis, parallelism and
// p2p direction) are merged first, their bytes x count summed: the expansion is linear in bytes.
struct Coalesced {
  perf::CommOp op;
  double bytes = 0;  // sum of B x count
  double wrap = 0;   // sum of B x wrap_count (send_recv)
};

std::vector<Coalesced> coalesce(const perf::CommSchedule& schedule) {
  std::vector<Coalesced> out;
  auto same = [](const perf::CommOp& a, const perf::CommOp& b) {
    const bool dir_a = a.algorithm == Algorithm::p2p && a.phase == perf::Phase::backward;
    const bool dir_b = b.algorithm == Algorithm::p2p && b.phase == perf::Phase::backward;
    return a.op == b.op && a.algorithm == b.algorithm && a.axis == b.axis &&
           a.parallelism == b.parallelism && dir_a == dir_b;
  };
  for (const auto& op : schedule) {
    const double total = op.bytes * op.count, wrap = op.bytes * op.wrap_count;
    if (!(op.bytes >= 0) || !(op.count >= 0) || !(op.wrap_count >= 0) || !std::isfinite(total) ||
        !std::isfinite(wrap))
      throw std::logic_error(fmt::format("traffic: {} {} has bytes {} x count {} (wrap {})",
                                         perf::to_string(op.parallelism), perf::to_string(op.op),
                                         op.bytes, op.count, op.wrap_count));
    if (total == 0 && wrap == 0) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& o) { return same(o.op, op); });
    if (it == out.end()) {
      out.push_back({op, total, wrap});
    } else {
      it->bytes += total;
      it->wrap += wrap;
    }
  }
  return out;
}

// Beyond this many expansion records (16 bytes each, 4.3 GB) the build would not fit in memory.
constexpr std::int64_t kMaxRecords = std::int64_t{1} << 28;

}  // namespace

TrafficMatrix TrafficMatrix::build(const perf::CommSchedule& schedule, const perf::Placement& pl,
                                   const spec::Cluster& cluster) {
  if (pl.gpus() != cluster.gpus || pl.hb_domain() != cluster.hb_domain)
    throw std::logic_error("traffic: placement and cluster disagree on N or K");
  TrafficMatrix tm;
  tm.gpus_ = cluster.gpus;
  tm.hb_domain_ = cluster.hb_domain;
  const auto ops = coalesce(schedule);

  // Upper bound of the records before expanding anything, so that a hopeless request is an error.
  double budget = 0;
  for (const auto& c : ops) {
    const std::int64_t n = pl.axis_size(c.op.axis);
    budget += static_cast<double>(max_transfers(c.op, n)) *
              static_cast<double>(pl.group_count(c.op.axis));
    if (budget > static_cast<double>(kMaxRecords))
      throw InputError("strategy", fmt::format("the traffic matrix of this strategy would need "
                                               "more than {} pair records ({} {} over groups of "
                                               "{}); use a smaller group",
                                               kMaxRecords, perf::to_string(c.op.parallelism),
                                               perf::to_string(c.op.op), n));
  }

  // Two expansion passes bucket the records by sender without a global sort: the first counts
  // the sends of each GPU, the second writes each record into its sender's bucket. Positions
  // inside a bucket depend on thread timing, so each bucket is then sorted by its (unique) keys:
  // the entries, and the order of every sum, are the same for any thread count.
  const std::size_t n = static_cast<std::size_t>(cluster.gpus);
  std::vector<std::atomic<std::uint32_t>> cursor(n);
  for (auto& x : cursor) x.store(0, std::memory_order_relaxed);
  auto each_record = [&](auto&& emit) {
    for (std::size_t c = 0; c < ops.size(); ++c) {
      const perf::CommOp& op = ops[c].op;
      const double b = ops[c].bytes, wrap = ops[c].wrap;
      const std::uint64_t tag =
          (static_cast<std::uint64_t>(op.parallelism) << 8) | static_cast<std::uint64_t>(c);
      tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, pl.group_count(op.axis)),
                        [&](const tbb::blocked_range<std::int64_t>& r) {
                          std::vector<Transfer> tr;
                          std::vector<std::int64_t> scratch;
                          for (std::int64_t g = r.begin(); g != r.end(); ++g) {
                            tr.clear();
                            expand(op, pl, g, b, wrap, tr, scratch);
                            for (const Transfer& t : tr)
                              emit(t, (static_cast<std::uint64_t>(t.src) << 40) |
                                          (static_cast<std::uint64_t>(t.dst) << 16) | tag);
                          }
                        });
    }
  };
  each_record([&](const Transfer& t, std::uint64_t) {
    cursor[static_cast<std::size_t>(t.src)].fetch_add(1, std::memory_order_relaxed);
  });
  std::vector<std::size_t> start(n + 1, 0);
  for (std::size_t g = 0; g < n; ++g) {
    start[g + 1] = start[g] + cursor[g].load(std::memory_order_relaxed);
    cursor[g].store(0, std::memory_order_relaxed);
  }
  std::vector<Record> rec(start[n]);
  tm.build_records_ = rec.size();
  each_record([&](const Transfer& t, std::uint64_t key) {
    const auto src = static_cast<std::size_t>(t.src);
    rec[start[src] + cursor[src].fetch_add(1, std::memory_order_relaxed)] = {key, t.bytes};
  });

  // Sort each bucket, count its distinct (src, dst, parallelism), then merge into place.
  std::vector<std::size_t> out(n + 1, 0);
  auto key_of = [](const Record& r) { return r.key >> 8; };
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), [&](const auto& r) {
    for (std::size_t g = r.begin(); g != r.end(); ++g) {
      Record* b = rec.data() + start[g];
      Record* e = rec.data() + start[g + 1];
      std::sort(b, e, [](const Record& x, const Record& y) { return x.key < y.key; });
      std::size_t u = 0;
      for (Record* p = b; p != e; ++p) u += p == b || key_of(*p) != key_of(*(p - 1));
      out[g + 1] = u;
    }
  });
  for (std::size_t g = 0; g < n; ++g) out[g + 1] += out[g];
  tm.keys_.resize(out[n]);
  tm.bytes_.resize(out[n]);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), [&](const auto& r) {
    for (std::size_t g = r.begin(); g != r.end(); ++g) {
      std::size_t o = out[g];
      for (std::size_t i = start[g]; i < start[g + 1]; ++i) {
        if (i > start[g] && key_of(rec[i]) == key_of(rec[i - 1])) {
          tm.bytes_[o - 1] += rec[i].bytes;  // sums in key (= operation) order
        } else {
          tm.keys_[o] = rec[i].key & ~std::uint64_t{0xFF};
          tm.bytes_[o++] = rec[i].bytes;
        }
      }
    }
  });
  return tm;
}

double TrafficMatrix::total_bytes() const {
  double s = 0;
  for (double b : bytes_) s += b;
  return s;
}

}  // namespace railsim::traffic
