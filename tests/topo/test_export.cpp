// Node names (one spelling of a node in every output) and the graph exports: the DOT drawing's
// structure (a cluster per HB domain, a rank per switch tier, parallel links as one counted edge),
// GraphML's and JSON's names; and Graphviz drawing the 64-GPU fabric at a size people can read.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../common/fabric_fixtures.hpp"
#include "../common/scratch.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/json.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/export.hpp"
#include "railsim/topo/failures.hpp"

using namespace railsim;
using spec::DesignKind;
using topo::Fabric;

namespace {

std::string export_text(const Fabric& f, topo::GraphFormat g) {
  std::ostringstream out;
  topo::write_graph(f, g, out);
  return out.str();
}

std::size_t export_count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The paper's small example: 64 H100 in HB domains of 8, rail-optimized on 16-port switches
// (8 leaves, one per rail, and 4 spines, each leaf with 2 links to each spine).
Fabric export_fabric64(DesignKind kind = DesignKind::rail_optimized) {
  return topo::build_fabric(test::h100_cluster(64, 8), test::radix_design(kind, 16));
}

// Fabrics of every shape the builders make: several NIC ports on one leaf, planes, rail-only,
// four tiers, a tier wired round-robin (parallel links that are not side by side).
std::vector<Fabric> export_fabrics() {
  std::vector<Fabric> fs;
  fs.push_back(export_fabric64());
  fs.push_back(export_fabric64(DesignKind::rail_only));
  fs.push_back(topo::build_fabric(test::h100_cluster(8 * 37, 8, 400, 2),
                                  test::radix_design(DesignKind::rail_only, 8)));
  fs.push_back(topo::build_fabric(test::h100_cluster(8 * 9, 8),
                                  test::radix_design(DesignKind::rail_optimized, 4)));
  fs.push_back(topo::build_fabric(test::h100_cluster(15, 1),
                                  test::radix_design(DesignKind::rail_optimized, 8, 5.0 / 3.0)));
  fs.push_back(
      topo::build_fabric(test::h100_cluster(64, 8), test::radix_design(DesignKind::ideal, 16)));
  auto planes = test::radix_design(DesignKind::rail_optimized, 16, 1.0, 1, 200);
  planes.planes = 2;
  planes.nic_ports = 2;
  fs.push_back(topo::build_fabric(test::h100_cluster(64, 8, 400), planes));
  return fs;
}

// One DOT edge: its two ends as written and its attributes.
struct DotEdge {
  std::string from, to;
  std::string kind;
  long links = 0;
  std::string label;
};

// The text between `open` and the next `close` after `from`, or nullopt; `from` moves past it.
std::optional<std::string> between(const std::string& s, std::size_t& from, const std::string& open,
                                   const std::string& close) {
  const std::size_t a = s.find(open, from);
  if (a == std::string::npos) return std::nullopt;
  const std::size_t b = s.find(close, a + open.size());
  if (b == std::string::npos) return std::nullopt;
  from = b + close.size();
  return s.substr(a + open.size(), b - a - open.size());
}

// Parsed by hand, not with std::regex: GCC 12's <regex> warns (maybe-uninitialized, an error in
// the sanitizer tree) where it is instantiated at -O1.
std::vector<DotEdge> dot_edges(const std::string& dot) {
  std::vector<DotEdge> out;
  std::istringstream in(dot);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  \"", 0) != 0 || line.find("\" -- \"") == std::string::npos ||
        line.size() < 2 || line.compare(line.size() - 2, 2, "];") != 0)
      continue;
    std::size_t at = 0;
    const auto from = between(line, at, "  \"", "\" -- \"");
    at -= 1;  // the closing quote of `from` opens `to`
    const auto to = between(line, at, "\"", "\" [");
    const auto kind = between(line, at, "kind=", ",");
    const auto links =
        between(line, at, "links=", line.find(", label=") != std::string::npos ? "," : "]");
    if (!from || !to || !kind || !links) continue;
    std::size_t lat = at;
    const auto label = between(line, lat, "label=\"", "\"");
    out.push_back({*from, *to, *kind, std::stol(*links), label.value_or("")});
  }
  return out;
}

}  // namespace

