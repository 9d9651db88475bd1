// railsim presets: the presets shipped with railsim, or one preset's JSON.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "railsim/command/inputs.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/spec/preset.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {
bool same_ignoring_case(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

void run_presets(const Args& a, Output& out) {
  const std::string kind = a.text("kind");
  if (const auto name = a.text_if("name")) {
    if (kind == "all")
      throw InputError("name", "give the preset's kind first, e.g. `railsim presets gpus GB200`");
    // The file as shipped (its key order and notes), so that it can be copied and edited.
    for (const spec::EmbeddedPreset& p : spec::embedded_presets())
      if (same_ignoring_case(kind + "/" + *name, std::string(p.key))) {
        out.print("{}", p.json);
        return;
      }
    // Not a preset: the loader names the valid ones (or reads a file given by path).
    out.print("{}\n", spec::load_preset_or_file(kind, *name, "name").dump(2));
    return;
  }
  Json all = Json::object();
  for (const std::string& folder : spec::preset_kinds()) {
    if (kind != "all" && kind != folder) continue;
    if (a.flag("json"))
      all[folder] = spec::preset_names(folder);
    else
      out.print("{}: {}\n", folder, fmt::join(spec::preset_names(folder), ", "));
  }
  if (a.flag("json")) out.print("{}\n", all.dump(2));
}
}  // namespace

Command presets_command() {
  Command c;
  c.path = "presets";
  c.summary =
      "List the presets shipped with railsim; with a kind and a name, print that preset's JSON "
      "(the schema of a user file: copy it and edit)";
  std::vector<std::string> kinds = spec::preset_kinds();
  kinds.push_back("all");
  Field kind = text_field(
      "kind", "", fmt::format("{} or all", fmt::join(spec::preset_kinds(), ", ")), "all", kinds);
  c.fields = {kind, text_field("name", "", "A preset of that kind: print its JSON"),
              flag_field("json", "--json", "List as JSON: {\"gpus\": [...], ...}")};
  c.run = run_presets;
  c.python_name = "presets";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
