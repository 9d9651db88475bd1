#pragma once
// Small models and switches for tests that simulate whole iterations on small clusters: a model
// of a few layers (dense, or MoE with 16 experts, top-2) and an Ethernet switch of any radix of
// 400G ports, so that a few dozen GPUs get two and three tiers.
#include <fmt/format.h>

#include "railsim/perf/model.hpp"
#include "railsim/spec/switch.hpp"

namespace railsim::test {

inline perf::Model small_model(bool moe, int layers = 12) {
  perf::Model m;
  m.name = moe ? "moe-small" : "dense-small";
  m.layers = layers;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.vocab = 32000;
  m.seq_len = 1024;
  if (moe) {
    m.experts = 16;
    m.top_k = 2;
    m.expert_ffn_hidden = 2048;
  }
  return m;
}

inline spec::SwitchSpec small_switch(int radix) {
  spec::SwitchSpec sw;
  sw.radix = radix;
  sw.port_gbps = 400;
  sw.name = fmt::format("test-{}x400G", radix);
  sw.family = "ethernet";
  sw.modes.push_back({radix, 400.0});
  return sw;
}

}  // namespace railsim::test
