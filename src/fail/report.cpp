#include "railsim/fail/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/report/format.hpp"

namespace railsim::fail {

namespace {

using report::duration;

Json stats_json(const Stats& s) {
  return Json{{"mean", s.mean}, {"stddev", s.stddev}, {"p5", s.p5}, {"p50", s.p50}, {"p95", s.p95}};
}

Json null_if_inf(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

}  // namespace

std::vector<spec::DesignKind> parse_designs(const std::string& design, const std::string& option) {
  if (design == "both") return {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only};
  if (design == "rail_optimized" || design == "rail_only" || design == "ideal")
    return {spec::parse_design_kind(design, option)};  // ideal: spec says why not
  throw InputError(option,
                   fmt::format("unknown design '{}'; valid: rail_optimized, rail_only, both",
                               printable(design)));
}

namespace {
// The throughput the time to train of design i divides by: its best plan's, else the job's given.
std::optional<double> tokens_per_s_of(const GoodputReport& rep, std::size_t i) {
  if (i < rep.plan_tokens_per_s.size()) return rep.plan_tokens_per_s[i];
  return rep.tokens_per_s;
}
}  // namespace

GoodputReport goodput_report(const spec::Cluster& cluster, const GoodputRequest& req) {
  GoodputReport rep;
  rep.gpu = cluster.gpu.name;
  rep.rates = req.rates.name;
  rep.amortize_years = req.amortize_years;
  rep.tokens = req.tokens;
  rep.tokens_per_s = req.tokens_per_s;
  rep.pxn = req.run.pxn;
  if (!req.designs.empty()) rep.network = req.designs.front();
  if (req.catalog)  // first: a network the catalog cannot price fails before the Monte Carlo
    for (const spec::NetworkDesign& design : req.designs)
      rep.network_cost_usd.push_back(cost::evaluate(cluster, design, *req.catalog).cost.cost_usd());
  if (req.fabric)
    perf::check_pins(req.fabric->model, req.fabric->training, req.fabric->whatif.plan.pins);
  if (req.fabric)
    rep.effects = fmt::format("the Fabric: fail whatif of {}'s best plan, one component at a time",
                              req.fabric->model.name);
  for (const spec::NetworkDesign& design : req.designs) {
    FailureModel m = make_failure_model(cluster, design, req.rates, req.run);
    if (req.fabric) {
      WhatIfOptions w = req.fabric->whatif;
      w.pxn = req.run.pxn ? PxnMode::on : PxnMode::off;
      rep.effect_notes.push_back(
          fabric_effects(m, cluster, design, req.fabric->model, req.fabric->training, w));
      resolve_run(m, req.run);
    }
    rep.designs.push_back(run_goodput(m, req.mc));
    if (req.fabric && req.tokens && !req.tokens_per_s) {
      // The job's throughput on this design: its best plan's (pins kept), as `railsim plan`.
      perf::PlanOptions po = req.fabric->whatif.plan;
      po.top = 1;
      const perf::PlanResult pr = perf::plan(
          perf::make_context(req.fabric->model, req.fabric->training, cluster, design), po);
      if (pr.plans.empty())
        throw perf::explain_no_plan(pr, req.fabric->model, req.fabric->training, po.pins, cluster);
      rep.plan_tokens_per_s.push_back(pr.plans.front().time.tokens_per_s);
      rep.plan_text.push_back(perf::describe_degrees(pr.plans.front().strategy));
    }
  }
  return rep;
}

Json to_json(const GoodputReport& rep) {
  Json out;
  const GoodputResult* first = rep.designs.empty() ? nullptr : &rep.designs.front();
  out["gpu"] = rep.gpu;
  out["rates"] = rep.rates;
  out["effects"] = rep.effects;
  out["pxn"] = rep.pxn;
  out["network"] = spec::routing_json(rep.network);  // "seed" here is the Monte Carlo's
  if (first) {
    out["gpus"] = first->model.gpus;
    out["hb_domain"] = first->model.hb_domain;
    out["domains"] = first->model.domains;
    out["days"] = first->model.run_s / 86400.0;
    out["trials"] = first->trials;
    out["seed"] = first->seed;
  }
  Json designs = Json::array();
  for (std::size_t i = 0; i < rep.designs.size(); ++i) {
    const GoodputResult& g = rep.designs[i];
    const FailureModel& m = g.model;
    Json d;
    d["design"] = spec::to_string(m.design);
    d["tiers"] = m.tiers;
    d["interrupt_rate_per_day"] = m.interrupt_rate_per_s() * 86400.0;
    d["mtbf_h"] = std::isfinite(m.mtbf_s()) ? Json(m.mtbf_s() / 3600.0) : Json(nullptr);
    d["checkpoint_interval_min"] = m.checkpoint_interval_s / 60.0;
    d["checkpoint_interval_auto"] = m.checkpoint_interval_auto;
    d["checkpoint_write_s"] = m.checkpoint_write_s;
    d["restart_min"] = m.restart_s / 60.0;
    d["spare_domains"] = m.spare_domains;
    d["spare_gpus"] = m.spare_domains * m.hb_domain;
    d["spares_auto"] = m.spares_auto;
    d["mean_domains_in_repair"] = m.mean_domains_in_repair();
    d["degraded_policy"] = to_string(m.policy);
    d["ettr"] = stats_json(g.ettr);
    d["ettr"]["standard_error"] = g.ettr_standard_error();
    d["ettr_over_gpus_bought"] = g.ettr.mean * static_cast<double>(m.gpus) /
                                 static_cast<double>(m.gpus + m.spare_domains * m.hb_domain);
    d["interruptions"] = stats_json(g.interruptions);
    d["planned_restarts"] = stats_json(g.planned_restarts);
    d["degradations"] = stats_json(g.degradations);
    d["waits"] = g.waits_mean;
    d["gpu_hours"] = Json{{"wall", g.wall_gpu_h},
                          {"productive", g.productive_gpu_h},
                          {"checkpoint", g.checkpoint_gpu_h},
                          {"rework", g.rework_gpu_h},
                          {"restart", g.restart_gpu_h},
                          {"wait_for_repair", g.wait_gpu_h},
                          {"degraded", g.degraded_gpu_h}};
    Json streams = Json::array();
    for (std::size_t k = 0; k < m.streams.size(); ++k) {
      const EventStream& s = m.streams[k];
      streams.push_back(Json{{"name", s.name},
                             {"scope", spec::to_string(s.scope)},
                             {"tier", s.tier},
                             {"units", s.units},
                             {"rate_per_day", s.rate_per_s * 86400.0},
                             {"interrupts", s.effect.interrupts},
                             {"domains_lost", s.effect.domains_lost},
                             {"slowdown", s.effect.slowdown},
                             {"repair_h", s.effect.repair_s / 3600.0},
                             {"mean_events", g.mean_events[k]}});
    }
    d["streams"] = streams;
    if (i < rep.effect_notes.size()) d["effect_notes"] = rep.effect_notes[i];
    if (i < rep.network_cost_usd.size() && rep.network_cost_usd[i]) {
      d["network_cost_usd"] = *rep.network_cost_usd[i];
      d["amortize_years"] = rep.amortize_years;
      d["network_cost_per_effective_gpu_hour_usd"] =
          network_cost_per_effective_gpu_hour(g, *rep.network_cost_usd[i], rep.amortize_years);
    }
    if (i < rep.plan_tokens_per_s.size()) {
      d["tokens_per_s"] = rep.plan_tokens_per_s[i];
      d["tokens_per_s_from"] = "best plan: " + rep.plan_text[i];
    }
    if (const std::optional<double> tps = tokens_per_s_of(rep, i); rep.tokens && tps) {
      const TimeToTrain t = time_to_train(g, *rep.tokens, *tps);
      d["time_to_train_days"] = Json{{"ideal", t.ideal_days},
                                     {"mean", null_if_inf(t.days_mean)},
                                     {"at_ettr_p95", null_if_inf(t.days_fast)},
                                     {"at_ettr_p5", null_if_inf(t.days_slow)}};
    }
    designs.push_back(d);
  }
  out["designs"] = designs;
  return out;
}

std::string to_text(const GoodputReport& rep) {
  if (rep.designs.empty()) return "";
  const GoodputResult& g0 = rep.designs.front();
  const FailureModel& m0 = g0.model;
  std::string s = fmt::format(
      "goodput under failures: {} x {} (HB domain {}, {} domains), {} days, rates {}, {} trials, "
      "seed {}\n",
      report::thousands(double(m0.gpus)), rep.gpu, m0.hb_domain,
      report::thousands(double(m0.domains)), fmt::format("{:g}", m0.run_s / 86400.0), rep.rates,
      report::thousands(double(g0.trials)), g0.seed);
  s += fmt::format("checkpoint write {}, restart {} (detection + restart), degraded policy {}\n",
                   duration(m0.checkpoint_write_s), duration(m0.restart_s), to_string(m0.policy));
  s += fmt::format("network: {}; forwarding around a dead NIC through HB-domain peers (PXN) {}\n",
                   spec::describe_routing(rep.network, /*with_forwarding=*/true),
                   rep.pxn ? "on" : "off");
  s += fmt::format("network failure effects from {}\n", rep.effects);
  for (std::size_t i = 0; i < rep.effect_notes.size() && i < rep.designs.size(); ++i)
    for (const auto& n : rep.effect_notes[i])
      s += fmt::format("  {}: {}\n", spec::to_string(rep.designs[i].model.design), n);
  s += "\n";

  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  auto row = [&](std::string label, auto cell) {
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < rep.designs.size(); ++i) cells.push_back(cell(i));
    rows.emplace_back(std::move(label), std::move(cells));
  };
  auto G = [&](std::size_t i) -> const GoodputResult& { return rep.designs[i]; };
  row("", [&](std::size_t i) { return std::string(spec::to_string(G(i).model.design)); });
  row("switch tiers", [&](std::size_t i) { return std::to_string(G(i).model.tiers); });
  row("interrupting failures / day", [&](std::size_t i) {
    return fmt::format("{:.2f}", G(i).model.interrupt_rate_per_s() * 86400.0);
  });
  row("MTBF (interruptions)", [&](std::size_t i) { return duration(G(i).model.mtbf_s()); });
  row("checkpoint interval", [&](std::size_t i) {
    const FailureModel& m = G(i).model;
    return duration(m.checkpoint_interval_s) + (m.checkpoint_interval_auto ? " (Young/Daly)" : "");
  });
  row("spare domains", [&](std::size_t i) {
    const FailureModel& m = G(i).model;
    return fmt::format("{} ({} GPUs{})", m.spare_domains,
                       report::thousands(double(m.spare_domains * m.hb_domain)),
                       m.spares_auto ? ", auto" : "");
  });
  row("ETTR mean", [&](std::size_t i) {
    return fmt::format("{} +- {}", report::percent(G(i).ettr.mean, 2),
                       report::percent(G(i).ettr_standard_error(), 3));
  });
  row("ETTR p5 / p50 / p95", [&](std::size_t i) {
    const Stats& e = G(i).ettr;
    return fmt::format("{} / {} / {}", report::percent(e.p5, 2), report::percent(e.p50, 2),
                       report::percent(e.p95, 2));
  });
  row("interruptions mean [p5, p95]", [&](std::size_t i) {
    const Stats& e = G(i).interruptions;
    return fmt::format("{:.1f} [{:.0f}, {:.0f}]", e.mean, e.p5, e.p95);
  });
  row("degradations (ran through)",
      [&](std::size_t i) { return fmt::format("{:.1f}", G(i).degradations.mean); });
  row("planned restarts (swaps)",
      [&](std::size_t i) { return fmt::format("{:.1f}", G(i).planned_restarts.mean); });
  row("restarts that waited for repair",
      [&](std::size_t i) { return fmt::format("{:.2f}", G(i).waits_mean); });
  auto lost = [&](const char* label, double GoodputResult::*field) {
    row(label, [&, field](std::size_t i) {
      const GoodputResult& g = G(i);
      return fmt::format("{} ({})", report::thousands(g.*field),
                         report::percent(g.*field / g.wall_gpu_h, 2));
    });
  };
  row("GPU-hours lost, mean:", [](std::size_t) { return std::string(); });
  lost("  checkpoint writes", &GoodputResult::checkpoint_gpu_h);
  lost("  rework", &GoodputResult::rework_gpu_h);
  lost("  restart", &GoodputResult::restart_gpu_h);
  lost("  waiting for repair", &GoodputResult::wait_gpu_h);
  lost("  degraded slowdown", &GoodputResult::degraded_gpu_h);
  bool any_cost = false;
  for (const auto& c : rep.network_cost_usd) any_cost = any_cost || c.has_value();
  if (any_cost) {
    row("network cost", [&](std::size_t i) {
      const auto& c = i < rep.network_cost_usd.size() ? rep.network_cost_usd[i] : std::nullopt;
      return c ? report::money_fine(*c) : std::string("-");
    });
    row(fmt::format("per effective GPU-hour ({:g} y)", rep.amortize_years), [&](std::size_t i) {
      const auto& c = i < rep.network_cost_usd.size() ? rep.network_cost_usd[i] : std::nullopt;
      return c ? report::money_fine(
                     network_cost_per_effective_gpu_hour(G(i), *c, rep.amortize_years))
               : std::string("-");
    });
  }
  if (!rep.plan_tokens_per_s.empty()) {
    row("tokens/s (best plan)",
        [&](std::size_t i) { return report::thousands(rep.plan_tokens_per_s[i]); });
    row("best plan", [&](std::size_t i) { return rep.plan_text[i]; });
  }
  if (rep.tokens && tokens_per_s_of(rep, 0)) {
    row("days to train [ETTR p95, p5]", [&](std::size_t i) {
      const TimeToTrain t = time_to_train(G(i), *rep.tokens, *tokens_per_s_of(rep, i));
      return fmt::format("{:.1f} [{:.1f}, {:.1f}] (no failures {:.1f})", t.days_mean, t.days_fast,
                         t.days_slow, t.ideal_days);
    });
  }

  std::size_t label_w = 0;
  std::vector<std::size_t> col_w(rep.designs.size(), 0);
  for (const auto& [label, cells] : rows) {
    label_w = std::max(label_w, label.size());
    for (std::size_t i = 0; i < cells.size(); ++i) col_w[i] = std::max(col_w[i], cells[i].size());
  }
  for (const auto& [label, cells] : rows) {
    std::string line = fmt::format("{:<{}}", label, label_w);
    for (std::size_t i = 0; i < cells.size(); ++i)
      line += fmt::format("  {:>{}}", cells[i], col_w[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
  }
  return s;
}

}  // namespace railsim::fail
