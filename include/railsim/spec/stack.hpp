#pragma once
// A software stack (data/stacks/): which parallelization knobs the training software has, their
// defaults, and the constraints a strategy must respect to run on it. perf::validate and the
// strategy search read it from spec::Training, so the planner never returns a strategy that the
// stack cannot run; docs/model.md has the presets and their sources.
#include <cstdint>
#include <string>
#include <string_view>

#include "railsim/core/json_fwd.hpp"

namespace railsim::spec {

enum class Recompute : std::uint8_t {
  none,       // keep every activation
  selective,  // recompute the attention core (Korthikanti et al. 2022)
  full,       // keep only each layer's input, recompute the whole forward
};
std::string_view to_string(Recompute r);
Recompute parse_recompute(std::string_view s, const std::string& option = "--recompute");

// What the distributed-optimizer knob (--dist-opt) shards over the data-parallel group.
enum class Sharding : std::uint8_t {
  none,       // the stack has no such knob
  optimizer,  // ZeRO-1 (Megatron's distributed optimizer): the fp32 optimizer state
  gradients,  // ZeRO-2: the optimizer state and the gradients, reduce-scattered per micro-batch
  full,       // ZeRO-3 / FSDP: weights, gradients and optimizer state, weights gathered per use
};
std::string_view to_string(Sharding s);

// The knobs a strategy may turn on under this stack.
struct StackKnobs {
  bool pipeline = true;       // pp > 1
  bool interleave = true;     // interleaved 1F1B (virtual stages, v > 1)
  bool uneven_stages = true;  // pp and pp x v need not divide the layers
  bool sequence_parallel = true;
  bool selective_recompute = true;
  bool flash_attention = true;
  Sharding distributed_optimizer = Sharding::optimizer;
  bool dp_overlap = true;  // the DP reduction overlapped with the backward pass
  bool fp8 = true;         // fp8 GEMMs (Transformer Engine)
  // With SP, the TP all-gathers and reduce-scatters split into chunks and pipelined with the
  // GEMMs they feed or follow (Megatron-Core + Transformer Engine `tp_comm_overlap`, userbuffers);
  // applies whenever tp > 1 and SP is on (docs/model.md section 6). Needs sequence_parallel.
  bool tp_comm_overlap = true;
  // Pipeline sends and receives of the 1F1B body overlapped with the chunk computations that do
  // not depend on them (Megatron-Core `overlap_p2p_comm`); interleaved schedules only (v > 1), as
  // Megatron-Core and NeMo support it; fill and flush stay exposed (docs/model.md section 6).
  // Needs interleave.
  bool pp_comm_overlap = true;
  // Context parallelism (cp > 1): the sequence split over cp ranks, K and V all-gathered per
  // layer (Megatron-Core's context_parallel_size, TorchTitan's context parallel; docs/model.md).
  bool context_parallel = true;
};

// What a knob not given is (estimate's strategy; the search tries every knob the stack has).
struct StackDefaults {
  Recompute recompute = Recompute::selective;
  bool sp = true;  // when tp > 1
  bool flash_attention = true;
  bool dist_opt = true;    // when dp > 1
  bool dp_overlap = true;  // when dp > 1
};

// Default-constructed: megatron-core-2024, the default stack (a test checks that it equals the
// preset).
struct Stack {
  std::string name = "megatron-core-2024";
  StackKnobs knobs;
  StackDefaults defaults;
  // Bytes per parameter of the gradient buffer that the DP reduction carries: 4 (fp32, Megatron's
  // main_grad, the default) or 2 (bf16: `grad_reduce_in_fp32 = False`, as NVIDIA's performance
  // recipes set it). JSON "gradient_dtype": "fp32" or "bf16".
  double grad_bytes = 4.0;
  // The attention kernel: the stack's fused one (Transformer Engine, cuDNN; the GPU preset's
  // flash_attention fraction) or FlashAttention-2-class kernels (PyTorch SDPA, Triton: the preset's
  // flash_attention_fa2). JSON "attention_kernel": "fused" (default) or "fa2".
  bool fa2_attention = false;
  std::string source;
};

// Checks every field (present, typed, known) and that no default turns on a knob the stack lacks.
Stack stack_from_json(const Json& j, const std::string& path);
// arg: preset name (data/stacks/) or JSON file; option names the CLI option for errors.
Stack load_stack(const std::string& arg, const std::string& option = "--stack");
inline constexpr std::string_view kDefaultStack = "megatron-core-2024";

}  // namespace railsim::spec
