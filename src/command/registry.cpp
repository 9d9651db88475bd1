#include "registry.hpp"

namespace railsim::command {

const std::vector<Command>& commands() {
  static const std::vector<Command> all = [] {
    std::vector<Command> v;
    for (Command (*make)() :
         {presets_command, design_command, compare_command, estimate_command, plan_command,
          traffic_command, sim_command, fail_whatif_command, fail_goodput_command, sweep_command,
          optimize_command, report_command, validate_command}) {
      Command c = make();
      if (!c.path.empty()) v.push_back(std::move(c));
    }
    return v;
  }();
  return all;
}

const std::vector<Group>& groups() {
  static const std::vector<Group> all = {
      {"fail",
       "Training under failures: `railsim fail whatif` and `railsim fail goodput` (see "
       "docs/failures.md)"}};
  return all;
}

}  // namespace railsim::command
