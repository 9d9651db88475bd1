#pragma once
// The component catalog is a spec (spec::Catalog, spec/catalog.hpp); cost prices with it under
// these names.
#include "railsim/spec/catalog.hpp"

namespace railsim::cost {
using spec::Catalog;
using spec::catalog_from_json;
using spec::kDefaultCatalog;
using spec::load_catalog;
using spec::PricePower;
}  // namespace railsim::cost
