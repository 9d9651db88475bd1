#include "strategy_options.hpp"

#include <fmt/format.h>

#include "railsim/core/error.hpp"

namespace railsim::cli {

void add_software_options(CLI::App& cmd, SoftwareOptions& opt) {
  cmd.add_option("--stack", opt.stack,
                 "Training software: which knobs exist, their defaults and constraints (preset or "
                 "JSON file, see `railsim presets stacks`)")
      ->capture_default_str();
  cmd.add_option("--dtype", opt.dtype,
                 "GEMM precision: bf16 (default) or fp8 (if the stack has it)");
  cmd.add_option("--flash-attention", opt.flash_attention,
                 "Fused attention kernels: on or off (default: the stack's)");
}

void add_strategy_options(CLI::App& cmd, StrategyOptions& opt) {
  cmd.add_option("--model", opt.model,
                 "Model preset name or JSON file (see `railsim presets models`)")
      ->capture_default_str();
  cmd.add_option("--batch", opt.batch,
                 fmt::format("Global batch in sequences (default {})", kDefaultGlobalBatch));
  cmd.add_option("--seq", opt.seq, "Sequence length in tokens (default: the model's)");
  add_software_options(cmd, opt.software);
  cmd.add_option("--tp", opt.tp, "Tensor-parallel degree");
  cmd.add_option("--pp", opt.pp, "Pipeline-parallel degree");
  cmd.add_option("--dp", opt.dp, "Data-parallel degree (tp x pp x dp = GPUs)");
  cmd.add_option("--ep", opt.ep, "Expert-parallel degree (MoE; divides dp)");
  cmd.add_option("--micro-batch", opt.micro_batch, "Micro-batch size in sequences");
  cmd.add_option("--interleave", opt.interleave, "Virtual pipeline stages per GPU");
  cmd.add_option("--recompute", opt.recompute, "Activation recomputation: none, selective or full");
  cmd.add_option("--sp", opt.sp, "Sequence parallelism: on or off");
  cmd.add_option("--dist-opt", opt.dist_opt, "Distributed optimizer: on or off");
  cmd.add_option("--dp-overlap", opt.dp_overlap,
                 "Overlap the DP gradient reduction with the backward pass: on or off");
  cmd.add_option("--placement", opt.placement,
                 "Rank placement: rail_aligned, tp_across_domains or shuffled")
      ->capture_default_str();
}

const std::vector<std::string> kStrategyOptionNames = {
    "--model",     "--batch", "--seq",      "--stack",      "--dtype",       "--flash-attention",
    "--tp",        "--pp",    "--dp",       "--ep",         "--micro-batch", "--interleave",
    "--recompute", "--sp",    "--dist-opt", "--dp-overlap", "--placement"};

void refuse_ignored(const CLI::App& cmd, const std::vector<std::string>& options,
                    const std::string& why) {
  for (const std::string& opt : options)
    if (cmd.count(opt) > 0) throw InputError(opt, "has no effect " + why);
}

namespace {
std::optional<bool> on_off(const std::optional<std::string>& v, const std::string& option) {
  if (!v) return std::nullopt;
  if (*v == "on" || *v == "true" || *v == "1") return true;
  if (*v == "off" || *v == "false" || *v == "0") return false;
  throw InputError(option, fmt::format("got '{}', expected on or off", *v));
}

std::optional<std::int64_t> positive(const std::optional<std::int64_t>& v,
                                     const std::string& option, std::int64_t max) {
  if (!v) return std::nullopt;
  return check_integer(option, *v, 1, max);
}
}  // namespace

Software resolve_software(const SoftwareOptions& opt) {
  Software sw;
  sw.stack = spec::load_stack(opt.stack, "--stack");
  if (opt.dtype) sw.dtype = spec::parse_dtype(*opt.dtype, "--dtype");
  sw.flash_attention = on_off(opt.flash_attention, "--flash-attention");
  (void)spec::make_training(1, 1, sw.stack, sw.dtype, sw.flash_attention);  // checks them
  return sw;
}

StrategyInputs resolve_strategy_inputs(const StrategyOptions& opt) {
  StrategyInputs in;
  in.model = perf::load_model(opt.model, "--model");
  const Software sw = resolve_software(opt.software);
  in.training = spec::make_training(
      check_integer("--batch", opt.batch.value_or(kDefaultGlobalBatch), 1, std::int64_t{1} << 40),
      check_integer("--seq", opt.seq.value_or(in.model.seq_len), 1, 1 << 24), sw.stack, sw.dtype,
      sw.flash_attention);
  const std::int64_t maxdeg = spec::kMaxGpus;
  in.pins.tp = positive(opt.tp, "--tp", maxdeg);
  in.pins.pp = positive(opt.pp, "--pp", maxdeg);
  in.pins.dp = positive(opt.dp, "--dp", maxdeg);
  in.pins.ep = positive(opt.ep, "--ep", maxdeg);
  in.pins.micro_batch = positive(opt.micro_batch, "--micro-batch", std::int64_t{1} << 40);
  in.pins.interleave = positive(opt.interleave, "--interleave", 1 << 16);
  if (opt.recompute) in.pins.recompute = perf::parse_recompute(*opt.recompute, "--recompute");
  in.pins.sp = on_off(opt.sp, "--sp");
  in.pins.dist_opt = on_off(opt.dist_opt, "--dist-opt");
  in.pins.dp_overlap = on_off(opt.dp_overlap, "--dp-overlap");
  in.placement = perf::parse_placement_kind(opt.placement, "--placement");
  perf::check_pins(in.model, in.training, in.pins);
  return in;
}

perf::Strategy resolve_strategy(const StrategyInputs& in, const spec::Cluster& c) {
  return perf::default_strategy(in.model, in.training, in.pins, c);
}

}  // namespace railsim::cli
