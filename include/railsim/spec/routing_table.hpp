#pragma once
// The assumptions every table states, as columns: the routing (spec::routing_json's keys) and the
// training software (perf::run_json's keys); the one definition that sweep, optimize, compare and
// the plans table share.
#include <string>
#include <vector>

#include "railsim/report/table.hpp"
#include "railsim/spec/model.hpp"
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

// The software assumptions as columns, CSV and JSON only (perf::run_json's keys: stack, dtype,
// flash_attention, compile, elementwise_kernels, ep_dispatch, cp_comm), and the cells of one row
// in that order: every table whose figures come from the time model states the software it
// assumed.
std::vector<report::Column> software_columns();
void append_software_cells(std::vector<report::Cell>& row, const Training& tr);
// The same columns added to every row of `t`.
void add_software_columns(report::Table& t, const Training& tr);
// The same values as JSON keys, for the answers that state them once (estimate, plan, traffic,
// sim --schedule).
Json software_json(const Training& tr);
// The software for people: "stack megatron-core-2024, bf16, flash attention on" and
// software_notes (torch.compile, the EP dispatch where hierarchical); the CP exchange is
// cp_note's, stated where a strategy uses context parallelism.
std::string describe_software(const Training& tr);

}  // namespace railsim::spec
