#pragma once
// railsim's version ("0.1.0"), as CMakeLists.txt's project() states it: `railsim --version` prints
// it and every report names it beside its inputs.
#include <string_view>

namespace railsim {

std::string_view version();

}  // namespace railsim
