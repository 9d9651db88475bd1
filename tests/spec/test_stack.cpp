// Software-stack profiles (data/stacks/): every preset loads, the default-constructed Stack is
// megatron-core-2024, each preset has the knobs its source says, and a malformed file is refused
// naming the field.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "../common/error_of.hpp"
#include "railsim/core/json.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/spec/stack.hpp"

using namespace railsim;
using test::field_of;

namespace {
Json core_json() {
  return parse_json(
      [] {
        for (const auto& p : spec::embedded_presets())
          if (p.key == "stacks/megatron-core-2024") return std::string(p.json);
        return std::string("{}");
      }(),
      "test");
}

// The field the error of megatron-core-2024's JSON, edited, names ("(no error)" if it loads).
std::string field_with(const std::function<void(Json&)>& edit) {
  Json j = core_json();
  edit(j);
  return field_of([&] { spec::stack_from_json(j, "stack"); });
}
}  // namespace

TEST(Stack, PresetsAreTheElevenProfiles) {
  EXPECT_EQ(spec::preset_names("stacks"),
            (std::vector<std::string>{
                "deepseek-v3-2024", "fsdp-2024", "llm-foundry-2023", "maxtext-2024",
                "megatron-core-2024", "megatron-deepspeed-2022", "megatron-lm-2021",
                "megatron-lm-2022", "meta-llama3-2024", "nemo-perf-2025", "torchtitan-2024"}));
  // The PyTorch stacks run FlashAttention-2-class kernels; the others their fused ones.
  for (const auto& n : spec::preset_names("stacks"))
    EXPECT_EQ(spec::load_stack(n).attention_kernel,
              n == "torchtitan-2024"    ? spec::AttentionKernel::fa2
              : n == "llm-foundry-2023" ? spec::AttentionKernel::fa1
                                        : spec::AttentionKernel::fused)
        << n;
  // Only NVIDIA's performance recipes reduce gradients in bf16.
  for (const auto& n : spec::preset_names("stacks"))
    EXPECT_EQ(spec::load_stack(n).grad_bytes, n == "nemo-perf-2025" ? 2.0 : 4.0) << n;
  for (const auto& n : spec::preset_names("stacks")) {
    const spec::Stack s = spec::load_stack(n);
    EXPECT_EQ(s.name, n);
    EXPECT_FALSE(s.source.empty()) << n;
  }
}

TEST(Stack, DefaultConstructedIsMegatronCore2024) {
  const spec::Stack d;
  const spec::Stack p = spec::load_stack(std::string(spec::kDefaultStack));
  EXPECT_EQ(d.name, p.name);
  using K = spec::StackKnobs;
  for (auto f : {&K::pipeline, &K::interleave, &K::uneven_stages, &K::sequence_parallel,
                 &K::selective_recompute, &K::flash_attention, &K::dp_overlap, &K::fp8,
                 &K::context_parallel})
    EXPECT_EQ(d.knobs.*f, p.knobs.*f);
  EXPECT_EQ(d.knobs.distributed_optimizer, p.knobs.distributed_optimizer);
  using D = spec::StackDefaults;
  for (auto f : {&D::sp, &D::flash_attention, &D::dist_opt, &D::dp_overlap})
    EXPECT_EQ(d.defaults.*f, p.defaults.*f);
  EXPECT_EQ(d.defaults.recompute, p.defaults.recompute);
  EXPECT_EQ(d.ring_cp, p.ring_cp);
  EXPECT_EQ(d.knobs.activation_offload, p.knobs.activation_offload);
  EXPECT_TRUE(d.knobs.activation_offload);  // Megatron-Core's cpu_offloading
  EXPECT_TRUE(d.ring_cp);                   // Megatron-Core's default cp_comm_type, p2p
}

