#include "railsim/fail/whatif.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/hash.hpp"
#include "railsim/fail/rng.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/report/format.hpp"
#include "railsim/sim/check.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/network_view.hpp"

namespace railsim::fail {

namespace {

constexpr EnumNames<PxnMode, 2> kPxnNames{{{
    {PxnMode::on, "on"},
    {PxnMode::off, "off"},
}}};
constexpr EnumNames<SimMode, 3> kSimNames{{{
    {SimMode::automatic, "auto"},
    {SimMode::on, "on"},
    {SimMode::off, "off"},
}}};

// The flow hash of a pair (any fixed hash: the what-if routes each pair once).
inline std::uint64_t mix(std::uint64_t x) {
  return splitmix64(x);
}

// The GPUs a forwarded path passes through (the far ends of its HB hops), for the examples.
std::string via(const topo::Fabric& f, std::int64_t src, std::int64_t dst, const topo::Path& p) {
  std::vector<std::string> peers;
  for (std::int32_t ch : p) {
    const topo::Link& l = f.links[static_cast<std::size_t>(ch / 2)];
    if (l.kind != topo::LinkKind::hb) continue;
    const std::int64_t g = l.a;
    if (g == src || g == dst) continue;
    peers.push_back(fmt::format("GPU {} (rail {})", g, f.cluster.rail_of(g)));
  }
  if (peers.empty()) return "";
  std::string out = peers[0];
  for (std::size_t i = 1; i < peers.size(); ++i) out += " and " + peers[i];
  return out;
}

// Which parallelism's exposed time a schedule op's slowdown scales.
double exposed_of(const perf::Breakdown& b, perf::Parallelism p) {
  switch (p) {
    case perf::Parallelism::tp:
    case perf::Parallelism::sp:
      return b.tp_comm_s;
    case perf::Parallelism::pp:
      return b.pp_comm_s;
    case perf::Parallelism::dp:
      return b.dp_comm_s;
    case perf::Parallelism::ep:
      return b.ep_comm_s + b.rail_forwarding_s;
    case perf::Parallelism::cp:
      return b.cp_comm_s;
  }
  return 0;
}

// The analytic model on the degraded network, coarsely: every NIC slowed by the busiest NIC's
// load factor, HB links by the domains' HB factor, and each tier's uplink bundles by its worst
// block's live share (its healthy over its degraded down:up ratio).
void apply_network(perf::EstimateContext& ctx, double nic_factor,
                   const std::vector<double>& healthy_ratio,
                   const std::vector<double>& uplink_ratio, double hb_factor = 1.0) {
  ctx.net.nic_Bps /= nic_factor;
  ctx.net.hb_Bps *= hb_factor;
  std::vector<double> live(uplink_ratio.size(), 1.0);
  for (std::size_t t = 1; t < uplink_ratio.size() && t <= topo::NetworkView::kMaxTiers; ++t) {
    ctx.net.view.uplink_ratio[t] = uplink_ratio[t];
    if (t < healthy_ratio.size() && uplink_ratio[t] > 0)
      live[t] = healthy_ratio[t] / uplink_ratio[t];
  }
  if (ctx.net.contention)
    ctx.net.contention = ctx.net.contention->scaled(nic_factor, hb_factor, live);
}

bool finite_ratios(const std::vector<double>& r) {
  return std::all_of(r.begin(), r.end(), [](double x) { return std::isfinite(x); });
}

void check_pairs(const topo::Fabric& f, const topo::DegradedFabric& d, const perf::Placement& pl,
                 const perf::CommSchedule& cs, int examples, DesignWhatIf& out) {
  std::set<std::pair<int, bool>> seen;
  topo::Path healthy, live;
  healthy.reserve(static_cast<std::size_t>(d.max_path_channels()));
  live.reserve(static_cast<std::size_t>(d.max_path_channels()));
  auto check = [&](std::int64_t a, std::int64_t b) {
    if (a == b) return;
    const std::uint64_t h =
        mix(static_cast<std::uint64_t>(a) * 0x100000001B3ull ^ static_cast<std::uint64_t>(b));
    ++out.pairs;
    live.clear();
    const topo::RouteStatus st = d.route(a, b, h, 0, live);
    if (st == topo::RouteStatus::none) {
      ++out.pairs_unreachable;
    } else if (st == topo::RouteStatus::forwarded) {
      ++out.pairs_forwarded;
    } else {
      healthy.clear();
      f.route(a, b, h, topo::Forwarding::hb_first, healthy);
      if (healthy == live) {
        ++out.pairs_direct;
        return;
      }
      ++out.pairs_rerouted;
    }
    // The words only for the pairs shown (the counts cover every pair).
    if (static_cast<int>(out.examples.size()) >= examples) return;
    const std::string note = st == topo::RouteStatus::none ? std::string("no live path")
                             : st == topo::RouteStatus::forwarded
                                 ? fmt::format("forwarded through {} ({} peer routes)",
                                               via(f, a, b, live), d.peer_choices(a, b))
                                 : std::string("rerouted by ECMP around a dead link or switch");
    out.examples.push_back(fmt::format("GPU {} -> GPU {}: {}", a, b, note));
  };
  for (const perf::CommOp& op : cs) {
    const bool a2a = op.op == perf::CollectiveOp::all_to_all;
    if (!seen.insert({static_cast<int>(op.axis), a2a}).second) continue;
    for (const sim::Group& g : sim::groups_of_axis(pl, op.axis)) {
      const auto n = static_cast<std::int64_t>(g.size());
      if (n < 2) continue;
      if (a2a && n <= 64) {
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < n; ++j) check(g[i], g[j]);
      } else {
        for (std::int64_t i = 0; i < n; ++i) {
          check(g[i], g[(i + 1) % n]);
          check(g[(i + 1) % n], g[i]);
        }
      }
    }
  }
}

// The flow simulation of the plan's schedule on the healthy and the degraded fabric.
void simulate(const topo::Fabric& f, const topo::DegradedFabric& d, const perf::Placement& pl,
              const perf::CommSchedule& cs, const perf::Breakdown& b, DesignWhatIf& out) {
  // The design's routing (--routing; under spray each bundle holds its live links only) and
  // forwarding, as the analytic model times the plan.
  sim::SimConfig cfg = sim::sim_config(f.design);
  cfg.aggregate = sim::Aggregation::off;  // failures break the symmetry aggregation needs
  const sim::ScheduleCheck healthy = sim::check_schedule(f, cs, pl, cfg);
  sim::SimConfig dcfg = cfg;
  const sim::SimNetwork net = sim::like_for_like(d, dcfg);
  dcfg.hop_latency_s = 0;
  const sim::ScheduleResult degraded = sim::simulate_schedule(net, cs, pl, dcfg);
  std::array<double, perf::kParallelismCount> h{}, g{};
  for (std::size_t i = 0; i < healthy.sim.ops.size(); ++i) {
    const auto p = static_cast<std::size_t>(healthy.sim.ops[i].op.parallelism);
    h[p] += healthy.sim.ops[i].total_s;
    g[p] += degraded.ops[i].total_s;
  }
  out.simulated = true;
  out.sim_healthy_comm_s = healthy.sim.total_s;
  out.sim_degraded_comm_s = degraded.total_s;
  out.sim_degraded_s = out.healthy_s;
  // Each parallelism's exposed time, once (tp and sp share tp_comm_s).
  std::array<double, perf::kParallelismCount> hp{}, gp{};
  for (std::size_t p = 0; p < hp.size(); ++p) {
    const std::size_t q = p == static_cast<std::size_t>(perf::Parallelism::sp)
                              ? static_cast<std::size_t>(perf::Parallelism::tp)
                              : p;
    hp[q] += h[p];
    gp[q] += g[p];
  }
  for (std::size_t p = 0; p < hp.size(); ++p)
    if (hp[p] > 0)
      out.sim_degraded_s +=
          exposed_of(b, static_cast<perf::Parallelism>(p)) * (gp[p] / hp[p] - 1.0);
}

}  // namespace

