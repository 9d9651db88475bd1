#include "railsim/cost/bill_of_materials.hpp"

#include "railsim/core/units.hpp"
#include "railsim/topo/builders.hpp"

namespace railsim::cost {

namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}
}  // namespace

BillOfMaterials bill_of_materials(const spec::Cluster& c, const spec::NetworkDesign& design,
                                  int switch_ports_per_module) {
  return bill_of_materials(topo::resolve_network(c, design), switch_ports_per_module);
}

BillOfMaterials bill_of_materials(const topo::Network& n, int switch_ports_per_module) {
  const spec::Cluster& c = n.cluster;
  const spec::NetworkDesign& d = n.design;
  const topo::NetworkPlan& np = n.plan;
  BillOfMaterials b;
  b.design = d.kind;
  b.gpus = c.gpus;
  b.hb_domain = d.kind == spec::DesignKind::ideal ? c.gpus : c.hb_domain;
  b.radix = d.sw.radix;
  b.port_gbps = d.sw.port_gbps;
  b.nic_gbps = units::Bps_to_gbps(spec::nic_port_Bps(c, d));
  b.switch_ports_per_module = switch_ports_per_module < 1 ? 1 : switch_ports_per_module;
  b.tiers = np.tiers();
  b.clos_networks = np.instances();
  if (np.instances() == 0) return b;  // ideal: no scale-out network, no NICs
  b.planes = np.layout.planes;
  b.nic_ports = static_cast<int>(d.nic_ports);
  b.dual_tor = d.dual_tor;
  b.oversubscription = d.oversubscription;
  b.oversubscribed_tier = d.oversubscribed_tier;
  b.split_down = d.split_down;
  b.split_up = d.split_up;

  const topo::ClosPlan& p = np.plan;
  const std::int64_t inst = np.instances();
  const int L = p.tier_count();
  const int ppm = b.switch_ports_per_module;
  const bool copper = d.copper_gpu_leaf;
  b.management_links = d.management_links;
  b.nics = c.gpus * c.nics_per_gpu;
  b.nic_links = c.gpus * np.layout.ports;  // a link per NIC port

  // Tier 1: leaves carry the NIC ports (partial leaves at the end of each rail) and all uplinks.
  const topo::ClosTier& leaf = p.tiers[0];
  const std::int64_t up1 = L > 1 ? leaf.up_ports : 0;
  // A rail group's endpoints fill its leaves in order; only the last leaf may be partial.
  auto group_modules = [&](std::int64_t endpoints) {
    const std::int64_t full = endpoints / leaf.down_ports;
    const std::int64_t rest = endpoints - full * leaf.down_ports;
    std::int64_t m = full * ceil_div((copper ? 0 : leaf.down_ports) + up1, ppm);
    if (rest > 0) m += ceil_div((copper ? 0 : rest) + up1, ppm);
    return m;
  };
  const std::int64_t groups = p.groups();
  std::int64_t leaf_modules =
      (groups - 1) * group_modules(p.rails_per_leaf * p.endpoints_per_rail) +
      group_modules(p.rails_in_group(groups - 1) * p.endpoints_per_rail);
  std::int64_t switch_modules = inst * leaf_modules;
  b.switches_per_tier.push_back(inst * leaf.switches());
  b.ports_used_per_tier.push_back(inst * (p.endpoints() + leaf.switches() * up1) +
                                  d.management_links);

  // Tiers >= 2: a block's switches share its sub-blocks' uplinks (evenly, or round-robin so that
  // they differ by at most one link: topo::ClosTier::down_links); all up ports are cabled.
  for (int t = 2; t <= L; ++t) {
    const topo::ClosTier& ct = p.tiers[t - 1];
    const std::int64_t up = t < L ? ct.up_ports : 0;
    const std::int64_t x = ct.switches_per_block;
    std::int64_t ports = 0, modules = 0;
    auto add_block = [&](std::int64_t blocks, std::int64_t g) {
      // The first `more` switches of a block take one down link more than the others.
      const std::int64_t low = ct.down_links(g, x - 1);
      const std::int64_t more = ct.even() ? 0 : g * ct.sub_ports % x;
      ports += blocks * (x * (low + up) + more);
      modules +=
          blocks * ((x - more) * ceil_div(low + up, ppm) + more * ceil_div(low + 1 + up, ppm));
    };
    add_block(ct.blocks - 1, ct.group);
    add_block(1, ct.last_block_group);
    b.switches_per_tier.push_back(inst * ct.switches());
    b.ports_used_per_tier.push_back(inst * ports);
    switch_modules += inst * modules;
  }
  // Management links take free leaf ports; their switch-side modules are counted together.
  if (!copper) switch_modules += ceil_div(d.management_links, ppm);

  for (std::size_t t = 0; t < b.switches_per_tier.size(); ++t) {
    b.switches += b.switches_per_tier[t];
    b.switch_ports_used += b.ports_used_per_tier[t];
  }
  b.switch_ports = b.switches * b.radix;

  const std::int64_t gpu_leaf = b.nic_links + d.management_links;
  b.links_per_tier.push_back(gpu_leaf);
  for (int t = 1; t < L; ++t) b.links_per_tier.push_back(inst * p.tiers[t - 1].uplinks());
  for (auto l : b.links_per_tier) b.links += l;
  b.copper_links = copper ? gpu_leaf : 0;
  b.optical_links = b.links - b.copper_links;
  b.transceiver_ends = 2 * b.optical_links;
  b.nic_side_transceivers = copper ? 0 : gpu_leaf;
  b.switch_side_transceivers = switch_modules;
  return b;
}

}  // namespace railsim::cost
