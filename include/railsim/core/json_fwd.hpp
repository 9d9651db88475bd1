#pragma once
// The JSON value type by name only, for headers that declare functions taking or returning JSON
// documents: nlohmann's forward declarations (json_fwd.hpp) instead of the full library, which
// only the sources that build or read documents include (railsim/core/json.hpp).
#include <nlohmann/json_fwd.hpp>

namespace railsim {

using Json = nlohmann::json;

}  // namespace railsim