TEST(Stack, EachPresetHasTheKnobsOfItsSource) {
  const spec::Stack y21 = spec::load_stack("megatron-lm-2021");
  EXPECT_FALSE(y21.knobs.sequence_parallel);
  EXPECT_FALSE(y21.knobs.selective_recompute);
  EXPECT_FALSE(y21.knobs.flash_attention);
  EXPECT_FALSE(y21.knobs.uneven_stages);
  EXPECT_TRUE(y21.knobs.interleave);
  EXPECT_EQ(y21.knobs.distributed_optimizer, spec::Sharding::none);
  EXPECT_EQ(y21.defaults.recompute, spec::Recompute::full);
  const spec::Stack y22 = spec::load_stack("megatron-lm-2022");
  EXPECT_TRUE(y22.knobs.sequence_parallel);
  EXPECT_TRUE(y22.knobs.selective_recompute);
  EXPECT_FALSE(y22.knobs.flash_attention);
  EXPECT_FALSE(y22.knobs.fp8);
  const spec::Stack core = spec::load_stack("Megatron-Core-2024");  // case-insensitive
  EXPECT_TRUE(core.knobs.flash_attention && core.defaults.flash_attention);
  EXPECT_EQ(core.knobs.distributed_optimizer, spec::Sharding::optimizer);
  EXPECT_TRUE(core.knobs.fp8 && core.knobs.uneven_stages);
  // TP communication overlap (Megatron-Core + Transformer Engine userbuffers): only the 2024 stack.
  EXPECT_TRUE(core.knobs.tp_comm_overlap);
  EXPECT_FALSE(y21.knobs.tp_comm_overlap);
  EXPECT_FALSE(y22.knobs.tp_comm_overlap);
  // Pipeline sends overlapped (Megatron-Core overlap_p2p_comm): only the 2024 Megatron stack.
  EXPECT_TRUE(core.knobs.pp_comm_overlap);
  EXPECT_FALSE(y21.knobs.pp_comm_overlap);
  EXPECT_FALSE(y22.knobs.pp_comm_overlap);
  // Context parallelism: Megatron-Core (context_parallel_size) and TorchTitan (FSDP's 4D).
  EXPECT_TRUE(core.knobs.context_parallel);
  EXPECT_FALSE(y21.knobs.context_parallel);
  EXPECT_FALSE(y22.knobs.context_parallel);
  const spec::Stack fsdp = spec::load_stack("fsdp-2024");
  EXPECT_TRUE(fsdp.knobs.context_parallel);
  EXPECT_EQ(fsdp.knobs.distributed_optimizer, spec::Sharding::full);
  EXPECT_FALSE(fsdp.knobs.pipeline);
  EXPECT_FALSE(fsdp.knobs.interleave);
  EXPECT_TRUE(fsdp.defaults.flash_attention);
  // fp8 casts as kernels of their own: torchao's (TorchTitan); Transformer Engine's stacks fuse.
  EXPECT_TRUE(spec::load_stack("torchtitan-2024").fp8_separate_casts);
  for (const char* fused : {"megatron-core-2024", "nemo-perf-2025", "fsdp-2024", "maxtext-2024"})
    EXPECT_FALSE(spec::load_stack(fused).fp8_separate_casts) << fused;
}

