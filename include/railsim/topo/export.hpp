#pragma once
// Writes a Fabric graph for other tools: GraphML (yEd, Gephi, networkx), Graphviz DOT, or JSON.
// Every format names each node as node_name does, as the simulator names it. GraphML and JSON hold
// one edge per link. DOT is a drawing (`dot -Tsvg`): left to right, each HB domain a cluster of its
// switch and GPUs, then one rank per switch tier; the parallel links of two nodes one edge,
// labelled "n x 400G" and drawn thicker; one colour per kind of link, told in the title. Its nodes
// keep kind, tier and rail, its edges kind, gbps and links (the count) as attributes for scripts;
// edges with style=invis are no links, they keep a tier's switches in order.
#include <ostream>
#include <string>
#include <string_view>

#include "railsim/topo/fabric.hpp"

namespace railsim::topo {

enum class GraphFormat { graphml, dot, json };
// Throws InputError(option, ...) listing the valid formats.
GraphFormat parse_graph_format(std::string_view s, const std::string& option = "--export");

// Streams the graph (DOT holds one sorted list of the runs of parallel links, 20 bytes a run), and
// stops when cancelled (core/cancel.hpp).
void write_graph(const Fabric& f, GraphFormat fmt, std::ostream& out);

}  // namespace railsim::topo
