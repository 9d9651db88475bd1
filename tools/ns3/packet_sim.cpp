// The ns-3 half of railsim_ns3 (C++17: ns-3 3.37's headers are not C++20). Nodes and
// point-to-point links at the given rates, a routing protocol that forwards each packet by
// (node, source GPU, destination GPU) on the next hops railsim computed, TCP (DCTCP with ECN
// marking at an instantaneous-queue threshold, or NewReno) with one connection per transfer.
#include "packet_sim.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;

namespace {

// Next hops per (node, source GPU, destination GPU): the interfaces a packet may leave by.
struct RouteTable {
  std::map<std::tuple<std::uint32_t, std::int64_t, std::int64_t>, std::vector<std::uint32_t>> next;
  std::map<std::uint32_t, std::int64_t> gpu_of_addr;  // IPv4 address -> GPU id
};
using railsim_ns3::PacketNet;
using railsim_ns3::PacketOptions;
using railsim_ns3::PacketTransfer;

class PathRouting : public Ipv4RoutingProtocol {
 public:
  PathRouting(std::shared_ptr<const RouteTable> t, std::uint32_t node, Ptr<UniformRandomVariable> r)
      : t_(std::move(t)), node_(node), rng_(r) {}

  Ptr<Ipv4Route> RouteOutput(Ptr<Packet>, const Ipv4Header& h, Ptr<NetDevice>,
                             Socket::SocketErrno& err) override {
    const auto dst = gpu(h.GetDestination());
    const auto self = self_gpu();
    if (dst < 0 || self < 0) {
      err = Socket::ERROR_NOROUTETOHOST;
      return nullptr;
    }
    auto r = route(self, dst);
    if (!r) err = Socket::ERROR_NOROUTETOHOST;
    return r;
  }

  bool RouteInput(Ptr<const Packet> p, const Ipv4Header& h, Ptr<const NetDevice> idev,
                  UnicastForwardCallback ucb, MulticastForwardCallback, LocalDeliverCallback lcb,
                  ErrorCallback ecb) override {
    const std::uint32_t iif = ipv4_->GetInterfaceForDevice(idev);
    if (ipv4_->IsDestinationAddress(h.GetDestination(), iif)) {
      lcb(p, h, iif);
      return true;
    }
    auto r = route(gpu(h.GetSource()), gpu(h.GetDestination()));
    if (!r) {
      ecb(p, h, Socket::ERROR_NOROUTETOHOST);
      return false;
    }
    ucb(r, p, h);
    return true;
  }

  void NotifyInterfaceUp(std::uint32_t) override {}
  void NotifyInterfaceDown(std::uint32_t) override {}
  void NotifyAddAddress(std::uint32_t, Ipv4InterfaceAddress) override {}
  void NotifyRemoveAddress(std::uint32_t, Ipv4InterfaceAddress) override {}
  void SetIpv4(Ptr<Ipv4> ipv4) override { ipv4_ = ipv4; }
  void PrintRoutingTable(Ptr<OutputStreamWrapper>, Time::Unit) const override {}

 private:
  std::int64_t gpu(Ipv4Address a) const {
    auto it = t_->gpu_of_addr.find(a.Get());
    return it == t_->gpu_of_addr.end() ? -1 : it->second;
  }
  std::int64_t self_gpu() const {
    for (std::uint32_t i = 1; i < ipv4_->GetNInterfaces(); ++i) {
      const auto g = gpu(ipv4_->GetAddress(i, 0).GetLocal());
      if (g >= 0) return g;
    }
    return -1;
  }
  Ptr<Ipv4Route> route(std::int64_t src, std::int64_t dst) {
    auto it = t_->next.find({node_, src, dst});
    if (it == t_->next.end()) return nullptr;
    const auto& c = it->second;
    const std::uint32_t oif =
        c.size() == 1 ? c[0] : c[rng_->GetInteger(0, static_cast<std::uint32_t>(c.size() - 1))];
    auto r = Create<Ipv4Route>();
    r->SetDestination(Ipv4Address(0u));
    // The source address of the transfer is the GPU's first address (its HB interface).
    r->SetSource(ipv4_->GetAddress(1, 0).GetLocal());
    r->SetOutputDevice(ipv4_->GetNetDevice(oif));
    r->SetGateway(peer_[oif]);
    return r;
  }

 public:
  std::map<std::uint32_t, Ipv4Address> peer_;  // interface -> the address at the link's far end

 private:
  std::shared_ptr<const RouteTable> t_;
  std::uint32_t node_;
  Ptr<UniformRandomVariable> rng_;
  Ptr<Ipv4> ipv4_;
};

}  // namespace

