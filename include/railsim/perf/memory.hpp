#pragma once
// Memory per GPU of a strategy on its fullest pipeline stage: weights, gradients, optimizer
// state, activations as the stack keeps them (docs/model.md section 7).
#include "railsim/perf/model.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/spec/gpu.hpp"

namespace railsim::perf {

struct MemoryUse {  // bytes per GPU on the fullest pipeline stage
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double reserved_bytes = 0;  // CUDA context, NCCL buffers, allocator slack
  // What exists only during the optimizer step, when the activations are freed: with bf16
  // gradients, the fp32 copy of the gradient shard the optimizer steps on. The peak holds the
  // larger of it and the activations, not both.
  double step_bytes = 0;
  // Activations offloaded to host memory (--offload-layers), not part of total()
  double host_bytes = 0;
  double total() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + reserved_bytes +
           (activations_bytes > step_bytes ? activations_bytes : step_bytes);
  }
};

// Whether a memory use fits the GPU: its HBM and, with activation offload, its share of the host
// memory.
inline bool fits(const MemoryUse& m, const spec::GpuSpec& g) {
  return m.total() <= g.hbm_bytes && m.host_bytes <= g.host_memory_bytes;
}

// Memory per GPU alone (used for the "no feasible strategy" message).
MemoryUse memory_use(const Model& m, const Training& tr, const Strategy& s);

}  // namespace railsim::perf
