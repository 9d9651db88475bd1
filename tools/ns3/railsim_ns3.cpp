// Packet-level cross-check of railsim's flow simulator with ns-3 (built with -DRAILSIM_NS3=ON).
//
// Builds railsim's topo::Fabric of a small cluster as ns-3 nodes (GPUs, HB-domain switches,
// leaf/spine switches) joined by point-to-point links at the fabric's rates, routes every packet
// of a transfer on the path railsim's simulator gives it (sim::transfer_path: the same ECMP hash
// per flow, the same rail-only forwarding through the HB-domain peer), or, with --spray, on a
// random equal-cost next hop per packet. Transport: TCP (DCTCP by default, ECN marking at a RED
// threshold, buffers large enough that nothing is dropped). Each case runs in both simulators and
// the completion times are printed side by side.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "packet_sim.hpp"
#include "railsim/core/error.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/sim/network.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/builders.hpp"

using namespace railsim;
using railsim_ns3::PacketNet;
using railsim_ns3::PacketTransfer;

namespace {

struct Transfer {
  std::int64_t src, dst;
  double bytes;
};

struct Options {
  std::int64_t gpus = 32, k = 8;
  std::string design = "rail_optimized";
  int radix = 8;
  double bytes = 4e6;
  std::string cc = "dctcp";
  bool spray = false;
  int mtu = 4096;
};

// The fabric as plain nodes and links, and the next hops of every pair the transfers use (both
// directions: acknowledgements too): railsim's path per flow, or with spray the union of the
// paths of 64 ECMP hashes, one next hop drawn per packet.
PacketNet packet_net(const topo::Fabric& f, const sim::SimNetwork& net,
                     const std::vector<Transfer>& xs, bool spray) {
  PacketNet p;
  p.nodes = static_cast<std::int32_t>(f.nodes.size());
  p.gpus = f.cluster.gpus;
  for (const auto& l : f.links) p.links.push_back({l.a, l.b, l.capacity_Bps});
  std::set<std::pair<std::int64_t, std::int64_t>> pairs;
  for (const auto& x : xs) {
    pairs.insert({x.src, x.dst});
    pairs.insert({x.dst, x.src});
  }
  sim::SimConfig cfg;
  for (const auto& [s, d] : pairs)
    for (int i = 0; i < (spray ? 64 : 1); ++i) {
      cfg.seed = static_cast<std::uint64_t>(i);
      for (auto ch : sim::transfer_path(net, cfg, s, d)) {
        const auto& lk = f.links[static_cast<std::size_t>(ch / 2)];
        const bool up = ch % 2 == 0;
        auto& v = p.next[{up ? lk.a : lk.b, s, d}];
        const std::pair<std::int32_t, bool> dir{ch / 2, up};
        if (std::find(v.begin(), v.end(), dir) == v.end()) v.push_back(dir);
      }
    }
  return p;
}

double run_ns3(const topo::Fabric& f, const sim::SimNetwork& net, const std::vector<Transfer>& xs,
               const Options& o) {
  std::vector<PacketTransfer> px;
  for (const auto& x : xs) px.push_back({x.src, x.dst, x.bytes});
  railsim_ns3::PacketOptions po;
  po.cc = o.cc;
  po.mtu = o.mtu;
  return railsim_ns3::run_packets(packet_net(f, net, xs, o.spray), px, po);
}

double run_railsim(const sim::SimNetwork& net, const std::vector<Transfer>& xs, bool pipelined) {
  const auto n = static_cast<std::size_t>(net.cluster.gpus);
  sim::AllToAllV a{"case", {std::vector<double>(n * n, 0.0)}};
  for (const auto& x : xs)
    a.pair_bytes[0][static_cast<std::size_t>(x.src) * n + static_cast<std::size_t>(x.dst)] +=
        x.bytes;
  sim::SimConfig cfg;
  cfg.hop_latency_s = 0.5e-6;
  if (pipelined) {
    cfg.mode = sim::ForwardingMode::pipelined;
    cfg.chunks = 8;  // few: each piece pays the hop latency again (docs/sim.md)
  }
  return sim::simulate_alltoallv(net, sim::groups_all(net.cluster), {a}, cfg).completion_time_s;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string only;
  double check_low = 0, check_high = 0;
  // What each --name=value sets (std::stoll and the like throw on a bad value).
  using Set = std::function<void(const std::string&)>;
  const std::map<std::string, Set> options{
      {"gpus", [&](const std::string& v) { o.gpus = std::stoll(v); }},
      {"hb-domain", [&](const std::string& v) { o.k = std::stoll(v); }},
      {"design", [&](const std::string& v) { o.design = v; }},
      {"radix", [&](const std::string& v) { o.radix = std::stoi(v); }},
      {"bytes", [&](const std::string& v) { o.bytes = std::stod(v); }},
      {"cc", [&](const std::string& v) { o.cc = v; }},
      {"spray", [&](const std::string& v) { o.spray = v == "1" || v == "true"; }},
      {"mtu", [&](const std::string& v) { o.mtu = std::stoi(v); }},
      {"case", [&](const std::string& v) { only = v; }},
      {"check-low", [&](const std::string& v) { check_low = std::stod(v); }},
      {"check-high", [&](const std::string& v) { check_high = std::stod(v); }},
  };
  // --name=value arguments (the spelling ns-3 programs use).
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) {
      fmt::print(
          stderr,
          "usage: railsim_ns3 [--gpus=N] [--hb-domain=K] [--design=rail_optimized|rail_only] "
          "[--radix=R] [--bytes=B] [--cc=dctcp|newreno] [--spray=0|1] [--mtu=M] "
          "[--case=alltoall|permutation|ring|incast] [--check-low=X] [--check-high=Y]\n");
      return 2;
    }
    const std::string k = a.substr(2, eq - 2), v = a.substr(eq + 1);
    try {
      const auto set = options.find(k);
      if (set == options.end()) throw std::invalid_argument(k);
      set->second(v);
    } catch (const std::exception&) {
      fmt::print(stderr, "railsim_ns3: error: --{}: bad option or value '{}'\n", k, v);
      return 2;
    }
  }
  if (o.cc != "dctcp" && o.cc != "newreno") {
    fmt::print(stderr, "railsim_ns3: error: --cc: '{}', valid: dctcp, newreno\n", o.cc);
    return 2;
  }
  if (o.mtu < 576 || o.mtu > 9000 || o.bytes <= 0 || o.radix < 2) {
    fmt::print(stderr, "railsim_ns3: error: --mtu in [576, 9000], --bytes > 0, --radix >= 2\n");
    return 2;
  }
  try {
    spec::ClusterOptions co;  // H100-SXM: NIC 400 Gb/s, HB 450 GB/s per direction
    co.gpus = o.gpus;
    co.hb_domain = o.k;
    const spec::Cluster c = spec::make_cluster(co);
    spec::SwitchSpec sw;
    sw.name = fmt::format("{}x400G", o.radix);
    sw.radix = o.radix;
    sw.port_gbps = 400;
    sw.modes = {{o.radix, 400}};
    const auto d = spec::make_network_design(spec::parse_design_kind(o.design), sw);
    const topo::Fabric f = topo::build_fabric(c, d);
    const sim::SimNetwork net = sim::make_sim_network(f);
    const std::int64_t N = c.gpus;
    std::map<std::string, std::vector<Transfer>> cases;
    for (std::int64_t i = 0; i < N; ++i)
      for (std::int64_t j = 0; j < N; ++j)
        if (i != j) cases["alltoall"].push_back({i, j, o.bytes / static_cast<double>(N)});
    for (std::int64_t i = 0; i < N; ++i)  // each GPU to one on another leaf, same rail
      cases["permutation"].push_back({i, (i + N / 2) % N, o.bytes});
    for (std::int64_t i = 0; i < N; ++i) cases["ring"].push_back({i, (i + 1) % N, o.bytes});
    for (std::int64_t d2 = 1; d2 < c.domains(); ++d2)  // rail 0 of every domain into GPU 0
      cases["incast"].push_back({c.gpu_at(d2, 0), 0, o.bytes});
    fmt::print("{} GPUs, HB domain {}, {} on {}-port 400G switches ({} tier{}), {}{}, MTU {}\n", N,
               c.hb_domain, o.design, o.radix, f.tiers, f.tiers == 1 ? "" : "s", o.cc,
               o.spray ? ", packet spraying" : ", per-flow ECMP (railsim's paths)", o.mtu);
    fmt::print("{:<12} {:>9} {:>12} {:>14} {:>9}\n", "case", "transfers", "ns-3 ms", "railsim ms",
               "ratio");
    int bad = 0;
    for (const auto& [name, xs] : cases) {
      if (!only.empty() && only != name) continue;
      const double t3 = run_ns3(f, net, xs, o);
      const double tr = run_railsim(net, xs, o.design == "rail_only");
      const double ratio = t3 / tr;
      const bool out =
          (check_low > 0 && ratio < check_low) || (check_high > 0 && ratio > check_high);
      bad += out;
      fmt::print("{:<12} {:>9} {:>12.4f} {:>14.4f} {:>9.3f}{}\n", name, xs.size(), 1e3 * t3,
                 1e3 * tr, ratio, out ? "  outside the checked band" : "");
      std::fflush(stdout);
    }
    if (bad > 0) return 1;
  } catch (const railsim::InputError& e) {
    fmt::print(stderr, "railsim_ns3: error: {}: {}\n", e.field(), e.what());
    return 2;
  }
  return 0;
}
