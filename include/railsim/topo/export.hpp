#pragma once
// Writes a Fabric graph for other tools: GraphML (yEd, Gephi, networkx), Graphviz DOT, or JSON.
#include <ostream>
#include <string>
#include <string_view>

#include "railsim/topo/fabric.hpp"

namespace railsim::topo {

enum class GraphFormat { graphml, dot, json };
// Throws InputError(option, ...) listing the valid formats.
GraphFormat parse_graph_format(std::string_view s, const std::string& option = "--export");

void write_graph(const Fabric& f, GraphFormat fmt, std::ostream& out);

}  // namespace railsim::topo