TEST(Stack, MalformedFilesNameTheField) {
  const auto with = field_with;
  EXPECT_EQ(with([](Json&) {}), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["knobs"].erase("fp8"); }), "stack.knobs.fp8");
  EXPECT_EQ(with([](Json& j) { j["knobs"].erase("tp_comm_overlap"); }),
            "stack.knobs.tp_comm_overlap");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["tp_comm_overlap"] = "on"; }),
            "stack.knobs.tp_comm_overlap");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["tp_comm_overlap"] = 1; }),
            "stack.knobs.tp_comm_overlap");
  EXPECT_EQ(with([](Json& j) { j["knobs"].erase("pp_comm_overlap"); }),
            "stack.knobs.pp_comm_overlap");
  EXPECT_EQ(with([](Json& j) { j["knobs"].erase("context_parallel"); }),
            "stack.knobs.context_parallel");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["context_parallel"] = "yes"; }),
            "stack.knobs.context_parallel");
  EXPECT_EQ(with([](Json& j) { j["gradient_dtype"] = "fp16"; }), "stack.gradient_dtype");
  EXPECT_EQ(with([](Json& j) { j["gradient_dtype"] = 2; }), "stack.gradient_dtype");
  EXPECT_EQ(with([](Json& j) { j["gradient_dtype"] = "bf16"; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["attention_kernel"] = "fa3"; }), "stack.attention_kernel");
  EXPECT_EQ(with([](Json& j) { j["attention_kernel"] = "fa2"; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["attention_kernel"] = "fa1"; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["pp_comm_overlap"] = "on"; }),
            "stack.knobs.pp_comm_overlap");
  // The sends overlap only in interleaved pipelines: the knob needs interleave.
  EXPECT_EQ(with([](Json& j) { j["knobs"]["interleave"] = false; }), "stack.knobs.pp_comm_overlap");
  // The overlapped collectives are sequence parallelism's: the knob needs it.
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["sequence_parallel"] = false;
              j["defaults"]["sp"] = false;
            }),
            "stack.knobs.tp_comm_overlap");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["sequence_parallel"] = "yes"; }),
            "stack.knobs.sequence_parallel");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["distributed_optimizer"] = "zero2"; }),
            "stack.knobs.distributed_optimizer");
  // An unknown knob (context_parallel is one since the cp degree; a misspelling is not).
  EXPECT_EQ(with([](Json& j) { j["knobs"]["context_parallelism"] = true; }),
            "stack.knobs.context_parallelism");
  EXPECT_EQ(with([](Json& j) { j.erase("defaults"); }), "stack.defaults");
  EXPECT_EQ(with([](Json& j) { j["defaults"]["recompute"] = 1; }), "stack.defaults.recompute");
  EXPECT_EQ(with([](Json& j) { j["name"] = 3; }), "stack.name");
  // A default the stack cannot run.
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["sequence_parallel"] = false;
              j["knobs"]["tp_comm_overlap"] = false;
            }),
            "stack.defaults.sp");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["selective_recompute"] = false; }),
            "stack.defaults.recompute");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["pipeline"] = false; }), "stack.knobs.interleave");
  // Per-op and per-layer checkpointing: optional booleans, off unless said.
  EXPECT_EQ(with([](Json& j) { j["knobs"]["op_recompute"] = "yes"; }), "stack.knobs.op_recompute");
  EXPECT_EQ(with([](Json& j) { j["defaults"]["recompute"] = "op"; }), "stack.defaults.recompute");
  EXPECT_EQ(with([](Json& j) { j["defaults"]["recompute"] = "layer"; }),
            "stack.defaults.recompute");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["layer_recompute"] = true;
              j["defaults"]["recompute"] = "layer";
            }),
            "(no error)");
  // Keeping the Q, K and V projections alone (MaxText's save_qkv_proj) likewise.
  EXPECT_EQ(with([](Json& j) { j["knobs"]["qkv_recompute"] = 1; }), "stack.knobs.qkv_recompute");
  EXPECT_EQ(with([](Json& j) { j["defaults"]["recompute"] = "qkv"; }), "stack.defaults.recompute");
  EXPECT_FALSE(spec::Stack{}.knobs.op_recompute || spec::Stack{}.knobs.layer_recompute ||
               spec::Stack{}.knobs.qkv_recompute);
  const spec::Stack titan = spec::load_stack("torchtitan-2024");
  EXPECT_TRUE(titan.knobs.op_recompute && titan.knobs.layer_recompute);
  EXPECT_FALSE(titan.knobs.qkv_recompute);
  EXPECT_TRUE(spec::load_stack("maxtext-2024").knobs.qkv_recompute);
  // How sharded weights outside the layers are gathered: two spellings, the root module's unit
  // by default, each weight at its use under XLA (MaxText).
  EXPECT_EQ(with([](Json& j) { j["fsdp_gather"] = "per_tensor"; }), "stack.fsdp_gather");
  EXPECT_FALSE(spec::Stack{}.fsdp_gather_per_weight || titan.fsdp_gather_per_weight);
  EXPECT_TRUE(spec::load_stack("maxtext-2024").fsdp_gather_per_weight);
  EXPECT_EQ(field_of([] { spec::load_stack("megatron-9000"); }), "--stack");
  // Pipeline schedules: a list of known names that includes 1f1b, on a pipelined stack.
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["pipeline_schedules"] = {"1f1b", "dualpipe"};
            }),
            "(no error)");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["pipeline_schedules"] = "dualpipe"; }),
            "stack.knobs.pipeline_schedules");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["pipeline_schedules"] = Json::array(); }),
            "stack.knobs.pipeline_schedules");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["pipeline_schedules"] = {"1f1b", "zb-v"};
            }),
            "(no error)");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["pipeline_schedules"] = {"1f1b", "zb-x"};
            }),
            "stack.knobs.pipeline_schedules");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["pipeline_schedules"] = {"1f1b", 2};
            }),
            "stack.knobs.pipeline_schedules");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["pipeline_schedules"] = {"zb-h1"}; }),
            "stack.knobs.pipeline_schedules");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["pipeline"] = false;
              j["knobs"]["interleave"] = false;
              j["knobs"]["pp_comm_overlap"] = false;
              j["knobs"]["pipeline_schedules"] = {"1f1b", "zb-h1"};
            }),
            "stack.knobs.pipeline_schedules");
  // The MoE dispatch dtype: bf16 or fp8, fp8 only on a stack with fp8 GEMMs.
  EXPECT_EQ(with([](Json& j) { j["ep_dispatch_dtype"] = "fp8"; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["ep_dispatch_dtype"] = "fp4"; }), "stack.ep_dispatch_dtype");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["fp8"] = false;
              j["ep_dispatch_dtype"] = "fp8";
            }),
            "stack.ep_dispatch_dtype");
  // The fp8 casts: fused or separate, separate only on a stack with fp8 GEMMs.
  EXPECT_EQ(with([](Json& j) { j["fp8_casts"] = "separate"; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["fp8_casts"] = "delayed"; }), "stack.fp8_casts");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["fp8"] = false;
              j["fp8_casts"] = "separate";
            }),
            "stack.fp8_casts");
  // The embedding and loss chunks: a boolean, on an interleaving stack.
  EXPECT_EQ(with([](Json& j) { j["knobs"]["embedding_loss_chunks"] = true; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["embedding_loss_chunks"] = "yes"; }),
            "stack.knobs.embedding_loss_chunks");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["interleave"] = false;
              j["knobs"]["pp_comm_overlap"] = false;
              j["knobs"]["embedding_loss_chunks"] = true;
            }),
            "stack.knobs.embedding_loss_chunks");
  // Block-scaled precisions: a list of mxfp8 and nvfp4, on a stack with fp8.
  EXPECT_EQ(with([](Json& j) { j["knobs"]["block_scaled"] = {"mxfp8", "nvfp4"}; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["block_scaled"] = "nvfp4"; }),
            "stack.knobs.block_scaled");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["block_scaled"] = {"fp4"}; }),
            "stack.knobs.block_scaled");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["block_scaled"] = {"fp8"}; }),
            "stack.knobs.block_scaled");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["block_scaled"] = {1}; }), "stack.knobs.block_scaled");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["fp8"] = false;
              j["knobs"]["block_scaled"] = {"mxfp8"};
            }),
            "stack.knobs.block_scaled");
  // The optimizer moments' dtype and the cheap recomputations (DeepSeek-V3's).
  EXPECT_EQ(with([](Json& j) { j["optimizer_moment_dtype"] = "bf16"; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["optimizer_moment_dtype"] = "fp8"; }),
            "stack.optimizer_moment_dtype");
  EXPECT_EQ(with([](Json& j) { j["optimizer_moment_dtype"] = 2; }), "stack.optimizer_moment_dtype");
  EXPECT_EQ(with([](Json& j) { j["recompute_norms"] = "yes"; }), "stack.recompute_norms");
  EXPECT_EQ(with([](Json& j) { j["recompute_up_projections"] = 1; }),
            "stack.recompute_up_projections");
  EXPECT_EQ(with([](Json& j) { j["moe_swiglu_recompute"] = nullptr; }),
            "stack.moe_swiglu_recompute");
  EXPECT_EQ(with([](Json& j) { j["moe_swiglu_recompute"] = true; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["elementwise_kernels"] = "compiled"; }),
            "stack.elementwise_kernels");
  EXPECT_EQ(with([](Json& j) { j["elementwise_kernels"] = "eager"; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["ep_dispatch"] = "deepep"; }), "stack.ep_dispatch");
  EXPECT_EQ(with([](Json& j) { j["ep_dispatch"] = true; }), "stack.ep_dispatch");
  EXPECT_EQ(with([](Json& j) { j["ep_dispatch"] = "hierarchical"; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["ep_overlap"] = "yes"; }), "stack.knobs.ep_overlap");
  EXPECT_EQ(with([](Json& j) { j["defaults"]["ep_overlap"] = true; }),
            "stack.defaults.ep_overlap");  // a default the stack cannot run
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["ep_overlap"] = true;
              j["defaults"]["ep_overlap"] = true;
            }),
            "(no error)");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["activation_offload"] = "yes"; }),
            "stack.knobs.activation_offload");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["activation_offload"] = false; }), "(no error)");
  EXPECT_FALSE(spec::load_stack("torchtitan-2024").knobs.activation_offload);
  EXPECT_TRUE(spec::load_stack("nemo-perf-2025").knobs.activation_offload);
  EXPECT_EQ(with([](Json& j) { j["cp_comm"] = "ring"; }), "stack.cp_comm");
  EXPECT_EQ(with([](Json& j) { j["cp_comm"] = 2; }), "stack.cp_comm");
  EXPECT_EQ(with([](Json& j) { j["cp_comm"] = "p2p"; }), "(no error)");
  EXPECT_EQ(with([](Json& j) { j["cp_comm"] = "all_gather"; }), "(no error)");
  // A ring exchange on a stack without context parallelism.
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["context_parallel"] = false;
              j["cp_comm"] = "p2p";
            }),
            "stack.cp_comm");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["compile"] = "on"; }), "stack.knobs.compile");
  EXPECT_EQ(with([](Json& j) { j["defaults"]["compile"] = 1; }), "stack.defaults.compile");
  // A default the stack cannot run: torch.compile on without the knob.
  EXPECT_EQ(with([](Json& j) { j["defaults"]["compile"] = true; }), "stack.defaults.compile");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["compile"] = true;
              j["defaults"]["compile"] = true;
            }),
            "(no error)");
}

