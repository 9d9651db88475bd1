// Not yet a library command: apps/railsim registers it (the empty path leaves it out of the table).
#include "registry.hpp"

namespace railsim::command {

Command fail_goodput_command() {
  return {};
}

}  // namespace railsim::command
