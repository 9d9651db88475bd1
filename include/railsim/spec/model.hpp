#pragma once
// The transformer being trained (Model) and what one iteration processes (Training).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "railsim/core/json_fwd.hpp"
#include "railsim/spec/stack.hpp"

namespace railsim::spec {

// A decoder-only transformer. Dense when experts <= 1; otherwise every `moe_every`-th layer
// (layers moe_every-1, 2*moe_every-1, ...) replaces its FFN with `experts` experts of
// `expert_ffn_hidden`, each token routed to `top_k` of them.
struct Model {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;    // grouped-query attention; = heads for multi-head attention
  std::int64_t ffn_hidden = 0;  // dense FFN width (4 x hidden by default)
  bool gated_ffn = false;       // SwiGLU: three FFN matrices instead of two
  std::int64_t vocab = 0;
  std::int64_t seq_len = 0;  // default training sequence length
  std::int64_t experts = 1;
  std::int64_t top_k = 1;
  std::int64_t expert_ffn_hidden = 0;
  std::int64_t moe_every = 1;
  double capacity_factor = 1.0;
  // DeepSeek-style MoE (Dai et al. 2024, DeepSeekMoE; DeepSeek-V3 report): the first
  // `first_dense_layers` layers keep a dense FFN of ffn_hidden; every MoE layer also runs
  // `shared_experts` always-active experts of shared_expert_ffn_hidden on every token (no routing,
  // no all-to-all).
  std::int64_t first_dense_layers = 0;
  std::int64_t shared_experts = 0;
  std::int64_t shared_expert_ffn_hidden = 0;
  // Group-limited routing (DeepSeek-V2 and V3's device- and node-limited routing; the released
  // configs' n_group and topk_group): the experts form `expert_groups` equal groups (consecutive
  // experts), and each token chooses `expert_groups_per_token` of them and its top_k experts
  // inside those. 1 and 1: no limit. DeepSeek-V3: 8 groups of 32, 4 per token, so that with its
  // 64-way EP over 8 nodes each token reaches at most 4 nodes.
  std::int64_t expert_groups = 1;
  std::int64_t expert_groups_per_token = 1;
  // Multi-token prediction (DeepSeek-V3 report, Sec. 2.2): `mtp_layers` sequential modules after
  // the last layer, each predicting one token further ahead: an RMSNorm of the previous depth's
  // output and one of the next token's embedding, concatenated and projected from 2h to h, one
  // transformer layer like the model's last, then the output head and its cross entropy. The
  // embedding and the output head are the model's own (shared), so a module's trained weights
  // are its projection, its layer and its norms. DeepSeek-V3: one module (the released
  // checkpoint's 14B of MTP weights count its own copies of the embedding and head besides).
  std::int64_t mtp_layers = 0;
  // Attention widths. Multi-head / grouped-query attention: q and k heads of qk_head_dim, v heads
  // of v_head_dim (both hidden / heads by default). Multi-head latent attention (MLA, DeepSeek-V2
  // and V3): queries through a q_lora_rank bottleneck, keys and values through a kv_lora_rank
  // latent plus a qk_rope_head_dim rotary key shared by the heads (0: no such projection).
  std::int64_t qk_head_dim = 0;  // 0: hidden / heads
  std::int64_t v_head_dim = 0;   // 0: hidden / heads
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_rope_head_dim = 0;
  // Sliding-window attention (Mistral 7B; GPT-OSS alternates it with full attention): layers 0,
  // sliding_every, 2 sliding_every, ... let each query see only the sliding_window tokens up to
  // itself (0: every layer attends to the whole causal prefix).
  std::int64_t sliding_window = 0;
  std::int64_t sliding_every = 1;
  bool tied_embeddings = true;  // output layer shares the token embedding (GPT); false: Llama
  bool dropout =
      true;  // dropout masks are stored (GPT-3/Megatron); Llama and Mixtral train without
  std::string source;

  bool is_moe() const { return experts > 1; }
  std::int64_t moe_layers() const {
    return is_moe() ? (layers - first_dense_layers) / moe_every : 0;
  }
  std::int64_t dense_layers() const { return layers - moe_layers(); }
  std::int64_t head_dim() const { return hidden / heads; }
  bool is_mla() const { return kv_lora_rank > 0; }
  // Widths per token of the attention tensors: Q, K, V (after any up-projection) and the
  // attention output that the projection reads.
  // (qk_head_dim and v_head_dim 0: hidden / heads.)
  std::int64_t qk_dim() const { return qk_head_dim > 0 ? qk_head_dim : head_dim(); }
  std::int64_t v_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim(); }
  double q_width() const { return static_cast<double>(heads * qk_dim()); }
  double k_width() const { return static_cast<double>((is_mla() ? heads : kv_heads) * qk_dim()); }
  double v_width() const { return static_cast<double>((is_mla() ? heads : kv_heads) * v_dim()); }
  double attn_out_width() const { return static_cast<double>(heads * v_dim()); }
  // Layers with a sliding window, and their share of the layers.
  std::int64_t sliding_layers() const {
    return sliding_window > 0 ? (layers + sliding_every - 1) / sliding_every : 0;
  }
  double sliding_fraction() const {
    return layers > 0 ? static_cast<double>(sliding_layers()) / static_cast<double>(layers) : 0.0;
  }
  // The keys a query attends to in a sliding-window layer of a causal sequence of `seq` tokens,
  // against a full-attention layer's, on average over the queries: sum over p of min(p + 1, w)
  // against sum over p of (p + 1). 1 without a window or when w >= seq.
  double window_share(double seq) const;
  // The average over layers of the causal attention work per layer, relative to full attention:
  // 1 - (sliding layers / layers) (1 - window_share).
  double attention_share(double seq) const;
  // The shared experts' FFN width per MoE layer (0 without shared experts).
  double shared_ffn() const {
    return static_cast<double>(shared_experts * shared_expert_ffn_hidden);
  }

