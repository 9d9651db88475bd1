// railsim validate: the iteration-time model against the measured runs shipped with railsim.
#include <fmt/format.h>

#include "railsim/command/inputs.hpp"
#include "railsim/core/json.hpp"
#include "railsim/perf/validation.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {
void run_validate(const Args& a, Output& out) {
  const auto tables = perf::validation_tables();
  if (a.flag("json"))
    out.print("{}\n", perf::to_json(tables).dump(2));
  else
    out.print("{}", perf::to_text(tables));
  const auto bad = perf::broken(tables);
  if (!bad.empty()) {
    std::string ids;
    for (const auto* t : bad) ids += (ids.empty() ? "" : ", ") + t->id;
    throw Failed{1, fmt::format("validation: tolerance broken in {}", ids)};
  }
}
}  // namespace

Command validate_command() {
  Command c;
  c.path = "validate";
  c.summary =
      "The iteration-time model against the measured runs shipped with railsim (the tables of "
      "docs/validation.md): each run's error, mean and max per table against its documented "
      "tolerance; exit 1 when a tolerance is broken";
  c.fields = {flag_field("json", "--json", "Print the tables as JSON")};
  c.run = run_validate;
  c.python_name = "validate";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
