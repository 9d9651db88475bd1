#include "railsim/spec/network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <optional>

#include "railsim/core/enum.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"

namespace railsim::spec {

namespace {
constexpr EnumNames<DesignKind, 3> kDesignNames{{{{DesignKind::rail_optimized, "rail_optimized"},
                                                  {DesignKind::rail_only, "rail_only"},
                                                  {DesignKind::ideal, "ideal"}}}};
constexpr EnumNames<Routing, 3> kRoutingNames{
    {{{Routing::ecmp, "ecmp"}, {Routing::adaptive, "adaptive"}, {Routing::spray, "spray"}}}};
constexpr EnumNames<ForwardVia, 2> kViaNames{
    {{{ForwardVia::hb_first, "hb_first"}, {ForwardVia::rail_first, "rail_first"}}}};
constexpr EnumNames<ForwardingMode, 3> kModeNames{{{{ForwardingMode::store, "store"},
                                                    {ForwardingMode::pipelined, "pipelined"},
                                                    {ForwardingMode::two_phase, "two-phase"}}}};
constexpr EnumNames<PortBalance, 2> kBalanceNames{
    {{{PortBalance::spray, "spray"}, {PortBalance::hash, "hash"}}}};
}  // namespace

std::string_view to_string(PortBalance b) {
  return kBalanceNames.name(b);
}
PortBalance parse_port_balance(std::string_view s, const std::string& option) {
  return kBalanceNames.parse(s, option, "port balance");
}

std::string_view to_string(ForwardVia v) {
  return kViaNames.name(v);
}
std::string_view to_string(ForwardingMode m) {
  return kModeNames.name(m);
}
ForwardVia parse_forward_via(std::string_view s, const std::string& option) {
  return kViaNames.parse(s, option, "forwarding peer");
}
ForwardingMode parse_forwarding_mode(std::string_view s, const std::string& option) {
  return kModeNames.parse(s, option, "forwarding mode");
}

std::string_view to_string(DesignKind k) {
  return kDesignNames.name(k);
}

DesignKind parse_design_kind(std::string_view s, const std::string& option) {
  return kDesignNames.parse(s, option, "design");
}

NetworkDesign make_network_design(DesignKind kind, const SwitchSpec& sw, double oversubscription,
                                  int oversubscribed_tier, bool copper_gpu_leaf,
                                  int management_links) {
  NetworkDesign d;
  d.kind = kind;
  d.sw = sw;
  if (sw.radix < 2 || sw.radix % 2 != 0)
    throw InputError("--switch", fmt::format("radix {} of switch '{}' is invalid; expected an even "
                                             "number >= 2",
                                             sw.radix, sw.name));
  // 1:1 up to 1:63 covers every production design (Meta uses 1:7 between pods).
  d.oversubscription =
      check_number("--oversubscription", oversubscription, Range::between(1.0, 63.0));
  d.oversubscribed_tier =
      static_cast<int>(check_integer("--oversubscribed-tier", oversubscribed_tier, 1, 8));
  d.copper_gpu_leaf = copper_gpu_leaf;
  d.management_links =
      static_cast<int>(check_integer("--management-links", management_links, 0, 1 << 20));
  return d;
}

namespace {
// --port-split D:U: D down and U up ports per switch at the oversubscribed tier (D >= U >= 1;
// whether D + U fits the switch's radix is checked where the switch's port mode is known).
void apply_port_split(NetworkDesign& d, const NetworkOptions& opt) {
  const std::string_view s = opt.port_split;
  constexpr int kMaxPorts = 1 << 20;
  auto malformed = [&] {
    return InputError("--port-split",
                      fmt::format("'{}' is not D:U, two port counts from 1 to {} (e.g. 128:120)",
                                  printable(s), kMaxPorts));
  };
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos) throw malformed();
  auto count = [&](std::string_view part) {
    int v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < 1 ||
        v > kMaxPorts)
      throw malformed();
    return v;
  };
  const int down = count(s.substr(0, colon));
  const int up = count(s.substr(colon + 1));
  if (down < up)
    throw InputError("--port-split",
                     fmt::format("{} down ports are fewer than the {} up ports; a tier's switch "
                                 "has at least as many ports down as up",
                                 down, up));
  if (opt.oversubscription != 1.0)
    throw InputError("--port-split",
                     "give it or --oversubscription, not both (it sets the ratio, D / U)");
  d.split_down = down;
  d.split_up = up;
  d.oversubscription = static_cast<double>(down) / static_cast<double>(up);
}

