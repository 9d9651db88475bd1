#pragma once
// The model, training and strategy options shared by `estimate`, `plan` (and `compare`):
// --model, --batch, --seq, --dtype, --flash-attention, --tp, --pp, --dp, --ep, --micro-batch,
// --interleave,
// --recompute, --sp, --dist-opt, --dp-overlap, --placement.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "railsim/perf/search.hpp"
#include "railsim/spec/cluster.hpp"

namespace railsim::cli {

// Default global batch (sequences) when --batch is not given: 4096 sequences of 2048 tokens is
// about 8M tokens, a GPT-1T-class batch (docs/cli.md).
inline constexpr std::int64_t kDefaultGlobalBatch = 4096;

struct StrategyOptions {
  std::string model = "GPT-1T";
  std::optional<std::int64_t> batch, seq;
  std::string dtype = "bf16";
  std::string flash_attention = "off";
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
// Loads the model, checks every value (zero, negative, out of range: InputError naming the option).
StrategyInputs resolve_strategy_inputs(const StrategyOptions& opt);

// One concrete strategy for `estimate`: perf::default_strategy of the pinned knobs.
perf::Strategy resolve_strategy(const StrategyInputs& in, const spec::Cluster& c);

}  // namespace railsim::cli
