#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "railsim/core/json.hpp"
#include "railsim/cost/bill_of_materials.hpp"
#include "railsim/cost/catalog.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/topo/builders.hpp"

using namespace railsim;
using spec::DesignKind;

namespace {

spec::Cluster cluster(std::int64_t n, std::int64_t k, int nics = 1) {
  return spec::make_cluster(spec::load_gpu("H100-SXM"), n, k, 400, 450, nics);
}

spec::NetworkDesign design(DesignKind kind, const std::string& sw, double oversub = 1.0,
                           bool copper = false) {
  return spec::make_network_design(kind, spec::load_switch(sw), oversub, 1, copper, 0);
}

// Counts from the built graph, to check the O(tiers) bill of materials against.
struct GraphCounts {
  std::vector<std::int64_t> links_per_tier, ports_per_tier;
  std::int64_t switch_modules = 0;
};

GraphCounts count_graph(const topo::Fabric& f, int ppm, bool copper) {
  GraphCounts g;
  g.links_per_tier.assign(static_cast<std::size_t>(f.tiers), 0);
  g.ports_per_tier.assign(static_cast<std::size_t>(f.tiers), 0);
  std::vector<std::int64_t> optical(f.nodes.size(), 0);
  for (const auto& l : f.links) {
    if (l.kind == topo::LinkKind::hb) continue;
    ++g.links_per_tier[static_cast<std::size_t>(l.tier)];
    for (auto end : {l.a, l.b}) {
      const auto& n = f.nodes[static_cast<std::size_t>(end)];
      if (n.kind != topo::NodeKind::network_switch) continue;
      ++g.ports_per_tier[static_cast<std::size_t>(n.tier - 1)];
      if (!(copper && l.kind == topo::LinkKind::nic)) ++optical[static_cast<std::size_t>(end)];
    }
  }
  for (auto o : optical) g.switch_modules += (o + ppm - 1) / ppm;
  return g;
}

}  // namespace

TEST(BillOfMaterials, AgreesWithTheBuiltGraphOnOddSizes) {
  struct Case {
    std::int64_t n, k;
    int nics;
    const char* sw;
    DesignKind kind;
    double oversub;
    bool copper;
  };
  const Case cases[] = {
      {8 * 300, 8, 1, "QM9700", DesignKind::rail_optimized, 1.0, false},
      {8 * 300, 8, 1, "QM9700", DesignKind::rail_only, 1.0, true},
      {72 * 40, 72, 1, "QM9700", DesignKind::rail_optimized, 1.0, false},
      {72 * 40, 72, 2, "Q3400", DesignKind::rail_only, 1.0, false},
      {8 * 1000, 8, 1, "QM9700", DesignKind::rail_optimized, 3.0, false},
      {256 * 16, 256, 1, "QM9700", DesignKind::rail_only, 1.0, false},
      {256 * 6, 256, 1, "QM9700", DesignKind::rail_optimized, 1.0, false},  // 5 rails per leaf
      {72 * 14, 72, 1, "QM9700", DesignKind::rail_optimized, 1.0, true},
      {8 * 9000, 8, 1, "QM9700", DesignKind::rail_optimized, 1.0, true},  // 4 tiers
  };
  for (const auto& cs : cases) {
    SCOPED_TRACE(std::to_string(cs.n) + " GPUs, K=" + std::to_string(cs.k));
    const auto c = cluster(cs.n, cs.k, cs.nics);
    const auto d = design(cs.kind, cs.sw, cs.oversub, cs.copper);
    const auto bom = cost::bill_of_materials(c, d, 2);
    const auto f = topo::build_fabric(c, d);
    const auto g = count_graph(f, 2, cs.copper);
    EXPECT_EQ(bom.tiers, f.tiers);
    EXPECT_EQ(bom.switches_per_tier, f.switches_per_tier);
    EXPECT_EQ(bom.links_per_tier, g.links_per_tier);
    EXPECT_EQ(bom.ports_used_per_tier, g.ports_per_tier);
    EXPECT_EQ(bom.switch_side_transceivers, g.switch_modules);
    EXPECT_EQ(bom.nics, cs.n * cs.nics);
    EXPECT_EQ(bom.transceiver_ends, 2 * bom.optical_links);
    EXPECT_EQ(bom.nic_side_transceivers, cs.copper ? 0 : cs.n * cs.nics);
  }
}

