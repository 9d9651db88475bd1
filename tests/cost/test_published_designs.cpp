// Published fabrics beyond NVIDIA's InfiniBand SuperPOD tables (tests/data/published-fabrics.json,
// each with its source): DeepSeek's fat-trees and multi-plane fat-tree, NVIDIA's twin-plane
// Spectrum-X DGX B300 SuperPOD, and Alibaba HPN's pod (ToRs and aggregation switches). Every
// design is built from the options its entry names, nothing per design in the code.
#include <gtest/gtest.h>

#include "../common/scratch.hpp"
#include "railsim/core/json.hpp"
#include "railsim/cost/bill_of_materials.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/topo/builders.hpp"

using namespace railsim;

namespace {

Json load_designs() {
  return test::read_test_data("published-fabrics.json").at("designs");
}

cost::BillOfMaterials build(const Json& des, std::int64_t gpus) {
  const spec::GpuSpec g = spec::load_gpu(des.at("gpu").get<std::string>());
  const spec::Cluster c =
      spec::make_cluster(g, gpus, des.at("hb_domain").get<std::int64_t>(),
                         des.at("nic_gbps").get<double>(), g.hb_bw_Bps / 1e9, 1);
  spec::NetworkOptions o;
  o.design = des.at("design").get<std::string>();
  o.sw = des.at("switch").get<std::string>();
  o.planes = des.at("planes").get<int>();
  o.nic_ports = des.at("nic_ports").get<int>();
  if (des.contains("port_split")) o.port_split = des.at("port_split").get<std::string>();
  return cost::bill_of_materials(c, spec::make_network_design(o));
}

std::int64_t switch_links(const cost::BillOfMaterials& b) {
  std::int64_t n = 0;
  for (std::size_t t = 1; t < b.links_per_tier.size(); ++t) n += b.links_per_tier[t];
  return n;
}

}  // namespace

TEST(PublishedDesigns, EveryCountOfTheSourcesIsReproduced) {
  int checked = 0;
  for (const Json& des : load_designs()) {
    const std::string name = des.at("name");
    SCOPED_TRACE(name);
    if (des.contains("rows")) {
      const double per_link = des.at("cables_per_link").get<double>();
      for (const Json& row : des.at("rows")) {
        const std::int64_t gpus = row.at("gpus");
        SCOPED_TRACE(std::to_string(gpus) + " GPUs");
        const cost::BillOfMaterials b = build(des, gpus);
        ASSERT_EQ(b.tiers, 2);
        EXPECT_EQ(b.switches_per_tier[0], row.at("leaf").get<std::int64_t>());
        EXPECT_EQ(b.switches_per_tier[1], row.at("spine").get<std::int64_t>());
        EXPECT_EQ(static_cast<double>(b.links_per_tier[0]) * per_link,
                  row.at("node_leaf_cables").get<double>());
        EXPECT_EQ(static_cast<double>(b.links_per_tier[1]) * per_link,
                  row.at("leaf_spine_cables").get<double>());
        ++checked;
      }
      continue;
    }
    const cost::BillOfMaterials b = build(des, des.at("gpus").get<std::int64_t>());
    if (des.contains("switches")) {
      EXPECT_EQ(b.switches, des.at("switches").get<std::int64_t>());
      EXPECT_EQ(switch_links(b), des.at("switch_links").get<std::int64_t>());
    }
    if (des.contains("leaf")) {
      EXPECT_EQ(b.switches_per_tier[0], des.at("leaf").get<std::int64_t>());
      EXPECT_EQ(b.links_per_tier[0], des.at("node_leaf_links").get<std::int64_t>());
      // HPN's ToR as 128 down and 120 up lanes of 200G (its 60 x 400G uplinks): 60 aggregation
      // switches per plane, each ToR-aggregation pair joined by two lanes, one 400G link.
      EXPECT_EQ(b.switches_per_tier[1], des.at("aggregation").get<std::int64_t>());
      EXPECT_EQ(static_cast<double>(b.links_per_tier[1]) * b.nic_gbps / 400.0,
                des.at("leaf_aggregation_400g_links").get<double>());
      EXPECT_EQ(b.split_down, 128);
      EXPECT_NEAR(b.oversubscription, 128.0 / 120.0, 1e-12);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 3 + 5 + 1);
}

// DeepSeek's comparison, as its table frames it: the multi-plane fat-tree of 16,384 GPUs costs
// per endpoint what a two-tier fat-tree of 2,048 does (768 / 16,384 = 96 / 2,048 switches per
// endpoint), while the three-tier fat-tree of 65,536 needs 5,120 / 65,536, 5/3 as many.
TEST(PublishedDesigns, MultiPlaneFatTreeKeepsTwoTierCostPerEndpoint) {
  const Json designs = load_designs();
  auto per_endpoint = [&](int i) {
    const Json& d = designs.at(static_cast<std::size_t>(i));
    const std::int64_t gpus = d.at("gpus");
    return static_cast<double>(build(d, gpus).switches) / static_cast<double>(gpus);
  };
  EXPECT_DOUBLE_EQ(per_endpoint(1), per_endpoint(0));
  EXPECT_DOUBLE_EQ(per_endpoint(2) / per_endpoint(0), 5.0 / 3.0);
}
