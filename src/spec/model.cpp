#include "railsim/spec/model.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "railsim/core/enum.hpp"
#include "railsim/core/json.hpp"
#include "railsim/spec/calculon.hpp"
#include "railsim/spec/preset.hpp"

namespace railsim::spec {

namespace {
constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;  // 16M: beyond it a value is a typo
}

double Model::attention_params() const {
  // The projections; biases and the two LayerNorms (13h per layer with the FFN biases) for
  // GPT-style models, RMSNorm weights only for gated (Llama-style) models; MLA's two latent norms.
  const double h = static_cast<double>(hidden);
  const double norms = is_mla() ? static_cast<double>(q_lora_rank + kv_lora_rank) : 0.0;
  return attention_matrix_params() + norms + (gated_ffn ? h : 4.0 * h + 2.0 * h);
}

double Model::attention_matrix_params() const {
  const double h = static_cast<double>(hidden);
  // Q, K, V and output projections.
  double mats = h * (q_width() + k_width() + v_width()) + attn_out_width() * h;
  if (is_mla()) {
    // MLA (DeepSeek-V2, Liu et al. 2024, Sec. 2.1): Q through its low-rank bottleneck (or
    // straight from h), K and V up-projected from the kv latent, the rotary key from h.
    const double ql = static_cast<double>(q_lora_rank), kl = static_cast<double>(kv_lora_rank);
    const double rope = static_cast<double>(qk_rope_head_dim);
    const double nope = static_cast<double>(qk_dim() - qk_rope_head_dim);
    const double a = static_cast<double>(heads);
    mats = (ql > 0 ? h * ql + ql * q_width() : h * q_width()) + h * (kl + rope) +
           kl * a * (nope + static_cast<double>(v_dim())) + attn_out_width() * h;
  }
  return mats;
}

double Model::dense_ffn_params() const {
  const double h = static_cast<double>(hidden), f = static_cast<double>(ffn_hidden);
  return (gated_ffn ? 3.0 : 2.0) * h * f + (gated_ffn ? h : f + 3.0 * h);
}

double Model::expert_params() const {
  const double h = static_cast<double>(hidden), f = static_cast<double>(expert_ffn_hidden);
  return (gated_ffn ? 3.0 : 2.0) * h * f + (gated_ffn ? 0.0 : f + h);
}

double Model::shared_ffn_params() const {
  return (gated_ffn ? 3.0 : 2.0) * static_cast<double>(hidden) * shared_ffn();
}

double Model::embedding_params() const {
  return (tied_embeddings ? 1.0 : 2.0) * static_cast<double>(vocab) * static_cast<double>(hidden);
}

namespace {
// One MoE layer's FFN weights with `experts` of its experts counted (all of them, or the top_k a
// token touches): those experts, the shared experts, the router and the norm.
double moe_ffn_params(const Model& m, std::int64_t experts) {
  const double h = static_cast<double>(m.hidden);
  return static_cast<double>(experts) * m.expert_params() + m.shared_ffn_params() +
         h * static_cast<double>(m.experts) + (m.gated_ffn ? h : 2.0 * h);
}

// The weights with `experts` experts of each MoE layer counted.
double params_with_experts(const Model& m, std::int64_t experts) {
  return static_cast<double>(m.layers) * m.attention_params() +
         static_cast<double>(m.dense_layers()) * m.dense_ffn_params() +
         static_cast<double>(m.moe_layers()) * moe_ffn_params(m, experts) + m.embedding_params();
}
}  // namespace

double Model::total_params() const {
  return params_with_experts(*this, experts);
}

double Model::active_params() const {
  return params_with_experts(*this, top_k);
}

double Model::mtp_module_params() const {
  // The layer: its attention and its FFN, every expert of an MoE layer.
  const double ffn = is_moe() ? moe_ffn_params(*this, experts) : dense_ffn_params();
  return attention_params() + ffn + mtp_input_params();
}

double Model::window_share(double seq) const {
  const double w = static_cast<double>(sliding_window);
  if (w <= 0 || w >= seq) return 1.0;
  // Over positions p = 0 .. s-1: sum min(p + 1, w) = w (w + 1) / 2 + (s - w) w, and
  // sum (p + 1) = s (s + 1) / 2.
  return (w * (w + 1.0) / 2.0 + (seq - w) * w) / (seq * (seq + 1.0) / 2.0);
}

double Model::attention_share(double seq) const {
  return 1.0 - sliding_fraction() * (1.0 - window_share(seq));
}

namespace {
// The attention widths (Model's comment): head dims default to hidden / heads; MLA needs its
// latent rank, a rotary part inside qk_head_dim and (for its K) all heads.
void read_attention_widths(JsonObject& o, Model& m) {
  m.qk_head_dim = o.integer_or("qk_head_dim", 0, 1, kMaxDim);
  m.v_head_dim = o.integer_or("v_head_dim", 0, 1, kMaxDim);
  m.kv_lora_rank = o.integer_or("kv_lora_rank", 0, 0, kMaxDim);
  m.q_lora_rank = o.integer_or("q_lora_rank", 0, 0, kMaxDim);
  m.qk_rope_head_dim = o.integer_or("qk_rope_head_dim", 0, 0, m.qk_dim() - 1);
  if (!m.is_mla())
    for (const char* k : {"q_lora_rank", "qk_rope_head_dim"})
      if (o.has(k))
        throw InputError(o.field(k),
                         "only meaningful for multi-head latent attention (kv_lora_rank > 0)");
}
}  // namespace

Model model_from_json(const Json& j, const std::string& path) {
  JsonObject o(j, path);
  Model m;
  m.name = o.string("name");
  m.layers = o.integer("layers", 1, 100000);
  m.hidden = o.integer("hidden", 1, kMaxDim);
  m.heads = o.integer("heads", 1, m.hidden);
  if (m.hidden % m.heads != 0)
    throw InputError(o.field("heads"), fmt::format("{} heads do not divide hidden = {}; the head "
                                                   "dimension must be an integer",
                                                   m.heads, m.hidden));
  m.kv_heads = o.integer_or("kv_heads", m.heads, 1, m.heads);
  if (m.heads % m.kv_heads != 0)
    throw InputError(o.field("kv_heads"),
                     fmt::format("kv_heads = {} must divide heads = {}", m.kv_heads, m.heads));
  m.ffn_hidden = o.integer_or("ffn_hidden", 4 * m.hidden, 1, kMaxDim);
  m.gated_ffn = o.boolean_or("gated_ffn", false);
  m.vocab = o.integer("vocab", 1, kMaxDim);
  m.seq_len = o.integer("seq_len", 1, kMaxDim);
  m.tied_embeddings = o.boolean_or("tied_embeddings", true);
  m.dropout = o.boolean_or("dropout", true);
  m.experts = o.integer_or("experts", 1, 1, 1 << 20);
  if (m.is_moe()) {
    m.top_k = o.integer_or("top_k", 1, 1, m.experts);
    m.expert_ffn_hidden = o.integer_or("expert_ffn_hidden", m.ffn_hidden, 1, kMaxDim);
    m.moe_every = o.integer_or("moe_every", 1, 1, m.layers);
    m.capacity_factor = o.number_or("capacity_factor", 1.0, Range::between(1.0, 64.0));
    m.first_dense_layers = o.integer_or("first_dense_layers", 0, 0, m.layers - 1);
    m.shared_experts = o.integer_or("shared_experts", 0, 0, 1024);
    m.shared_expert_ffn_hidden =
        o.integer_or("shared_expert_ffn_hidden", m.expert_ffn_hidden, 1, kMaxDim);
    m.expert_groups = o.integer_or("expert_groups", 1, 1, m.experts);
    if (m.experts % m.expert_groups != 0)
      throw InputError(o.field("expert_groups"),
                       fmt::format("{} groups do not divide experts = {}; the groups are equal",
                                   m.expert_groups, m.experts));
    m.expert_groups_per_token =
        o.integer_or("expert_groups_per_token", m.expert_groups, 1, m.expert_groups);
    const std::int64_t reachable = m.expert_groups_per_token * (m.experts / m.expert_groups);
    if (m.top_k > reachable)
      throw InputError(
          o.field(o.has("expert_groups_per_token") ? "expert_groups_per_token" : "expert_groups"),
          fmt::format("a token's {} groups hold {} experts, fewer than top_k = {}",
                      m.expert_groups_per_token, reachable, m.top_k));
  } else {
    for (const char* k :
         {"top_k", "expert_ffn_hidden", "moe_every", "capacity_factor", "first_dense_layers",
          "shared_experts", "shared_expert_ffn_hidden", "expert_groups", "expert_groups_per_token"})
      if (o.has(k))
        throw InputError(o.field(k),
                         "only meaningful for a mixture-of-experts model (experts > 1)");
  }
  read_attention_widths(o, m);
  m.mtp_layers = o.integer_or("mtp_layers", 0, 0, 16);
  m.sliding_window = o.integer_or("sliding_window", 0, 0, kMaxDim);
  m.sliding_every = o.integer_or("sliding_every", 1, 1, m.layers);
  if (m.sliding_window == 0 && o.has("sliding_every"))
    throw InputError(o.field("sliding_every"), "only meaningful with a sliding_window above 0");
  m.source = o.source();
  o.finish();
  return m;
}

Model load_model(const std::string& arg, const std::string& option) {
  const Json j = spec::load_preset_or_file("models", arg, option);
  if (is_calculon_application(j)) {  // a Calculon application file (spec/calculon.hpp)
    CalculonImport info;
    Model m = model_from_calculon(j, printable(std::filesystem::path(arg).stem().string()), "model",
                                  &info);
    if (const std::string w = calculon_warning(option, arg, "application", info); !w.empty())
      warn(w);
    return m;
  }
  return model_from_json(j, "model");
}

}  // namespace railsim::spec
