#include "railsim/traffic/summary.hpp"

#include <algorithm>
#include <stdexcept>

namespace railsim::traffic {

double TrafficSummary::bytes_by_locality(Locality l) const {
  double s = 0;
  for (const auto& row : bytes) s += row[static_cast<std::size_t>(l)];
  return s;
}

double TrafficSummary::bytes_by_parallelism(perf::Parallelism p) const {
  double s = 0;
  for (double b : bytes[static_cast<std::size_t>(p)]) s += b;
  return s;
}

NicLoads nic_loads(const TrafficMatrix& tm, const spec::Cluster& c, spec::DesignKind design) {
  if (tm.gpus() != c.gpus || tm.hb_domain() != c.hb_domain)
    throw std::logic_error("traffic: matrix and cluster disagree on N or K");
  NicLoads out;
  out.tx_bytes.assign(static_cast<std::size_t>(c.gpus), 0.0);
  out.rx_bytes.assign(static_cast<std::size_t>(c.gpus), 0.0);
  if (design == spec::DesignKind::ideal) return out;
  for (std::size_t i = 0; i < tm.size(); ++i) {
    const TrafficEntry e = tm[i];
    const Locality l = locality_of(c, e.src, e.dst);
    if (l == Locality::same_domain) continue;
    std::int64_t sender = e.src;
    if (l == Locality::cross_rail && design == spec::DesignKind::rail_only) {
      sender = c.gpu_at(c.domain_of(e.src), c.rail_of(e.dst));
      out.forwarded_bytes += e.bytes;
    }
    out.tx_bytes[static_cast<std::size_t>(sender)] += e.bytes;
    out.rx_bytes[static_cast<std::size_t>(e.dst)] += e.bytes;
  }
  return out;
}

TrafficSummary summarize(const TrafficMatrix& tm, const spec::Cluster& c, spec::DesignKind design) {
  TrafficSummary s;
  s.gpus = c.gpus;
  s.hb_domain = c.hb_domain;
  s.design = design;
  s.entries = static_cast<std::int64_t>(tm.size());
  std::int64_t last_src = -1, last_dst = -1, last_dsrc = -1, last_ddst = -1;
  double pair_bytes = 0;
  auto close_pair = [&] {
    if (last_src < 0) return;
    if (pair_bytes > s.busiest_pair.bytes) s.busiest_pair = {last_src, last_dst, pair_bytes};
  };
  // Entries are sorted by (src, dst, parallelism): a pair's entries are adjacent.
  std::vector<std::int64_t> dst_domains;
  auto flush_domains = [&] {
    std::sort(dst_domains.begin(), dst_domains.end());
    s.domain_pairs_with_traffic +=
        std::unique(dst_domains.begin(), dst_domains.end()) - dst_domains.begin();
    dst_domains.clear();
  };
  for (std::size_t i = 0; i < tm.size(); ++i) {
    const TrafficEntry e = tm[i];
    const Locality l = locality_of(c, e.src, e.dst);
    s.bytes[static_cast<std::size_t>(e.parallelism)][static_cast<std::size_t>(l)] += e.bytes;
    s.total_bytes += e.bytes;
    if (e.src != last_src || e.dst != last_dst) {
      close_pair();
      ++s.pairs_with_traffic;
      pair_bytes = 0;
      last_src = e.src;
      last_dst = e.dst;
    }
    pair_bytes += e.bytes;
    // Domain pairs: count each (source domain, destination domain) once. Sources of one domain
    // are contiguous, so collect destination domains per source domain.
    const std::int64_t ds = c.domain_of(e.src), dd = c.domain_of(e.dst);
    if (ds != last_dsrc) {
      flush_domains();
      last_dsrc = ds;
      last_ddst = -1;
    }
    if (dd != ds && dd != last_ddst) dst_domains.push_back(dd);
    last_ddst = dd;
  }
  close_pair();
  flush_domains();
  const double n = static_cast<double>(c.gpus);
  s.pair_fraction_with_traffic =
      c.gpus > 1 ? static_cast<double>(s.pairs_with_traffic) / (n * (n - 1.0)) : 0.0;

  const NicLoads nl = nic_loads(tm, c, design);
  s.forwarded_bytes = nl.forwarded_bytes;
  double best = 0;
  for (std::size_t g = 0; g < nl.tx_bytes.size(); ++g) {
    const double load = std::max(nl.tx_bytes[g], nl.rx_bytes[g]);
    if (load > best) {
      best = load;
      s.busiest_nic = {static_cast<std::int64_t>(g), nl.tx_bytes[g], nl.rx_bytes[g]};
    }
  }
  return s;
}

}  // namespace railsim::traffic