TEST(NodeNames, SayWhatANodeIsAndWhereItSits) {
  const Fabric f = export_fabric64();
  EXPECT_EQ(topo::node_name(f, 0), "gpu0");
  EXPECT_EQ(topo::node_name(f, 63), "gpu63");
  EXPECT_EQ(topo::node_name(f, 64), "hb0");
  EXPECT_EQ(topo::node_name(f, 71), "hb7");
  const auto leaf = static_cast<std::int32_t>(f.tier_node_base[1]);
  const auto spine = static_cast<std::int32_t>(f.tier_node_base[2]);
  EXPECT_EQ(topo::node_name(f, leaf + 3), "leaf3.r3");  // one leaf per rail
  EXPECT_EQ(topo::node_name(f, spine), "spine0");       // every rail
  EXPECT_EQ(topo::node_domain(f, 63), 7);
  EXPECT_EQ(topo::node_domain(f, 71), 7);
  EXPECT_EQ(topo::node_domain(f, leaf), -1);
  EXPECT_EQ(topo::node_plane(f, leaf), 0);
  EXPECT_EQ(topo::node_plane(f, 0), -1);

  // The index in a switch's name is the one --fail takes: leaf:3 and spine:1 kill the switches
  // named leaf3 and spine1, and no other node.
  const topo::DegradedFabric d(
      f, {topo::parse_failure("leaf:3", f), topo::parse_failure("spine:1", f)}, false);
  std::set<std::string> dead;
  for (std::size_t i = 0; i < f.nodes.size(); ++i)
    if (!d.node_alive(static_cast<std::int64_t>(i)))
      dead.insert(topo::node_name(f, static_cast<std::int32_t>(i)));
  EXPECT_EQ(dead, (std::set<std::string>{"leaf3.r3", "spine1"}));
}

TEST(NodeNames, AreUniqueAndNamePlanesRailsAndHighTiers) {
  for (const Fabric& f : export_fabrics()) {
    std::set<std::string> names;
    for (std::size_t i = 0; i < f.nodes.size(); ++i)
      names.insert(topo::node_name(f, static_cast<std::int32_t>(i)));
    EXPECT_EQ(names.size(), f.nodes.size()) << spec::to_string(f.design.kind);
  }
  const std::vector<Fabric> fs = export_fabrics();
  // Rail-only: every switch is a rail's.
  const Fabric& ro = fs[1];
  EXPECT_EQ(topo::node_name(ro, static_cast<std::int32_t>(ro.tier_node_base[1] + 5)), "leaf5.r5");
  // 72 GPUs on 4-port switches: tiers above the core are named by number.
  const Fabric& deep = fs[3];
  ASSERT_GE(deep.tiers, 4);
  EXPECT_EQ(topo::node_name(deep, static_cast<std::int32_t>(deep.tier_node_base[4])), "t4sw0");
  // Two planes: the second plane's first leaf.
  const Fabric& two = fs.back();
  ASSERT_EQ(two.layout.planes, 2);
  const std::int64_t leaves = two.switches_per_tier[0];
  const auto second = static_cast<std::int32_t>(two.tier_node_base[1] + leaves / 2);
  EXPECT_EQ(topo::node_plane(two, second), 1);
  EXPECT_EQ(topo::node_name(two, second), "leaf" + std::to_string(leaves / 2) + ".p1.r0");
}

