#include "railsim/sim/check.hpp"

#include "railsim/core/json.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/topo/network_view.hpp"

namespace railsim::sim {

SimNetwork like_for_like(const topo::Fabric& fabric, SimConfig& cfg) {
  SimNetwork net = make_sim_network(fabric);
  scale_capacities(net, fabric.cluster.gpu.eff.hb, fabric.cluster.gpu.eff.nic);
  cfg.transfer_latency_s = fabric.cluster.gpu.eff.collective_latency_s;
  return net;
}

SimNetwork like_for_like(const topo::DegradedFabric& degraded, SimConfig& cfg) {
  SimNetwork net = make_sim_network(degraded);
  const spec::GpuEfficiency& e = degraded.fabric().cluster.gpu.eff;
  scale_capacities(net, e.hb, e.nic);
  cfg.transfer_latency_s = e.collective_latency_s;
  return net;
}

ScheduleCheck check_schedule(const topo::Fabric& fabric, const perf::CommSchedule& schedule,
                             const perf::Placement& placement, SimConfig cfg) {
  const SimNetwork net = like_for_like(fabric, cfg);
  cfg.hop_latency_s = 0;  // the analytic model's per-step latency stands for it
  ScheduleCheck out;
  out.sim = simulate_schedule(net, schedule, placement, cfg);
  // The analytic model under the simulation's routing and forwarding (docs/model.md section 5).
  spec::NetworkDesign d = fabric.design;
  d.routing = cfg.routing;
  d.forwarding = cfg.mode;
  d.forward_via = cfg.forwarding;
  d.forwarding_chunks = cfg.chunks;
  d.port_balance = cfg.port_balance;
  d.connections = cfg.connections;
  const perf::NetworkModel nm = perf::make_network_model(fabric.cluster, d);
  for (const perf::CommOp& op : schedule) {
    const double t = perf::collective_time(op, placement, nm).time_s;
    out.analytic_s.push_back(t);
    out.analytic_total_s += t * op.count;
  }
  return out;
}

void add_settings_json(Json& j, const topo::Fabric& fabric, const SimConfig& cfg, bool efficiency) {
  j["design"] = std::string(spec::to_string(fabric.design.kind));
  j["gpus"] = fabric.cluster.gpus;
  j["hb_domain"] = fabric.cluster.hb_domain;
  j["routing"] = std::string(spec::to_string(cfg.routing));
  j["seed"] = cfg.seed;
  j["forwarding"] = std::string(spec::to_string(cfg.mode));
  j["forward_via"] = std::string(spec::to_string(cfg.forwarding));
  j["chunks"] = cfg.chunks;
  j["port_balance"] = std::string(spec::to_string(cfg.port_balance));
  j["connections"] = cfg.connections;
  j["hop_latency_s"] = cfg.hop_latency_s;
  j["efficiency"] = efficiency;
  j["batching"] = batching_json(cfg.batch_tolerance);
}

Json batching_json(double t) {
  const bool exact = t <= kExactBatchTolerance;
  Json j = {{"tolerance", t}, {"exact", exact}, {"error_bound", exact ? 0.0 : t}};
  if (t == kDefaultBatchTolerance) j["measured_error"] = kDefaultBatchError;
  j["text"] = describe_batching(t);
  return j;
}

Json collective_document(const CollectiveResult& r, const CollectiveRequest& req,
                         const std::string& group, const topo::Fabric& fabric, const SimConfig& cfg,
                         bool efficiency) {
  Json j = to_json(r);
  j["collective"] = std::string(perf::to_string(req.op));
  j["algorithm"] = std::string(perf::to_string(req.algorithm));
  j["group"] = group;
  j["groups"] = req.groups.size();
  j["bytes"] = req.bytes;
  add_settings_json(j, fabric, cfg, efficiency);
  return j;
}

Json moe_document(const MoeResult& m, const MoeRequest& req, const std::string& group,
                  const topo::Fabric& fabric, const SimConfig& cfg, bool efficiency) {
  Json j = to_json(m.sim);
  j["collective"] = "all_to_all";
  j["group"] = group;
  j["groups"] = req.groups.size();
  add_settings_json(j, fabric, cfg, efficiency);
  j["moe"] = to_json(req, m.stats);
  return j;
}

Json schedule_document(const ScheduleCheck& chk, const topo::Fabric& fabric,
                       const perf::Strategy& s, double batch_tolerance) {
  Json j = to_json(chk);
  j["design"] = std::string(spec::to_string(fabric.design.kind));
  j["gpus"] = fabric.cluster.gpus;
  j["strategy"] = {{"tp", s.tp}, {"pp", s.pp}, {"dp", s.dp}, {"ep", s.ep}};
  if (s.cp > 1) j["strategy"]["cp"] = s.cp;
  // What sets the PP sends' count besides the degrees: the virtual stages and the schedule.
  if (s.interleave > 1) j["strategy"]["interleave"] = s.interleave;
  if (s.schedule != perf::PipelineSchedule::one_f_one_b)
    j["strategy"]["pp_schedule"] = std::string(spec::to_string(s.schedule));
  j.update(spec::routing_json(fabric.design));
  j["batching"] = batching_json(batch_tolerance);
  return j;
}

Json to_json(const CollectiveResult& r) {
  Json j;
  j["completion_time_s"] = r.completion_time_s;
  j["flows_simulated"] = r.flows_simulated;
  j["flows_represented"] = r.flows_represented;
  j["bytes_sent"] = r.bytes_sent;
  j["phases"] = Json::array();
  for (const auto& p : r.phases)
    j["phases"].push_back({{"name", p.name},
                           {"time_s", p.time_s},
                           {"steps", p.steps},
                           {"step_scaled", p.step_scaled},
                           {"aggregated", p.aggregated},
                           {"flows_simulated", p.flows_simulated},
                           {"events", p.events}});
  j["tiers"] = Json::array();
  for (const auto& t : r.tiers)
    j["tiers"].push_back(
        {{"name", t.name}, {"peak_utilisation", t.peak_utilisation}, {"bytes", t.bytes}});
  j["busiest"] = Json::array();
  for (const auto& b : r.busiest)
    j["busiest"].push_back(
        {{"name", b.name}, {"peak_utilisation", b.peak_utilisation}, {"bytes", b.bytes}});
  return j;
}

Json to_json(const ScheduleCheck& r) {
  Json ops = Json::array();
  for (std::size_t i = 0; i < r.sim.ops.size(); ++i) {
    const auto& o = r.sim.ops[i];
    const double an = r.analytic_s[i];
    ops.push_back({{"parallelism", std::string(perf::to_string(o.op.parallelism))},
                   {"op", std::string(perf::to_string(o.op.op))},
                   {"axis", std::string(perf::to_string(o.op.axis))},
                   {"algorithm", std::string(perf::to_string(o.op.algorithm))},
                   {"phase", std::string(perf::to_string(o.op.phase))},
                   {"bytes", o.op.bytes},
                   {"count", o.op.count},
                   {"sim_time_s", o.time_s},
                   {"analytic_time_s", an},
                   {"sim_over_analytic", an > 0 ? o.time_s / an : 0.0}});
  }
  Json j;
  j["completion_time_s"] = r.sim.total_s;
  j["analytic_time_s"] = r.analytic_total_s;
  j["ops"] = std::move(ops);
  return j;
}

}  // namespace railsim::sim
