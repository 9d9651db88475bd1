#pragma once
// The groups of inputs several commands share, as field tables, and their resolution: the cluster
// (gpus, gpu, hb_domain, nic_gbps, hb_GBps, nics_per_gpu), the network (design, switch,
// oversubscription, ...), routing (routing, seed, forwarding, forward_via, chunks), cost (catalog,
// switch_counting), the software (stack, dtype, flash_attention) and the model and strategy
// (model, batch, seq, tp, pp, dp, cp, ep, micro_batch, interleave, recompute, sp, dist_opt,
// dp_overlap, placement). Errors name the flag (--hb-domain); Python respells it (hb_domain).
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "railsim/command/command.hpp"
#include "railsim/core/checks.hpp"
#include "railsim/core/error.hpp"
#include "railsim/cost/catalog.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/stack.hpp"

namespace railsim::command {

// The fields of several groups, in order, then `extra`.
std::vector<Field> join(std::initializer_list<std::vector<Field>> groups,
                        std::vector<Field> extra = {});

// Shorthands for a command's own fields.
Field flag_field(std::string key, std::string flag, std::string help);
Field text_field(std::string key, std::string flag, std::string help, std::string default_text = "",
                 std::vector<std::string> choices = {});
Field integer_field(std::string key, std::string flag, std::string help, std::int64_t min,
                    std::int64_t max, std::string default_text = "");
Field number_field(std::string key, std::string flag, std::string help, Range range,
                   std::string default_text = "", std::string unit = "");

std::vector<Field> cluster_fields();
spec::ClusterOptions cluster_options(const Args& a);
// --job-gpus J: a job on J of the cluster's GPUs (whole HB domains, the first of the network);
// job_of returns that job (spec::job_cluster), or the whole cluster when it is not given.
Field job_gpus_field();
spec::Cluster job_of(const Args& a, const spec::Cluster& c);
// Whether any cluster option was given (compare and report without one cover the paper's two
// clusters).
bool cluster_given(const Args& a);

// with_design = false leaves out --design (compare builds every design).
std::vector<Field> network_fields(bool with_design = true);
// How flows pick among equal-cost uplinks and how rail-only forwards cross-rail transfers.
std::vector<Field> routing_fields();
// Its first two alone, for commands that take no other routing input: --routing, and --seed, the
// salt of the ECMP hash.
Field routing_field();
// --train-tokens: tokens to train on, in (0, 1e18] (estimate, plan): the days an iteration time
// takes for them, without failures.
Field train_tokens_field();
Field routing_seed_field();
// The network fields the command has (design, routing: those it lacks keep their defaults). The
// routing group's --seed, --forwarding, --forward-via and --chunks are read where the command has
// the whole group (routing_fields): a command with --routing alone may have a --seed of its own.
spec::NetworkOptions network_options(const Args& a);
spec::NetworkDesign resolve_network(const Args& a);

std::vector<Field> cost_fields();
struct ResolvedCost {
  cost::Catalog catalog;
  cost::SwitchCounting counting;
};
ResolvedCost resolve_cost(const Args& a);

std::vector<Field> software_fields();
struct Software {
  spec::Stack stack;
  std::optional<spec::Dtype> dtype;
  std::optional<bool> flash_attention;
};
// Loads the stack and parses the values; a dtype or flash attention the stack lacks is an
// InputError naming the option (spec::make_training).
Software resolve_software(const Args& a);

// The model, training, software, strategy knobs and placement.
std::vector<Field> strategy_fields();
// The keys strategy_fields() holds, in order.
const std::vector<std::string>& strategy_keys();
struct StrategyInputs {
  perf::Model model;
  perf::Training training;
  perf::StrategyPins pins;  // the knobs given
  perf::PlacementKind placement = perf::PlacementKind::rail_aligned;
};
// Loads the model and the stack, checks every value (zero, negative, out of range, a knob the
// stack lacks: InputError naming the option).
StrategyInputs resolve_strategy_inputs(const Args& a);
// The same for the model named (a command that takes several, optimize: each in turn).
StrategyInputs resolve_strategy_inputs(const Args& a, const std::string& model);
// One concrete strategy: perf::default_strategy of the pinned knobs.
perf::Strategy resolve_strategy(const StrategyInputs& in, const spec::Cluster& c);

// The options given, as a command line would write them ("--gpu GB200 --gpus 18432 --no-perf"),
// in the command's field order, a value with a character the shell reads single-quoted: what a
// report states as its inputs.
std::string given_options(const Args& a);

// The output format flags: "json" and "csv" refused together.
void one_format(const Args& a);

// Options the command line read as C++ ints (32 bits) refuse a larger value as it did, before
// any range is checked: "cannot read '...' as the expected type (see --help; ...)".
void refuse_beyond_int(const Args& a, const std::vector<std::string>& keys);

}  // namespace railsim::command
