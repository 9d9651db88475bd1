#pragma once
// The JSON documents of perf's results, one writer each, called by the CLI (`railsim estimate
// --json`, `railsim plan --json`) and by the Python module (`railsim.estimate`, `railsim.plan`),
// so that the two cannot drift apart.
#include <optional>

#include "railsim/core/json_fwd.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/spec/network.hpp"

namespace railsim::perf {

// The fields that name a run, shared by the documents below: model, gpus, gpu, hb_domain,
// design, global_batch, seq_len, stack, dtype, flash_attention.
Json run_json(const Model& m, const Training& tr, const spec::Cluster& c,
              const spec::NetworkDesign& d);

// `railsim estimate --json`: to_json(s, it, placement) of the strategy timed on this network, the
// run's fields, its error band and "comm" (comm_to_json of the schedule that was timed); with
// train_tokens, "train_tokens" and "train_days" (days_to_train). Validates `s` (InputError naming
// the knob).
Json estimate_document(const Model& m, const Training& tr, const Strategy& s,
                       const spec::Cluster& c, const spec::NetworkDesign& d,
                       PlacementKind placement = PlacementKind::rail_aligned,
                       std::optional<double> train_tokens = std::nullopt);

// `railsim plan --json` (without --explain): the run's fields, "evaluated", "feasible" and
// "plans" (each to_json(strategy, time, placement) with its "rank", from 1, and "error_band");
// with `flip`, "routing_flip" (the best plan under the contrasting routing).
Json plan_document(const Model& m, const Training& tr, const spec::Cluster& c,
                   const spec::NetworkDesign& d, const PlanResult& r,
                   PlacementKind placement = PlacementKind::rail_aligned,
                   const RoutingFlip* flip = nullptr);

}  // namespace railsim::perf
