#pragma once
// Fixture for the `layering_detects_violation` test: topo may not use perf, so the layering check
// run on this folder must fail and name this include. Never compiled.
#include "railsim/perf/model.hpp"
#include "railsim/spec/cluster.hpp"
