#pragma once
// Each command's definition (fields and run function), one per file of src/command/; registry.cpp
// lists them in the order `railsim --help` shows.
#include "railsim/command/command.hpp"

namespace railsim::command {

Command presets_command();
Command design_command();
Command compare_command();
Command estimate_command();
Command plan_command();
Command traffic_command();
Command sim_command();
Command fail_goodput_command();
Command fail_whatif_command();
Command sweep_command();
Command optimize_command();
Command report_command();
Command validate_command();

}  // namespace railsim::command
