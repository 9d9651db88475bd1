#pragma once
// The ns-3 side of railsim_ns3, behind plain types: ns-3 3.37's headers do not compile as C++20
// (template-id constructors), so packet_sim.cpp is built as C++17 and railsim's code stays C++20.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace railsim_ns3 {

struct PacketLink {
  std::int32_t a = 0, b = 0;  // nodes; nodes [0, gpus) are the GPUs
  double capacity_Bps = 0;    // per direction
};

struct PacketNet {
  std::int32_t nodes = 0;
  std::int64_t gpus = 0;
  std::vector<PacketLink> links;
  // (node, source GPU, destination GPU) -> the (link, up) directions a packet may leave by: one
  // for per-flow paths, several when spraying (one drawn per packet).
  std::map<std::tuple<std::int32_t, std::int64_t, std::int64_t>,
           std::vector<std::pair<std::int32_t, bool>>>
      next;
};

struct PacketTransfer {
  std::int64_t src = 0, dst = 0;
  double bytes = 0;
};

struct PacketOptions {
  std::string cc = "dctcp";  // dctcp or newreno
  int mtu = 4096;
  double link_delay_s = 0.5e-6;
};

// Simulates every transfer as one TCP connection started at time 0; returns the time the last
// byte is received. Throws std::runtime_error when not everything arrives within 10 s.
double run_packets(const PacketNet& net, const std::vector<PacketTransfer>& xs,
                   const PacketOptions& o);

}  // namespace railsim_ns3