TEST(Stack, MakeTrainingTakesTheStackDefaultsAndRefusesWhatItLacks) {
  const spec::Training core = spec::make_training(64, 2048, spec::load_stack("megatron-core-2024"));
  EXPECT_TRUE(core.flash_attention);
  EXPECT_EQ(core.dtype, spec::Dtype::bf16);
  EXPECT_EQ(core.stack.name, "megatron-core-2024");
  const spec::Stack y22 = spec::load_stack("megatron-lm-2022");
  EXPECT_FALSE(spec::make_training(64, 2048, y22).flash_attention);
  EXPECT_FALSE(spec::make_training(64, 2048, y22, std::nullopt, false).flash_attention);
  EXPECT_EQ(field_of([&] { spec::make_training(64, 2048, y22, std::nullopt, true); }),
            "--flash-attention");
  EXPECT_EQ(field_of([&] { spec::make_training(64, 2048, y22, spec::Dtype::fp8); }), "--dtype");
  EXPECT_EQ(spec::make_training(64, 2048, spec::load_stack("fsdp-2024"), spec::Dtype::fp8).dtype,
            spec::Dtype::fp8);
  // torch.compile: TorchTitan has it, off by default as its train configs set it; the others
  // refuse it, naming --compile; only TorchTitan's block runs eagerly.
  const spec::Stack titan = spec::load_stack("torchtitan-2024");
  EXPECT_FALSE(spec::make_training(64, 2048, titan).compile);
  EXPECT_TRUE(spec::make_training(64, 2048, titan, {}, {}, true).compile);
  EXPECT_EQ(spec::compile_note(spec::make_training(64, 2048, titan)),
            ", torch.compile off (eager element-wise kernels)");
  EXPECT_EQ(spec::compile_note(spec::make_training(64, 2048, titan, {}, {}, true)),
            ", torch.compile on");
  EXPECT_EQ(spec::compile_note(core), "");
  EXPECT_EQ(field_of([&] { spec::make_training(64, 2048, y22, {}, {}, true); }), "--compile");
  for (const std::string& n : spec::preset_names("stacks")) {
    const spec::Stack st = spec::load_stack(n);
    EXPECT_EQ(st.knobs.compile, n == "torchtitan-2024") << n;
    EXPECT_EQ(st.eager_elementwise, n == "torchtitan-2024") << n;
  }
}