TEST(DotExport, OneClusterPerHbDomainAndOneRankPerSwitchTier) {
  for (const Fabric& f : export_fabrics()) {
    const std::string dot = export_text(f, topo::GraphFormat::dot);
    const std::string what(spec::to_string(f.design.kind));
    EXPECT_EQ(export_count(dot, "subgraph cluster_hb"),
              static_cast<std::size_t>(f.cluster.domains()))
        << what;
    EXPECT_EQ(export_count(dot, "label=\"HB domain "),
              static_cast<std::size_t>(f.cluster.domains()));
    EXPECT_EQ(export_count(dot, "{rank=same;"), static_cast<std::size_t>(f.tiers)) << what;
    // Every node once, labelled with its name, its raw attributes kept for scripts.
    for (std::size_t i = 0; i < f.nodes.size(); ++i) {
      const std::string name = topo::node_name(f, static_cast<std::int32_t>(i));
      const std::string decl = "    \"" + name + "\" [kind=";
      ASSERT_EQ(export_count(dot, decl), 1u) << name;
      const auto p = dot.find(decl);
      const std::string line = dot.substr(p, dot.find('\n', p) - p);
      EXPECT_NE(line.find(" tier=" + std::to_string(f.nodes[i].tier) + ","), std::string::npos)
          << line;
      EXPECT_NE(line.find(" rail=" + std::to_string(f.nodes[i].rail) + ","), std::string::npos)
          << line;
      EXPECT_NE(line.find("label=\"" + name + "\""), std::string::npos) << line;
    }
    // Each HB domain's cluster holds its switch and its GPUs.
    const auto c3 = dot.find("subgraph cluster_hb" + std::to_string(f.cluster.domains() - 1) + " ");
    ASSERT_NE(c3, std::string::npos);
    const std::string cluster = dot.substr(c3, dot.find("\n  }\n", c3) - c3);
    EXPECT_NE(cluster.find("\"hb" + std::to_string(f.cluster.domains() - 1) + "\""),
              std::string::npos);
    EXPECT_EQ(export_count(cluster, "[kind=gpu,"), static_cast<std::size_t>(f.cluster.hb_domain));
    EXPECT_NE(cluster.find("\"gpu" + std::to_string(f.cluster.gpus - 1) + "\""), std::string::npos);
  }
}

TEST(DotExport, ParallelLinksAreOneEdgeLabelledWithTheirCount) {
  for (const Fabric& f : export_fabrics()) {
    const std::string what(spec::to_string(f.design.kind));
    std::map<std::pair<std::string, std::string>, long> pairs;  // by the names of the lower end
    for (const auto& l : f.links) ++pairs[{topo::node_name(f, l.a), topo::node_name(f, l.b)}];
    const std::vector<DotEdge> edges = dot_edges(export_text(f, topo::GraphFormat::dot));
    EXPECT_EQ(edges.size(), pairs.size()) << what;
    long links = 0;
    for (const DotEdge& e : edges) {
      links += e.links;
      // HB edges are written switch first; every other link lower end first.
      const auto key = e.kind == "hb" ? std::make_pair(e.to, e.from) : std::make_pair(e.from, e.to);
      const auto it = pairs.find(key);
      ASSERT_NE(it, pairs.end()) << e.from << " -- " << e.to;
      EXPECT_EQ(e.links, it->second) << e.from << " -- " << e.to;
      if (e.links > 1)
        EXPECT_EQ(e.label.substr(0, e.label.find(' ')), std::to_string(e.links)) << e.label;
      else
        EXPECT_EQ(e.label, "");
    }
    EXPECT_EQ(links, static_cast<long>(f.links.size())) << what;
  }
  // The 64-GPU fabric: each leaf has 2 links to each of the 4 spines at 400G.
  const std::vector<DotEdge> edges =
      dot_edges(export_text(export_fabric64(), topo::GraphFormat::dot));
  std::size_t leaf_spine = 0;
  for (const DotEdge& e : edges) {
    if (e.kind != "switch_switch") continue;
    ++leaf_spine;
    EXPECT_EQ(e.label, "2 x 400G");
  }
  EXPECT_EQ(leaf_spine, 32u);
}

TEST(DotExport, TheTitleSaysWhatIsDrawn) {
  const std::string dot = export_text(export_fabric64(), topo::GraphFormat::dot);
  EXPECT_EQ(dot.rfind("graph rail_optimized {\n", 0), 0u);
  EXPECT_NE(dot.find("label=\"rail_optimized: 64 GPUs in 8 HB domains of 8, 2 switch tiers of test "
                     "(16 x 400G)\\n64 HB links of 3.6T (green), 64 GPU-leaf links of 400G (blue), "
                     "64 leaf-spine links of 400G (red)"),
            std::string::npos)
      << dot.substr(0, 400);
  EXPECT_NE(dot.find("rankdir=LR"), std::string::npos);
}