TEST(BillOfMaterials, AgreesWithTheBuiltGraphWhereUplinksAreDealtUnevenly) {
  // Upper tiers sized to their uplinks (round-robin wiring): switches of one block carry one link
  // more or less, so ports and modules per switch differ; the O(tiers) counts must still match.
  struct Case {
    std::int64_t n, k;
    int radix;
    DesignKind kind;
    double oversub;
    int tier;
    bool copper;
  };
  const Case cases[] = {
      {15, 1, 8, DesignKind::rail_optimized, 5.0 / 3.0, 1, false},  // 3 leaves, 2 spines (5 + 4)
      {201, 1, 20, DesignKind::rail_optimized, 1.0, 1, false},      // spines and cores uneven
      {32768, 8, 128, DesignKind::rail_only, 2.0, 1, false},        // 49 leaves, 17 spines a rail
      {32768, 8, 128, DesignKind::rail_only, 1.5, 1, true},
      {32768, 8, 128, DesignKind::rail_only, 3.0, 1, false},
      {32768, 8, 128, DesignKind::rail_optimized, 2.0, 1, false},  // even spines, uneven cores
      {18432, 72, 64, DesignKind::rail_optimized, 1.0, 1, false},  // 288 cores
      {8192, 8, 64, DesignKind::rail_optimized, 7.0, 2, false},    // 7:1 between pods
  };
  for (const auto& cs : cases) {
    SCOPED_TRACE(std::to_string(cs.n) + " GPUs, K=" + std::to_string(cs.k) + ", radix " +
                 std::to_string(cs.radix) + ", " + std::to_string(cs.oversub) + ":1");
    spec::SwitchSpec sw;
    sw.name = "test";
    sw.radix = cs.radix;
    sw.port_gbps = 400;
    const auto c = cluster(cs.n, cs.k);
    const auto d = spec::make_network_design(cs.kind, sw, cs.oversub, cs.tier, cs.copper, 0);
    const auto f = topo::build_fabric(c, d);
    bool uneven = false;
    for (int t = 2; t <= f.plan.tier_count(); ++t) uneven = uneven || !f.plan.tiers[t - 1].even();
    EXPECT_TRUE(uneven);
    for (const int ppm : {1, 2, 3}) {
      const auto bom = cost::bill_of_materials(c, d, ppm);
      const auto g = count_graph(f, ppm, cs.copper);
      EXPECT_EQ(bom.switches_per_tier, f.switches_per_tier);
      EXPECT_EQ(bom.links_per_tier, g.links_per_tier);
      EXPECT_EQ(bom.ports_used_per_tier, g.ports_per_tier);
      EXPECT_EQ(bom.switch_side_transceivers, g.switch_modules) << ppm << " ports per module";
    }
  }
}

TEST(BillOfMaterials, HgxScalableUnitTransceiverOrder) {
  // A published order for one 256-GPU HGX H100 scalable unit (SU): 256 single-port 400G OSFP
  // on the NICs, 128 twin-port 800G OSFP in the leaf down-links, 8 leaf + 4 spine switches.
  const auto bom =
      cost::bill_of_materials(cluster(256, 8), design(DesignKind::rail_optimized, "QM9700"), 2);
  EXPECT_EQ(bom.switches_per_tier, (std::vector<std::int64_t>{8, 4}));
  EXPECT_EQ(bom.nic_side_transceivers, 256);
  // 128 on leaf down-links + 128 on leaf up-links + 128 on the spines (64 ports each).
  EXPECT_EQ(bom.switch_side_transceivers, 3 * 128);
  const auto copper = cost::bill_of_materials(
      cluster(256, 8), design(DesignKind::rail_optimized, "QM9700", 1.0, true), 2);
  EXPECT_EQ(copper.switch_side_transceivers, 2 * 128);  // DAC replaces the leaf down-link optics
  EXPECT_EQ(copper.copper_links, 256);
}

TEST(Cost, PaperRatioCatalogGivesThePaperRanges) {
  // 32,768 GPUs on 128-port switches: rail_optimized needs 3 tiers; rail-only 2 for K = 8 (4,096
  // GPUs per rail) and 1 for K = 256 (128 per rail). With a port at 4x / 2x a transceiver's
  // price / power: (5N*4 + 6N) vs (3N*4 + 4N) vs (N*4 + 2N) -> 10/26 and 20/26 cost, 6/16 and
  // 12/16 power. Exact: every tier is full.
  const auto cat = cost::load_catalog("paper-ratio");
  const auto sw = "ETH-51.2T-128x400G";
  auto k8 = cost::compare_designs(cluster(32768, 8), design(DesignKind::rail_optimized, sw), cat);
  auto k256 =
      cost::compare_designs(cluster(32768, 256), design(DesignKind::rail_optimized, sw), cat);
  EXPECT_EQ(k8[0].bom.tiers, 3);
  EXPECT_EQ(k8[1].bom.tiers, 2);
  EXPECT_EQ(k256[1].bom.tiers, 1);
  EXPECT_NEAR(k8[1].cost_saving, 10.0 / 26.0, 1e-12);
  EXPECT_NEAR(k256[1].cost_saving, 20.0 / 26.0, 1e-12);
  EXPECT_NEAR(k8[1].power_saving, 6.0 / 16.0, 1e-12);
  EXPECT_NEAR(k256[1].power_saving, 12.0 / 16.0, 1e-12);
  EXPECT_DOUBLE_EQ(k8[0].cost.cost_usd(), 32768.0 * 26 * 600);
  EXPECT_EQ(k8[2].cost.cost_usd(), 0.0);  // ideal: no scale-out network
  EXPECT_EQ(k8[2].cost_saving, 1.0);
}

