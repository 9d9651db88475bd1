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
  // Per-op selective checkpointing (TorchTitan's "selective op" policy): keep the outputs of the
  // attention kernel and of every other matmul of a layer, recompute the rest (the element-wise
  // kernels, the other matmuls and the collectives that feed them) in the backward.
  op,
  // Keep each layer's input and the outputs of its query, key and value projections, recompute the
  // rest of the layer that its backward needs (MaxText's "save_qkv_proj" remat policy).
  qkv,
  // Every second layer fully recomputed, the others keeping everything (TorchTitan's "selective
  // layer" policy with its default frequency 2).
  layer,
};
// Every mode, in the order the search visits them.
inline constexpr Recompute kRecomputeModes[] = {Recompute::none,  Recompute::selective,
                                                Recompute::op,    Recompute::qkv,
                                                Recompute::layer, Recompute::full};
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

// The pipeline schedule. one_f_one_b is Megatron's 1F1B, interleaved when interleave > 1
// (Narayanan et al. SC'21); zb_h1 splits the backward into input- and weight-gradient passes
// and fills the bubble with the weight passes at 1F1B's memory (Qi et al., Zero Bubble Pipeline
// Parallelism, ICLR 2024); zb_v cuts the model into 2 p chunks laid out in a V, each GPU holding
// the r-th chunk from each end, with the same split passes at 1F1B's peak memory (the same
// paper, Sec. 6; PyTorch's ScheduleZBVZeroBubble); dualpipe feeds micro-batches from both ends,
// each GPU holding two stages, and overlaps one micro-batch's communication with another's
// computation (DeepSeek-V3 Technical Report, arXiv 2412.19437, Sec. 3.2.1). docs/model.md
// section 6.
enum class PipelineSchedule : std::uint8_t { one_f_one_b, zb_h1, dualpipe, zb_v };
// Every schedule, in the order the search visits them.
inline constexpr PipelineSchedule kPipelineSchedules[] = {
    PipelineSchedule::one_f_one_b, PipelineSchedule::zb_h1, PipelineSchedule::zb_v,
    PipelineSchedule::dualpipe};
std::string_view to_string(PipelineSchedule s);
PipelineSchedule parse_schedule(std::string_view s, const std::string& option = "--pp-schedule");

// The fused attention kernel a stack runs (docs/model.md section 3): its software's own (fused:
// Transformer Engine, cuDNN), FlashAttention-2 (Dao 2023) or FlashAttention-1 (Dao et al. 2022)
// and the kernels of its class.
enum class AttentionKernel : std::uint8_t { fused, fa2, fa1 };
std::string_view to_string(AttentionKernel k);

// The GEMM precision of the transformer layers. fp8: per-tensor scaled FP8 (Transformer Engine's
// delayed or current scaling; DeepSeek-V3's fine-grained blocks in software); mxfp8: OCP MX FP8,
// one 8-bit power-of-two scale per 32 elements (OCP Microscaling Formats v1.0); nvfp4: 4-bit E2M1
// with an FP8 E4M3 scale per 16 elements and a per-tensor FP32 scale (NVIDIA, "Introducing
// NVFP4"). The block-scaled formats need tensor cores that apply the scales (Blackwell).
enum class Dtype : std::uint8_t { bf16, fp8, mxfp8, nvfp4 };
std::string_view to_string(Dtype d);
Dtype parse_dtype(std::string_view s, const std::string& option = "--dtype");
// Any precision below bf16: the GEMM inputs are cast, and the casts kept for the backward.
constexpr bool low_precision(Dtype d) {
  return d != Dtype::bf16;
}
constexpr bool block_scaled(Dtype d) {
  return d == Dtype::mxfp8 || d == Dtype::nvfp4;
}
// Bytes per element of a GEMM input in the precision, its block scales included: bf16 2, fp8 1,
// mxfp8 1 + 1/32, nvfp4 1/2 + 1/16.
constexpr double cast_bytes(Dtype d) {
  switch (d) {
    case Dtype::fp8:
      return 1.0;
    case Dtype::mxfp8:
      return 1.0 + 1.0 / 32.0;
    case Dtype::nvfp4:
      return 0.5 + 1.0 / 16.0;
    case Dtype::bf16:
    default:
      return 2.0;
  }
}

