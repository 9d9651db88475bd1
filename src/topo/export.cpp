#include "railsim/topo/export.hpp"

#include <fmt/format.h>

#include "railsim/core/cancel.hpp"
#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"

namespace railsim::topo {

namespace {

// Streams node(i, n) for every node, then `between`, then link(i, l) for every link. Millions of
// lines at a million GPUs: it stops when asked.
template <class NodeText, class LinkText>
void write_items(const Fabric& f, std::ostream& out, NodeText node, std::string_view between,
                 LinkText link) {
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if ((i & 0xffff) == 0) check_cancelled();
    out << node(i, f.nodes[i]);
  }
  out << between;
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    if ((i & 0xffff) == 0) check_cancelled();
    out << link(i, f.links[i]);
  }
}

}  // namespace

GraphFormat parse_graph_format(std::string_view s, const std::string& option) {
  if (s == "graphml") return GraphFormat::graphml;
  if (s == "dot") return GraphFormat::dot;
  if (s == "json") return GraphFormat::json;
  throw InputError(option, fmt::format("unknown graph format '{}'; valid: graphml, dot, json", s));
}

void write_graph(const Fabric& f, GraphFormat gf, std::ostream& out) {
  // The kinds of nodes and links as the graph files name them.
  static constexpr EnumNames<NodeKind, 3> kNodeKindNames{{{{NodeKind::gpu, "gpu"},
                                                           {NodeKind::hb_switch, "hb_switch"},
                                                           {NodeKind::network_switch, "switch"}}}};
  static constexpr EnumNames<LinkKind, 3> kLinkKindNames{
      {{{LinkKind::hb, "hb"}, {LinkKind::nic, "nic"}, {LinkKind::switch_switch, "switch_switch"}}}};
  const std::string design(spec::to_string(f.design.kind));
  const auto gbps = [](const Link& l) { return l.capacity_Bps * 8 / 1e9; };
  if (gf == GraphFormat::graphml) {
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
           "  <key id=\"kind\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
           "  <key id=\"tier\" for=\"node\" attr.name=\"tier\" attr.type=\"int\"/>\n"
           "  <key id=\"rail\" for=\"node\" attr.name=\"rail\" attr.type=\"int\"/>\n"
           "  <key id=\"lkind\" for=\"edge\" attr.name=\"kind\" attr.type=\"string\"/>\n"
           "  <key id=\"gbps\" for=\"edge\" attr.name=\"capacity_gbps\" attr.type=\"double\"/>\n";
    out << fmt::format("  <graph id=\"{}\" edgedefault=\"undirected\">\n", design);
    write_items(
        f, out,
        [](std::size_t i, const Node& n) {
          return fmt::format(
              "    <node id=\"n{}\"><data key=\"kind\">{}</data><data key=\"tier\">{}</data>"
              "<data key=\"rail\">{}</data></node>\n",
              i, kNodeKindNames.name(n.kind), n.tier, n.rail);
        },
        "",
        [&](std::size_t i, const Link& l) {
          return fmt::format(
              "    <edge id=\"e{}\" source=\"n{}\" target=\"n{}\"><data key=\"lkind\">{}</data>"
              "<data key=\"gbps\">{}</data></edge>\n",
              i, l.a, l.b, kLinkKindNames.name(l.kind), gbps(l));
        });
    out << "  </graph>\n</graphml>\n";
  } else if (gf == GraphFormat::dot) {
    out << fmt::format("graph {} {{\n", design);
    write_items(
        f, out,
        [](std::size_t i, const Node& n) {
          return fmt::format("  n{} [kind={}, tier={}, rail={}];\n", i, kNodeKindNames.name(n.kind),
                             n.tier, n.rail);
        },
        "",
        [&](std::size_t, const Link& l) {
          return fmt::format("  n{} -- n{} [kind={}, gbps={}];\n", l.a, l.b,
                             kLinkKindNames.name(l.kind), gbps(l));
        });
    out << "}\n";
  } else {
    // Streamed by hand: a nlohmann tree of a 100k-GPU fabric would take gigabytes.
    out << fmt::format("{{\"design\":\"{}\",\"gpus\":{},\"hb_domain\":{},\"tiers\":{},\"nodes\":[",
                       design, f.cluster.gpus, f.cluster.hb_domain, f.tiers);
    write_items(
        f, out,
        [](std::size_t i, const Node& n) {
          return fmt::format("{}{{\"kind\":\"{}\",\"tier\":{},\"rail\":{}}}", i ? "," : "",
                             kNodeKindNames.name(n.kind), n.tier, n.rail);
        },
        "],\"links\":[",
        [&](std::size_t i, const Link& l) {
          return fmt::format(
              "{}{{\"a\":{},\"b\":{},\"kind\":\"{}\",\"tier\":{},\"capacity_gbps\":{}}}",
              i ? "," : "", l.a, l.b, kLinkKindNames.name(l.kind), l.tier, gbps(l));
        });
    out << "]}\n";
  }
}

}  // namespace railsim::topo