TEST(Cost, PaperRatioKeepsItsOwnSwitchWattsOverTheDataSheet) {
  // The 51.2T preset has data-sheet watts (913 W), but paper-ratio says power_from "catalog":
  // 17 W per 400G port, every port bought, as before.
  const auto cat = cost::load_catalog("paper-ratio");
  EXPECT_EQ(cat.switch_power_from, spec::SwitchPowerFrom::catalog);
  const auto r = cost::evaluate(cluster(32768, 8),
                                design(DesignKind::rail_optimized, "ETH-51.2T-128x400G"), cat);
  EXPECT_EQ(r.switch_box_w, 0.0);
  EXPECT_DOUBLE_EQ(r.cost.watts.switches, double(r.bom.switch_ports) * 17.0);
}

TEST(Cost, DataSheetWattsGiveTheSavingOfTheSwitchCounts) {
  // Default catalog, 32,768 GPUs on 128-port 51.2T switches (913 W each, data sheet). Every tier
  // is full, so an L-tier network over N NIC ports has (2L-1) N / 128 switches, N NIC-side
  // modules (8 W) and (2L-1) N / 2 twin-port switch-side modules (15 W):
  //   P(L) = (2L-1) N / 128 x 913 + 8 N + (2L-1) N / 2 x 15.
  // rail_optimized has 3 tiers; rail_only 2 (K = 8) and 1 (K = 256).
  const auto cat = cost::load_catalog("ib-ndr-thirdparty-2024");
  EXPECT_EQ(cat.switch_power_from, spec::SwitchPowerFrom::preset);
  const double n = 32768;
  auto p = [n](int tiers) {
    return (2 * tiers - 1) * n / 128 * 913 + 8 * n + (2 * tiers - 1) * n / 2 * 15;
  };
  const auto sw = "ETH-51.2T-128x400G";
  auto k8 = cost::compare_designs(cluster(32768, 8), design(DesignKind::rail_optimized, sw), cat);
  auto k256 =
      cost::compare_designs(cluster(32768, 256), design(DesignKind::rail_optimized, sw), cat);
  EXPECT_EQ(k8[0].switch_box_w, 913.0);
  EXPECT_DOUBLE_EQ(k8[0].cost.watts.switches, double(k8[0].bom.switches) * 913.0);
  EXPECT_NEAR(k8[0].cost.power_w(), p(3), 1e-6);
  EXPECT_NEAR(k8[1].cost.power_w(), p(2), 1e-6);
  EXPECT_NEAR(k256[1].cost.power_w(), p(1), 1e-6);
  EXPECT_NEAR(k8[1].power_saving, 1 - p(2) / p(3), 1e-12);
  EXPECT_NEAR(k256[1].power_saving, 1 - p(1) / p(3), 1e-12);
  // 36.1% and 72.1% (34.6% and 69.2% with the catalog's 2.8 W per port).
  EXPECT_NEAR(k8[1].power_saving, 0.3606, 5e-4);
  EXPECT_NEAR(k256[1].power_saving, 0.7211, 5e-4);
  // The cost is the catalog's: unchanged by the data-sheet watts.
  EXPECT_NEAR(k8[1].cost_saving, 0.361, 5e-4);
  // By port counting a switch equivalent draws the box's watts.
  const auto ports = cost::evaluate(cluster(4096, 256), design(DesignKind::rail_only, sw), cat,
                                    cost::SwitchCounting::ports);
  EXPECT_DOUBLE_EQ(ports.cost.watts.switches, ports.bom.switch_equivalents() * 913.0);
}

TEST(Cost, SwitchWithoutDataSheetWattsUsesTheCatalogPerPort) {
  // QM9700 has no public typical figure: 2.8 W per 400G port of every switch bought.
  const auto cat = cost::load_catalog("ib-ndr-thirdparty-2024");
  const auto r =
      cost::evaluate(cluster(4096, 8), design(DesignKind::rail_optimized, "QM9700"), cat);
  EXPECT_EQ(r.switch_box_w, 0.0);
  EXPECT_DOUBLE_EQ(r.cost.watts.switches, double(r.bom.switch_ports) * 2.8);
}

TEST(Cost, SameTierCountSavesNothing) {
  // 64-port switches, 32,768 GPUs, K = 8: a rail of 4,096 GPUs exceeds the 2-tier limit of 2,048,
  // so each rail is a 3-tier Clos, like the rail-optimized network: the same switches.
  const auto cat = cost::load_catalog("ib-ndr-thirdparty-2024");
  auto r =
      cost::compare_designs(cluster(32768, 8), design(DesignKind::rail_optimized, "QM9700"), cat);
  EXPECT_EQ(r[0].bom.tiers, 3);
  EXPECT_EQ(r[1].bom.tiers, 3);
  EXPECT_EQ(r[0].bom.switches, r[1].bom.switches);
  EXPECT_NEAR(r[1].cost_saving, 0.0, 1e-12);
}

