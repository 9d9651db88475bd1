// railsim fail whatif: what a set of failed components cuts off and slows on each design, and the
// job's options (docs/failures.md).
#include <fmt/format.h>

#include "railsim/command/inputs.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/fail/report.hpp"
#include "railsim/fail/whatif.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {
void run_whatif(const Args& a, Output& out) {
  const StrategyInputs in = resolve_strategy_inputs(a);
  const spec::Cluster c = spec::make_cluster(cluster_options(a));
  fail::WhatIfOptions o;
  o.fail = a.values("fail");
  o.random = a.integer_if("fail_random").value_or(0);
  o.seed = static_cast<std::uint64_t>(a.integer("seed"));
  o.pxn = fail::parse_pxn_mode(a.text("pxn"), "--pxn");
  o.sim = fail::parse_sim_mode(a.text("sim"), "--sim");
  o.spare_domains = a.integer_if("spare_domains");
  o.examples = static_cast<int>(a.integer("examples"));
  o.plan.pins = in.pins;
  o.plan.top = 1;
  o.plan.threads = check_threads("--threads", a.integer("threads"));
  std::vector<spec::NetworkDesign> designs;
  spec::NetworkOptions n = network_options(a);  // --routing alone: the rest keeps its defaults
  for (spec::DesignKind k : fail::parse_designs(a.text("design"), "--design")) {
    n.design = std::string(spec::to_string(k));
    designs.push_back(spec::make_network_design(n));
  }
  const fail::WhatIfReport r = fail::what_if(c, designs, in.model, in.training, o);
  if (a.flag("json"))
    out.print("{}\n", fail::to_json(r).dump(2));
  else
    out.print("{}", fail::to_text(r));
}
}  // namespace

Command fail_whatif_command() {
  Command c;
  c.path = "fail whatif";
  c.summary =
      "What a set of failed components cuts off and slows on each design, and the job's options";
  Field failed = text_field(
      "fail", "--fail",
      "Failed component, repeatable: gpu:G, nic:G[.n], link:G[.n] (NIC-leaf link), leaf:I, "
      "spine:I, core:I, switch:T:I, uplink:T:I (T = 1 leaf-spine), domain:D, nvswitch:D[.p] (a "
      "switch plane of an HB domain), plane:P (network plane P: --planes)");
  failed.kind = Kind::texts;
  c.fields = join(
      {cluster_fields(), network_fields(/*with_design=*/false), strategy_fields()},
      {text_field("design", "--design", "rail_optimized, rail_only or both", "both"), failed,
       integer_field("fail_random", "--fail-random",
                     "Also fail this many components drawn at random in each design", 0, 1'000'000),
       integer_field("seed", "--seed", "Seed of --fail-random", 0, std::int64_t{1} << 53, "1"),
       routing_field(),
       text_field("pxn", "--pxn",
                  "Forward through HB-domain peers around a dead NIC, link or leaf, on every "
                  "design: on (NCCL's PXN) or off (a dead NIC stops the job)",
                  "on"),
       text_field("sim", "--sim",
                  "Flow-simulate the plan's schedule on the degraded network: auto (up to 4,096 "
                  "GPUs), on, off",
                  "auto"),
       integer_field("spare_domains", "--spare-domains",
                     "Spare HB domains the job can swap in (default: fail goodput's auto spares "
                     "under the default failure rates)",
                     0, spec::kMaxGpus),
       integer_field("examples", "--examples", "Rerouted pairs shown per design", 0, 1000, "5"),
       integer_field("threads", "--threads", "Threads of the plan search (0 = all cores)", 0, 0,
                     "0"),
       flag_field("json", "--json", "Print JSON")});
  c.run = run_whatif;
  c.python_name = "whatif";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