// The knobs a strategy may turn on under this stack.
struct StackKnobs {
  bool pipeline = true;       // pp > 1
  bool interleave = true;     // interleaved 1F1B (virtual stages, v > 1)
  bool uneven_stages = true;  // pp and pp x v need not divide the layers
  // The pipeline split counts the embedding and the loss as a layer each, so that the first
  // model chunk may hold the embedding alone and the last the output layer and loss alone (JSON
  // "embedding_loss_chunks", default false): Megatron-Core's account_for_embedding_in_pipeline_
  // split and account_for_loss_in_pipeline_split (2025), Llama 3's layout (Dubey et al. 2024,
  // Sec. 3.3.2). pp x v may then reach layers + 2.
  bool embedding_loss_chunks = false;
  std::int64_t pipeline_units(std::int64_t layers) const {
    return layers + (embedding_loss_chunks ? 2 : 0);
  }
  // The deepest interleaving of pp stages over `layers` (1 without interleaving), and whether pp
  // x v chunks are a split the stack can lay out (each a layer or more, dividing the units
  // without uneven stages). The search and the strategy checks share these.
  std::int64_t max_interleave(std::int64_t layers, std::int64_t pp) const {
    return interleave ? pipeline_units(layers) / pp : 1;
  }
  bool splits(std::int64_t layers, std::int64_t pp, std::int64_t v) const {
    const std::int64_t units = pipeline_units(layers);
    return pp * v <= units && (uneven_stages || units % (pp * v) == 0);
  }
  bool sequence_parallel = true;
  bool selective_recompute = true;
  // Per-op and per-layer selective checkpointing (Recompute::op, Recompute::layer; JSON
  // "op_recompute", "layer_recompute", default false): PyTorch's selective activation
  // checkpointing as TorchTitan applies it. Keeping the Q, K and V projections alone
  // (Recompute::qkv; JSON "qkv_recompute", default false): MaxText's remat policy of that name.
  bool op_recompute = false;
  bool layer_recompute = false;
  bool qkv_recompute = false;
  bool has(Recompute r) const {
    return (r != Recompute::selective || selective_recompute) &&
           (r != Recompute::op || op_recompute) && (r != Recompute::layer || layer_recompute) &&
           (r != Recompute::qkv || qkv_recompute);
  }
  bool flash_attention = true;
  Sharding distributed_optimizer = Sharding::optimizer;
  bool dp_overlap = true;  // the DP reduction overlapped with the backward pass
  bool fp8 = true;         // fp8 GEMMs (Transformer Engine)
  // Block-scaled GEMMs (JSON "block_scaled": ["mxfp8", "nvfp4"], default none; needs fp8):
  // Transformer Engine's MXFP8 and NVFP4 recipes (2025).
  bool mxfp8 = false;
  bool nvfp4 = false;
  bool has(Dtype d) const {
    return d == Dtype::bf16 || (d == Dtype::fp8 && fp8) || (d == Dtype::mxfp8 && mxfp8) ||
           (d == Dtype::nvfp4 && nvfp4);
  }
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
  // Pipeline schedules besides 1F1B (JSON "pipeline_schedules": ["1f1b", "zb-h1", "zb-v",
  // "dualpipe"], default ["1f1b"]); each needs pipeline.
  bool zb_h1 = false;
  bool zb_v = false;
  bool dualpipe = false;
  // Hybrid sharding (JSON "hsdp": true; default false): with full sharding, the state sharded
  // over groups of DP ranks and replicated across them (PyTorch FSDP's HYBRID_SHARD, MaxText's
  // ici/dcn FSDP axes). Needs distributed_optimizer "full".
  bool hsdp = false;
  // Activation offload to host memory (JSON "activation_offload": true; false when absent, true
  // here as megatron-core-2024 has it): the activations of the first --offload-layers layers
  // copied to the host after their forward and back before their backward (Megatron-Core's
  // cpu_offloading and cpu_offloading_num_layers, Transformer Engine's CPU offload), with
  // Megatron-Core's conditions: no pipeline parallelism, no recomputation, fewer layers than the
  // model has.
  bool activation_offload = true;
  // torch.compile (JSON "compile": true; default false): TorchTitan's training.compile, which
  // fuses the element-wise kernels of each block (--compile).
  bool compile = false;
  // MoE parallel folding (JSON "expert_folding": true; default false): the expert layers run
  // without tensor parallelism (expert tensor-parallel size 1) and their expert-parallel group is
  // carved from TP x CP x DP rather than from DP alone, so that ep may span the TP ranks
  // (Megatron-Core's expert_tensor_parallel_size, Liu et al. 2025, "MoE Parallel Folding", arXiv
  // 2504.14960). Needs sequence_parallel: the folded layers take the SP shard of the tokens.
  bool expert_folding = false;
  // Expert-parallel all-to-all overlap (JSON "ep_overlap": true; default false): Megatron-Core's
  // combined 1F1B (--overlap-moe-expert-parallel-comm) runs one micro-batch's forward merged with
  // another's backward, each one's dispatch and combine under the other's computation; it needs
  // interleaving when the model is pipelined (NVIDIA Megatron-Core documentation, "Combined 1F1B:
  // Expert-Parallel All-to-All Overlap"; Megatron-Bridge's overlap validation).
  bool ep_overlap = false;
  // The output layer (LM head) in MXFP8 under MXFP8 training (JSON "fp8_output_layer": true;
  // default false): Megatron-Core's fp8_output_proj ("run the LM-head output projection with TE
  // ColumnParallelLinear under MXFP8"); without it the head runs in BF16, outside the FP8 autocast.
  bool fp8_output_layer = false;
  // Lets the stack run `s` (1F1B it always runs).
  void allow(PipelineSchedule s) {
    zb_h1 |= s == PipelineSchedule::zb_h1;
    zb_v |= s == PipelineSchedule::zb_v;
    dualpipe |= s == PipelineSchedule::dualpipe;
  }
  bool has(PipelineSchedule s) const {
    return s == PipelineSchedule::one_f_one_b || (s == PipelineSchedule::zb_h1 && zb_h1) ||
           (s == PipelineSchedule::zb_v && zb_v) || (s == PipelineSchedule::dualpipe && dualpipe);
  }
};