std::string_view to_string(PxnMode m) {
  return kPxnNames.name(m);
}
PxnMode parse_pxn_mode(std::string_view s, const std::string& option) {
  return kPxnNames.parse(s, option, "forwarding mode");
}
SimMode parse_sim_mode(std::string_view s, const std::string& option) {
  return kSimNames.parse(s, option, "simulation mode");
}

namespace {

// What is cut off, and how much NIC capacity each domain keeps: GPUs dead or cut off, domains
// lost, forwarding or with a dead HB plane, the NIC load factor. A GPU that keeps some of its NIC
// ports sends its share over them (M / live for it: a transfer is split over the live ports,
// as the simulator splits it); a GPU with none forwards through its domain's peers, whose live
// ports share the domain's traffic (K M / live of the domain). The factor is the worst of both.
void count_losses(const spec::Cluster& c, const topo::Fabric& f, const topo::DegradedFabric& d,
                  DesignWhatIf& out) {
  const std::int64_t K = c.hb_domain, M = f.nics_per_gpu();  // NIC ports
  for (std::int64_t dom = 0; dom < c.domains(); ++dom) {
    bool lost = !d.node_alive(c.gpus + dom), forwarding = false;
    std::int64_t live = 0;
    double own = 1.0;  // the worst GPU of the domain on its own live ports
    for (std::int64_t r = 0; r < K; ++r) {
      const std::int64_t g = c.gpu_at(dom, r);
      if (!d.gpu_alive(g)) {
        ++out.gpus_dead;
        lost = true;
        continue;
      }
      if (d.cut_off(g)) {
        ++out.gpus_cut_off;
        lost = true;
        continue;
      }
      if (f.layout.instances > 0 && !d.any_edge_alive(g)) forwarding = true;
      std::int64_t mine = 0;
      for (int n = 0; n < M; ++n) mine += d.edge_alive(g, n) ? 1 : 0;
      live += mine;
      if (mine > 0) own = std::max(own, static_cast<double>(M) / static_cast<double>(mine));
    }
    if (!lost && d.hb_factor(dom) < 1.0) {
      ++out.domains_hb_degraded;
      out.hb_factor = std::min(out.hb_factor, d.hb_factor(dom));
    }
    if (lost) {
      ++out.domains_lost;
    } else if (f.layout.instances > 0) {
      if (forwarding) ++out.domains_forwarding;
      out.nic_load_factor = std::max(out.nic_load_factor, own);
      if (forwarding && live > 0)
        out.nic_load_factor = std::max(out.nic_load_factor, static_cast<double>(K * M) / live);
    }
  }
}

// The job runs on the degraded network, if it can.
JobOption run_degraded_option(const DesignWhatIf& out) {
  JobOption run;
  run.name = "run degraded";
  if (out.runnable) {
    run.possible = true;
    run.throughput = out.healthy_s / out.degraded_s;
    run.detail = out.simulated ? fmt::format("analytic {:.4f}, simulated {:.4f}", run.throughput,
                                             out.healthy_s / out.sim_degraded_s)
                               : "analytic model (not simulated: --sim)";
  } else {
    run.detail = out.gpus_dead + out.gpus_cut_off > 0
                     ? fmt::format("{} GPUs dead or cut off", out.gpus_dead + out.gpus_cut_off)
                 : out.pairs_unreachable > 0
                     ? fmt::format("{} pairs of the plan have no live path", out.pairs_unreachable)
                     : "a switch block has no live uplink";
  }
  return run;
}

// The job drops the affected domains and re-plans on what is left (a restart).
JobOption drop_domains_option(const spec::Cluster& c, const spec::NetworkDesign& design,
                              const perf::Model& model, const perf::Training& training,
                              const WhatIfOptions& opt, int tiers, std::int64_t affected,
                              const DesignWhatIf& out) {
  const std::int64_t K = c.hb_domain;
  JobOption drop;
  drop.name = "drop domains and re-plan";
  drop.restart = true;
  if (affected == 0) {
    drop.detail = "no HB domain to drop (the failures are above the leaves)";
  } else if (affected >= c.domains()) {
    drop.detail = "every HB domain is affected";
  } else {
    // The job may use fewer GPUs than are left when that lets its batch split better: the best
    // throughput over the whole domains left and a few smaller sizes (ours).
    const std::int64_t left_domains = c.domains() - affected;
    std::vector<std::int64_t> sizes;
    for (std::int64_t j = 0; j < 16 && left_domains - j >= 1; ++j)
      sizes.push_back(left_domains - j);
    for (std::int64_t p = 2; p < left_domains; p *= 2) {
      sizes.push_back(left_domains / p * p);
      if (p > 1 << 20) break;
    }
    std::sort(sizes.begin(), sizes.end(), std::greater<>());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    std::string first_reason;
    for (std::int64_t dom : sizes) {
      if (dom < 1) continue;
      try {
        spec::Cluster left = c;  // the same GPUs and HB domains, fewer of them
        left.gpus = dom * K;
        perf::EstimateContext lctx = perf::make_context(model, training, left, design);
        if (topo::make_network_view(left, design).tiers == tiers && finite_ratios(out.uplink_ratio))
          apply_network(lctx, 1.0, out.healthy_uplink_ratio, out.uplink_ratio);
        const perf::PlanResult lr = perf::plan(lctx, opt.plan);
        if (lr.plans.empty()) {
          if (first_reason.empty())
            first_reason =
                fmt::format("no plan on {} GPUs: {}", left.gpus,
                            perf::explain_no_plan(lr, model, training, opt.plan.pins, left).what());
          continue;
        }
        const double tput = out.healthy_s / lr.plans.front().time.iteration_time_s;
        if (!drop.possible || tput > drop.throughput) {
          drop.possible = true;
          drop.throughput = tput;
          drop.detail = fmt::format("{} of the {} GPUs left (global batch kept): {}",
                                    report::thousands(static_cast<double>(left.gpus)),
                                    report::thousands(static_cast<double>(left_domains * K)),
                                    perf::describe(lr.plans.front().strategy));
        }
      } catch (const InputError& e) {
        if (first_reason.empty()) first_reason = e.what();
      }
    }
    if (!drop.possible) drop.detail = first_reason;
  }
  return drop;
}

// The job swaps spare domains in for the affected ones (a restart) and runs on the network's
// remaining failures.
JobOption swap_spares_option(const perf::EstimateContext& ctx, const perf::Strategy& s,
                             std::int64_t affected, const DesignWhatIf& out) {
  JobOption swap;
  swap.name = "swap in spares";
  swap.restart = true;
  if (affected == 0) {
    swap.detail = "no HB domain to swap (the failures are above the leaves)";
  } else if (affected > out.spare_domains) {
    swap.detail = fmt::format("{} domains affected, {} spare{}", affected, out.spare_domains,
                              out.spares_auto ? " (auto)" : "");
  } else if (!finite_ratios(out.uplink_ratio)) {
    swap.detail = "a switch block has no live uplink";
  } else {
    perf::EstimateContext sctx = ctx;
    apply_network(sctx, 1.0, out.healthy_uplink_ratio, out.uplink_ratio);
    swap.possible = true;
    swap.throughput = out.healthy_s / perf::estimate(sctx, s).iteration_time_s;
    swap.detail = fmt::format("{} of {} spare domains{}", affected, out.spare_domains,
                              out.spares_auto ? " (auto)" : "");
  }
  return swap;
}

}  // namespace

