#pragma once
// Presets shipped in data/ are compiled into the binary (cmake/embed_presets.cmake). A user may
// name a preset (case-insensitive) or pass a path to their own JSON file of the same schema.
#include <string>
#include <string_view>
#include <vector>

#include "railsim/core/json_fwd.hpp"

namespace railsim::spec {

struct EmbeddedPreset {
  std::string_view key;   // "gpus/H100-SXM": folder under data/ and file name without .json
  std::string_view json;  // file content
};
const std::vector<EmbeddedPreset>& embedded_presets();

// The kinds of presets (their folders), in the order `railsim presets` lists them.
inline const std::vector<std::string>& preset_kinds() {
  static const std::vector<std::string> kinds = {"gpus",   "switches", "catalogs",
                                                 "models", "stacks",   "failures"};
  return kinds;
}

// Names of the presets in one folder ("gpus", "switches", "catalogs", "models"), sorted.
std::vector<std::string> preset_names(std::string_view folder);

// Resolves `arg` (a preset name or a file path) to parsed JSON. `option` names the CLI option
// or field for errors, e.g. "--gpu". A value that contains '/' or ends in ".json" is a file.
Json load_preset_or_file(std::string_view folder, const std::string& arg,
                         const std::string& option);

}  // namespace railsim::spec
