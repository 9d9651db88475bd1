#include "railsim/spec/stack.hpp"

#include <fmt/format.h>

#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/preset.hpp"

namespace railsim::spec {

namespace {
constexpr EnumNames<Recompute, 6> kRecomputeNames{{{{Recompute::none, "none"},
                                                    {Recompute::selective, "selective"},
                                                    {Recompute::full, "full"},
                                                    {Recompute::op, "op"},
                                                    {Recompute::qkv, "qkv"},
                                                    {Recompute::layer, "layer"}}}};
constexpr EnumNames<Sharding, 4> kShardingNames{{{{Sharding::none, "none"},
                                                  {Sharding::optimizer, "optimizer"},
                                                  {Sharding::gradients, "gradients"},
                                                  {Sharding::full, "full"}}}};
constexpr EnumNames<PipelineSchedule, 4> kScheduleNames{
    {{{PipelineSchedule::one_f_one_b, "1f1b"},
      {PipelineSchedule::zb_h1, "zb-h1"},
      {PipelineSchedule::zb_v, "zb-v"},
      {PipelineSchedule::dualpipe, "dualpipe"}}}};

// An optional field of two spellings: false for `off` (the default), true for `on`; anything
// else is an error naming the field and both values.
bool either(JsonObject& o, std::string_view key, std::string_view what, std::string_view off,
            std::string_view on) {
  const std::string v = o.string_or(key, std::string(off));
  if (v != off && v != on)
    throw InputError(o.field(key),
                     fmt::format("{} is not a {}; expected {} or {}", v, what, off, on));
  return v == on;
}

// A required boolean (a stack file must say what it has; a missing knob is an error).
bool flag(JsonObject& o, std::string_view key) {
  if (!o.has(key)) throw InputError(o.field(key), "missing required field (true or false)");
  return o.boolean_or(key, false);
}
}  // namespace

std::string_view to_string(Recompute r) {
  return kRecomputeNames.name(r);
}

Recompute parse_recompute(std::string_view s, const std::string& option) {
  return kRecomputeNames.parse(s, option, "recompute mode");
}

std::string_view to_string(Sharding s) {
  return kShardingNames.name(s);
}

std::string_view to_string(PipelineSchedule s) {
  return kScheduleNames.name(s);
}

PipelineSchedule parse_schedule(std::string_view s, const std::string& option) {
  return kScheduleNames.parse(s, option, "pipeline schedule");
}

namespace {
constexpr EnumNames<AttentionKernel, 3> kAttentionKernelNames{{{{AttentionKernel::fused, "fused"},
                                                                {AttentionKernel::fa2, "fa2"},
                                                                {AttentionKernel::fa1, "fa1"}}}};
constexpr EnumNames<Dtype, 4> kDtypeNames{{{{Dtype::bf16, "bf16"},
                                            {Dtype::fp8, "fp8"},
                                            {Dtype::mxfp8, "mxfp8"},
                                            {Dtype::nvfp4, "nvfp4"}}}};
}  // namespace

std::string_view to_string(Dtype d) {
  return kDtypeNames.name(d);
}

std::string_view to_string(AttentionKernel k) {
  return kAttentionKernelNames.name(k);
}

Dtype parse_dtype(std::string_view s, const std::string& option) {
  return kDtypeNames.parse(s, option, "dtype");
}

std::string dtypes_of(const StackKnobs& k) {
  std::string out;
  for (const auto& [d, name] : kDtypeNames.entries)
    if (k.has(d)) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

Stack stack_from_json(const Json& j, const std::string& path) {
  JsonObject o(j, path);
  Stack st;
  st.name = o.string("name");
  if (st.name.empty()) throw InputError(o.field("name"), "empty; give the stack a name");
  {
    JsonObject k = o.object("knobs");
    st.knobs.pipeline = flag(k, "pipeline");
    st.knobs.interleave = flag(k, "interleave");
    st.knobs.uneven_stages = flag(k, "uneven_stages");
    st.knobs.sequence_parallel = flag(k, "sequence_parallel");
    st.knobs.selective_recompute = flag(k, "selective_recompute");
    st.knobs.op_recompute = k.boolean_or("op_recompute", false);
    st.knobs.layer_recompute = k.boolean_or("layer_recompute", false);
    st.knobs.qkv_recompute = k.boolean_or("qkv_recompute", false);
    st.knobs.flash_attention = flag(k, "flash_attention");
    st.knobs.distributed_optimizer = kShardingNames.parse(
        k.string("distributed_optimizer"), k.field("distributed_optimizer"), "sharding");
    st.knobs.dp_overlap = flag(k, "dp_overlap");
    st.knobs.fp8 = flag(k, "fp8");
    st.knobs.tp_comm_overlap = flag(k, "tp_comm_overlap");
    st.knobs.pp_comm_overlap = flag(k, "pp_comm_overlap");
    st.knobs.context_parallel = flag(k, "context_parallel");
    if (k.has("pipeline_schedules")) {
      const std::string field = k.field("pipeline_schedules");
      const Json& list = k.raw("pipeline_schedules");
      if (!list.is_array() || list.empty())
        throw InputError(
            field, "expected a non-empty list of schedule names (" + kScheduleNames.list() + ")");
      bool one_f_one_b = false;
      for (const Json& e : list) {
        if (!e.is_string())
          throw InputError(field, "expected schedule names (strings): " + kScheduleNames.list());
        const PipelineSchedule sch = parse_schedule(e.get<std::string>(), field);
        one_f_one_b |= sch == PipelineSchedule::one_f_one_b;
        st.knobs.allow(sch);
      }
      if (!one_f_one_b)
        throw InputError(field, "must include 1f1b (every pipelined stack runs it)");
      if ((st.knobs.zb_h1 || st.knobs.zb_v || st.knobs.dualpipe) && !st.knobs.pipeline)
        throw InputError(field, "zb-h1, zb-v and dualpipe need pipeline: true");
    }
    if (k.has("block_scaled")) {
      const std::string field = k.field("block_scaled");
      const Json& list = k.raw("block_scaled");
      if (!list.is_array())
        throw InputError(field, "expected a list of block-scaled precisions (mxfp8, nvfp4)");
      for (const Json& e : list) {
        if (!e.is_string()) throw InputError(field, "expected precision names: mxfp8, nvfp4");
        const Dtype d = parse_dtype(e.get<std::string>(), field);
        if (!block_scaled(d)) throw InputError(field, "lists mxfp8 and nvfp4 only");
        st.knobs.mxfp8 |= d == Dtype::mxfp8;
        st.knobs.nvfp4 |= d == Dtype::nvfp4;
      }
      if ((st.knobs.mxfp8 || st.knobs.nvfp4) && !st.knobs.fp8)
        throw InputError(field, "needs fp8: true (the block-scaled recipes extend fp8's)");
    }
    st.knobs.embedding_loss_chunks = k.boolean_or("embedding_loss_chunks", false);
    if (st.knobs.embedding_loss_chunks && !st.knobs.interleave)
      throw InputError(k.field("embedding_loss_chunks"),
                       "true needs interleave: true (the embedding and loss chunks are "
                       "virtual stages)");
    st.knobs.hsdp = k.boolean_or("hsdp", false);
    st.knobs.compile = k.boolean_or("compile", false);
    st.knobs.expert_folding = k.boolean_or("expert_folding", false);
    if (st.knobs.expert_folding && !st.knobs.sequence_parallel)
      throw InputError(k.field("expert_folding"),
                       "true needs sequence_parallel: true (folded expert layers take the "
                       "sequence-parallel shard of the tokens)");
    st.knobs.activation_offload = k.boolean_or("activation_offload", false);
    st.knobs.ep_overlap = k.boolean_or("ep_overlap", false);
    st.knobs.fp8_output_layer = k.boolean_or("fp8_output_layer", false);
    if (st.knobs.fp8_output_layer && !st.knobs.fp8)
      throw InputError(k.field("fp8_output_layer"), "true needs fp8: true");
    if (st.knobs.hsdp && st.knobs.distributed_optimizer != Sharding::full)
      throw InputError(k.field("hsdp"),
                       "true needs distributed_optimizer: \"full\" (hybrid "
                       "sharding shards what full sharding does)");
    if (st.knobs.interleave && !st.knobs.pipeline)
      throw InputError(k.field("interleave"),
                       "true needs pipeline: true (interleaving splits "
                       "pipeline stages)");
    if (st.knobs.tp_comm_overlap && !st.knobs.sequence_parallel)
      throw InputError(k.field("tp_comm_overlap"),
                       "true needs sequence_parallel: true (the overlapped all-gathers and "
                       "reduce-scatters are those of sequence parallelism)");
    if (st.knobs.pp_comm_overlap && !st.knobs.interleave)
      throw InputError(k.field("pp_comm_overlap"),
                       "true needs interleave: true (the sends overlap with other chunks' "
                       "computations only in interleaved pipelines)");
    k.finish();
  }
  {
    JsonObject d = o.object("defaults");
    st.defaults.recompute = parse_recompute(d.string("recompute"), d.field("recompute"));
    st.defaults.sp = flag(d, "sp");
    st.defaults.flash_attention = flag(d, "flash_attention");
    st.defaults.dist_opt = flag(d, "dist_opt");
    st.defaults.dp_overlap = flag(d, "dp_overlap");
    st.defaults.compile = d.boolean_or("compile", false);
    st.defaults.ep_overlap = d.boolean_or("ep_overlap", false);
    st.defaults.fp8_output_layer = d.boolean_or("fp8_output_layer", false);
    auto needs = [&](bool on, bool has, std::string_view key, std::string_view knob) {
      if (on && !has)
        throw InputError(d.field(key), fmt::format("a default the stack cannot run: knobs.{} is "
                                                   "false",
                                                   knob));
    };
    needs(st.defaults.recompute == Recompute::selective, st.knobs.selective_recompute, "recompute",
          "selective_recompute");
    needs(st.defaults.recompute == Recompute::op, st.knobs.op_recompute, "recompute",
          "op_recompute");
    needs(st.defaults.recompute == Recompute::layer, st.knobs.layer_recompute, "recompute",
          "layer_recompute");
    needs(st.defaults.recompute == Recompute::qkv, st.knobs.qkv_recompute, "recompute",
          "qkv_recompute");
    needs(st.defaults.sp, st.knobs.sequence_parallel, "sp", "sequence_parallel");
    needs(st.defaults.flash_attention, st.knobs.flash_attention, "flash_attention",
          "flash_attention");
    needs(st.defaults.dist_opt, st.knobs.distributed_optimizer != Sharding::none, "dist_opt",
          "distributed_optimizer (none)");
    needs(st.defaults.dp_overlap, st.knobs.dp_overlap, "dp_overlap", "dp_overlap");
    needs(st.defaults.compile, st.knobs.compile, "compile", "compile");
    needs(st.defaults.ep_overlap, st.knobs.ep_overlap, "ep_overlap", "ep_overlap");
    needs(st.defaults.fp8_output_layer, st.knobs.fp8_output_layer, "fp8_output_layer",
          "fp8_output_layer");
    d.finish();
  }
  st.grad_bytes = either(o, "gradient_dtype", "gradient dtype", "fp32", "bf16") ? 2.0 : 4.0;
  st.attention_kernel = kAttentionKernelNames.parse(
      o.string_or("attention_kernel", "fused"), o.field("attention_kernel"), "attention kernel");
  st.fp8_dispatch = either(o, "ep_dispatch_dtype", "dispatch dtype", "bf16", "fp8");
  if (st.fp8_dispatch && !st.knobs.fp8)
    throw InputError(o.field("ep_dispatch_dtype"), "fp8 needs knobs.fp8: true");
  st.hierarchical_ep_dispatch = either(o, "ep_dispatch", "EP dispatch", "direct", "hierarchical");
  st.ring_cp = either(o, "cp_comm", "CP exchange", "all_gather", "p2p");
  if (st.ring_cp && !st.knobs.context_parallel)
    throw InputError(o.field("cp_comm"), "p2p needs knobs.context_parallel: true");
  st.moment_bytes =
      either(o, "optimizer_moment_dtype", "optimizer moment dtype", "fp32", "bf16") ? 2.0 : 4.0;
  st.fsdp_gather_per_weight =
      either(o, "fsdp_gather", "way to gather sharded weights", "root_module", "per_weight");
  st.recompute_norms = o.boolean_or("recompute_norms", false);
  st.recompute_up_projections = o.boolean_or("recompute_up_projections", false);
  st.moe_swiglu_recompute = o.boolean_or("moe_swiglu_recompute", false);
  st.eager_elementwise = either(o, "elementwise_kernels", "element-wise kernels", "fused", "eager");
  st.fp8_separate_casts = either(o, "fp8_casts", "way to cast fp8", "fused", "separate");
  if (st.fp8_separate_casts && !st.knobs.fp8)
    throw InputError(o.field("fp8_casts"), "separate needs knobs.fp8: true");
  st.source = o.source();
  o.finish();
  return st;
}

Stack load_stack(const std::string& arg, const std::string& option) {
  return stack_from_json(load_preset_or_file("stacks", arg, option), "stack");
}

std::string compile_note(const Stack& st, bool compile) {
  if (!st.knobs.compile && !st.eager_elementwise) return "";
  if (compile) return ", torch.compile on";
  return st.eager_elementwise ? ", torch.compile off (eager element-wise kernels)"
                              : ", torch.compile off";
}

namespace {
// The flash attention kernels of a stack that does not run its software's fused ones.
std::string_view attention_kernel_note(const Stack& st) {
  switch (st.attention_kernel) {
    case AttentionKernel::fa2:
      return ", FlashAttention-2-class attention kernels";
    case AttentionKernel::fa1:
      return ", FlashAttention-1-class attention kernels";
    case AttentionKernel::fused:
      break;
  }
  return "";
}
}  // namespace

std::string software_notes(const Stack& st, bool compile, Dtype dtype) {
  return std::string(attention_kernel_note(st)) + compile_note(st, compile) +
         (fp8_casts_apart(st, dtype) ? ", fp8 casts in kernels of their own (torchao)" : "") +
         (st.hierarchical_ep_dispatch ? ", hierarchical EP dispatch (rail, then HB domain)" : "") +
         (st.defaults.ep_overlap ? ", EP all-to-all overlapped (combined 1F1B)" : "") +
         (st.defaults.fp8_output_layer ? ", output layer in MXFP8" : "");
}

std::string_view fp8_casts_name(const Stack& st) {
  return st.fp8_separate_casts ? "separate" : "fused";
}

std::string_view ep_dispatch_name(const Stack& st) {
  return st.hierarchical_ep_dispatch ? "hierarchical" : "direct";
}

bool parse_ep_dispatch(std::string_view s, const std::string& option) {
  if (s != "direct" && s != "hierarchical")
    throw InputError(option,
                     fmt::format("got '{}', expected direct or hierarchical", printable(s)));
  return s == "hierarchical";
}

std::string cp_exchange_note(const Stack& st) {
  return st.ring_cp ? ", CP ring attention (K/V passed around the ring under the attention)"
                    : ", CP K/V all-gathered before the attention";
}

std::string cp_note(const Stack& st, std::int64_t cp) {
  return cp > 1 ? cp_exchange_note(st) : "";
}

std::string cp_short_note(const Stack& st, std::int64_t cp) {
  if (cp <= 1) return "";
  return st.ring_cp ? ", CP ring attention" : ", CP K/V all-gather";
}

std::string_view cp_comm_name(const Stack& st) {
  return st.ring_cp ? "p2p" : "all_gather";
}

bool parse_cp_comm(std::string_view s, const std::string& option) {
  if (s != "all_gather" && s != "p2p")
    throw InputError(option, fmt::format("got '{}', expected all_gather or p2p", printable(s)));
  return s == "p2p";
}

Training make_training(std::int64_t global_batch, std::int64_t seq_len, const Stack& st,
                       std::optional<Dtype> dtype, std::optional<bool> flash_attention,
                       std::optional<bool> compile) {
  Training tr;
  tr.global_batch = global_batch;
  tr.seq_len = seq_len;
  // The tokens of one iteration must be a number: --batch up to 2^40 and --seq up to 2^24 can pass
  // 2^63 together.
  (void)checked_mul("--batch", global_batch, seq_len, "global batch x sequence length");
  tr.stack = st;
  tr.dtype = dtype.value_or(Dtype::bf16);
  if (!st.knobs.has(tr.dtype))
    throw InputError("--dtype", fmt::format("stack {} has no {} training (it has {}; or a stack "
                                            "with it: see `railsim presets stacks`)",
                                            st.name, to_string(tr.dtype), dtypes_of(st.knobs)));
  tr.flash_attention = flash_attention.value_or(st.defaults.flash_attention);
  if (tr.flash_attention && !st.knobs.flash_attention)
    throw InputError("--flash-attention",
                     fmt::format("stack {} has no flash attention (use off, or a stack with it: "
                                 "see `railsim presets stacks`)",
                                 st.name));
  tr.compile = compile.value_or(st.defaults.compile);
  if (tr.compile && !st.knobs.compile)
    throw InputError("--compile", fmt::format("stack {} has no torch.compile (use off, or a stack "
                                              "with it: see `railsim presets stacks`)",
                                              st.name));
  if (st.defaults.ep_overlap && !st.knobs.ep_overlap)
    throw InputError("--ep-overlap",
                     fmt::format("stack {} has no combined 1F1B overlap of the MoE all-to-all (use "
                                 "off, or a stack with it: see `railsim presets stacks`)",
                                 st.name));
  if (st.defaults.fp8_output_layer && !st.knobs.fp8_output_layer)
    throw InputError("--fp8-output-layer",
                     fmt::format("stack {} runs the output layer in BF16 only (use off, or a "
                                 "stack with it: see `railsim presets stacks`)",
                                 st.name));
  if (st.defaults.fp8_output_layer && tr.dtype != Dtype::mxfp8)
    throw InputError("--fp8-output-layer",
                     fmt::format("the output layer runs in MXFP8 only under MXFP8 training "
                                 "(Megatron-Core's fp8_output_proj): got --dtype {}",
                                 to_string(tr.dtype)));
  return tr;
}

}  // namespace railsim::spec
