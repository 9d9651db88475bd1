#include "railsim/topo/export.hpp"

#include <fmt/format.h>

#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"

namespace railsim::topo {

namespace {

const char* kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::gpu:
      return "gpu";
    case NodeKind::hb_switch:
      return "hb_switch";
    case NodeKind::network_switch:
      return "switch";
  }
  return "?";
}

const char* link_name(LinkKind k) {
  switch (k) {
    case LinkKind::hb:
      return "hb";
    case LinkKind::nic:
      return "nic";
    case LinkKind::switch_switch:
      return "switch_switch";
  }
  return "?";
}

}  // namespace

GraphFormat parse_graph_format(std::string_view s, const std::string& option) {
  if (s == "graphml") return GraphFormat::graphml;
  if (s == "dot") return GraphFormat::dot;
  if (s == "json") return GraphFormat::json;
  throw InputError(option, fmt::format("unknown graph format '{}'; valid: graphml, dot, json", s));
}

void write_graph(const Fabric& f, GraphFormat gf, std::ostream& out) {
  const std::string design(spec::to_string(f.design.kind));
  // Millions of lines at a million GPUs: stop when asked.
  const auto poll = [](std::size_t i) {
    if ((i & 0xffff) == 0) check_cancelled();
  };
  if (gf == GraphFormat::graphml) {
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
           "  <key id=\"kind\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
           "  <key id=\"tier\" for=\"node\" attr.name=\"tier\" attr.type=\"int\"/>\n"
           "  <key id=\"rail\" for=\"node\" attr.name=\"rail\" attr.type=\"int\"/>\n"
           "  <key id=\"lkind\" for=\"edge\" attr.name=\"kind\" attr.type=\"string\"/>\n"
           "  <key id=\"gbps\" for=\"edge\" attr.name=\"capacity_gbps\" attr.type=\"double\"/>\n";
    out << fmt::format("  <graph id=\"{}\" edgedefault=\"undirected\">\n", design);
    for (std::size_t i = 0; i < f.nodes.size(); ++i) {
      poll(i);
      const Node& n = f.nodes[i];
      out << fmt::format(
          "    <node id=\"n{}\"><data key=\"kind\">{}</data><data key=\"tier\">{}</data>"
          "<data key=\"rail\">{}</data></node>\n",
          i, kind_name(n.kind), n.tier, n.rail);
    }
    for (std::size_t i = 0; i < f.links.size(); ++i) {
      poll(i);
      const Link& l = f.links[i];
      out << fmt::format(
          "    <edge id=\"e{}\" source=\"n{}\" target=\"n{}\"><data key=\"lkind\">{}</data>"
          "<data key=\"gbps\">{}</data></edge>\n",
          i, l.a, l.b, link_name(l.kind), l.capacity_Bps * 8 / 1e9);
    }
    out << "  </graph>\n</graphml>\n";
  } else if (gf == GraphFormat::dot) {
    out << fmt::format("graph {} {{\n", design);
    for (std::size_t i = 0; i < f.nodes.size(); ++i) {
      poll(i);
      const Node& n = f.nodes[i];
      out << fmt::format("  n{} [kind={}, tier={}, rail={}];\n", i, kind_name(n.kind), n.tier,
                         n.rail);
    }
    for (std::size_t i = 0; i < f.links.size(); ++i) {
      poll(i);
      const Link& l = f.links[i];
      out << fmt::format("  n{} -- n{} [kind={}, gbps={}];\n", l.a, l.b, link_name(l.kind),
                         l.capacity_Bps * 8 / 1e9);
    }
    out << "}\n";
  } else {
    // Streamed by hand: a nlohmann tree of a 100k-GPU fabric would take gigabytes.
    out << fmt::format("{{\"design\":\"{}\",\"gpus\":{},\"hb_domain\":{},\"tiers\":{},\"nodes\":[",
                       design, f.cluster.gpus, f.cluster.hb_domain, f.tiers);
    for (std::size_t i = 0; i < f.nodes.size(); ++i) {
      poll(i);
      const Node& n = f.nodes[i];
      out << fmt::format("{}{{\"kind\":\"{}\",\"tier\":{},\"rail\":{}}}", i ? "," : "",
                         kind_name(n.kind), n.tier, n.rail);
    }
    out << "],\"links\":[";
    for (std::size_t i = 0; i < f.links.size(); ++i) {
      poll(i);
      const Link& l = f.links[i];
      out << fmt::format("{}{{\"a\":{},\"b\":{},\"kind\":\"{}\",\"tier\":{},\"capacity_gbps\":{}}}",
                         i ? "," : "", l.a, l.b, link_name(l.kind), l.tier,
                         l.capacity_Bps * 8 / 1e9);
    }
    out << "]}\n";
  }
}

}  // namespace railsim::topo