TEST(Stack, HybridShardingNeedsFullSharding) {
  const auto with = field_with;
  // megatron-core-2024 shards the optimizer state only: hybrid sharding has nothing to shard.
  EXPECT_EQ(with([](Json& j) { j["knobs"]["hsdp"] = true; }), "stack.knobs.hsdp");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["hsdp"] = true;
              j["knobs"]["distributed_optimizer"] = "full";
            }),
            "(no error)");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["hsdp"] = "yes"; }), "stack.knobs.hsdp");
  for (const char* n : {"fsdp-2024", "torchtitan-2024", "llm-foundry-2023", "maxtext-2024"})
    EXPECT_TRUE(spec::load_stack(n).knobs.hsdp) << n;
  EXPECT_FALSE(spec::load_stack("megatron-core-2024").knobs.hsdp);
}

TEST(Stack, ExpertFoldingNeedsSequenceParallelism) {
  const auto with = field_with;
  EXPECT_EQ(with([](Json& j) { j["knobs"]["expert_folding"] = true; }), "(no error)");
  EXPECT_EQ(with([](Json& j) {
              j["knobs"]["expert_folding"] = true;
              j["knobs"]["sequence_parallel"] = false;
              j["knobs"]["tp_comm_overlap"] = false;
              j["defaults"]["sp"] = false;
            }),
            "stack.knobs.expert_folding");
  EXPECT_EQ(with([](Json& j) { j["knobs"]["expert_folding"] = 1; }), "stack.knobs.expert_folding");
  for (const std::string& n : spec::preset_names("stacks"))
    EXPECT_EQ(spec::load_stack(n).knobs.expert_folding, n == "nemo-perf-2025") << n;
  // Combined 1F1B: nemo-perf-2025 has it, off by default (the recipes set it per workload).
  for (const auto& n : spec::preset_names("stacks")) {
    EXPECT_EQ(spec::load_stack(n).knobs.ep_overlap, n == "nemo-perf-2025") << n;
    EXPECT_FALSE(spec::load_stack(n).defaults.ep_overlap) << n;
  }
}

