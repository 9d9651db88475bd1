#include "railsim/topo/builders.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/units.hpp"

namespace railsim::topo {

namespace {
// The plan of a design already fitted to the cluster.
NetworkPlan plan_fitted(const spec::Cluster& c, const spec::NetworkDesign& d) {
  NetworkPlan np;
  np.kind = d.kind;
  np.layout = plane_layout(c, d);
  const PlaneLayout& lay = np.layout;
  if (lay.instances > 0)
    np.plan = plan_clos(lay.plan_rails(c), lay.plan_ports_per_rail(c), d.sw.radix,
                        d.oversubscription, d.oversubscribed_tier, "--switch",
                        lay.max_rails_per_leaf(c), d.split_down, d.split_up);
  if (lay.instances > 0 && d.management_links > 0) {
    // Management links take leaf ports that GPUs leave free.
    const ClosTier& leaf = np.plan.tiers[0];
    const std::int64_t free =
        lay.instances * (leaf.switches() * leaf.down_ports - np.plan.endpoints());
    if (d.management_links > free)
      throw InputError("--management-links",
                       fmt::format("{} management links do not fit in the {} free leaf ports",
                                   d.management_links, free));
  }
  return np;
}
}  // namespace

PlaneLayout plane_layout(const spec::Cluster& c, const spec::NetworkDesign& d) {
  PlaneLayout lay;
  lay.ports = c.nics_per_gpu * std::max(d.nic_ports, 1);
  if (d.kind == spec::DesignKind::ideal) return lay;
  lay.planes = std::max(d.planes, 1);
  lay.per_rail = d.kind == spec::DesignKind::rail_only;
  lay.dual_tor = d.dual_tor;
  lay.instances = lay.planes * (lay.per_rail ? c.hb_domain : 1);
  return lay;
}

Network resolve_network(const spec::Cluster& cluster, const spec::NetworkDesign& design) {
  Network n{cluster, spec::fit_to_cluster(cluster, design), {}};
  n.plan = plan_fitted(n.cluster, n.design);
  return n;
}

NetworkPlan plan_network(const spec::Cluster& c, const spec::NetworkDesign& design) {
  return plan_fitted(c, spec::fit_to_cluster(c, design));  // no copy of the cluster
}

namespace {

void add_gpus_and_hb(Fabric& f) {
  const auto& c = f.cluster;
  const std::int64_t n = c.gpus, dom = c.domains();
  f.nodes.reserve(static_cast<std::size_t>(n + dom));
  for (std::int64_t g = 0; g < n; ++g)
    f.nodes.push_back({NodeKind::gpu, 0, static_cast<std::int32_t>(c.rail_of(g))});
  for (std::int64_t i = 0; i < dom; ++i) f.nodes.push_back({NodeKind::hb_switch, -1, -1});
  for (std::int64_t g = 0; g < n; ++g)
    f.links.push_back(
        {static_cast<std::int32_t>(g), f.hb_switch_of(g), c.hb_bw_Bps, LinkKind::hb, 0});
}

std::int64_t planned_links(const spec::Cluster& c, const NetworkPlan& np) {
  std::int64_t l = c.gpus + c.gpus * np.layout.ports;
  for (int t = 1; t < np.tiers(); ++t) l += np.instances() * np.plan.tiers[t - 1].uplinks();
  return l;
}

Fabric build_clos(const spec::Cluster& c, const spec::NetworkDesign& design) {
  const Network n = resolve_network(c, design);
  const spec::NetworkDesign& d = n.design;
  const NetworkPlan& np = n.plan;
  const std::int64_t total_links = planned_links(c, np);
  if (total_links > kMaxFabricLinks)
    throw InputError("--gpus", fmt::format("a graph of {} links is too large to build (limit {}); "
                                           "the bill of materials does not need it",
                                           total_links, kMaxFabricLinks));
  Fabric f;
  f.cluster = c;
  f.design = d;
  f.layout = np.layout;
  f.plan = np.plan;
  const ClosPlan& p = f.plan;
  const int L = p.tier_count();
  f.tiers = L;
  f.nodes.reserve(static_cast<std::size_t>(c.gpus + c.domains() + np.switches()));
  f.links.reserve(static_cast<std::size_t>(total_links));
  add_gpus_and_hb(f);

  // Switch nodes, tier by tier, instance by instance.
  const PlaneLayout& lay = f.layout;
  f.tier_node_base.assign(static_cast<std::size_t>(L + 1), 0);
  f.switches_per_tier.clear();
  const std::int64_t leaves = p.tiers[0].blocks;
  std::int64_t span = 1;  // leaves under one block of the current tier
  for (int t = 1; t <= L; ++t) {
    const ClosTier& ct = p.tiers[t - 1];
    if (t >= 2) span *= ct.group;
    f.tier_node_base[t] = static_cast<std::int64_t>(f.nodes.size());
    f.switches_per_tier.push_back(lay.instances * ct.switches());
    for (std::int64_t inst = 0; inst < lay.instances; ++inst) {
      for (std::int64_t b = 0; b < ct.blocks; ++b) {
        std::int32_t rail = -1;
        if (lay.per_rail) {
          rail = static_cast<std::int32_t>(lay.gpu_rail(c, inst, 0));
        } else {
          // A switch belongs to a rail when every leaf below it does (with dual ToR a plan's
          // rails are the GPU rails once per port of the plane: one GPU rail when they agree).
          const std::int64_t first = b * span, last = std::min((b + 1) * span, leaves) - 1;
          const std::int64_t r0 = p.rail_of_leaf(first), r1 = p.rail_of_leaf(last);
          if (r0 >= 0 && r0 == r1) rail = static_cast<std::int32_t>(lay.gpu_rail(c, inst, r0));
        }
        for (std::int64_t x = 0; x < ct.switches_per_block; ++x)
          f.nodes.push_back({NodeKind::network_switch, static_cast<std::int8_t>(t), rail});
      }
    }
  }

  // NIC links: GPU g's NIC port n is link N + g*M + n (M = NIC ports per GPU).
  const double nic_cap = std::min(f.nic_link_Bps(), units::gbps_to_Bps(d.sw.port_gbps));
  for (std::int64_t g = 0; g < c.gpus; ++g) {
    if ((g & 0xffff) == 0) check_cancelled();  // up to 2^25 links: stop when asked
    for (int n = 0; n < lay.ports; ++n)
      f.links.push_back({static_cast<std::int32_t>(g), f.leaf_of(g, n), nic_cap, LinkKind::nic, 0});
  }

  // Switch-switch links, boundary by boundary: sub-block s's up port p goes from its switch
  // p / u_t to switch switch_of(s mod n_{t+1}, p) of its parent block s / n_{t+1} (ClosTier).
  const double port_cap = units::gbps_to_Bps(d.sw.port_gbps);
  f.link_base.assign(static_cast<std::size_t>(std::max(L, 1)), 0);
  for (int t = 1; t < L; ++t) {
    const ClosTier& lo = p.tiers[t - 1];
    const ClosTier& hi = p.tiers[t];
    f.link_base[t] = static_cast<std::int64_t>(f.links.size());
    const std::int64_t P = lo.up_ports_per_block();
    for (std::int64_t inst = 0; inst < lay.instances; ++inst) {
      const std::int64_t lo_base = f.tier_node_base[t] + inst * lo.switches();
      const std::int64_t hi_base = f.tier_node_base[t + 1] + inst * hi.switches();
      for (std::int64_t s = 0; s < lo.blocks; ++s) {
        check_cancelled();
        const std::int64_t parent = s / hi.group;
        for (std::int64_t q = 0; q < P; ++q) {
          const auto a =
              static_cast<std::int32_t>(lo_base + s * lo.switches_per_block + q / lo.up_ports);
          const auto b = static_cast<std::int32_t>(hi_base + parent * hi.switches_per_block +
                                                   hi.switch_of(s % hi.group, q));
          f.links.push_back({a, b, port_cap, LinkKind::switch_switch, static_cast<std::int8_t>(t)});
        }
      }
    }
  }
  return f;
}

}  // namespace

Fabric build_rail_optimized(const spec::Cluster& cluster, const spec::NetworkDesign& design) {
  spec::NetworkDesign d = design;
  d.kind = spec::DesignKind::rail_optimized;
  return build_clos(cluster, d);
}

Fabric build_rail_only(const spec::Cluster& cluster, const spec::NetworkDesign& design) {
  spec::NetworkDesign d = design;
  d.kind = spec::DesignKind::rail_only;
  return build_clos(cluster, d);
}

Fabric build_ideal(const spec::Cluster& cluster, const spec::NetworkDesign& design) {
  Fabric f;
  f.cluster = cluster;
  f.cluster.hb_domain = cluster.gpus;  // one HB domain over all GPUs
  f.design = design;
  f.design.kind = spec::DesignKind::ideal;
  f.tiers = 0;
  f.layout = plane_layout(cluster, f.design);
  if (2 * cluster.gpus > kMaxFabricLinks)
    throw InputError("--gpus", fmt::format("{} GPUs is too large a graph to build", cluster.gpus));
  f.links.reserve(static_cast<std::size_t>(cluster.gpus));
  add_gpus_and_hb(f);
  return f;
}

Fabric build_fabric(const spec::Cluster& cluster, const spec::NetworkDesign& design) {
  switch (design.kind) {
    case spec::DesignKind::rail_optimized:
      return build_rail_optimized(cluster, design);
    case spec::DesignKind::rail_only:
      return build_rail_only(cluster, design);
    case spec::DesignKind::ideal:
      return build_ideal(cluster, design);
  }
  return build_ideal(cluster, design);
}

}  // namespace railsim::topo
