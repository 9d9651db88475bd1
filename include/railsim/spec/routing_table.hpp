#pragma once
// The routing assumptions every table states, as columns: the one definition that sweep,
// optimize, compare and the plans table share (spec::routing_json's keys).
#include <vector>

#include "railsim/report/table.hpp"
#include "railsim/spec/network.hpp"

namespace railsim::spec {

// The routing assumptions as columns (spec::routing_json's keys: routing, seed, forwarding,
// forward_via, chunks, port_balance, connections; routing for people too, the others CSV and
// JSON only), and the cells of one row, in that order: the one definition that sweep, optimize
// and the plans table share.
std::vector<report::Column> routing_columns();
void append_routing_cells(std::vector<report::Cell>& row, const spec::NetworkDesign& d);
// The same columns added to every row of `t`, CSV and JSON only: every CSV states its routing.
void add_routing_columns(report::Table& t, const spec::NetworkDesign& d);
// The design's planes (planes, nic_ports, dual_tor: spec::routing_json's other keys) added to
// every row of `t`, CSV and JSON only, for tables of one network (the plans table); the designs
// table has them as columns of its own.
void add_plane_columns(report::Table& t, const spec::NetworkDesign& d);

}  // namespace railsim::spec