void apply_plane_options(NetworkDesign& d, const NetworkOptions& opt) {
  d.planes = check_integer("--planes", opt.planes, 1, kMaxPlanes);
  d.nic_ports = check_integer("--nic-ports", opt.nic_ports, 1, kMaxNicPorts);
  d.dual_tor = opt.dual_tor;
  d.port_balance = parse_port_balance(opt.port_balance, "--port-balance");
  d.connections =
      static_cast<int>(check_integer("--connections", opt.connections, 1, kMaxConnections));
  if (d.port_balance == PortBalance::spray && d.connections != 1)
    throw InputError("--connections",
                     fmt::format("{} connections per transfer are hashed onto NIC ports only with "
                                 "--port-balance hash; spray shares every transfer over every port",
                                 d.connections));
}
}  // namespace

std::string_view to_string(Routing r) {
  return kRoutingNames.name(r);
}

Routing parse_routing(std::string_view s, const std::string& option) {
  return kRoutingNames.parse(s, option, "routing");
}

Routing default_routing(const SwitchSpec& sw) {
  return sw.family == "infiniband" ? Routing::adaptive : Routing::ecmp;
}

Routing resolve_routing(std::string_view choice, const SwitchSpec& sw, const std::string& option) {
  if (choice == "auto") return default_routing(sw);
  for (const auto& [r, name] : kRoutingNames.entries)
    if (name == choice) return r;
  throw InputError(
      option, "unknown routing '" + printable(choice) + "'; valid: auto, " + kRoutingNames.list());
}

NetworkDesign make_network_design(const NetworkOptions& opt) {
  const DesignKind kind = parse_design_kind(opt.design, "--design");
  NetworkDesign d =
      make_network_design(kind, load_switch(opt.sw, "--switch"), opt.oversubscription,
                          opt.oversubscribed_tier, opt.copper_gpu_leaf, opt.management_links);
  apply_plane_options(d, opt);
  if (!opt.port_split.empty()) apply_port_split(d, opt);
  if (kind == DesignKind::ideal && opt.routing != "auto")
    throw InputError("--routing",
                     "the ideal design has no scale-out network to route (one HB domain over "
                     "every GPU); drop --routing or take --design rail_optimized or rail_only");
  apply_routing_options(d, opt);
  return d;
}

void apply_routing_options(NetworkDesign& d, const NetworkOptions& opt) {
  d.routing = resolve_routing(opt.routing, d.sw, "--routing");
  d.routing_default = opt.routing == "auto";
  d.ecmp_seed = static_cast<std::uint64_t>(check_integer("--seed", opt.seed, 0, kMaxRoutingSeed));
  d.forwarding = parse_forwarding_mode(opt.forwarding, "--forwarding");
  d.forward_via = parse_forward_via(opt.forward_via, "--forward-via");
  d.forwarding_chunks =
      static_cast<int>(check_integer("--chunks", opt.chunks, 1, kMaxForwardingChunks));
}

std::string describe_routing(const NetworkDesign& d) {
  return describe_routing(d, d.kind == DesignKind::rail_only);
}

std::string describe_routing(const NetworkDesign& d, bool with_forwarding) {
  std::string s;
  if (const std::string planes = describe_planes(d); !planes.empty()) s = planes + ", ";
  s += fmt::format("routing {}", to_string(d.routing));
  if (d.routing_default)
    s += d.sw.family == "infiniband" ? " (InfiniBand's default)" : " (Ethernet's default)";
  if (d.routing == Routing::ecmp) s += fmt::format(", seed {}", d.ecmp_seed);
  if (!with_forwarding) return s;
  s += fmt::format("; rail-only forwarding {} via {}", to_string(d.forwarding),
                   to_string(d.forward_via));
  if (d.forwarding == ForwardingMode::pipelined)
    s += fmt::format(", {} chunks", d.forwarding_chunks);
  if (d.forwarding == ForwardingMode::pipelined && d.forward_via == ForwardVia::hb_first)
    s += " (NCCL's PXN)";
  return s;
}

Json routing_json(const NetworkDesign& d) {
  return Json{{"routing", std::string(to_string(d.routing))},
              {"routing_default", d.routing_default},
              {"seed", d.ecmp_seed},
              {"forwarding", std::string(to_string(d.forwarding))},
              {"forward_via", std::string(to_string(d.forward_via))},
              {"chunks", d.forwarding_chunks},
              {"planes", d.planes},
              {"nic_ports", d.nic_ports},
              {"dual_tor", d.dual_tor},
              {"port_balance", std::string(to_string(d.port_balance))},
              {"connections", d.connections}};
}

