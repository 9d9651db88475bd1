#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "commands.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/spec/preset.hpp"

namespace railsim::cli {

void add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "presets",
      "List the presets shipped with railsim; with a kind and a name, print that preset's JSON "
      "(the schema of a user file: copy it and edit)");
  struct Args {
    std::string kind = "all";
    std::string name;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  std::vector<std::string> kinds = spec::preset_kinds();
  kinds.push_back("all");
  cmd->add_option("kind", a->kind, fmt::format("{} or all", fmt::join(spec::preset_kinds(), ", ")))
      ->check(CLI::IsMember(kinds));
  cmd->add_option("name", a->name, "A preset of that kind: print its JSON");
  cmd->add_flag("--json", a->json, "List as JSON: {\"gpus\": [...], ...}");
  cmd->callback([a] {
    if (!a->name.empty()) {
      if (a->kind == "all")
        throw InputError("name", "give the preset's kind first, e.g. `railsim presets gpus GB200`");
      // The file as shipped (its key order and notes), so that it can be copied and edited.
      const std::string key = a->kind + "/" + a->name;
      for (const spec::EmbeddedPreset& p : spec::embedded_presets())
        if (p.key.size() == key.size() &&
            std::equal(key.begin(), key.end(), p.key.begin(), [](char x, char y) {
              return std::tolower(static_cast<unsigned char>(x)) ==
                     std::tolower(static_cast<unsigned char>(y));
            })) {
          fmt::print("{}", p.json);
          return;
        }
      // Not a preset: the loader names the valid ones (or reads a file given by path).
      fmt::print("{}\n", spec::load_preset_or_file(a->kind, a->name, "name").dump(2));
      return;
    }
    Json all = Json::object();
    for (const std::string& folder : spec::preset_kinds()) {
      if (a->kind != "all" && a->kind != folder) continue;
      if (a->json)
        all[folder] = spec::preset_names(folder);
      else
        fmt::print("{}: {}\n", folder, fmt::join(spec::preset_names(folder), ", "));
    }
    if (a->json) fmt::print("{}\n", all.dump(2));
  });
}

}  // namespace railsim::cli
