// Uses the installed railsim library: the network designs for 1,024 H100 GPUs (HB domains of
// K = 8, one 400G NIC each) on 128-port 400G switches, built through the public API.
//
// By hand: rail-only has K = 8 rails of 1,024 / 8 = 128 NICs; a 128-port switch takes a whole
// rail, so each rail is one switch: 8 switches in 1 tier. Rail-optimized is one non-blocking Clos
// over 1,024 NICs: leaves use 64 ports down and 64 up, so 1,024 / 64 = 16 leaves and
// 16 x 64 / 128 = 8 spines: 24 switches in 2 tiers. With the paper-ratio catalog (a switch port
// costs 4 transceivers, one transceiver per optical link end, nothing else priced) an L-tier Clos
// over N NICs costs (2L - 1) N ports and 2 L N transceivers: 3N x 4 + 4N = 16N units against
// N x 4 + 2N = 6N for rail-only, a saving of 10/16 = 62.5%.
#include <cstdint>
#include <cstdio>

#include "railsim/core/error.hpp"
#include "railsim/cost/bill_of_materials.hpp"
#include "railsim/cost/catalog.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/fabric.hpp"

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what);
    ++failures;
  }
}

std::int64_t switch_nodes(const railsim::topo::Fabric& f) {
  std::int64_t n = 0;
  for (const auto& node : f.nodes) n += node.kind == railsim::topo::NodeKind::network_switch;
  return n;
}

}  // namespace

int main() {
  using namespace railsim;
  spec::ClusterOptions co;
  co.gpu = "H100-SXM";  // a preset compiled into railsim_spec
  co.gpus = 1024;
  co.hb_domain = 8;
  const spec::Cluster cluster = spec::make_cluster(co);

  spec::NetworkOptions rail_only;
  rail_only.design = "rail_only";
  rail_only.sw = "ETH-51.2T-128x400G";
  spec::NetworkOptions rail_optimized = rail_only;
  rail_optimized.design = "rail_optimized";

  const spec::NetworkDesign ro = spec::make_network_design(rail_only);
  const spec::NetworkDesign opt = spec::make_network_design(rail_optimized);
  const topo::Fabric ro_fabric = topo::build_fabric(cluster, ro);
  const topo::Fabric opt_fabric = topo::build_fabric(cluster, opt);
  const cost::Catalog cat = cost::load_catalog("paper-ratio");
  const cost::DesignReport ro_report = cost::evaluate(cluster, ro, cat);
  const cost::DesignReport opt_report = cost::evaluate(cluster, opt, cat);
  const cost::BillOfMaterials& ro_bom = ro_report.bom;
  const cost::BillOfMaterials& opt_bom = opt_report.bom;
  std::printf("rail_only: %lld GPUs, %d tier(s), %lld switches (fabric graph: %lld)\n",
              static_cast<long long>(cluster.gpus), ro_bom.tiers,
              static_cast<long long>(ro_bom.switches),
              static_cast<long long>(switch_nodes(ro_fabric)));
  std::printf("rail_optimized: %lld GPUs, %d tier(s), %lld switches (fabric graph: %lld)\n",
              static_cast<long long>(cluster.gpus), opt_bom.tiers,
              static_cast<long long>(opt_bom.switches),
              static_cast<long long>(switch_nodes(opt_fabric)));
  expect(ro_bom.tiers == 1 && ro_bom.switches == 8, "rail_only: 8 switches in 1 tier");
  expect(opt_bom.tiers == 2 && opt_bom.switches == 24, "rail_optimized: 24 switches in 2 tiers");
  expect(switch_nodes(ro_fabric) == 8 && switch_nodes(opt_fabric) == 24,
         "the fabric graphs have the counted switches");

  const double s = cost::saving(ro_report.cost.cost_usd(), opt_report.cost.cost_usd());
  std::printf("rail_only cost saving (paper-ratio): %.1f%%\n", 100.0 * s);
  expect(s > 0.6249 && s < 0.6251, "paper-ratio saving 62.5%");

  // Bad input is an InputError naming the option, across the library boundary.
  try {
    co.gpus = 1001;
    (void)spec::make_cluster(co);
    expect(false, "1,001 GPUs in domains of 8 is rejected");
  } catch (const InputError& e) {
    std::printf("bad input: %s\n", e.what());
    expect(e.field() == "--hb-domain", "the error names --hb-domain");
  }

  std::printf(failures == 0 ? "consumer: OK\n" : "consumer: %d check(s) failed\n", failures);
  return failures == 0 ? 0 : 1;
}