// The precisions a stack trains in, "bf16, fp8, ...", for errors.
std::string dtypes_of(const StackKnobs& k);

// What a knob not given is (estimate's strategy; the search tries every knob the stack has).
struct StackDefaults {
  Recompute recompute = Recompute::selective;
  bool sp = true;  // when tp > 1
  bool flash_attention = true;
  bool dist_opt = true;    // when dp > 1
  bool dp_overlap = true;  // when dp > 1
  bool compile = false;    // torch.compile, on a stack with the knob (JSON optional)
  // The MoE all-to-all overlapped by combined 1F1B, on a stack with the knob (JSON optional;
  // --ep-overlap). Not searched: NVIDIA's recipes set it per workload.
  bool ep_overlap = false;
  // The output layer in MXFP8, on a stack with the knob (JSON optional; --fp8-output-layer). Not
  // searched: a precision choice, set per recipe (MLPerf Training v6.0's GB300 DeepSeek-V3 runs).
  bool fp8_output_layer = false;
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
  // flash_attention fraction), FlashAttention-2-class kernels (PyTorch SDPA: the preset's
  // flash_attention_fa2) or FlashAttention-1-class ones (FlashAttention 2022 in CUDA and its
  // Triton port: the preset's flash_attention_fa1). JSON "attention_kernel": "fused" (default),
  // "fa2" or "fa1".
  AttentionKernel attention_kernel = AttentionKernel::fused;
  // With fp8 GEMMs, the MoE dispatch (and the backward's transfer of the activation gradient the
  // same way) sends fp8 activations while the combines stay bf16 (DeepSeek-V3 report, Sec. 3.3.3,
  // low-precision communication): the all-to-all carries 1.5 bytes per element on average.
  // JSON "ep_dispatch_dtype": "bf16" (default) or "fp8".
  bool fp8_dispatch = false;
  // How the MoE all-to-all reaches the experts. Direct (the default): every routed copy of a token
  // goes straight to the GPU of its expert. Hierarchical (DeepSeek-V3 report, Sec. 3.2.2; DeepEP's
  // internode kernels): a token crosses the network once per HB domain it is routed to, to the
  // GPU of its own local rank there (along its rail), and that GPU forwards it over the HB
  // domain to its experts' GPUs; the combine runs the other way. perf::Algorithm::rail_then_domain.
  // JSON "ep_dispatch": "direct" or "hierarchical".
  bool hierarchical_ep_dispatch = false;
  // How context parallelism exchanges K and V. All-gather (the default): the whole sequence's K
  // and V are gathered before the attention and their gradients reduce-scattered after it, on the
  // attention's critical path (Dubey et al. 2024, Sec. 3.3.2, Llama 3's; Megatron-Core's
  // cp_comm_type "all_gather"; TorchTitan's default rotate method). Ring (p2p): each rank passes
  // its K and V block to the next rank of the CP ring while it computes the attention of the block
  // it holds, so a transfer hides behind a block of attention; the backward passes K and V around
  // the ring again with their gradients (ring attention, Liu et al. 2023; Megatron-Core's default
  // cp_comm_type "p2p", Transformer Engine's KV P2P). JSON "cp_comm": "all_gather" (when absent) or
  // "p2p"; true here, as megatron-core-2024 has it.
  bool ring_cp = true;
  // Adam's two moments, bytes each: 4 (fp32, the default) or 2 (bf16, DeepSeek-V3 report, Sec.
  // 3.3.3, low-precision optimizer states; the master weights and the gradients stay fp32). JSON
  // "optimizer_moment_dtype": "fp32" or "bf16".
  double moment_bytes = 4.0;
  // How fully sharded weights outside the layers are gathered (full and gradient sharding): the
  // token embedding and an untied output layer together, as one unit (PyTorch FSDP's root module,
  // which TorchTitan and LLM Foundry wrap around them: the default), or each weight where it is
  // used (XLA's SPMD partitioner gathers every sharded tensor at its use: MaxText). JSON
  // "fsdp_gather": "root_module" or "per_weight".
  bool fsdp_gather_per_weight = false;
  // Cheap tensors recomputed in the backward pass instead of kept (DeepSeek-V3 report, Sec.
  // 3.2.3): the norms' outputs (JSON "recompute_norms": true) and MLA's up-projections' outputs,
  // Q, K and V (JSON "recompute_up_projections": true). Apply with selective or no recompute.
  bool recompute_norms = false;
  bool recompute_up_projections = false;
  // An MoE layer's FFN keeps only its SwiGLU input (in fp8 when the GEMMs run fp8) and recomputes
  // the SwiGLU output in the backward pass (DeepSeek-V3 report, Sec. 3.3.3, low-precision
  // activations). JSON "moe_swiglu_recompute": true.
  bool moe_swiglu_recompute = false;
  // How the block's element-wise work runs: fused kernels (Megatron's and Transformer Engine's,
  // or torch.compile's), or eager PyTorch, one kernel per op of the model code, with RMSNorm and
  // the rotary embedding in fp32 (TorchTitan's Llama block; docs/model.md section 3). Eager
  // applies when compile is off. JSON "elementwise_kernels": "fused" (default) or "eager".
  bool eager_elementwise = false;
  // How fp8 training casts the GEMMs' operands. Fused (the default): Transformer Engine casts
  // inside the norm and activation kernels that produce them, a cost the fitted fp8 GEMM fraction
  // holds (gemm_max_fp8, fitted on such a stack). Separate: torchao's float8 training with
  // tensorwise dynamic scaling (TorchTitan), each operand's absolute maximum and its cast to
  // row- and column-major fp8 run as kernels of their own, their bytes counted in the
  // element-wise time (docs/model.md section 3). JSON "fp8_casts": "fused" or "separate".
  bool fp8_separate_casts = false;
  std::string source;
};

