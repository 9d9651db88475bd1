#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "railsim/spec/preset.hpp"

namespace railsim::cli {

void add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets", "List the presets shipped with railsim");
  auto kind = std::make_shared<std::string>("all");
  cmd->add_option("kind", *kind, "gpus, switches, catalogs, models, failures or all")
      ->check(CLI::IsMember({"all", "gpus", "switches", "catalogs", "models", "failures"}));
  cmd->callback([kind] {
    for (const char* folder : {"gpus", "switches", "catalogs", "models", "failures"}) {
      if (*kind != "all" && *kind != folder) continue;
      fmt::print("{}: {}\n", folder, fmt::join(spec::preset_names(folder), ", "));
    }
  });
}

}  // namespace railsim::cli
