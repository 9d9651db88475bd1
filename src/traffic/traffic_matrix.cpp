#include "railsim/traffic/traffic_matrix.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "railsim/core/cancel.hpp"
#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/perf/expansion.hpp"

namespace railsim::traffic {

namespace {
constexpr EnumNames<Locality, 3> kLocalityNames{{{{Locality::same_domain, "same_domain"},
                                                  {Locality::same_rail, "same_rail"},
                                                  {Locality::cross_rail, "cross_rail"}}}};
}  // namespace

std::string_view to_string(Locality l) {
  return kLocalityNames.name(l);
}

namespace {

using perf::Algorithm;
using perf::CollectiveOp;

// Records one group of `op` can produce at most (for the memory budget).
std::int64_t max_transfers(const perf::CommOp& op, std::int64_t n) {
  switch (op.algorithm) {
    case Algorithm::ring:
      return n;
    case Algorithm::hierarchical:
      return 2 * n;
    case Algorithm::direct:
    case Algorithm::rail_then_domain:  // n (q - 1) along the rails and n (p - 1) inside domains
      return n * (n - 1);
    case Algorithm::p2p:
      return n;  // n - 1 stages hand over, plus the wrap of interleaved pipelines
  }
  return 0;
}

// Expands one group of `op` with perf's expansion (the phases every consumer shares);
// b = B x count (per adjacent pair for p2p), wrap = B x wrap_count.
void expand(const perf::CommOp& op, const perf::Placement& pl, std::int64_t group, double b,
            double wrap, std::vector<Transfer>& out, perf::GroupExpansion& ex,
            std::vector<std::int64_t>& scratch) {
  perf::CommOp unit = op;
  unit.bytes = b;  // the expansion is linear in bytes: count folded in
  perf::expand_group(unit, pl, group, ex, scratch);
  for (int i = 0; i < ex.plan.size; ++i) {
    const perf::CollectivePhase& ph = ex.plan.phases[static_cast<std::size_t>(i)];
    const std::int64_t n = ph.members;
    const double nd = static_cast<double>(n);
    for (std::int64_t r = 0; r < ex.rings[static_cast<std::size_t>(i)]; ++r) {
      const auto m = ex.ring(i, r);
      switch (ph.algorithm) {
        case Algorithm::ring:
        case Algorithm::hierarchical: {
          const double per = perf::ring_bytes_per_member(ph);
          if (per > 0)
            for (std::int64_t j = 0; j < n; ++j)
              out.push_back(
                  {m[static_cast<std::size_t>(j)], m[static_cast<std::size_t>((j + 1) % n)], per});
          break;
        }
        case Algorithm::rail_then_domain:  // never a phase's own algorithm
        case Algorithm::direct: {
          const double per = (ph.op == CollectiveOp::all_reduce ? 2.0 : 1.0) * ph.bytes / nd;
          if (per > 0)
            for (std::int64_t x = 0; x < n; ++x)
              for (std::int64_t y = 0; y < n; ++y)
                if (x != y)
                  out.push_back(
                      {m[static_cast<std::size_t>(x)], m[static_cast<std::size_t>(y)], per});
          break;
        }
        case Algorithm::p2p: {
          const bool back = op.phase == perf::Phase::backward;
          if (b > 0)
            for (std::size_t j = 0; j + 1 < m.size(); ++j)
              out.push_back(back ? Transfer{m[j + 1], m[j], b} : Transfer{m[j], m[j + 1], b});
          // Interleaved pipelines: the last stage hands the next model chunk back to the first.
          if (wrap > 0)
            out.push_back(back ? Transfer{m.front(), m.back(), wrap}
                               : Transfer{m.back(), m.front(), wrap});
          break;
        }
      }
    }
  }
}

}  // namespace

void expand_group(const perf::CommOp& op, const perf::Placement& pl, std::int64_t group,
                  std::vector<Transfer>& out, std::vector<std::int64_t>& scratch) {
  perf::GroupExpansion ex;
  expand(op, pl, group, op.bytes * op.count, op.bytes * op.wrap_count, out, ex, scratch);
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
    if (budget > static_cast<double>(kMaxRecords)) {
      // The degree whose groups are too large (an expert-data-parallel group is dp / ep).
      // (HSDP's groups: the shard group is --hsdp's, the replica group dp's.)
      const perf::Axis degree = c.op.axis == perf::Axis::edp || c.op.axis == perf::Axis::dp_replica
                                    ? perf::Axis::dp
                                    : c.op.axis;
      const std::string option = c.op.axis == perf::Axis::dp_shard
                                     ? std::string("hsdp")
                                     : std::string(perf::to_string(degree));
      throw InputError(fmt::format("--{}", option),
                       fmt::format("the traffic matrix of this strategy would need more than {} "
                                   "pair records ({} {} over groups of {} GPUs); use a smaller "
                                   "{} degree or fewer --gpus",
                                   kMaxRecords, perf::to_string(c.op.parallelism),
                                   perf::to_string(c.op.op), n, option));
    }
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
                          perf::GroupExpansion ex;
                          for (std::int64_t g = r.begin(); g != r.end(); ++g) {
                            check_cancelled();
                            tr.clear();
                            expand(op, pl, g, b, wrap, tr, ex, scratch);
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