// The EP dispatch by name, as the JSON of stacks and of every output writes it: "direct" or
// "hierarchical"; parse_ep_dispatch reads them (InputError naming `option` otherwise).
std::string_view ep_dispatch_name(const Stack& st);
bool parse_ep_dispatch(std::string_view s, const std::string& option);
// The fp8 casts by name, as stack files and every output's JSON write them: "fused" or
// "separate" (Stack::fp8_separate_casts).
std::string_view fp8_casts_name(const Stack& st);
// Whether training in `dtype` on `st` pays fp8 casts as kernels of their own: a stack with
// separate casts under fp8 (its casts are torchao's tensorwise ones; docs/model.md section 3).
inline bool fp8_casts_apart(const Stack& st, Dtype dtype) {
  return st.fp8_separate_casts && dtype == Dtype::fp8;
}
// The context-parallel exchange by name, as the JSON of stacks and of every output writes it:
// "all_gather" or "p2p"; parse_cp_comm reads them (InputError naming `option` otherwise).
std::string_view cp_comm_name(const Stack& st);
bool parse_cp_comm(std::string_view s, const std::string& option);

// Checks every field (present, typed, known) and that no default turns on a knob the stack lacks.
Stack stack_from_json(const Json& j, const std::string& path);
// arg: preset name (data/stacks/) or JSON file; option names the CLI option for errors.
Stack load_stack(const std::string& arg, const std::string& option = "--stack");
inline constexpr std::string_view kDefaultStack = "megatron-core-2024";

}  // namespace railsim::spec