TEST(Cost, WholeSwitchVersusPortCountingForSmallRails) {
  // 4,096 GPUs with K = 256: 256 rails of 16 GPUs each, each on its own 64-port switch using 16
  // ports. Whole-switch counting buys 256 switches; port counting pays for 256 * 16 / 64 = 64.
  const auto c = cluster(4096, 256);
  const auto d = design(DesignKind::rail_only, "QM9700");
  const auto cat = cost::load_catalog("ib-ndr-thirdparty-2024");
  const auto whole = cost::evaluate(c, d, cat, cost::SwitchCounting::whole);
  const auto ports = cost::evaluate(c, d, cat, cost::SwitchCounting::ports);
  EXPECT_EQ(whole.bom.switches, 256);
  EXPECT_DOUBLE_EQ(whole.bom.switch_equivalents(), 64.0);
  EXPECT_DOUBLE_EQ(whole.cost.usd.switches, 256 * 36000.0);
  EXPECT_DOUBLE_EQ(ports.cost.usd.switches, 64 * 36000.0);
  EXPECT_DOUBLE_EQ(whole.cost.usd.transceivers, ports.cost.usd.transceivers);
}

TEST(Cost, OversubscriptionCutsSpines) {
  // 1,024 GPUs, K = 8, 3:1 at the leaf: 48 down, 16 up; a rail of 128 needs 3 leaves; 16 up
  // ports stripe over 8 spines (24 leaves * 2 links = 48 of 64 ports).
  const auto bom =
      cost::bill_of_materials(cluster(1024, 8), design(DesignKind::rail_optimized, "QM9700", 3.0));
  EXPECT_EQ(bom.switches_per_tier, (std::vector<std::int64_t>{24, 8}));
  EXPECT_EQ(bom.links_per_tier, (std::vector<std::int64_t>{1024, 24 * 16}));
}

TEST(Catalog, EveryShippedCatalogLoadsWithSources) {
  const auto names = spec::preset_names("catalogs");
  EXPECT_GE(names.size(), 2u);
  for (const auto& n : names) {
    const auto c = cost::load_catalog(n);
    EXPECT_EQ(c.name, n);
    EXPECT_FALSE(c.switch_port.source.empty()) << n;
    EXPECT_FALSE(c.nic_transceiver.source.empty()) << n;
    EXPECT_FALSE(c.switch_transceiver.source.empty()) << n;
    EXPECT_FALSE(c.copper_dac.source.empty()) << n;
    EXPECT_GT(c.switch_port.price_usd, 0) << n;
  }
}

namespace {

// The field of the InputError a catalog text raises, or "no error".
std::string catalog_field_of(const std::string& text) {
  try {
    cost::catalog_from_json(parse_json(text, "--catalog"), "catalog");
  } catch (const InputError& e) {
    return e.field();
  }
  return "no error";
}

// A catalog's every object but "name" and "switch", valid.
const char* const kCatalogRest =
    R"("nic_transceiver":{"price_usd":1,"power_w":1},"switch_transceiver":{"ports":2,"price_usd":1,"power_w":1},)"
    R"("optical_cable":{"price_usd":0,"power_w":0},"copper_dac":{"price_usd":0,"power_w":0},"nic":{"price_usd":0,"power_w":0}})";

}  // namespace

TEST(Catalog, BadCatalogsNameTheField) {
  EXPECT_EQ(
      catalog_field_of(R"({"name":"x","switch":{"price_usd_per_port":-1,"power_w_per_port":1},)" +
                       std::string(kCatalogRest)),
      "catalog.switch.price_usd_per_port");
  EXPECT_EQ(
      catalog_field_of(R"({"name":"x","switch":{"price_usd_per_port":1,"power_w_per_port":"a"},)" +
                       std::string(kCatalogRest)),
      "catalog.switch.power_w_per_port");
  EXPECT_EQ(catalog_field_of(
                R"({"name":"x","switch":{"price_usd_per_port":1,"power_w_per_port":1,"prise":2},)" +
                std::string(kCatalogRest)),
            "catalog.switch.prise");
  EXPECT_EQ(
      catalog_field_of(
          R"({"name":"x","switch":{"price_usd_per_port":1,"power_w_per_port":1,"power_from":"sheet"},)" +
          std::string(kCatalogRest)),
      "catalog.switch.power_from");
  EXPECT_EQ(
      catalog_field_of(
          R"({"name":"x","switch":{"price_usd_per_port":1,"power_w_per_port":1,"power_from":1},)" +
          std::string(kCatalogRest)),
      "catalog.switch.power_from");
  EXPECT_EQ(
      catalog_field_of(R"({"name":"x","switch":{"price_usd_per_port":1,"power_w_per_port":1}})"),
      "catalog.nic_transceiver");
  EXPECT_EQ(catalog_field_of(R"({"name":"x","switch":{"price_usd_per_port":1,)"), "--catalog");
  EXPECT_THROW(cost::load_catalog("no-such-catalog"), InputError);
}

