#pragma once
// The model and training specs live in spec/ (spec::Model, spec::Training); perf uses them under
// these names.
#include "railsim/spec/model.hpp"

namespace railsim::perf {
using spec::Dtype;
using spec::load_model;
using spec::load_stack;
using spec::make_training;
using spec::Model;
using spec::model_from_json;
using spec::parse_dtype;
using spec::Sharding;
using spec::Stack;
using spec::to_string;
using spec::Training;
}  // namespace railsim::perf