DesignWhatIf what_if_design(const spec::Cluster& c, const spec::NetworkDesign& design,
                            const perf::Model& model, const perf::Training& training,
                            const WhatIfOptions& opt) {
  DesignWhatIf out;
  out.design = design.kind;
  const topo::Fabric f = topo::build_fabric(c, design);
  out.tiers = f.tiers;
  topo::FailureSet set;
  for (std::size_t i = 0; i < opt.fail.size(); ++i) {
    try {
      set.push_back(topo::parse_failure(opt.fail[i], f, "--fail"));
    } catch (const InputError& e) {
      out.not_present.push_back(e.what());
      out.not_present_index.push_back(i);
    }
  }
  if (opt.random > 0) {
    const topo::FailureSet r = topo::random_failures(f, opt.random, opt.seed);
    set.insert(set.end(), r.begin(), r.end());
  }
  for (const auto& x : set) out.failures.push_back(topo::to_string(x));
  out.pxn = opt.pxn == PxnMode::on;
  out.network = design;
  const topo::DegradedFabric d(f, set, out.pxn);

  count_losses(c, f, d, out);
  for (const auto& t : topo::capacity_by_tier(d))
    out.tiers_lost.push_back({t.name, t.links, t.links_lost, t.capacity_Bps, t.lost_Bps});
  const topo::NetworkView view = topo::make_network_view(f);
  out.healthy_uplink_ratio.assign(static_cast<std::size_t>(std::max(f.tiers, 1)), 1.0);
  for (int t = 1; t < f.tiers; ++t)
    out.healthy_uplink_ratio[static_cast<std::size_t>(t)] =
        view.uplink_ratio[static_cast<std::size_t>(t)];
  out.uplink_ratio = topo::degraded_uplink_ratio(d, out.healthy_uplink_ratio);

  // The chosen plan on the healthy network, and its communicating pairs on the degraded one.
  const perf::EstimateContext ctx = perf::make_context(model, training, c, design);
  const perf::PlanResult res = perf::plan(ctx, opt.plan);
  // No plan on the healthy network is the job's input at fault (a pinned knob, the batch, the
  // memory), not an effect of the failures: the error names the option.
  if (res.plans.empty()) throw perf::explain_no_plan(res, model, training, opt.plan.pins, c);
  out.plan = res.plans.front();
  const perf::Strategy& s = out.plan->strategy;
  out.healthy_s = out.plan->time.iteration_time_s;
  const perf::Placement pl(c, s.degrees(), ctx.placement);
  const perf::CommSchedule cs = perf::build_comm_schedule(model, training, s, pl);
  check_pairs(f, d, pl, cs, opt.examples, out);
  out.runnable = out.gpus_dead == 0 && out.gpus_cut_off == 0 && out.pairs_unreachable == 0 &&
                 finite_ratios(out.uplink_ratio);

  if (out.runnable) {
    perf::EstimateContext dctx = ctx;
    apply_network(dctx, out.nic_load_factor, out.healthy_uplink_ratio, out.uplink_ratio,
                  out.hb_factor);
    out.degraded_s = perf::estimate(dctx, s).iteration_time_s;
    const bool sim =
        opt.sim == SimMode::on || (opt.sim == SimMode::automatic && c.gpus <= kSimAutoGpus);
    if (sim) simulate(f, d, pl, cs, out.plan->time.breakdown, out);
  }

  // The job's options, with the spares (goodput's auto spares unless given; fabric_effects,
  // which asks no options, does not build the failure model they come from).
  if (!opt.job_options) return out;
  out.spares_auto = !opt.spare_domains;
  out.spare_domains =
      opt.spare_domains
          ? *opt.spare_domains
          : auto_spare_domains(make_failure_model(
                c, design, spec::load_failure_rates(spec::kDefaultFailureRates, "--rates"),
                RunParams{}));
  const JobOption run = run_degraded_option(out);
  // Domains forwarding or with a dead HB plane are not lost, but dropping or swapping them
  // removes their slowdown (a domain may count twice here only in the rare case of both).
  const std::int64_t affected = out.domains_lost + out.domains_forwarding + out.domains_hb_degraded;
  const JobOption drop =
      drop_domains_option(c, design, model, training, opt, f.tiers, affected, out);
  const JobOption swap = swap_spares_option(ctx, s, affected, out);
  out.options = {run, drop, swap};
  return out;
}