// A quote for one's own cluster: a catalog that extends a preset and gives only what the quote
// changes (here a per-switch price), every other figure and its source taken from the preset.
TEST(Catalog, AUserCatalogExtendsAPresetWithAPerSwitchQuote) {
  const Json quote = parse_json(
      R"({"name":"my-quote","extends":"ib-ndr-thirdparty-2024",)"
      R"("switch":{"price_usd_per_switch":30000,"price_usd_per_port":0,"source":"vendor quote"}})",
      "--catalog");
  const cost::Catalog c = cost::catalog_from_json(quote, "catalog");
  const cost::Catalog base = cost::load_catalog("ib-ndr-thirdparty-2024");
  EXPECT_EQ(c.name, "my-quote");
  EXPECT_DOUBLE_EQ(c.switch_fixed.price_usd, 30000);
  EXPECT_DOUBLE_EQ(c.switch_port.price_usd, 0);
  EXPECT_DOUBLE_EQ(c.switch_port.power_w, base.switch_port.power_w);  // kept
  EXPECT_EQ(c.switch_port.source, "vendor quote");
  EXPECT_DOUBLE_EQ(c.nic_transceiver.price_usd, base.nic_transceiver.price_usd);
  EXPECT_EQ(c.nic_transceiver.source, base.nic_transceiver.source);
  EXPECT_NE(c.about.find("extends ib-ndr-thirdparty-2024"), std::string::npos);
  // Priced: every switch at the quote, the optics as the preset prices them.
  const spec::Cluster cl = spec::make_cluster(spec::load_gpu("H100-SXM"), 2048, 8, 400, 450, 1);
  const spec::NetworkDesign d =
      spec::make_network_design(DesignKind::rail_optimized, spec::load_switch("QM9700"));
  const auto mine = cost::evaluate(cl, d, c), preset = cost::evaluate(cl, d, base);
  EXPECT_DOUBLE_EQ(mine.cost.usd.switches, 30000.0 * static_cast<double>(mine.bom.switches));
  EXPECT_DOUBLE_EQ(mine.cost.usd.transceivers, preset.cost.usd.transceivers);
  // An object overridden without a source says so and keeps the preset's after it.
  const cost::Catalog unsourced = cost::catalog_from_json(
      parse_json(R"({"name":"q","extends":"ib-ndr-thirdparty-2024","nic":{"price_usd":900}})",
                 "--catalog"),
      "catalog");
  EXPECT_DOUBLE_EQ(unsourced.nic.price_usd, 900);
  EXPECT_EQ(unsourced.nic.source.rfind("overridden over ib-ndr-thirdparty-2024", 0), 0u)
      << unsourced.nic.source;
  // A per-switch price alone is a complete switch entry; no price at all names the field.
  EXPECT_EQ(catalog_field_of(
                R"({"name":"q","extends":"paper-ratio","switch":{"price_usd_per_switch":1}})"),
            "no error");
  EXPECT_EQ(catalog_field_of(R"({"name":"q","extends":"no-such","switch":{}})"), "catalog.extends");
  EXPECT_EQ(catalog_field_of(R"({"name":"q","extends":3})"), "catalog.extends");
  // One level: a file that extends a catalog that extends another is refused.
  const std::string middle = testing::TempDir() + "/railsim_catalog_middle.json";
  std::ofstream(middle) << R"({"name":"m","extends":"paper-ratio"})";
  EXPECT_EQ(catalog_field_of(R"({"name":"q","extends":")" + middle + R"("})"), "catalog.extends");
  EXPECT_EQ(catalog_field_of(R"({"name":"x","switch":{"power_w_per_port":1},)" +
                             std::string(kCatalogRest)),
            "catalog.switch.price_usd_per_port");
}

TEST(Cost, SavingsGridMatchesTheTierArithmetic) {
  // docs/design.md section 6, 128-port switches: equal tiers save exactly nothing; 3 -> 1 at
  // 32,768 GPUs with K = 256 gives the default catalog's 72.2%.
  spec::SwitchSpec sw = spec::load_switch("ETH-51.2T-128x400G");
  const auto base = spec::make_network_design(DesignKind::rail_optimized, sw);
  const auto cat = cost::load_catalog("ib-ndr-thirdparty-2024");
  const std::vector<std::int64_t> ks = {8, 72, 256};
  const auto grid = cost::savings_grid(cluster(1024, 8), {4096, 32768, 131072}, ks, base, cat,
                                       cost::SwitchCounting::whole);
  ASSERT_EQ(grid.size(), 9u);
  EXPECT_EQ(grid[0].tiers_rail_optimized, grid[0].tiers_rail_only);  // 4,096, K=8: 2 and 2
  EXPECT_NEAR(grid[0].cost_saving, 0.0, 1e-12);
  EXPECT_EQ(grid[1].gpus, 4104);  // nearest multiple of 72
  EXPECT_EQ(grid[5].tiers_rail_only, 1);
  EXPECT_NEAR(grid[5].cost_saving, 0.7221, 5e-4);
  EXPECT_EQ(grid[6].tiers_rail_only, 3);  // a rail of 16,384 GPUs needs 3 tiers too
  EXPECT_NEAR(grid[6].cost_saving, 0.0, 1e-12);
  const std::string md = cost::savings_markdown(grid, ks);
  EXPECT_NE(md.find("| 32,768 / 32,760 / 32,768 |"), std::string::npos) << md;
}

