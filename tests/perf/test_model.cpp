// Model presets: shapes load and parameter counts match the published sizes.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/model.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

TEST(ModelPresets, ParameterCountsMatchPublishedSizes) {
  struct Case {
    const char* name;
    double total, active, tol;  // tolerance: the papers round to 2-3 digits
  };
  for (const Case& c :
       {Case{"Megatron-22B", 22e9, 22e9, 0.02}, Case{"Megatron-175B", 175e9, 175e9, 0.01},
        Case{"Megatron-530B", 530e9, 530e9, 0.01}, Case{"Megatron-1T", 1008e9, 1008e9, 0.01},
        Case{"GPT-1T", 1008e9, 1008e9, 0.01}, Case{"GPT-3-175B", 175e9, 175e9, 0.01},
        Case{"Llama-3-8B", 8.03e9, 8.03e9, 0.01}, Case{"Llama-3-70B", 70.6e9, 70.6e9, 0.01},
        Case{"Llama-3-405B", 405e9, 405e9, 0.01}, Case{"Mixtral-8x7B", 46.7e9, 12.9e9, 0.02},
        Case{"MoE-1.2T", 1.162e12, 1.162e12 * 0.061, 0.03},
        // Touvron et al. 2023 (Llama 2): 6.74B, 13.0B, 69.0B.
        Case{"Llama-2-7B", 6.74e9, 6.74e9, 0.01}, Case{"Llama-2-13B", 13.0e9, 13.0e9, 0.01},
        Case{"Llama-2-70B", 69.0e9, 69.0e9, 0.01},
        // DeepSeek-V3 report: 671B total, 37B activated per token (MLA, 1 shared and 8 of 256
        // routed experts, 3 dense layers; the multi-token-prediction module not counted).
        Case{"DeepSeek-V3", 671e9, 37e9, 0.02},
        // Qwen3 Technical Report, Table 2: 30B total and 3B activated, 235B and 22B (the model
        // cards: 30.5B and 3.3B, 235B and 22B).
        Case{"Qwen3-30B-A3B", 30.5e9, 3.3e9, 0.02}, Case{"Qwen3-235B-A22B", 235e9, 22e9, 0.02},
        // gpt-oss model card, Table 1: 116.83B total, 5.13B active, which leaves out the
        // embedding table (a lookup) but not the unembedding; railsim's active count has both.
        Case{"GPT-OSS-120B", 116.83e9, 5.13e9 + 201088.0 * 2880, 0.02},
        // Nemotron-4 15B report (Parmar et al. 2024, Sec. 2): 12.5B non-embedding and 3.2B
        // embedding parameters, input and output embeddings untied.
        Case{"Nemotron-4-15B", 15.7e9, 15.7e9, 0.01}}) {
    const Model m = load_model(c.name);
    EXPECT_NEAR(m.total_params() / c.total, 1.0, c.tol) << c.name;
    if (std::string(c.name) != "MoE-1.2T") {
      EXPECT_NEAR(m.active_params() / c.active, 1.0, c.tol) << c.name;
    }
  }
}

