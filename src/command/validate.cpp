// railsim validate: the iteration-time model against the measured runs shipped with railsim.
#include <fmt/format.h>

#include <optional>
#include <string>

#include "railsim/command/inputs.hpp"
#include "railsim/core/json.hpp"
#include "railsim/perf/validation.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {
void run_validate(const Args& a, Output& out) {
  const auto tables = perf::validation_tables();
  // One's own runs: read and checked before anything is printed, so that bad input is one line.
  const std::optional<std::string> own_path = a.text_if("table");
  const std::optional<perf::ValidationTable> own =
      own_path ? std::optional(perf::own_table(*own_path, "--table")) : std::nullopt;
  if (a.flag("json"))
    out.print("{}\n", (own ? perf::to_json(tables, *own) : perf::to_json(tables)).dump(2));
  else
    out.print("{}", own ? perf::to_text(tables, *own) : perf::to_text(tables));
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
      "docs/validation.md), and against your own with --table: each run's error, mean and max "
      "per table against its documented tolerance; exit 1 when a shipped tolerance is broken";
  Field table =
      text_field("table", "--table",
                 "Your own measured runs too: a JSON file written as docs/validation.md's "
                 "\"Adding runs\" describes (table, common, rows); each run is timed "
                 "as the shipped ones and printed with its error and the band estimate "
                 "and plan print for it (every run a hold-out; the bands stay the "
                 "shipped runs')");
  table.type_name = "FILE";
  c.fields = {flag_field("json", "--json", "Print the tables as JSON"), table};
  c.run = run_validate;
  c.python_name = "validate";
  c.python_sets = "json";
  return c;
}

}  // namespace railsim::command
