#pragma once
// Calculon's input files (Isaev et al., SC'23; github.com/calculon-ai/calculon) read as railsim
// specs: an application file (models/*.json: hidden, feedforward, seq_size, attn_heads,
// attn_size, num_blocks) is a Model, a system file (systems/*.json: matrix, vector, mem1, mem2,
// networks) a GpuSpec. load_model and load_gpu detect the format, so --model and --gpu (and the
// Python functions) take either. The mapping is in docs/calculon.md.
#include <string>
#include <string_view>
#include <vector>

#include "railsim/core/json_fwd.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/model.hpp"

namespace railsim::spec {

// Which of the two formats a file is in, from the keys only one of them has: Calculon's
// application (num_blocks, attn_heads, attn_size, feedforward, seq_size, vocab_size) against
// railsim's model (layers, heads, ffn_hidden, seq_len, vocab, ...); Calculon's system (matrix,
// vector, mem1, mem2, networks, ...) against railsim's GPU (peak_bf16_tflops, hbm_gib, ...). A file
// with keys of both is an InputError(`path`) naming one of each, so that a file missing one of
// Calculon's required fields is reported as such rather than as a railsim file missing "name".
bool is_calculon_application(const Json& j, const std::string& path = "model");
bool is_calculon_system(const Json& j, const std::string& path = "gpu");

// What an import left out: the file's fields railsim has no use for (JSON paths such as
// "vector" or "networks[0].ops"), and railsim's fields the file lacks, with the value taken.
struct CalculonImport {
  std::vector<std::string> unmapped;
  std::vector<std::string> assumed;
};

// Vocabulary when an application file gives none (Calculon's model has no embedding): Megatron-LM's
// GPT-2 vocabulary padded to 51,200, the one of the Megatron runs Calculon validates against.
inline constexpr std::int64_t kCalculonDefaultVocab = 51200;

// `name` is the model's or GPU's name (the file's stem); `path` prefixes errors ("model",
// "gpu"). Every mapped field is checked as railsim's own specs are (InputError naming it).
Model model_from_calculon(const Json& j, const std::string& name, const std::string& path,
                          CalculonImport* info = nullptr);
GpuSpec gpu_from_calculon(const Json& j, const std::string& name, const std::string& path,
                          CalculonImport* info = nullptr);

// The one warning line of an import: "<option>: <file name> read as a Calculon <kind> file; not
// mapped: a, b; assumed: c". Empty when nothing was left out.
std::string calculon_warning(const std::string& option, const std::string& file,
                             std::string_view kind, const CalculonImport& info);

// Where import warnings go. The default prints "railsim: warning: <line>" on stderr, once per
// line per process (a sweep loads the same file at every point).
using WarningSink = void (*)(const std::string& line);
void set_warning_sink(WarningSink sink);
void warn(const std::string& line);

}  // namespace railsim::spec
