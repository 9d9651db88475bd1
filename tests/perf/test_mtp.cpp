// Multi-token prediction (DeepSeek-V3 report, Sec. 2.2; spec::Model::mtp_layers): the module's
// weights, where the pipeline split puts it, what it costs the last stage and the GPU's memory,
// and the pipeline depths that leave no room for it (docs/model.md sections 1, 2, 6 and 7).
#include <gtest/gtest.h>

#include "../common/error_of.hpp"
#include "railsim/core/error.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/pipeline_order.hpp"
#include "railsim/spec/preset.hpp"
#include "test_perf_common.hpp"

using namespace railsim;
using namespace railsim::perf;

namespace {
Model deepseek(std::int64_t mtp) {
  Model m = spec::load_model("DeepSeek-V3");
  m.mtp_layers = mtp;
  return m;
}
}  // namespace

// DeepSeek-V3's released checkpoint holds 685B weights: the 671B of the model and 14B of its MTP
// module, which stores its own copies of the embedding and output head (the model card). Trained,
// the module shares them: its own weights are its MoE layer, the 2h x h projection and 3 norms.
TEST(Mtp, TheModuleWeighsWhatTheCheckpointHolds) {
  const Model m = deepseek(1);
  EXPECT_EQ(spec::load_model("DeepSeek-V3").mtp_layers, 1);
  const double h = 7168, layer = m.attention_params() + 256 * m.expert_params() +
                                 m.shared_ffn_params() + h * 256 + h;
  EXPECT_DOUBLE_EQ(m.mtp_module_params(), layer + 2 * h * h + 3 * h);
  EXPECT_NEAR(m.mtp_module_params() / 1e9, 11.61, 0.01);
  // With its copies: 13.46B, the card's 685B less 671B (each rounded).
  const double with_copies = m.mtp_module_params() + 2 * 129280 * h;
  EXPECT_NEAR(with_copies / 1e9, 14.0, 0.6);
  // The card's 685B, rounded to 1B.
  EXPECT_NEAR((m.total_params() + with_copies) / 1e9, 685.0, 0.6);
  // The model's own count leaves the module out (671B, the report's figure).
  EXPECT_DOUBLE_EQ(m.total_params(), deepseek(0).total_params());
}

// The split deals out L + 2 mtp layers and the last stage holds the module in place of two:
// Megatron-Bridge's DeepSeek-V3 layouts (16, 16, 16, 13 + MTP + loss; 7 x 8, 5 + MTP + loss;
// 15 x 4, 1 + MTP + loss) and MLPerf v6.0's over 2 stages of 8 chunks (32 and 29 + MTP + loss).
TEST(Mtp, TheLastStageHoldsTheModuleInPlaceOfTwoLayers) {
  struct Layout {
    std::int64_t p, first, last;
  };
  for (const Layout& l :
       {Layout{2, 32, 29}, Layout{4, 16, 13}, Layout{8, 8, 5}, Layout{16, 4, 1}}) {
    EXPECT_EQ(model_stage_layers(61, 1, l.p, 0), l.first) << l.p;
    EXPECT_EQ(model_stage_layers(61, 1, l.p, l.p - 1), l.last) << l.p;
    std::int64_t total = 0;
    for (std::int64_t r = 0; r < l.p; ++r) total += model_stage_layers(61, 1, l.p, r);
    EXPECT_EQ(total, 61) << l.p;
  }
  // Without the module, or on one stage, the split is stage_layers' own.
  for (std::int64_t r = 0; r < 16; ++r)
    EXPECT_EQ(model_stage_layers(126, 0, 16, r), stage_layers(126, 16, r));
  EXPECT_EQ(model_stage_layers(61, 1, 1, 0), 61);
  // 32 stages leave the last one layer's room, less than the module's two: refused.
  EXPECT_LT(model_stage_layers(61, 1, 32, 31), 0);
}

// DeepSeek-V3 in fp8 on `gpus` H800 in nodes of 8 (rail-optimized QM9700), timed with and
// without its MTP module under the strategy `s` and the stack `stack`.
struct WithAndWithout {
  IterationTime with, without;
  WithAndWithout(std::int64_t gpus, std::int64_t batch, const char* stack, Strategy s) {
    const spec::Cluster c = test::cluster("H800", gpus, 8);
    const spec::NetworkDesign net = test::design(spec::DesignKind::rail_optimized);
    const Training tr = make_training(batch, 4096, spec::load_stack(stack), Dtype::fp8);
    s.dist_opt = true;
    with = estimate(deepseek(1), tr, s, c, net);
    without = estimate(deepseek(0), tr, s, c, net);
  }
};

