#pragma once
// Clusters, designs and fabrics the topology and simulator tests build: H100 clusters, designs on
// a test switch of any radix, fabrics from the presets' option names, and a walk along a path.
#include <gtest/gtest.h>

#include <cstdint>

#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/fabric.hpp"

namespace railsim::test {

// n H100 in HB domains of k (450 GB/s NVLink), `nics` NICs of nic_gbps per GPU.
inline spec::Cluster h100_cluster(std::int64_t n, std::int64_t k, double nic_gbps = 400,
                                  int nics = 1) {
  return spec::make_cluster(spec::load_gpu("H100-SXM"), n, k, nic_gbps, 450, nics);
}

// A design on a switch named "test" with `radix` ports of port_gbps.
inline spec::NetworkDesign radix_design(spec::DesignKind kind, int radix, double oversub = 1.0,
                                        int tier = 1, double port_gbps = 400) {
  spec::SwitchSpec sw;
  sw.name = "test";
  sw.radix = radix;
  sw.port_gbps = port_gbps;
  return spec::make_network_design(kind, sw, oversub, tier);
}

// The Fabric of `gpus` default-preset GPUs under a design named as on the command line (`sw`
// null: the design's default switch).
inline topo::Fabric preset_fabric(std::int64_t gpus, const char* design, const char* sw,
                                  double oversub, int tier) {
  spec::ClusterOptions co;
  co.gpus = gpus;
  spec::NetworkOptions no;
  no.design = design;
  if (sw) no.sw = sw;
  no.oversubscription = oversub;
  no.oversubscribed_tier = tier;
  return topo::build_fabric(spec::make_cluster(co), spec::make_network_design(no));
}

// Follows a path's channels from src: every channel is a link of the graph and the chain is
// connected; switch tiers rise, then fall. Returns the node reached.
inline std::int64_t walk_path(const topo::Fabric& f, std::int64_t src, const topo::Path& p) {
  std::int64_t at = src;
  bool down = false;
  for (std::int32_t ch : p) {
    EXPECT_GE(ch, 0);
    EXPECT_LT(ch, f.channel_count());
    const auto& l = f.links.at(static_cast<std::size_t>(ch / 2));
    const bool up = ch % 2 == 0;
    EXPECT_EQ(at, up ? l.a : l.b) << "broken chain at channel " << ch;
    if (l.kind == topo::LinkKind::switch_switch) {
      EXPECT_FALSE(up && down) << "up after down at channel " << ch;
      down = down || !up;
    }
    at = up ? l.b : l.a;
  }
  return at;
}

}  // namespace railsim::test