  // Parameter counts (weights and biases; LayerNorm included), see docs/model.md.
  double attention_params() const;         // per layer
  double attention_matrix_params() const;  // of which the projections' weights (2 FLOPs each)
  double dense_ffn_params() const;         // per dense layer
  double expert_params() const;            // per expert
  double shared_ffn_params() const;        // the shared experts of one MoE layer
  double embedding_params() const;         // token embedding (tied with the output layer)
  double total_params() const;             // all weights, every expert (the MTP modules not)
  double active_params() const;            // weights one token touches (top_k experts)
  // The trained weights of one MTP module: its layer (an MoE layer in an MoE model) and
  // mtp_input_params().
  double mtp_module_params() const;
  // Of those, what is not a layer: the 2h x h projection and three RMSNorms (the two inputs' and
  // the layer's output's).
  double mtp_input_params() const {
    const double h = static_cast<double>(hidden);
    return 2.0 * h * h + 3.0 * h;
  }
  // The layers the pipeline split deals out to stages: the transformer layers plus two per MTP
  // module, which the last stage holds (its layer and its output head, each counted as a layer:
  // ours; it reproduces the published DeepSeek-V3 layouts, docs/model.md section 6).
  std::int64_t pipeline_layers() const { return layers + 2 * mtp_layers; }
};

Model model_from_json(const Json& j, const std::string& path);
// arg: preset name (data/models/) or JSON file; option names the CLI option for errors.
Model load_model(const std::string& arg, const std::string& option = "--model");

// The model and global batch every command times when none is given: GPT-1T (the paper's
// largest dense model) and 4,096 sequences (of 2,048 tokens: about 8M tokens, a GPT-1T-class
// batch).
inline constexpr const char* kDefaultModel = "GPT-1T";
inline constexpr std::int64_t kDefaultGlobalBatch = 4096;

struct Training {
  std::int64_t global_batch = 0;  // sequences per iteration
  std::int64_t seq_len = 0;       // tokens per sequence
  Dtype dtype = Dtype::bf16;      // GEMM precision; weights, activations, communication in bf16
  // Fused attention (FlashAttention): no s x s scores in HBM, causal half of the score FLOPs.
  // Off in a Training built in code; make_training takes the stack's default.
  bool flash_attention = false;
  // torch.compile on a stack that has it (Stack::knobs.compile): fuses the element-wise kernels
  // that a stack with eager_elementwise runs one op at a time. Off in a Training built in code.
  bool compile = false;
  // The software that runs it: which strategy knobs exist (perf::validate checks them).
  Stack stack{};
  // The block's element-wise work runs eagerly, one PyTorch kernel per op (docs/model.md
  // section 3): a stack with eager_elementwise without torch.compile.
  bool eager_elementwise() const { return stack.eager_elementwise && !compile; }
};

// A training under a stack: a dtype, flash attention or torch.compile given must be one the
// stack has (InputError "--dtype" / "--flash-attention" / "--compile" naming the stack); not
// given, bf16 and the stack's defaults.
Training make_training(std::int64_t global_batch, std::int64_t seq_len, const Stack& st,
                       std::optional<Dtype> dtype = std::nullopt,
                       std::optional<bool> flash_attention = std::nullopt,
                       std::optional<bool> compile = std::nullopt);

// How a stack's element-wise kernels run under torch.compile on or off, for the software line of
// every output: "" on a stack whose kernels are fused and that has no torch.compile; ",
// torch.compile on" or ", torch.compile off (eager element-wise kernels)" otherwise.
std::string compile_note(const Stack& st, bool compile);
inline std::string compile_note(const Training& tr) {
  return compile_note(tr.stack, tr.compile);
}
// Everything the software line of an output says beyond the stack, dtype and flash attention:
// compile_note; with fp8 training on a stack whose casts run apart (Stack::fp8_separate_casts),
// ", fp8 casts in kernels of their own (torchao)"; ", hierarchical EP dispatch (rail, then HB
// domain)" for a stack with that dispatch ("" for the direct one).
std::string software_notes(const Stack& st, bool compile, Dtype dtype);
inline std::string software_notes(const Training& tr) {
  return software_notes(tr.stack, tr.compile, tr.dtype);
}
// How context parallelism exchanges K and V, for the software line of an output whose strategy
// uses it (cp > 1; "" otherwise): ", CP K/V all-gathered before the attention" or ", CP ring
// attention (K/V passed around the ring under the attention)".
std::string cp_note(const Stack& st, std::int64_t cp);
// The same whatever the strategy, for an answer over many plans (optimize): how CP exchanges K
// and V wherever a plan uses it.
std::string cp_exchange_note(const Stack& st);
// The same in a table cell: ", CP K/V all-gather" or ", CP ring attention" ("" for cp <= 1).
std::string cp_short_note(const Stack& st, std::int64_t cp);

}  // namespace railsim::spec
