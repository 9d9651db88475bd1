#include <fmt/format.h>

#include "commands.hpp"
#include "railsim/core/json.hpp"
#include "railsim/perf/validation.hpp"

namespace railsim::cli {

void add_validate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "validate",
      "The iteration-time model against the measured runs shipped with railsim (the tables of "
      "docs/validation.md): each run's error, mean and max per table against its documented "
      "tolerance; exit 1 when a tolerance is broken");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print the tables as JSON");
  cmd->callback([json] {
    const auto tables = perf::validation_tables();
    if (*json)
      fmt::print("{}\n", perf::to_json(tables).dump(2));
    else
      fmt::print("{}", perf::to_text(tables));
    const auto bad = perf::broken(tables);
    if (!bad.empty()) {
      std::string ids;
      for (const auto* t : bad) ids += (ids.empty() ? "" : ", ") + t->id;
      throw CommandFailed{1, fmt::format("validation: tolerance broken in {}", ids)};
    }
  });
}

}  // namespace railsim::cli