NetworkDesign fit_to_cluster(const Cluster& cluster, const NetworkDesign& design) {
  if (design.kind == DesignKind::ideal) return design;  // no scale-out network to fit
  NetworkDesign d = design;
  const std::int64_t ports = design.nic_ports;
  // A split the planes chose is theirs to answer for.
  const std::string ports_option = design.nic_ports_from_planes ? "--planes" : "--nic-ports";
  if (ports < 1 || ports > kMaxNicPorts)
    throw InputError(
        ports_option,
        fmt::format(
            "{} NIC ports is out of range [1, {}]{}", ports, kMaxNicPorts,
            design.nic_ports_from_planes ? fmt::format(" ({} planes)", design.planes) : ""));
  if (design.planes < 1 || design.planes > kMaxPlanes)
    throw InputError("--planes",
                     fmt::format("{} planes is out of range [1, {}]", design.planes, kMaxPlanes));
  const double nic_gbps = units::Bps_to_gbps(cluster.nic_bw_Bps);
  if (ports == 1) {
    d.sw = fit_to_nics(design.sw, nic_gbps, "--nic-gbps");
  } else {
    // A split NIC is cabled by breakout: the switch must run ports of exactly that speed.
    const double port_gbps = nic_gbps / static_cast<double>(ports);
    std::optional<SwitchSpec> fitted = in_port_mode(design.sw, port_gbps);
    if (!fitted)
      throw InputError(
          ports_option,
          fmt::format("{:g} Gb/s NICs as {} ports need {:g}G switch ports; switch {} "
                      "has no such port mode (its modes: {})",
                      nic_gbps, ports, port_gbps, design.sw.name, design.sw.modes_text()));
    d.sw = std::move(*fitted);
  }
  const std::int64_t links = cluster.nics_per_gpu * ports;
  if (links % design.planes != 0)
    throw InputError(
        "--planes",
        fmt::format("{} planes do not divide the {} NIC port{} of a GPU ({} NIC{} x {} "
                    "port{}); take planes dividing {} or split the NICs with "
                    "--nic-ports",
                    design.planes, links, links == 1 ? "" : "s", cluster.nics_per_gpu,
                    cluster.nics_per_gpu == 1 ? "" : "s", ports, ports == 1 ? "" : "s", links));
  if (design.dual_tor && ports < 2)
    throw InputError("--dual-tor",
                     fmt::format("dual ToR cables each port of a NIC to a different leaf, and the "
                                 "NICs have one port; split them with --nic-ports 2 (e.g. {:g}G "
                                 "as 2 x {:g}G)",
                                 nic_gbps, nic_gbps / 2));
  return d;
}

void split_nics_over_planes(NetworkDesign& d, std::int64_t planes, std::int64_t nics_per_gpu) {
  d.planes = check_integer("--planes", planes, 1, kMaxPlanes);
  d.nic_ports = d.planes / std::gcd(d.planes, std::max<std::int64_t>(nics_per_gpu, 1));
  d.nic_ports_from_planes = true;
}

double nic_port_Bps(const Cluster& cluster, const NetworkDesign& design) {
  if (design.nic_ports <= 1 || design.kind == DesignKind::ideal) return cluster.nic_bw_Bps;
  return cluster.nic_bw_Bps / static_cast<double>(design.nic_ports);
}

Cluster port_view(const Cluster& cluster, const NetworkDesign& design) {
  if (design.nic_ports <= 1 || design.kind == DesignKind::ideal) return cluster;
  Cluster c = cluster;
  c.nics_per_gpu = static_cast<int>(cluster.nics_per_gpu * design.nic_ports);
  c.nic_bw_Bps = nic_port_Bps(cluster, design);
  return c;
}

std::string describe_planes(const NetworkDesign& d) {
  if (d.kind == DesignKind::ideal) return "";
  std::string s;
  if (d.planes > 1) s = fmt::format("{} planes", d.planes);
  if (d.nic_ports > 1)
    s += fmt::format("{}NICs split in {} ports", s.empty() ? "" : ", ", d.nic_ports);
  if (d.dual_tor) s += s.empty() ? "dual ToR" : ", dual ToR";
  if (d.port_balance == PortBalance::hash)
    s += fmt::format("{}ports by hash of {} connection{} per transfer", s.empty() ? "" : ", ",
                     d.connections, d.connections == 1 ? "" : "s");
  else if (!s.empty() && (d.planes > 1 || d.nic_ports > 1))
    s += ", transfers sprayed over the ports";
  return s;
}

}  // namespace railsim::spec
