#include "railsim/topo/export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "railsim/core/cancel.hpp"
#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/topo/failures.hpp"

namespace railsim::topo {

namespace {

// The kinds of nodes and links as the graph files name them.
constexpr EnumNames<NodeKind, 3> kNodeKindNames{{{{NodeKind::gpu, "gpu"},
                                                  {NodeKind::hb_switch, "hb_switch"},
                                                  {NodeKind::network_switch, "switch"}}}};
constexpr EnumNames<LinkKind, 3> kLinkKindNames{
    {{{LinkKind::hb, "hb"}, {LinkKind::nic, "nic"}, {LinkKind::switch_switch, "switch_switch"}}}};

double gbps(const Link& l) {
  return l.capacity_Bps * 8 / 1e9;
}

// Text gathered in a buffer and handed to the stream in large pieces: a million-GPU graph is tens
// of millions of lines, and one formatted string per line costs more than writing it.
class Sink {
 public:
  explicit Sink(std::ostream& out) : out_(out) {}
  template <class... A>
  void put(fmt::format_string<A...> f, A&&... a) {
    fmt::format_to(fmt::appender(buf_), f, std::forward<A>(a)...);
    if (buf_.size() >= (1 << 16)) flush();
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  std::ostream& out_;
  fmt::memory_buffer buf_;
};

// Calls `node(i)` for every node, writes `between`, then calls `link(i)` for every link. Millions
// of lines at a million GPUs: it stops when asked.
template <class NodeText, class LinkText>
void for_items(const Fabric& f, Sink& s, NodeText node, std::string_view between, LinkText link) {
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if ((i & 0xffff) == 0) check_cancelled();
    node(static_cast<std::int32_t>(i));
  }
  s.put("{}", between);
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    if ((i & 0xffff) == 0) check_cancelled();
    link(i);
  }
}

void write_graphml(const Fabric& f, Sink& s) {
  s.put("{}",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
        "  <key id=\"name\" for=\"node\" attr.name=\"name\" attr.type=\"string\"/>\n"
        "  <key id=\"label\" for=\"node\" attr.name=\"label\" attr.type=\"string\"/>\n"
        "  <key id=\"kind\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
        "  <key id=\"tier\" for=\"node\" attr.name=\"tier\" attr.type=\"int\"/>\n"
        "  <key id=\"rail\" for=\"node\" attr.name=\"rail\" attr.type=\"int\"/>\n"
        "  <key id=\"hb_domain\" for=\"node\" attr.name=\"hb_domain\" attr.type=\"int\">"
        "<default>-1</default></key>\n"
        "  <key id=\"plane\" for=\"node\" attr.name=\"plane\" attr.type=\"int\">"
        "<default>-1</default></key>\n"
        "  <key id=\"lkind\" for=\"edge\" attr.name=\"kind\" attr.type=\"string\"/>\n"
        "  <key id=\"gbps\" for=\"edge\" attr.name=\"capacity_gbps\" attr.type=\"double\"/>\n");
  s.put("  <graph id=\"{}\" edgedefault=\"undirected\">\n", spec::to_string(f.design.kind));
  for_items(
      f, s,
      [&](std::int32_t i) {
        const Node& n = f.nodes[static_cast<std::size_t>(i)];
        const std::string name = node_name(f, i);
        s.put(
            "    <node id=\"n{}\"><data key=\"name\">{}</data><data key=\"label\">{}</data>"
            "<data key=\"kind\">{}</data><data key=\"tier\">{}</data><data key=\"rail\">{}</data>",
            i, name, name, kNodeKindNames.name(n.kind), n.tier, n.rail);
        // Written only where they mean something; the keys' default (-1) stands for the rest.
        if (const std::int64_t d = node_domain(f, i); d >= 0)
          s.put("<data key=\"hb_domain\">{}</data>", d);
        if (const int p = node_plane(f, i); p >= 0) s.put("<data key=\"plane\">{}</data>", p);
        s.put("{}", "</node>\n");
      },
      "",
      [&](std::size_t i) {
        const Link& l = f.links[i];
        s.put(
            "    <edge id=\"e{}\" source=\"n{}\" target=\"n{}\"><data key=\"lkind\">{}</data>"
            "<data key=\"gbps\">{}</data></edge>\n",
            i, l.a, l.b, kLinkKindNames.name(l.kind), gbps(l));
      });
  s.put("{}", "  </graph>\n</graphml>\n");
}

void write_json(const Fabric& f, Sink& s) {
  // Streamed by hand: a nlohmann tree of a 100k-GPU fabric would take gigabytes.
  s.put("{{\"design\":\"{}\",\"gpus\":{},\"hb_domain\":{},\"tiers\":{},\"nodes\":[",
        spec::to_string(f.design.kind), f.cluster.gpus, f.cluster.hb_domain, f.tiers);
  for_items(
      f, s,
      [&](std::int32_t i) {
        const Node& n = f.nodes[static_cast<std::size_t>(i)];
        s.put("{}{{\"name\":\"{}\",\"kind\":\"{}\",\"tier\":{},\"rail\":{}}}", i ? "," : "",
              node_name(f, i), kNodeKindNames.name(n.kind), n.tier, n.rail);
      },
      "],\"links\":[",
      [&](std::size_t i) {
        const Link& l = f.links[i];
        s.put("{}{{\"a\":{},\"b\":{},\"kind\":\"{}\",\"tier\":{},\"capacity_gbps\":{}}}",
              i ? "," : "", l.a, l.b, kLinkKindNames.name(l.kind), l.tier, gbps(l));
      });
  s.put("{}", "]}\n");
}

// --- DOT: a drawing people can read -------------------------------------------------------------

// Parallel links between the same two nodes (a leaf's uplinks to one spine, a GPU's NIC ports on
// one leaf): one edge of the drawing each. Links `first`.. of one kind, tier and capacity.
struct Bundle {
  std::int32_t a = 0, b = 0;
  std::int32_t first = 0;  // the lowest link id of the bundle
  std::int32_t count = 0;
  LinkKind kind = LinkKind::nic;
  std::int8_t tier = 0;
};

bool same_kind(const Link& x, const Link& y) {
  return x.a == y.a && x.b == y.b && x.kind == y.kind && x.tier == y.tier &&
         x.capacity_Bps == y.capacity_Bps;
}

// The bundles of a Fabric by kind and tier of link, then by ends (a, then b). The builders lay
// most parallel links side by side (a GPU's ports, an evenly striped leaf's uplinks), so runs of
// equal links are merged first and only the runs are sorted: 20 bytes per run at most.
std::vector<Bundle> bundles(const Fabric& f) {
  std::vector<Bundle> out;
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    if ((i & 0xffff) == 0) check_cancelled();
    const Link& l = f.links[i];
    if (!out.empty() && same_kind(f.links[static_cast<std::size_t>(out.back().first)], l)) {
      ++out.back().count;
    } else {
      out.push_back({l.a, l.b, static_cast<std::int32_t>(i), 1, l.kind, l.tier});
    }
  }
  check_cancelled();
  // Links of one pair and kind but of different capacities (never built, but a Fabric made by
  // hand may have them) stay apart unless adjacent.
  std::sort(out.begin(), out.end(), [](const Bundle& x, const Bundle& y) {
    return std::tie(x.kind, x.tier, x.a, x.b, x.first) <
           std::tie(y.kind, y.tier, y.a, y.b, y.first);
  });
  check_cancelled();
  std::size_t w = 0;
  for (std::size_t r = 0; r < out.size(); ++r) {
    if (w > 0 && same_kind(f.links[static_cast<std::size_t>(out[w - 1].first)],
                           f.links[static_cast<std::size_t>(out[r].first)]))
      out[w - 1].count += out[r].count;
    else
      out[w++] = out[r];
  }
  out.resize(w);
  return out;
}