// One stage (64 H800, fp8): the module adds a layer's work, the projection and a second output
// head. Its FLOPs are the GPUs' (hardware FLOPs), not the model's.
TEST(Mtp, OneStageRunsTheModuleAfterTheModel) {
  const WithAndWithout r(
      64, 64, "megatron-core-2024",
      Strategy{.tp = 1, .pp = 1, .dp = 64, .ep = 64, .recompute = Recompute::selective});
  const IterationTime &with = r.with, &without = r.without;
  EXPECT_DOUBLE_EQ(with.model_flops, without.model_flops);
  const Model m = deepseek(1);
  const double h = 7168, V = 129280, tokens = 64.0 * 4096;
  // The extra hardware FLOPs: 3 x (a layer's forward + 2 (2h) h + 2 h V) per token; a layer's
  // forward is the model's forward less its head, over its 61 layers.
  const double layer_fwd = (without.model_flops / 3.0 / tokens - 2 * h * V) / 61;
  EXPECT_NEAR((with.hardware_flops - without.hardware_flops) / tokens,
              3.0 * (layer_fwd + 4 * h * h + 2 * h * V), 1.0);
  // The time grows by more than one of the model's 61 layers (its all-to-all included; the head
  // again on top) and less than three of them.
  const double per_layer = without.iteration_time_s / 61.0;
  const double extra = with.iteration_time_s - without.iteration_time_s;
  EXPECT_GT(extra, per_layer);
  EXPECT_LT(extra, 3.0 * per_layer);
  // Memory: the module's layer, projection and norms, and its logits.
  EXPECT_GT(with.memory.weights_bytes - without.memory.weights_bytes,
            2.0 * m.mtp_module_params() / 64.0);
  EXPECT_GT(with.memory.activations_bytes - without.memory.activations_bytes, 4.0 * 4096 * V);
}

// Under pipelining the last stage holds the module (2,048 H800, pp 16, DeepSeek's stack): one
// layer, the module's layer and two BF16 output layers of 129,280 words, against four layers on
// the other stages. It then paces the pipeline (under DualPipe the first GPU, which holds the
// first stage and the last), so the module costs more than its layer's share of the work, 1/61,
// under either schedule, and less than a quarter of the iteration.
TEST(Mtp, DeepPipelinesPutTheModuleOnTheLastStage) {
  Strategy s{.tp = 1, .pp = 16, .dp = 128, .ep = 64, .recompute = Recompute::selective};
  s.dp_overlap = true;
  const WithAndWithout one_f_one_b(2048, 15360, "deepseek-v3-2024", s);
  s.schedule = PipelineSchedule::dualpipe;
  const WithAndWithout dual(2048, 15360, "deepseek-v3-2024", s);
  EXPECT_GT(dual.with.hardware_flops, dual.without.hardware_flops);
  for (const WithAndWithout* r : {&one_f_one_b, &dual}) {
    const double cost = r->with.iteration_time_s - r->without.iteration_time_s;
    EXPECT_GT(cost, r->without.iteration_time_s / 61.0);
    EXPECT_LT(cost, 0.25 * r->without.iteration_time_s);
  }
  // DualPipe hides the all-to-all that 1F1B leaves exposed.
  EXPECT_LT(dual.with.iteration_time_s, one_f_one_b.with.iteration_time_s);
  // 32 stages: refused, naming --pp.
  const spec::Cluster c = test::cluster("H800", 2048, 8);
  const Training tr = make_training(15360, 4096, spec::load_stack("deepseek-v3-2024"), Dtype::fp8);
  s.pp = 32;
  s.dp = 64;
  EXPECT_EQ(test::field_of([&] { validate(deepseek(1), tr, s, c); }), "--pp");
  EXPECT_NO_THROW(validate(deepseek(0), tr, s, c));
}

// A model file's mtp_layers: 0 to 16, named when out of range.
TEST(Mtp, TheModelFieldIsChecked) {
  auto field = [](const char* text) {
    try {
      spec::model_from_json(Json::parse(text), "model");
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("no error");
  };
  const char* base =
      R"({"name":"x","layers":4,"hidden":64,"heads":4,"vocab":100,"seq_len":16,"mtp_layers":)";
  EXPECT_EQ(field((std::string(base) + "-1}").c_str()), "model.mtp_layers");
  EXPECT_EQ(field((std::string(base) + "17}").c_str()), "model.mtp_layers");
  EXPECT_EQ(field((std::string(base) + "\"one\"}").c_str()), "model.mtp_layers");
  EXPECT_EQ(field((std::string(base) + "2}").c_str()), "no error");
}