double railsim_ns3::run_packets(const PacketNet& f, const std::vector<PacketTransfer>& xs,
                                const PacketOptions& o) {
  Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                     StringValue(o.cc == "dctcp" ? "ns3::TcpDctcp" : "ns3::TcpNewReno"));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(o.mtu - 52));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 24));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 24));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(o.cc == "dctcp" ? "On" : "Off"));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
  Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(o.mtu));
  Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize("20000p")));
  // DCTCP marking: instantaneous queue above K packets (Alizadeh et al., SIGCOMM 2010).
  Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
  Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(20));
  Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(60));

  NodeContainer nodes;
  nodes.Create(static_cast<std::uint32_t>(f.nodes));
  InternetStackHelper stack;
  Ipv4ListRoutingHelper none;  // routing set below, per node
  stack.Install(nodes);
  TrafficControlHelper tch;
  tch.SetRootQueueDisc("ns3::RedQueueDisc");

  auto table = std::make_shared<RouteTable>();
  // Per link: the two interfaces (node, interface index) and addresses.
  struct End {
    std::uint32_t node, iface;
    Ipv4Address addr;
  };
  std::vector<std::pair<End, End>> ends(f.links.size());
  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.252");
  for (std::size_t l = 0; l < f.links.size(); ++l) {
    const auto& lk = f.links[l];
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute(
        "DataRate", DataRateValue(DataRate(static_cast<std::uint64_t>(lk.capacity_Bps * 8))));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(o.link_delay_s)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(static_cast<std::uint16_t>(o.mtu)));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("100p")));
    auto devs = p2p.Install(nodes.Get(static_cast<std::uint32_t>(lk.a)),
                            nodes.Get(static_cast<std::uint32_t>(lk.b)));
    tch.Install(devs);
    auto ifs = addr.Assign(devs);
    addr.NewNetwork();
    auto ipa = nodes.Get(static_cast<std::uint32_t>(lk.a))->GetObject<Ipv4>();
    auto ipb = nodes.Get(static_cast<std::uint32_t>(lk.b))->GetObject<Ipv4>();
    ends[l] = {
        {static_cast<std::uint32_t>(lk.a),
         static_cast<std::uint32_t>(ipa->GetInterfaceForDevice(devs.Get(0))), ifs.GetAddress(0)},
        {static_cast<std::uint32_t>(lk.b),
         static_cast<std::uint32_t>(ipb->GetInterfaceForDevice(devs.Get(1))), ifs.GetAddress(1)}};
    if (lk.a < f.gpus) table->gpu_of_addr[ifs.GetAddress(0).Get()] = lk.a;
  }
  // Next hops as interfaces of the node they leave.
  for (const auto& [key, dirs] : f.next) {
    auto& v = table->next[key];
    for (const auto& [l, up] : dirs) {
      const End& from =
          up ? ends[static_cast<std::size_t>(l)].first : ends[static_cast<std::size_t>(l)].second;
      if (std::find(v.begin(), v.end(), from.iface) == v.end()) v.push_back(from.iface);
    }
  }
  for (auto& [key, v] : table->next) std::sort(v.begin(), v.end());
  auto rng = CreateObject<UniformRandomVariable>();
  for (std::uint32_t n = 0; n < nodes.GetN(); ++n) {
    auto ipv4 = nodes.Get(n)->GetObject<Ipv4>();
    auto pr = Create<PathRouting>(table, n, rng);
    for (std::size_t l = 0; l < f.links.size(); ++l) {
      if (ends[l].first.node == n) pr->peer_[ends[l].first.iface] = ends[l].second.addr;
      if (ends[l].second.node == n) pr->peer_[ends[l].second.iface] = ends[l].first.addr;
    }
    ipv4->SetRoutingProtocol(pr);
    ipv4->SetAttribute("IpForward", BooleanValue(true));
  }
  // Applications: one TCP connection per transfer; done when the sink has every byte.
  std::vector<std::uint64_t> need(xs.size()), got(xs.size(), 0);
  double last = 0;
  std::size_t done = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const auto& x = xs[i];
    need[i] = static_cast<std::uint64_t>(x.bytes);
    const std::uint16_t port = static_cast<std::uint16_t>(10000 + i);
    auto dst_ip = nodes.Get(static_cast<std::uint32_t>(x.dst))->GetObject<Ipv4>();
    const Ipv4Address dst_addr = dst_ip->GetAddress(1, 0).GetLocal();
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    auto sapp = sink.Install(nodes.Get(static_cast<std::uint32_t>(x.dst)));
    sapp.Start(Seconds(0));
    sapp.Get(0)->TraceConnectWithoutContext(
        "Rx", MakeBoundCallback(
                  +[](std::pair<std::vector<std::uint64_t>*, std::size_t>* ctx, Ptr<const Packet> p,
                      const Address&) { (*ctx->first)[ctx->second] += p->GetSize(); },
                  new std::pair<std::vector<std::uint64_t>*, std::size_t>(&got, i)));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(dst_addr, port));
    bulk.SetAttribute("MaxBytes", UintegerValue(need[i]));
    bulk.SetAttribute("SendSize", UintegerValue(1 << 16));
    auto bapp = bulk.Install(nodes.Get(static_cast<std::uint32_t>(x.src)));
    bapp.Start(Seconds(0));
  }
  // Poll completion every microsecond of simulated time (cheap against the packet events).
  std::function<void()> poll = [&] {
    done = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) done += got[i] >= need[i];
    if (done == xs.size()) {
      last = Simulator::Now().GetSeconds();
      Simulator::Stop();
      return;
    }
    Simulator::Schedule(MicroSeconds(1), poll);
  };
  Simulator::Schedule(MicroSeconds(1), poll);
  Simulator::Stop(Seconds(10));
  Simulator::Run();
  Simulator::Destroy();
  if (done != xs.size())
    throw std::runtime_error("ns-3: " + std::to_string(done) + " of " + std::to_string(xs.size()) +
                             " transfers finished within 10 s");
  return last;
}
