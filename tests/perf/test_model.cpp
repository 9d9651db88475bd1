// Model presets: shapes load and parameter counts match the published sizes.
#include <gtest/gtest.h>

#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/model.hpp"

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
        Case{"MoE-1.2T", 1.162e12, 1.162e12 * 0.061, 0.03}}) {
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
