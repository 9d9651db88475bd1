#pragma once
// Private to src/topo: the check of a failure against a Fabric (its kind, tier and index exist),
// shared by the parser of failure names and the degraded Fabric.
#include <string>

#include "railsim/topo/failures.hpp"

namespace railsim::topo::detail {

// Throws InputError(option, ...) when `x` names no component of `f`.
void check_failure(const Failure& x, const Fabric& f, const std::string& option);

}  // namespace railsim::topo::detail
