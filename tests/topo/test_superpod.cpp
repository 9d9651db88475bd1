// Reproduces every row of NVIDIA's DGX SuperPOD compute-fabric tables (NVIDIA DGX SuperPOD
// reference architectures, copied to tests/data/nvidia-superpod-compute-fabric.json) from only the
// GPU count, 8 GPUs per node, the switch radix and the port speed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "railsim/core/json.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/topo/builders.hpp"

using namespace railsim;

namespace {

Json load_table() {
  std::ifstream in(std::string(RAILSIM_TEST_DATA_DIR) + "/nvidia-superpod-compute-fabric.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

}  // namespace

TEST(SuperPod, EveryRowOfTheNvidiaTablesIsReproduced) {
  const Json table = load_table();
  int rows = 0;
  for (const auto& des : table.at("designs")) {
    const std::string source = des.at("source");
    spec::SwitchSpec sw;
    sw.name = des.at("switch");
    sw.radix = des.at("radix");
    sw.port_gbps = des.at("port_gbps");
    const std::int64_t per_node = des.at("gpus_per_node");
    // The H100 RA gives one node slot per SU to the UFM fabric manager, cabled with 4 links
    // (the file's note); the other RAs have no such links.
    const bool h100_ra = source.find("H100") != std::string::npos;
    for (const auto& row : des.at("rows")) {
      const std::int64_t gpus = row.at("gpus");
      SCOPED_TRACE(source + ", " + std::to_string(gpus) + " GPUs");
      const auto c =
          spec::make_cluster(spec::load_gpu("H100-SXM"), gpus, per_node, sw.port_gbps, 450, 1);
      const auto d = spec::make_network_design(spec::DesignKind::rail_optimized, sw, 1.0, 1, false,
                                               h100_ra ? 4 : 0);
      const auto np = topo::plan_network(c, d);
      const std::int64_t core = row.value("core", 0);
      ASSERT_EQ(np.tiers(), core > 0 ? 3 : 2);
      EXPECT_EQ(np.switches_at(1), row.at("leaf").get<std::int64_t>());
      EXPECT_EQ(np.switches_at(2), row.at("spine").get<std::int64_t>());
      if (core > 0) {
        EXPECT_EQ(np.switches_at(3), core);
      }
      // Cables per tier boundary: node-leaf (GPU NICs + management links), leaf-spine, spine-core.
      EXPECT_EQ(gpus + d.management_links, row.at("node_cables").get<std::int64_t>());
      EXPECT_EQ(np.plan.tiers[0].uplinks(), row.at("leaf_spine_cables").get<std::int64_t>());
      if (core > 0) {
        EXPECT_EQ(np.plan.tiers[1].uplinks(), row.at("spine_core_cables").get<std::int64_t>());
      }
      ++rows;
    }
  }
  EXPECT_EQ(rows, 15);
}