WhatIfReport what_if(const spec::Cluster& c, const std::vector<spec::NetworkDesign>& designs,
                     const perf::Model& model, const perf::Training& training,
                     const WhatIfOptions& opt) {
  if (opt.fail.empty() && opt.random == 0)
    throw InputError("--fail", "give at least one component (--fail KIND:INDEX) or --fail-random");
  if (designs.empty()) throw InputError("--design", "give at least one design");
  perf::check_pins(model, training, opt.plan.pins);  // a knob that cannot work, before any plan
  WhatIfReport r;
  r.model = model.name;
  r.gpu = c.gpu.name;
  r.gpus = c.gpus;
  r.hb_domain = c.hb_domain;
  for (const auto& d : designs) r.designs.push_back(what_if_design(c, d, model, training, opt));
  // A spec that names nothing in any design is a typo, not a what-if.
  for (std::size_t i = 0; i < opt.fail.size(); ++i) {
    bool anywhere = false;
    std::string why;
    for (const auto& d : r.designs) {
      const auto it = std::find(d.not_present_index.begin(), d.not_present_index.end(), i);
      if (it == d.not_present_index.end())
        anywhere = true;
      else if (why.empty())
        why = d.not_present[static_cast<std::size_t>(it - d.not_present_index.begin())].substr(
            std::string("--fail: ").size());
    }
    if (!anywhere) throw InputError("--fail", why);
  }
  if (!r.designs.empty() && std::all_of(r.designs.begin(), r.designs.end(), [&](const auto& d) {
        return d.gpus_dead + d.gpus_cut_off == c.gpus;
      }))
    throw InputError("--fail", fmt::format("the failures cut off every one of the {} GPUs",
                                           report::thousands(static_cast<double>(c.gpus))));
  return r;
}

}  // namespace railsim::fail