TEST(BillOfMaterials, ReproducesEveryNvidiaSuperPodRow) {
  // Same table as tests/topo/test_superpod.cpp, through the bill of materials: switches per tier
  // and cables per tier boundary (node-leaf incl. the H100 RA's 4 UFM links, leaf-spine,
  // spine-core).
  std::ifstream in(std::string(RAILSIM_TEST_DATA_DIR) + "/nvidia-superpod-compute-fabric.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const Json table = Json::parse(ss.str());
  int rows = 0;
  for (const auto& des : table.at("designs")) {
    const std::string source = des.at("source");
    const auto sw = spec::load_switch(des.at("switch").get<std::string>());
    ASSERT_EQ(sw.radix, des.at("radix").get<int>());
    ASSERT_EQ(sw.port_gbps, des.at("port_gbps").get<double>());
    const int mgmt = source.find("H100") != std::string::npos ? 4 : 0;
    for (const auto& row : des.at("rows")) {
      const std::int64_t gpus = row.at("gpus");
      SCOPED_TRACE(source + ", " + std::to_string(gpus) + " GPUs");
      const auto bom = cost::bill_of_materials(
          cluster(gpus, des.at("gpus_per_node").get<std::int64_t>()),
          spec::make_network_design(DesignKind::rail_optimized, sw, 1.0, 1, false, mgmt));
      std::vector<std::int64_t> switches = {row.at("leaf"), row.at("spine")};
      std::vector<std::int64_t> cables = {row.at("node_cables"), row.at("leaf_spine_cables")};
      if (row.value("core", 0) > 0) {
        switches.push_back(row.at("core"));
        cables.push_back(row.at("spine_core_cables"));
      }
      EXPECT_EQ(bom.switches_per_tier, switches);
      EXPECT_EQ(bom.links_per_tier, cables);
      ++rows;
    }
  }
  EXPECT_EQ(rows, 15);
}

namespace {

spec::Cluster b300_cluster(std::int64_t n, std::int64_t k, double nic_gbps = 800) {
  return spec::make_cluster(spec::load_gpu("B300"), n, k, nic_gbps, 900, 1);
}

}  // namespace

TEST(Catalog, The2026OpticsChoicesLoadAndSayWhatIsAssumed) {
  for (const char* speed : {"800g", "1.6t"}) {
    for (const char* kind : {"pluggable", "lpo", "cpo"}) {
      const std::string name = std::string("eth-") + speed + "-" + kind + "-2026";
      SCOPED_TRACE(name);
      const auto c = cost::load_catalog(name);
      EXPECT_EQ(c.name, name);
      EXPECT_EQ(c.switch_optics_co_packaged, std::string(kind) == "cpo");
      if (c.switch_optics_co_packaged) {
        EXPECT_EQ(c.switch_transceiver_ports, 1);
      }
      // The same switch figures in all six: no public price or data-sheet watts for a 102.4T
      // box, so both are assumptions and say so.
      EXPECT_DOUBLE_EQ(c.switch_port.price_usd, 562.5);
      EXPECT_DOUBLE_EQ(c.switch_port.power_w, 913.0 / 128);
      EXPECT_NE(c.switch_port.source.find("assumed"), std::string::npos);
      // Prices of LPO and co-packaged optics are not public: assumed equal to the pluggable's.
      if (std::string(kind) != "pluggable") {
        EXPECT_NE(c.switch_transceiver.source.find("no public"), std::string::npos);
        EXPECT_NE(c.switch_transceiver.source.find("assumed equal"), std::string::npos);
      }
    }
  }
  // Per 400G-equivalent port the pluggable switch side draws 7.5 W (15 W per 800G, 30 W per
  // 1.6T), LPO half of it, co-packaged 2.25 W (4.5 W per 800G, 9 W per 1.6T).
  const auto per_port_w = [](const cost::Catalog& c) {
    return c.switch_transceiver.power_w / c.switch_transceiver_ports;
  };
  EXPECT_DOUBLE_EQ(per_port_w(cost::load_catalog("eth-800g-pluggable-2026")), 7.5);
  EXPECT_DOUBLE_EQ(per_port_w(cost::load_catalog("eth-800g-lpo-2026")), 3.75);
  EXPECT_DOUBLE_EQ(per_port_w(cost::load_catalog("eth-800g-cpo-2026")), 2.25);
  EXPECT_DOUBLE_EQ(per_port_w(cost::load_catalog("eth-1.6t-pluggable-2026")), 7.5);
  EXPECT_DOUBLE_EQ(per_port_w(cost::load_catalog("eth-1.6t-cpo-2026")), 2.25);
}

TEST(Cost, RailOnlyOn102TSwitchesAt32kGpus) {
  // 32,768 B300 (800G NICs), K = 8, on the 102.4T switch in its 128 x 800G mode (d = 64 down,
  // 64 up): two tiers hold up to 128^2 / 2 = 8,192 ports, three up to 128^3 / 4 = 524,288.
  // rail_optimized over 32,768 ports needs 3: 32,768 / 64 = 512 leaves; pods of 64 leaves with 64
  // spines each: 8 pods, 512 spines; 512 x 64 = 32,768 spine uplinks / 128 ports = 256 cores.
  // 1,280 switches. rail_only: a rail of 4,096 ports needs 2: 64 leaves with 64 x 64 = 4,096
  // uplinks on 4,096 / 128 = 32 spines (2 links per leaf); 96 a rail, 768 in all.
  const auto cat = cost::load_catalog("eth-800g-pluggable-2026");
  const auto c = b300_cluster(32768, 8);
  auto rows =
      cost::compare_designs(c, design(DesignKind::rail_optimized, "ETH-102.4T-128x800G"), cat);
  EXPECT_EQ(rows[0].bom.switches_per_tier, (std::vector<std::int64_t>{512, 512, 256}));
  EXPECT_EQ(rows[1].bom.switches_per_tier, (std::vector<std::int64_t>{8 * 64, 8 * 32}));
  EXPECT_EQ(rows[0].bom.switches, 1280);
  EXPECT_EQ(rows[1].bom.switches, 768);
  // Every tier full: every port is cabled, 5 and 3 ports per NIC.
  EXPECT_EQ(rows[0].bom.switch_ports_used, 1280 * 128);
  EXPECT_EQ(rows[0].bom.switch_ports_used, 5 * 32768);
  EXPECT_EQ(rows[1].bom.switch_ports_used, 3 * 32768);
  // The same chip as 64 x 1.6T with 1.6T NICs: 2 tiers hold only 64^2 / 2 = 2,048 ports, so a
  // rail of 4,096 needs 3 tiers like the whole cluster (1,024 leaves, 1,024 spines, 512 cores)
  // and rail-only saves nothing.
  const auto c16 = b300_cluster(32768, 8, 1600);
  auto rows16 = cost::compare_designs(c16, design(DesignKind::rail_optimized, "ETH-102.4T-64x1.6T"),
                                      cost::load_catalog("eth-1.6t-pluggable-2026"));
  EXPECT_EQ(rows16[0].bom.switches_per_tier, (std::vector<std::int64_t>{1024, 1024, 512}));
  EXPECT_EQ(rows16[1].bom.tiers, 3);
  EXPECT_EQ(rows16[1].bom.switches, 2560);
  EXPECT_NEAR(rows16[1].cost_saving, 0.0, 1e-12);
}

TEST(Cost, CoPackagedOpticsSaveTheirPerPortDifferenceOnEveryOpticalPort) {
  // The three 800G catalogs on the 32,768-GPU networks above. Their NIC sides are equal for
  // pluggable and co-packaged, so the difference is the switch side alone: per 800G port
  // (2 x the per-400G-equivalent figure) a twin-port module's half, 2 x 15 / 2 = 15 W, against
  // 2 x 2.25 = 4.5 W co-packaged. Every port of every switch carries optics (all are cabled):
  // 1,280 x 128 = 163,840 rail_optimized, 768 x 128 = 98,304 rail_only.
  const auto plug = cost::load_catalog("eth-800g-pluggable-2026");
  const auto lpo = cost::load_catalog("eth-800g-lpo-2026");
  const auto cpo = cost::load_catalog("eth-800g-cpo-2026");
  const double scale = 800.0 / 400.0;
  const double plug_w = scale * plug.switch_transceiver.power_w / plug.switch_transceiver_ports;
  const double lpo_w = scale * lpo.switch_transceiver.power_w / lpo.switch_transceiver_ports;
  const double cpo_w = scale * cpo.switch_transceiver.power_w;
  EXPECT_DOUBLE_EQ(plug_w - cpo_w, 10.5);
  EXPECT_DOUBLE_EQ(cpo.nic_transceiver.power_w, plug.nic_transceiver.power_w);
  const auto c = b300_cluster(32768, 8);
  const auto base = design(DesignKind::rail_optimized, "ETH-102.4T-128x800G");
  const auto p = cost::compare_designs(c, base, plug);
  const auto l = cost::compare_designs(c, base, lpo);
  const auto o = cost::compare_designs(c, base, cpo);
  const std::int64_t ports[] = {1280 * 128, 768 * 128};
  for (int d = 0; d < 2; ++d) {
    SCOPED_TRACE(spec::to_string(p[d].bom.design));
    EXPECT_NEAR(p[d].cost.power_w() - o[d].cost.power_w(), double(ports[d]) * (plug_w - cpo_w),
                1e-6);
    // No switch-side modules with co-packaged optics: they are in the switches.
    EXPECT_EQ(o[d].bom.switch_side_transceivers, 0);
    EXPECT_EQ(o[d].co_packaged_ports, ports[d]);
    EXPECT_EQ(p[d].bom.switch_side_transceivers, ports[d] / 2);
    EXPECT_NEAR(o[d].cost.watts.switches - p[d].cost.watts.switches, double(ports[d]) * cpo_w,
                1e-6);
    // LPO on both ends: the switch side's and the 32,768 NIC modules' differences.
    const double nic_diff = scale * (plug.nic_transceiver.power_w - lpo.nic_transceiver.power_w);
    EXPECT_NEAR(p[d].cost.power_w() - l[d].cost.power_w(),
                double(ports[d]) * (plug_w - lpo_w) + 32768 * nic_diff, 1e-6);
    // The prices of LPO and co-packaged optics are assumed equal to the pluggable's.
    EXPECT_NEAR(o[d].cost.cost_usd(), p[d].cost.cost_usd(), 1e-3);
    EXPECT_NEAR(l[d].cost.cost_usd(), p[d].cost.cost_usd(), 1e-3);
  }
  // 163,840 x 10.5 W = 1.72 MW less for rail_optimized.
  EXPECT_NEAR(p[0].cost.power_w() - o[0].cost.power_w(), 1720320.0, 1e-6);
}

TEST(Cost, CoPackagedOpticsArePaidOnEveryPortBought) {
  // 512 B300 with K = 8, rail_only on 128 x 800G: 8 rails of 64 GPUs, one switch each with 64 of
  // its 128 ports cabled. Whole switches carry optics on all 1,024 ports; port counting pays for
  // the 512 cabled ones.
  const auto cpo = cost::load_catalog("eth-800g-cpo-2026");
  const auto c = b300_cluster(512, 8);
  const auto d = design(DesignKind::rail_only, "ETH-102.4T-128x800G");
  const auto whole = cost::evaluate(c, d, cpo, cost::SwitchCounting::whole);
  const auto ports = cost::evaluate(c, d, cpo, cost::SwitchCounting::ports);
  EXPECT_EQ(whole.bom.switches, 8);
  EXPECT_EQ(whole.co_packaged_ports, 1024);
  EXPECT_EQ(ports.co_packaged_ports, 512);
  const double per_port_w = 2 * (cpo.switch_port.power_w + cpo.switch_transceiver.power_w);
  EXPECT_NEAR(whole.cost.watts.switches, 1024 * per_port_w, 1e-9);
  EXPECT_NEAR(ports.cost.watts.switches, 512 * per_port_w, 1e-9);
  EXPECT_DOUBLE_EQ(whole.cost.watts.transceivers, 512 * 2 * cpo.nic_transceiver.power_w);
}

TEST(Catalog, CoPackagedOpticsAreFibreOnlyAndOnePerPort) {
  // A co-packaged port takes no DAC: copper GPU-leaf links are refused, naming the option.
  const auto cpo = cost::load_catalog("eth-800g-cpo-2026");
  try {
    (void)cost::evaluate(b300_cluster(4096, 8),
                         design(DesignKind::rail_only, "ETH-102.4T-128x800G", 1.0, /*copper=*/true),
                         cpo);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--copper-gpu-leaf");
    EXPECT_NE(std::string(e.what()).find("eth-800g-cpo-2026"), std::string::npos) << e.what();
  }
  // ideal has no scale-out network: nothing to refuse.
  EXPECT_NO_THROW((void)cost::evaluate(
      b300_cluster(4096, 8), design(DesignKind::ideal, "ETH-102.4T-128x800G", 1.0, /*copper=*/true),
      cpo));

  auto field_of = [](const std::string& st) {
    try {
      cost::catalog_from_json(
          parse_json(
              R"({"name":"x","switch":{"price_usd_per_port":1,"power_w_per_port":1},)"
              R"("nic_transceiver":{"price_usd":1,"power_w":1},"switch_transceiver":)" +
                  st +
                  R"(,"optical_cable":{"price_usd":0,"power_w":0},"copper_dac":{"price_usd":0,"power_w":0},"nic":{"price_usd":0,"power_w":0}})",
              "--catalog"),
          "catalog");
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("no error");
  };
  EXPECT_EQ(field_of(R"({"ports":1,"co_packaged":"yes","price_usd":1,"power_w":1})"),
            "catalog.switch_transceiver.co_packaged");
  EXPECT_EQ(field_of(R"({"ports":1,"co_packaged":1,"price_usd":1,"power_w":1})"),
            "catalog.switch_transceiver.co_packaged");
  EXPECT_EQ(field_of(R"({"ports":2,"co_packaged":true,"price_usd":1,"power_w":1})"),
            "catalog.switch_transceiver.ports");
  EXPECT_EQ(field_of(R"({"ports":2,"co_packaged":false,"price_usd":1,"power_w":1})"), "no error");
  EXPECT_EQ(field_of(R"({"ports":1,"co_packaged":true,"price_usd":1,"power_w":1})"), "no error");
  EXPECT_EQ(field_of(R"({"ports":1,"copackaged":true,"price_usd":1,"power_w":1})"),
            "catalog.switch_transceiver.copackaged");
}
