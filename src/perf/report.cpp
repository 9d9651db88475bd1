#include "railsim/perf/report.hpp"

#include <string>

#include "railsim/core/json.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/spec/routing_table.hpp"

namespace railsim::perf {

Json run_json(const Model& m, const Training& tr, const spec::Cluster& c,
              const spec::NetworkDesign& d) {
  Json j{{"model", m.name},
         {"gpus", c.gpus},
         {"gpu", c.gpu.name},
         {"hb_domain", c.hb_domain},
         {"design", std::string(spec::to_string(d.kind))},
         {"switch", d.sw.name},
         {"global_batch", tr.global_batch},
         {"seq_len", tr.seq_len}};
  j.update(spec::software_json(tr));
  j.update(spec::routing_json(d));
  return j;
}

Json estimate_document(const Model& m, const Training& tr, const Strategy& s,
                       const spec::Cluster& c, const spec::NetworkDesign& d,
                       PlacementKind placement, std::optional<double> train_tokens) {
  const IterationTime it = estimate(m, tr, s, c, d, placement);
  const double days = train_tokens ? days_to_train(it, *train_tokens) : 0.0;
  // The schedule that was timed, op by op (the same as estimate() builds internally).
  const Placement pl(c, s.degrees(), placement);
  const CommSchedule cs = build_comm_schedule(m, tr, s, pl);
  Json j = to_json(s, it, placement);
  j.update(run_json(m, tr, c, d));
  j["error_band"] = to_json(error_band(c.gpu.name, m, tr), it.iteration_time_s);
  j["comm"] = comm_to_json(cs, pl, make_network_model(c, d));
  if (train_tokens) {
    j["train_tokens"] = *train_tokens;
    j["train_days"] = days;
  }
  return j;
}

Json plan_document(const Model& m, const Training& tr, const spec::Cluster& c,
                   const spec::NetworkDesign& d, const PlanResult& r, PlacementKind placement,
                   const RoutingFlip* flip) {
  const ErrorBand band = error_band(c.gpu.name, m, tr);
  Json plans = Json::array();
  for (const Plan& p : r.plans) {
    plans.push_back(to_json(p.strategy, p.time, placement));
    plans.back()["rank"] = plans.size();
    plans.back()["error_band"] = to_json(band, p.time.iteration_time_s);
  }
  Json j = run_json(m, tr, c, d);
  j["evaluated"] = r.evaluated;
  j["feasible"] = r.feasible;
  j["plans"] = std::move(plans);
  if (flip != nullptr) j["routing_flip"] = to_json(*flip);
  return j;
}

}  // namespace railsim::perf