TEST(ModelPresets, BadFieldsAreNamed) {
  auto err = [](const char* text) {
    try {
      model_from_json(Json::parse(text), "model");
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("no error");
  };
  EXPECT_EQ(err(R"({"name":"x","layers":0,"hidden":64,"heads":4,"vocab":10,"seq_len":8})"),
            "model.layers");
  EXPECT_EQ(err(R"({"name":"x","layers":2,"hidden":64,"heads":5,"vocab":10,"seq_len":8})"),
            "model.heads");
  EXPECT_EQ(
      err(R"({"name":"x","layers":2,"hidden":64,"heads":4,"vocab":10,"seq_len":8,"top_k":2})"),
      "model.top_k");
  EXPECT_EQ(
      err(R"({"name":"x","layers":2,"hidden":64,"heads":4,"vocab":10,"seq_len":8,"hiden":3})"),
      "model.hiden");
  EXPECT_EQ(err(R"({"name":"x","layers":2,"hidden":1e300,"heads":4,"vocab":10,"seq_len":8})"),
            "model.hidden");
  // The DeepSeek-style knobs (MoE-only fields on a dense model, MLA-only fields without MLA, a
  // dense prefix that leaves no MoE layer, a rotary part as wide as the head) and a sliding
  // window (a count of tokens, its period only with a window and at most the layers), each added
  // to a small valid model.
  const std::string base =
      R"({"name":"x","layers":2,"hidden":64,"heads":4,"vocab":10,"seq_len":8,)";
  for (const auto& [extra, field] : std::vector<std::pair<std::string, std::string>>{
           {R"("shared_experts":1)", "model.shared_experts"},
           {R"("q_lora_rank":16)", "model.q_lora_rank"},
           {R"("experts":4,"first_dense_layers":2)", "model.first_dense_layers"},
           {R"("kv_lora_rank":8,"qk_rope_head_dim":16)", "model.qk_rope_head_dim"},
           {R"("sliding_every":2)", "model.sliding_every"},
           {R"("sliding_window":-4)", "model.sliding_window"},
           {R"("sliding_window":4,"sliding_every":3)", "model.sliding_every"},
           {R"("sliding_window":4,"sliding_every":2)", "no error"},
           // Group-limited routing: equal groups, a limit within them that still reaches top_k
           // experts, MoE only.
           {R"("expert_groups":2)", "model.expert_groups"},
           {R"("experts":8,"top_k":2,"expert_groups":3)", "model.expert_groups"},
           {R"("experts":8,"top_k":2,"expert_groups":0)", "model.expert_groups"},
           {R"("experts":8,"top_k":2,"expert_groups":4,"expert_groups_per_token":5)",
            "model.expert_groups_per_token"},
           {R"("experts":8,"top_k":3,"expert_groups":4,"expert_groups_per_token":1)",
            "model.expert_groups_per_token"},
           {R"("experts":8,"top_k":2,"expert_groups":4,"expert_groups_per_token":"2")",
            "model.expert_groups_per_token"},
           {R"("experts":8,"top_k":3,"expert_groups":8,"expert_groups_per_token":2)",
            "model.expert_groups_per_token"},
           {R"("experts":8,"top_k":2,"expert_groups":4,"expert_groups_per_token":1)", "no error"}})
    EXPECT_EQ(err((base + extra + "}").c_str()), field) << extra;
}

TEST(Model, NoDropoutStoresTwoFewerHiddenMasksAndNoAttentionMask) {
  // Korthikanti et al. 2022 Sec. 4.1: per layer s b h (34 + 5 a s / h) bytes without
  // parallelism, of which the two hidden dropout masks are 2 s b h and the attention-dropout mask
  // a s^2 b. Without dropout: s b h (32 + 4 a s / h).
  Model m = load_model("Megatron-22B");
  const Training tr{4, 2048, Dtype::bf16};
  Strategy s{.tp = 1, .pp = 1, .dp = 1, .micro_batch = 1};
  const MemoryUse with = memory_use(m, tr, s);
  m.dropout = false;
  const MemoryUse without = memory_use(m, tr, s);
  const double sbh = 2048.0 * 1.0 * static_cast<double>(m.hidden);
  const double expected_per_layer = 2.0 * sbh + static_cast<double>(m.heads) * 2048.0 * 2048.0;
  EXPECT_NEAR((with.activations_bytes - without.activations_bytes) / static_cast<double>(m.layers),
              expected_per_layer, 1e-6 * expected_per_layer);
}

// DeepSeek-V3 (multi-head latent attention, shared experts, dense first layers): the model
// FLOPs are 3 x the forward's, which is 2 FLOPs per weight a token touches (the input embedding
// is a lookup, norms and the router are not counted) plus the attention scores at MLA's head
// widths; its EP all-to-all carries the routed tokens only (top 8, not the shared expert).
TEST(Model, DeepSeekV3CountsItsLatentAttentionAndSharedExperts) {
  const Model m = load_model("DeepSeek-V3");
  ASSERT_TRUE(m.is_mla());
  EXPECT_EQ(m.moe_layers(), 58);
  const spec::Cluster c = test::cluster("H800", 2048, 8, 400);
  const Training tr = make_training(15360, 4096, load_stack("megatron-core-2024"), Dtype::fp8);
  Strategy s{.tp = 1, .pp = 16, .dp = 128, .ep = 64};
  s.recompute = Recompute::selective;
  s.dist_opt = true;
  s.dp_overlap = true;
  const IterationTime it = estimate(m, tr, s, c, test::design(spec::DesignKind::rail_optimized));
  const double tokens = 15360.0 * 4096.0;
  const double h = static_cast<double>(m.hidden);
  const double norms_and_routers =
      static_cast<double>(m.layers) *
          (2.0 * h + static_cast<double>(m.q_lora_rank + m.kv_lora_rank)) +
      static_cast<double>(m.moe_layers()) * h * static_cast<double>(m.experts);
  const double touched = m.active_params() - static_cast<double>(m.vocab) * h - norms_and_routers;
  const double scores = static_cast<double>(m.layers) * 2.0 * 4096.0 *
                        static_cast<double>(m.heads) * static_cast<double>(192 + 128);
  EXPECT_NEAR(it.model_flops / (3.0 * tokens * (2.0 * touched + scores)), 1.0, 1e-9);
  // The routed tokens' all-to-all: b s top_k h bytes in bf16 per micro-batch and direction.
  const Placement pl(c, s.degrees(), PlacementKind::rail_aligned);
  bool seen = false;
  for (const CommOp& op : build_comm_schedule(m, tr, s, pl))
    if (op.op == CollectiveOp::all_to_all) {
      EXPECT_DOUBLE_EQ(op.bytes, 4096.0 * 8.0 * h * 2.0);
      seen = true;
    }
  EXPECT_TRUE(seen);
}

// Sliding-window attention (GPT-OSS: every second layer, windows of 128): a fused attention kernel
// does the window's share of a causal layer's work; unfused attention computes the masked square.
TEST(Model, SlidingWindowLayersAttendToTheirWindowOnly) {
  const Model oss = load_model("GPT-OSS-120B");
  EXPECT_EQ(oss.sliding_layers(), 18);
  // Keys per query over 4,096 positions: sum min(p + 1, 128) against sum (p + 1).
  const double s = 4096, w = 128;
  const double share = (w * (w + 1) / 2 + (s - w) * w) / (s * (s + 1) / 2);
  EXPECT_NEAR(oss.window_share(s), share, 1e-12);
  EXPECT_NEAR(oss.attention_share(s), 1 - 0.5 * (1 - share), 1e-12);
  EXPECT_DOUBLE_EQ(oss.window_share(100), 1.0);  // a window longer than the sequence
  Model full = oss;
  full.sliding_window = 0;
  EXPECT_DOUBLE_EQ(full.attention_share(s), 1.0);
  const spec::Cluster c = test::cluster("H100-SXM", 64, 8);
  Strategy st{.tp = 1, .dp = 64, .ep = 8};
  st.dist_opt = true;
  for (bool flash : {true, false}) {
    const Training tr = make_training(64, 4096, Stack{}, std::nullopt, flash);
    const auto net = test::design(spec::DesignKind::rail_optimized);
    const IterationTime a = estimate(oss, tr, st, c, net), b = estimate(full, tr, st, c, net);
    // Model FLOPs: Megatron's full-square count, over w keys instead of s in half the layers.
    const double heads_dim = 64.0 * (64 + 64), tokens = 64.0 * 4096;
    EXPECT_NEAR(b.model_flops - a.model_flops, 3 * tokens * 36 * 0.5 * 2 * (s - w) * heads_dim,
                1e-9 * b.model_flops);
    if (flash)
      EXPECT_LT(a.iteration_time_s, b.iteration_time_s);
    else
      EXPECT_DOUBLE_EQ(a.iteration_time_s, b.iteration_time_s);
  }
}
