#pragma once
// The model, training and strategy options shared by `estimate`, `plan`, `traffic` and `sim`
// (`compare` and `sweep` take the model and software ones): --model, --batch, --seq, --stack,
// --dtype, --flash-attention, --tp, --pp, --dp, --ep, --micro-batch, --interleave, --recompute,
// --sp, --dist-opt, --dp-overlap, --placement.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "railsim/perf/search.hpp"
#include "railsim/spec/cluster.hpp"

namespace railsim::cli {

using spec::kDefaultGlobalBatch;

// The training software: --stack, --dtype, --flash-attention (every command that times a model:
// estimate, plan, compare, traffic, sim --schedule, sweep).
struct SoftwareOptions {
  std::string stack{spec::kDefaultStack};
  std::optional<std::string> dtype, flash_attention;
};
void add_software_options(CLI::App& cmd, SoftwareOptions& opt);
struct Software {
  spec::Stack stack;
  std::optional<spec::Dtype> dtype;
  std::optional<bool> flash_attention;
};
// Loads the stack and parses the values; a dtype or flash attention the stack lacks is an
// InputError naming the option (spec::make_training).
Software resolve_software(const SoftwareOptions& opt);

struct StrategyOptions {
  std::string model = spec::kDefaultModel;
  std::optional<std::int64_t> batch, seq;
  SoftwareOptions software;
  std::optional<std::int64_t> tp, pp, dp, ep, micro_batch, interleave;
  std::optional<std::string> recompute, sp, dist_opt, dp_overlap;
  std::string placement = "rail_aligned";
};

void add_strategy_options(CLI::App& cmd, StrategyOptions& opt);

struct StrategyInputs {
  perf::Model model;
  perf::Training training;
  perf::StrategyPins pins;  // the knobs given on the command line
  perf::PlacementKind placement = perf::PlacementKind::rail_aligned;
};
// Loads the model and the stack, checks every value (zero, negative, out of range, a knob the stack
// lacks: InputError naming the option).
StrategyInputs resolve_strategy_inputs(const StrategyOptions& opt);

// The options add_strategy_options registers (model, training, software, knobs, placement).
extern const std::vector<std::string> kStrategyOptionNames;
// An option the command would ignore is refused rather than accepted silently: throws
// InputError(<the first of `options` given on `cmd`>, "has no effect <why>").
void refuse_ignored(const CLI::App& cmd, const std::vector<std::string>& options,
                    const std::string& why);

// One concrete strategy for `estimate`: perf::default_strategy of the pinned knobs.
perf::Strategy resolve_strategy(const StrategyInputs& in, const spec::Cluster& c);

}  // namespace railsim::cli