TEST(Stack, BlockScaledPrecisionsAreTheStacksOwn) {
  const spec::Stack nemo = spec::load_stack("nemo-perf-2025");
  const spec::Stack core = spec::load_stack("megatron-core-2024");
  EXPECT_EQ(spec::dtypes_of(nemo.knobs), "bf16, fp8, mxfp8, nvfp4");
  EXPECT_EQ(spec::dtypes_of(core.knobs), "bf16, fp8");
  EXPECT_EQ(spec::make_training(64, 2048, nemo, spec::Dtype::nvfp4).dtype, spec::Dtype::nvfp4);
  EXPECT_EQ(field_of([&] { spec::make_training(64, 2048, core, spec::Dtype::mxfp8); }), "--dtype");
  EXPECT_EQ(spec::parse_dtype("mxfp8"), spec::Dtype::mxfp8);
  EXPECT_EQ(field_of([] { spec::parse_dtype("nvfp8"); }), "--dtype");
  // Bytes per cast element with the block scales: E8M0 per 32 (MX), E4M3 per 16 (NVFP4).
  EXPECT_DOUBLE_EQ(spec::cast_bytes(spec::Dtype::mxfp8), 1.03125);
  EXPECT_DOUBLE_EQ(spec::cast_bytes(spec::Dtype::nvfp4), 0.5625);
}