// A link speed as people write it: 400G, 800G, 3.6T.
std::string speed_text(double g) {
  return g >= 1000 ? fmt::format("{:.4g}T", g / 1000) : fmt::format("{:.4g}G", g);
}

// A DOT double-quoted string holding `text` (a switch's name comes from a spec file).
std::string dot_quote(std::string_view text) {
  std::string q = "\"";
  for (char c : text) {
    if (c == '\n') {
      q += "\\n";  // a line break of the label
      continue;
    }
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + '"';
}

// Colours: Okabe-Ito's (distinguishable with colour blindness), as report's charts use; links in
// the full colour, GPUs and switches in a pale tint of their uplinks' colour.
struct LinkLook {
  const char* colour;
  const char* word;  // the colour in the title's legend
};
LinkLook link_look(LinkKind k, int tier) {
  if (k == LinkKind::hb) return {"#009E73", "green"};
  if (k == LinkKind::nic) return {"#0072B2", "blue"};
  if (tier == 1) return {"#D55E00", "red"};
  if (tier == 2) return {"#CC79A7", "purple"};
  return {"#E69F00", "orange"};
}
// A switch tier's nodes: one shape per tier, more corners higher up.
struct SwitchLook {
  const char* fill;
  const char* shape;
  const char* style;
};
SwitchLook switch_look(int tier) {
  switch (tier) {
    case 1:
      return {"#F6D5C2", "box", "rounded,filled"};
    case 2:
      return {"#F2DCE8", "hexagon", "filled"};
    case 3:
      return {"#FBE8C2", "octagon", "filled"};
    default:
      return {"#EEEEEE", "doubleoctagon", "filled"};
  }
}
constexpr const char* kGpuFill = "#D4E6F4";
constexpr const char* kHbFill = "#CCEBDF";

// The graph's title: what was drawn, and the count, speed and colour of each kind of link.
std::string dot_title(const Fabric& f, const std::vector<Bundle>& bs) {
  std::string legend;
  for (std::size_t i = 0; i < bs.size();) {  // bundles come kind by kind, tier by tier
    const Bundle& b = bs[i];
    std::int64_t links = 0;
    double lo = gbps(f.links[static_cast<std::size_t>(b.first)]), hi = lo;
    for (; i < bs.size() && bs[i].kind == b.kind && bs[i].tier == b.tier; ++i) {
      const double g = gbps(f.links[static_cast<std::size_t>(bs[i].first)]);
      links += bs[i].count;
      lo = std::min(lo, g);
      hi = std::max(hi, g);
    }
    const std::string speed = lo == hi ? speed_text(lo) : speed_text(lo) + " to " + speed_text(hi);
    legend += fmt::format("{}{} {} links of {} ({})", legend.empty() ? "" : ", ", links,
                          link_tier_name(b.kind, b.tier), speed, link_look(b.kind, b.tier).word);
  }
  std::string head = fmt::format(
      "{}: {} GPUs in {} HB domain{} of {}", spec::to_string(f.design.kind), f.cluster.gpus,
      f.cluster.domains(), f.cluster.domains() == 1 ? "" : "s", f.cluster.hb_domain);
  if (f.tiers > 0)
    head += fmt::format(", {} switch tier{} of {} ({} x {})", f.tiers, f.tiers == 1 ? "" : "s",
                        f.design.sw.name, f.design.sw.radix, speed_text(f.design.sw.port_gbps));
  if (f.layout.planes > 1) head += fmt::format(", {} planes", f.layout.planes);
  return head + "\n" + legend + (legend.empty() ? "" : "; an edge labelled n x S: n links of S");
}

void write_dot(const Fabric& f, Sink& s) {
  const std::vector<Bundle> bs = bundles(f);
  // Left to right: each HB domain's switch, its GPUs, then the switch tiers. GPUs side by side
  // (top to bottom) make a strip as wide as the cluster is large (4,768 x 188 pt at 64 GPUs);
  // stacked in a column, a 64-GPU drawing is about as tall as a page.
  s.put("graph {} {{\n", spec::to_string(f.design.kind));
  s.put(
      "  graph [label={}, labelloc=t, fontname=\"Helvetica\", fontsize=12, rankdir=LR, "
      "nodesep=0.06, ranksep=1.1];\n",
      dot_quote(dot_title(f, bs)));
  s.put(
      "  node [fontname=\"Helvetica\", fontsize=9, shape=box, style=filled, fillcolor=\"{}\", "
      "height=0.22, margin=\"0.05,0.01\"];\n"
      "  edge [fontname=\"Helvetica\", fontsize=8];\n",
      kGpuFill);
  // One cluster per HB domain: its switch, then its GPUs (the node numbering of fabric.hpp).
  const std::int64_t n = f.cluster.gpus, k = f.cluster.hb_domain;
  for (std::int64_t d = 0; d < f.cluster.domains(); ++d) {
    if ((d & 0xfff) == 0) check_cancelled();
    const auto hb = static_cast<std::int32_t>(n + d);
    s.put(
        "  subgraph cluster_hb{} {{\n"
        "    graph [label=\"HB domain {}\", fontsize=9, style=\"rounded,filled\", "
        "fillcolor=\"#F7F7F7\", color=\"#BBBBBB\"];\n"
        "    \"{}\" [kind={}, tier={}, rail={}, label=\"{}\", shape=ellipse, fillcolor=\"{}\"];\n",
        d, d, node_name(f, hb), kNodeKindNames.name(NodeKind::hb_switch), -1, -1, node_name(f, hb),
        kHbFill);
    for (std::int64_t g = d * k; g < (d + 1) * k; ++g) {
      const Node& nd = f.nodes[static_cast<std::size_t>(g)];
      const std::string name = node_name(f, static_cast<std::int32_t>(g));
      s.put("    \"{}\" [kind={}, tier={}, rail={}, label=\"{}\"];\n", name,
            kNodeKindNames.name(nd.kind), nd.tier, nd.rail, name);
    }
    s.put("{}", "  }\n");
  }
  // One rank per switch tier: leaves in a column, spines in the next. An invisible chain through
  // a tier keeps its switches in the order of their names, and the GPUs, placed near the leaves
  // they are cabled to, follow their rails; left to itself, dot shuffles both.
  const auto first_switch = static_cast<std::size_t>(n + f.cluster.domains());
  int top = 0;
  for (std::size_t i = first_switch; i < f.nodes.size(); ++i)
    top = std::max(top, static_cast<int>(f.nodes[i].tier));
  for (int t = 1; t <= top; ++t) {
    const SwitchLook look = switch_look(t);
    const auto in_tier = [&](std::size_t i) {
      return f.nodes[i].kind == NodeKind::network_switch && f.nodes[i].tier == t;
    };
    std::int64_t count = 0;
    for (std::size_t i = first_switch; i < f.nodes.size(); ++i) {
      if ((i & 0xffff) == 0) check_cancelled();
      if (!in_tier(i)) continue;
      if (count++ == 0)
        s.put("  {{rank=same; node [shape={}, style=\"{}\", fillcolor=\"{}\"];\n", look.shape,
              look.style, look.fill);
      const std::string name = node_name(f, static_cast<std::int32_t>(i));
      s.put("    \"{}\" [kind={}, tier={}, rail={}, label=\"{}\"];\n", name,
            kNodeKindNames.name(NodeKind::network_switch), t, f.nodes[i].rail, name);
    }
    if (count == 0) continue;
    if (count > 1) {
      std::int64_t at = 0;
      for (std::size_t i = first_switch; i < f.nodes.size(); ++i) {
        if ((i & 0xffff) == 0) check_cancelled();
        if (!in_tier(i)) continue;
        s.put("{}\"{}\"",
              at == 0       ? "    "
              : at % 8 == 0 ? " --\n    "
                            : " -- ",
              node_name(f, static_cast<std::int32_t>(i)));
        ++at;
      }
      s.put("{}", " [style=invis];\n");
    }
    s.put("{}", "  }\n");
  }
  // Edges: a bundle of parallel links is one edge, labelled n x speed, drawn thicker; the edges
  // of one kind of link in one colour, set once before them. An HB link is written from its
  // switch to its GPU, so that the switch ranks before the GPU (dot ranks an edge's first node
  // first).
  for (std::size_t i = 0; i < bs.size(); ++i) {
    if ((i & 0xffff) == 0) check_cancelled();
    const Bundle& b = bs[i];
    const Link& l = f.links[static_cast<std::size_t>(b.first)];
    if (i == 0 || b.kind != bs[i - 1].kind || b.tier != bs[i - 1].tier)
      s.put("  edge [color=\"{}\"];\n", link_look(b.kind, b.tier).colour);
    const bool hb = b.kind == LinkKind::hb;
    s.put("  \"{}\" -- \"{}\" [kind={}, gbps={}, links={}", node_name(f, hb ? b.b : b.a),
          node_name(f, hb ? b.a : b.b), kLinkKindNames.name(b.kind), gbps(l), b.count);
    if (b.count > 1)
      s.put(", label=\"{} x {}\", penwidth={:.3g}", b.count, speed_text(gbps(l)),
            1 + std::log2(static_cast<double>(b.count)));
    s.put("{}", "];\n");
  }
  s.put("{}", "}\n");
}

}  // namespace

GraphFormat parse_graph_format(std::string_view s, const std::string& option) {
  if (s == "graphml") return GraphFormat::graphml;
  if (s == "dot") return GraphFormat::dot;
  if (s == "json") return GraphFormat::json;
  throw InputError(option, fmt::format("unknown graph format '{}'; valid: graphml, dot, json", s));
}

void write_graph(const Fabric& f, GraphFormat gf, std::ostream& out) {
  Sink s(out);
  switch (gf) {
    case GraphFormat::graphml:
      write_graphml(f, s);
      break;
    case GraphFormat::dot:
      write_dot(f, s);
      break;
    case GraphFormat::json:
      write_json(f, s);
      break;
  }
  s.flush();
}

}  // namespace railsim::topo