TEST(GraphmlAndJsonExport, NameEveryNodeAsTheDrawingDoes) {
  const Fabric f = export_fabrics().back();  // two planes
  const std::string xml = export_text(f, topo::GraphFormat::graphml);
  for (const char* key : {"name", "label", "kind", "tier", "rail", "hb_domain", "plane"})
    EXPECT_NE(xml.find(std::string("attr.name=\"") + key + "\""), std::string::npos) << key;
  EXPECT_NE(xml.find("attr.name=\"capacity_gbps\""), std::string::npos);
  EXPECT_NE(xml.find("<node id=\"n9\"><data key=\"name\">gpu9</data><data key=\"label\">gpu9</data>"
                     "<data key=\"kind\">gpu</data><data key=\"tier\">0</data><data "
                     "key=\"rail\">1</data><data key=\"hb_domain\">1</data></node>"),
            std::string::npos);
  const auto hb = static_cast<std::int32_t>(f.cluster.gpus + 2);
  EXPECT_NE(xml.find("<data key=\"name\">hb2</data>"), std::string::npos);
  EXPECT_NE(xml.find("<node id=\"n" + std::to_string(hb) + "\">"), std::string::npos);
  const auto last = static_cast<std::int32_t>(f.nodes.size() - 1);
  EXPECT_NE(xml.find("<data key=\"name\">" + topo::node_name(f, last) + "</data>"),
            std::string::npos);
  EXPECT_EQ(export_count(xml, "<data key=\"plane\">"),
            static_cast<std::size_t>(f.nodes.size() - f.cluster.gpus - f.cluster.domains()));
  EXPECT_EQ(export_count(xml, "<data key=\"hb_domain\">"),
            static_cast<std::size_t>(f.cluster.gpus + f.cluster.domains()));
  EXPECT_EQ(export_count(xml, "<edge "), f.links.size());

  const Json j = Json::parse(export_text(f, topo::GraphFormat::json));
  ASSERT_EQ(j.at("nodes").size(), f.nodes.size());
  EXPECT_EQ(j.at("links").size(), f.links.size());
  for (std::size_t i = 0; i < f.nodes.size(); ++i)
    EXPECT_EQ(j["nodes"][i].at("name"), topo::node_name(f, static_cast<std::int32_t>(i)));
  EXPECT_EQ(j["nodes"][0].at("kind"), "gpu");
  EXPECT_EQ(j.at("gpus"), 64);
}

TEST(GraphExport, StopsWhenCancelled) {
  const Fabric f = export_fabric64();
  for (const auto g :
       {topo::GraphFormat::dot, topo::GraphFormat::graphml, topo::GraphFormat::json}) {
    request_cancel();
    EXPECT_THROW((void)export_text(f, g), Cancelled);
    reset_cancel();
    EXPECT_NO_THROW((void)export_text(f, g));
  }
}

// Graphviz draws the 64-GPU fabric at a size one can read: under 3,000 pt each way (A4 is 842 pt
// tall; the flat drawing of every link was 4,768 x 188 pt), no longer than 6:1 either way, every
// node labelled with its name.
TEST(DotExport, GraphvizDrawsTheSixtyFourGpuFabricReadably) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "Graphviz's dot is not installed (apt-get install graphviz)";
  for (const DesignKind kind : {DesignKind::rail_optimized, DesignKind::rail_only}) {
    const Fabric f = export_fabric64(kind);
    const std::string dot_path = test::scratch_path("export", "fabric.dot");
    const std::string svg_path = test::scratch_path("export", "fabric.svg");
    {
      std::ofstream o(dot_path);
      topo::write_graph(f, topo::GraphFormat::dot, o);
    }
    const std::string cmd = "dot -Tsvg '" + dot_path + "' -o '" + svg_path + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(svg_path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string svg = ss.str();
    std::remove(dot_path.c_str());
    std::remove(svg_path.c_str());
    std::size_t at = 0;
    const auto width = between(svg, at, "<svg width=\"", "pt\"");
    const auto height = between(svg, at, "height=\"", "pt\"");
    ASSERT_TRUE(width && height) << svg.substr(0, 500);
    const double w = std::stod(*width), h = std::stod(*height);
    const std::string what(spec::to_string(kind));
    EXPECT_LT(w, 3000) << what;
    EXPECT_LT(h, 3000) << what;
    EXPECT_LT(std::max(w / h, h / w), 6.0) << what << ": " << w << " x " << h;
    for (std::size_t i = 0; i < f.nodes.size(); ++i) {
      const std::string name = topo::node_name(f, static_cast<std::int32_t>(i));
      EXPECT_NE(svg.find(">" + name + "</text>"), std::string::npos) << name;
    }
  }
}
