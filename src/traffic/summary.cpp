#include "railsim/traffic/summary.hpp"

#include <algorithm>
#include <stdexcept>

#include "railsim/core/json.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/spec/routing_table.hpp"

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
      sender = topo::forwarding_peer(c, topo::Forwarding::hb_first, e.src, e.dst);
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

Json traffic_document(const TrafficMatrix& tm, const TrafficSummary& summary,
                      const spec::Cluster& cluster, const perf::Model& m, const perf::Training& tr,
                      const perf::Strategy& s, perf::PlacementKind placement,
                      const std::string& strategy_source, std::int64_t seed,
                      const perf::IterationTime& it, const spec::NetworkDesign& d) {
  Json j = to_json(summary, cluster);
  j["model"] = m.name;
  j["gpu"] = cluster.gpu.name;
  j["global_batch"] = tr.global_batch;
  j["seq_len"] = tr.seq_len;
  j.update(spec::software_json(tr));
  j["strategy"] = perf::to_json(s, placement);
  j["strategy_source"] = strategy_source;
  j["seed"] = seed;
  j["iteration_time_s"] = it.iteration_time_s;
  j["feasible"] = it.feasible;
  j["busiest_nic_utilisation"] = busiest_nic_utilisation(summary, cluster, it);
  j["matrix_memory_bytes"] = tm.memory_bytes();
  Json net = spec::routing_json(d);
  net["design"] = std::string(spec::to_string(d.kind));
  net["switch"] = d.sw.name;
  j["network"] = std::move(net);
  return j;
}

double busiest_nic_utilisation(const TrafficSummary& s, const spec::Cluster& cluster,
                               const perf::IterationTime& it) {
  if (s.busiest_nic.gpu < 0 || !(it.iteration_time_s > 0)) return 0.0;
  return std::max(s.busiest_nic.tx_bytes, s.busiest_nic.rx_bytes) /
         (it.iteration_time_s * cluster.nic_bw_per_gpu_Bps());
}

Json to_json(const TrafficSummary& s, const spec::Cluster& c) {
  using perf::Parallelism;
  constexpr Parallelism kPar[] = {Parallelism::tp, Parallelism::sp, Parallelism::pp,
                                  Parallelism::dp, Parallelism::ep, Parallelism::cp};
  constexpr Locality kLoc[] = {Locality::same_domain, Locality::same_rail, Locality::cross_rail};
  auto share = [&](double b) { return s.total_bytes > 0 ? b / s.total_bytes : 0.0; };
  Json by_loc = Json::object(), share_loc = Json::object(), by_par = Json::object(),
       share_par = Json::object(), matrix = Json::object();
  for (Locality l : kLoc) {
    by_loc[std::string(to_string(l))] = s.bytes_by_locality(l);
    share_loc[std::string(to_string(l))] = share(s.bytes_by_locality(l));
  }
  for (Parallelism p : kPar) {
    // cp is listed only when a strategy has it (documents without CP stay as they were).
    if (p == Parallelism::cp && s.bytes_by_parallelism(p) == 0) continue;
    const std::string name(perf::to_string(p));
    by_par[name] = s.bytes_by_parallelism(p);
    share_par[name] = share(s.bytes_by_parallelism(p));
    Json row = Json::object();
    for (Locality l : kLoc)
      row[std::string(to_string(l))] =
          s.bytes[static_cast<std::size_t>(p)][static_cast<std::size_t>(l)];
    matrix[name] = row;
  }
  const double n = static_cast<double>(s.gpus);
  Json j{{"gpus", s.gpus},
         {"hb_domain", s.hb_domain},
         {"domains", c.domains()},
         {"design", std::string(spec::to_string(s.design))},
         {"total_bytes", s.total_bytes},
         {"bytes_by_locality", by_loc},
         {"share_by_locality", share_loc},
         {"bytes_by_parallelism", by_par},
         {"share_by_parallelism", share_par},
         {"bytes", matrix},
         {"pairs_with_traffic", s.pairs_with_traffic},
         {"ordered_pairs", n * (n - 1.0)},
         {"pair_fraction_with_traffic", s.pair_fraction_with_traffic},
         {"domain_pairs_with_traffic", s.domain_pairs_with_traffic},
         {"entries", s.entries},
         {"forwarded_bytes", s.forwarded_bytes}};
  if (s.busiest_pair.src >= 0)
    j["busiest_pair"] = {
        {"src", s.busiest_pair.src},
        {"dst", s.busiest_pair.dst},
        {"bytes", s.busiest_pair.bytes},
        {"locality",
         std::string(to_string(locality_of(c, s.busiest_pair.src, s.busiest_pair.dst)))}};
  else
    j["busiest_pair"] = nullptr;
  if (s.busiest_nic.gpu >= 0)
    j["busiest_nic"] = {{"gpu", s.busiest_nic.gpu},
                        {"domain", c.domain_of(s.busiest_nic.gpu)},
                        {"rail", c.rail_of(s.busiest_nic.gpu)},
                        {"tx_bytes", s.busiest_nic.tx_bytes},
                        {"rx_bytes", s.busiest_nic.rx_bytes}};
  else
    j["busiest_nic"] = nullptr;
  return j;
}

}  // namespace railsim::traffic
