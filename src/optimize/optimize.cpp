#include "railsim/optimize/optimize.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "railsim/core/checks.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/report/format.hpp"
#include "railsim/spec/catalog.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/spec/routing_table.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/topo/network_view.hpp"

namespace railsim::optimize {

namespace {

// Everything perf sees of a candidate: two candidates with the same key get the same plans.
std::string plan_key(const spec::Cluster& c, const spec::NetworkDesign& d,
                     const topo::NetworkView& v) {
  std::string k =
      fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", c.gpu.name, c.gpus, c.hb_domain,
                  c.hb_bw_Bps, c.nic_bw_Bps, c.nics_per_gpu, static_cast<int>(v.kind), v.tiers,
                  v.nic_link_Bps, v.port_Bps, v.rail_join_tier, d.planes, d.nic_ports, d.dual_tor);
  for (int t = 1; t <= v.tiers && t <= topo::NetworkView::kMaxTiers; ++t)
    k += fmt::format("|{}:{}", v.rail_domains_under[static_cast<std::size_t>(t)],
                     v.uplink_ratio[static_cast<std::size_t>(t)]);
  return k;
}

struct PlanCache {
  std::map<std::string, std::vector<ModelOutcome>> by_key;
  std::int64_t computed = 0;
};

std::vector<ModelOutcome> plans_for(const Candidate& cand, const std::vector<ModelSpec>& models,
                                    const Options& opt, PlanCache& cache) {
  const topo::NetworkView v = topo::make_network_view(cand.cluster, cand.design);
  const std::string key = plan_key(cand.cluster, cand.design, v);
  auto it = cache.by_key.find(key);
  if (it != cache.by_key.end()) return it->second;
  std::vector<ModelOutcome> out;
  for (const ModelSpec& m : models) {
    ModelOutcome o;
    const perf::EstimateContext ctx =
        perf::make_context(m.model, m.training, cand.cluster, cand.design);
    perf::PlanOptions po;
    po.pins = m.pins;
    po.top = 1;
    po.threads = opt.threads;
    const perf::PlanResult r = perf::plan(ctx, po);
    ++cache.computed;
    if (r.plans.empty())
      o.no_plan_reason = perf::explain_no_plan(r, m.model, m.training, m.pins, cand.cluster).what();
    else
      o.best = r.plans.front();
    out.push_back(std::move(o));
  }
  cache.by_key.emplace(key, out);
  return out;
}

// The iteration time the target allows each model (infinity when only an MFU bound is set).
double limit_s(const Target& t, const ModelSpec& m, double reference) {
  double lim = std::numeric_limits<double>::infinity();
  if (t.max_iteration_s) lim = std::min(lim, *t.max_iteration_s);
  if (t.within) lim = std::min(lim, (1.0 + *t.within) * reference);
  if (t.tokens && t.days) {
    const double per_iter =
        static_cast<double>(m.training.global_batch) * static_cast<double>(m.training.seq_len);
    lim = std::min(lim, *t.days * 86400.0 / (*t.tokens / per_iter));
  }
  return lim;
}

void judge(Candidate& c, const std::vector<ModelSpec>& models, const Target& t,
           const std::vector<double>& reference, const std::vector<double>& ideal) {
  c.meets = true;
  c.binding = -1;
  c.worst_relative = 0;
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < c.models.size(); ++i) {
    ModelOutcome& o = c.models[i];
    o.limit_s = limit_s(t, models[i], reference[i]);
    if (!o.best) {
      o.meets = false;
      o.slack = -std::numeric_limits<double>::infinity();
      c.meets = false;
      c.worst_relative = std::numeric_limits<double>::infinity();
      if (least > o.slack || c.binding < 0) {
        least = o.slack;
        c.binding = static_cast<int>(i);
      }
      continue;
    }
    const double time = o.best->time.iteration_time_s;
    double slack =
        std::isfinite(o.limit_s) ? o.limit_s / time - 1.0 : std::numeric_limits<double>::infinity();
    if (t.min_mfu) slack = std::min(slack, o.best->time.mfu / *t.min_mfu - 1.0);
    o.slack = slack;
    o.meets = slack >= -1e-12;
    c.meets = c.meets && o.meets;
    c.worst_relative = std::max(c.worst_relative, time / ideal[i]);
    if (slack < least || c.binding < 0) {
      least = slack;
      c.binding = static_cast<int>(i);
    }
  }
}

}  // namespace

std::string Candidate::name() const {
  std::string d(spec::to_string(design.kind));
  if (design.oversubscription > 1.0) d += fmt::format(" {:g}:1", design.oversubscription);
  const std::string planes =
      design.planes > 1 ? fmt::format(" {} planes ({} ports)", design.planes, design.nic_ports)
                        : "";
  return fmt::format("{} K={} {:g}G x{}{} {}{} {}", d, cluster.hb_domain,
                     units::Bps_to_gbps(cluster.nic_bw_Bps), cluster.nics_per_gpu, planes,
                     design.sw.name, design.copper_gpu_leaf ? " copper" : "", catalog);
}

namespace {

// The request's own consistency: models, a target, non-empty candidate lists.
void check_request(const std::vector<ModelSpec>& models, const Space& space, const Target& target) {
  if (models.empty()) throw InputError("--model", "give at least one model");
  if (!target.max_iteration_s && !target.min_mfu && !target.within && !target.tokens)
    throw InputError("--within",
                     "give a target: --max-iteration-time, --min-mfu, --within, or "
                     "--tokens with --days");
  if (target.tokens.has_value() != target.days.has_value())
    throw InputError(target.tokens ? "--days" : "--tokens",
                     "--tokens and --days go together (the time to train that many tokens)");
  auto nonempty = [](bool empty, const char* option) {
    if (empty) throw InputError(option, "the list of candidates is empty");
  };
  nonempty(space.designs.empty(), "--design");
  nonempty(space.oversubscription.empty(), "--oversubscription");
  nonempty(space.copper.empty(), "--copper-gpu-leaf");
}

// The values each candidate axis takes (the GPU's own where a list is empty).
struct Lists {
  std::vector<std::int64_t> ks;
  std::vector<double> nics;
  std::vector<std::int64_t> nic_counts;
  std::vector<std::string> switches, catalogs;
};

// The axes' values, each checked as make_cluster checks it (the error names its option), and the
// work bounded before any of it starts: the product of the lists, named by its longest.
Lists lists_of(const spec::GpuSpec& gpu, const Space& space) {
  Lists L;
  L.ks =
      space.hb_domain.empty() ? std::vector<std::int64_t>{gpu.default_hb_domain} : space.hb_domain;
  L.nics = space.nic_gbps.empty() ? std::vector<double>{units::Bps_to_gbps(gpu.nic_bw_Bps)}
                                  : space.nic_gbps;
  L.nic_counts =
      space.nics_per_gpu.empty() ? std::vector<std::int64_t>{gpu.nics_per_gpu} : space.nics_per_gpu;
  // Each value alone, as make_cluster checks it, so that the error names its option.
  for (double g : L.nics) check_number("--nic-gbps", g, Range::between(1.0, 1e6));
  for (std::int64_t n : L.nic_counts) check_integer("--nics-per-gpu", n, 1, 64);
  L.switches = space.switches.empty() ? spec::preset_names("switches") : space.switches;
  L.catalogs =
      space.catalogs.empty() ? std::vector<std::string>{spec::kDefaultCatalog} : space.catalogs;
  // The work is bounded before any of it starts: the product of the lists, named by its longest.
  {
    const std::pair<std::size_t, const char*> lists[] = {
        {L.ks.size(), "--hb-domain"},
        {L.nics.size(), "--nic-gbps"},
        {L.nic_counts.size(), "--nics-per-gpu"},
        {space.planes.size(), "--planes"},
        {space.designs.size(), "--design"},
        {space.oversubscription.size(), "--oversubscription"},
        {L.switches.size(), "--switch"},
        {space.copper.size(), "--copper-gpu-leaf"},
        {L.catalogs.size(), "--catalog"}};
    double networks = 1;
    for (const auto& [n, option] : lists) networks *= static_cast<double>(n);
    if (networks > static_cast<double>(kMaxCandidateNetworks)) {
      const auto* longest = &lists[0];
      for (const auto& l : lists)
        if (l.first > longest->first) longest = &l;
      throw InputError(longest->second,
                       fmt::format("the lists make {:.3g} candidate networks, more than one search "
                                   "takes ({}); shorten a list (this one has {} values)",
                                   networks, kMaxCandidateNetworks, longest->first));
    }
  }
  return L;
}

// Every network of the space that can be built and priced, with whether it is within budget; the
// others are counted in r.invalid (with a few examples).
void add_candidates(const spec::GpuSpec& gpu, std::int64_t gpus, const Space& space,
                    const Budget& budget, const Lists& L, const std::vector<spec::SwitchSpec>& sws,
                    const std::vector<spec::Catalog>& cats, Result& r) {
  auto invalid = [&r](const std::string& what) {
    ++r.invalid;
    if (r.invalid_examples.size() < 3) r.invalid_examples.push_back(what);
  };
  // One network of the space over cluster c (m NICs per GPU): priced, or counted as invalid.
  auto add = [&](const spec::Cluster& c, std::int64_t m, std::int64_t planes, spec::DesignKind kind,
                 double o, const spec::SwitchSpec& sw, bool copper, const spec::Catalog& cat) {
    Candidate cand;
    cand.cluster = c;
    cand.catalog = cat.name;
    try {
      spec::NetworkDesign nd = spec::make_network_design(kind, sw, o, 1, copper, 0);
      spec::split_nics_over_planes(nd, planes, m);
      cand.design = spec::fit_to_cluster(c, nd);
      cand.design.routing = space.routing.value_or(spec::default_routing(sw));
      cand.design.routing_default = !space.routing.has_value();
      const cost::DesignReport rep = cost::evaluate(c, cand.design, cat);
      // Oversubscription needs a tier above the leaf: a one-tier network with a ratio is the
      // same network as without (kept once).
      if (rep.bom.tiers <= 1 && o > 1.0) return;
      cand.tiers = rep.bom.tiers;
      cand.switches = rep.bom.switches;
      cand.cost_usd = rep.cost.cost_usd();
      cand.power_w = rep.cost.power_w();
    } catch (const InputError& e) {
      invalid(fmt::format("{} {} K={} {:g}G: {}", spec::to_string(kind), sw.name, c.hb_domain,
                          units::Bps_to_gbps(c.nic_bw_Bps), e.what()));
      return;
    }
    cand.within_budget = (!budget.max_cost_usd || cand.cost_usd <= *budget.max_cost_usd) &&
                         (!budget.max_power_w || cand.power_w <= *budget.max_power_w);
    r.candidates.push_back(std::move(cand));
  };
  for (std::int64_t k : L.ks)
    for (double nic : L.nics)
      for (std::int64_t m : L.nic_counts) {
        spec::Cluster c;
        try {
          c = spec::make_cluster(gpu, gpus, k, nic, gpu.hb_bw_Bps / units::kGB,
                                 static_cast<int>(m));
        } catch (const InputError& e) {
          invalid(fmt::format("K={} {:g}G x{}: {}", k, nic, m, e.what()));
          continue;
        }
        for (std::int64_t planes : space.planes)
          for (spec::DesignKind kind : space.designs)
            for (double o : space.oversubscription)
              for (const auto& sw : sws)
                for (bool copper : space.copper)
                  for (const auto& cat : cats) add(c, m, planes, kind, o, sw, copper, cat);
      }
}

// No candidate within budget: which budget and by how much.
void check_budgets(const Result& r, const Budget& budget) {
  if (std::any_of(r.candidates.begin(), r.candidates.end(),
                  [](const Candidate& c) { return c.within_budget; }))
    return;
  const Candidate& c0 = r.candidates.front();
  if (budget.max_cost_usd && c0.cost_usd > *budget.max_cost_usd)
    throw InputError(
        "--max-network-cost",
        fmt::format("no candidate network costs at most {}: the cheapest ({}) costs {}",
                    report::money(*budget.max_cost_usd), c0.name(), report::money(c0.cost_usd)));
  double least_power = std::numeric_limits<double>::infinity();
  for (const auto& c : r.candidates)
    if (!budget.max_cost_usd || c.cost_usd <= *budget.max_cost_usd)
      least_power = std::min(least_power, c.power_w);
  throw InputError("--max-power",
                   fmt::format("no candidate network within the cost budget draws at most {:.0f} "
                               "W: the least draws {:.0f} W",
                               budget.max_power_w.value_or(0), least_power));
}

// No candidate meets the target: the error says which model binds and by how much the closest
// candidate misses.
InputError no_network_meets(const Result& r, const Target& target) {
  const Candidate* closest = nullptr;
  for (const auto& c : r.candidates)
    if (c.evaluated && c.within_budget && c.binding >= 0 &&
        (!closest || c.models[static_cast<std::size_t>(c.binding)].slack >
                         closest->models[static_cast<std::size_t>(closest->binding)].slack))
      closest = &c;
  const std::string option = target.within            ? "--within"
                             : target.max_iteration_s ? "--max-iteration-time"
                             : target.min_mfu         ? "--min-mfu"
                                                      : "--tokens";
  if (!closest) return InputError(option, "no candidate network within budget has a plan");
  const auto b = static_cast<std::size_t>(closest->binding);
  const ModelOutcome& o = closest->models[b];
  if (!o.best)
    return InputError(option, fmt::format("no network meets the target: {} has no plan ({})",
                                          r.model_names[b], o.no_plan_reason));
  return InputError(
      option,
      fmt::format("no network meets the target: the closest, {}, runs {} in {:.4g} s{}, {:.2f}% "
                  "short",
                  closest->name(), r.model_names[b], o.best->time.iteration_time_s,
                  std::isfinite(o.limit_s) ? fmt::format(" against {:.4g} s", o.limit_s)
                                           : fmt::format(" at MFU {:.1f}%", 100 * o.best->time.mfu),
                  -100 * o.slack));
}

}  // namespace

Result optimize(const spec::GpuSpec& gpu, std::int64_t gpus, const std::vector<ModelSpec>& models,
                const Space& space, const Target& target, const Budget& budget,
                const Options& options) {
  check_request(models, space, target);
  const Lists L = lists_of(gpu, space);
  std::vector<spec::SwitchSpec> sws;
  for (const auto& s : L.switches) sws.push_back(spec::load_switch(s, "--switch"));
  std::vector<spec::Catalog> cats;
  for (const auto& s : L.catalogs) cats.push_back(spec::load_catalog(s, "--catalog"));

  Result r;
  r.train_tokens = options.train_tokens;
  r.training = models.front().training;
  if (r.train_tokens)  // checked before the search, as days_to_train checks it
    (void)check_number("--train-tokens", *r.train_tokens, Range::positive(1e18));
  for (const auto& m : models) r.model_names.push_back(m.model.name);
  add_candidates(gpu, gpus, space, budget, L, sws, cats, r);
  if (r.candidates.empty())
    throw InputError("--switch", fmt::format("no valid network among {} combinations{}", r.invalid,
                                             r.invalid_examples.empty()
                                                 ? std::string()
                                                 : ": e.g. " + r.invalid_examples.front()));
  std::stable_sort(r.candidates.begin(), r.candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     if (a.cost_usd != b.cost_usd) return a.cost_usd < b.cost_usd;
                     if (a.power_w != b.power_w) return a.power_w < b.power_w;
                     // The simpler network of an equal price: fewer planes, unsplit NICs.
                     if (a.design.planes != b.design.planes)
                       return a.design.planes < b.design.planes;
                     return a.name() < b.name();
                   });
  check_budgets(r, budget);

  // References: the ideal cluster (one HB domain over every GPU) for each model, and the target's.
  PlanCache cache;
  std::vector<double> ideal(models.size(), 0.0);
  {
    Candidate ic;
    ic.cluster = r.candidates.front().cluster;
    ic.design = spec::make_network_design(spec::DesignKind::ideal, sws.front());
    const auto out = plans_for(ic, models, options, cache);
    for (std::size_t i = 0; i < models.size(); ++i) {
      if (!out[i].best)
        throw InputError("--model", fmt::format("{}: no plan even on the ideal cluster: {}",
                                                models[i].model.name, out[i].no_plan_reason));
      ideal[i] = out[i].best->time.iteration_time_s;
    }
  }
  r.reference_s = ideal;
  if (target.within && target.within_of == spec::DesignKind::rail_optimized) {
    std::fill(r.reference_s.begin(), r.reference_s.end(), std::numeric_limits<double>::infinity());
    for (Candidate& c : r.candidates) {
      if (c.design.kind != spec::DesignKind::rail_optimized || c.design.oversubscription > 1.0)
        continue;
      c.models = plans_for(c, models, options, cache);
      for (std::size_t i = 0; i < models.size(); ++i)
        if (c.models[i].best)
          r.reference_s[i] = std::min(r.reference_s[i], c.models[i].best->time.iteration_time_s);
    }
    for (std::size_t i = 0; i < models.size(); ++i)
      if (!std::isfinite(r.reference_s[i]))
        throw InputError("--within", fmt::format("no non-oversubscribed rail_optimized candidate "
                                                 "has a plan for {} to compare with",
                                                 models[i].model.name));
  }

  // Candidates in cost order; plans shared through the cache.
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    Candidate& c = r.candidates[i];
    if (c.models.empty()) c.models = plans_for(c, models, options, cache);
    c.evaluated = true;
    ++r.evaluated;
    judge(c, models, target, r.reference_s, ideal);
    if (options.progress != nullptr)
      options.progress->update(static_cast<std::int64_t>(i + 1),
                               static_cast<std::int64_t>(r.candidates.size()));
    if (c.meets && c.within_budget && !r.cheapest) {
      r.cheapest = i;
      if (!options.frontier) break;
    }
  }
  r.plans_computed = cache.computed;

  // The frontier among the candidates within budget.
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const Candidate& c = r.candidates[i];
    if (!c.evaluated || !c.within_budget || !std::isfinite(c.worst_relative)) continue;
    if (c.worst_relative < best * (1 - 1e-12)) {
      r.frontier.push_back(i);
      best = c.worst_relative;
    }
  }

  if (!r.cheapest) throw no_network_meets(r, target);
  for (std::size_t i = *r.cheapest; i-- > 0;)
    if (r.candidates[i].within_budget && r.candidates[i].evaluated) {
      r.next_cheaper = i;
      break;
    }
  return r;
}

report::Table candidates_table(const Result& r, bool all) {
  using report::Column;
  using report::Style;
  using report::Type;
  report::Table t;
  t.columns = {
      Column{"rank", "#", Type::integer},
      Column{"design", "design", Type::text},
      Column{"oversubscription", "oversub", Type::real, "", 0},
      Column{"hb_domain", "K", Type::integer},
      Column{"nic_gbps", "NIC", Type::real, "G", 0},
      Column{"nics_per_gpu", "NICs", Type::integer},
      Column{"planes", "planes", Type::integer},
      Column{"nic_ports", "NIC ports", Type::integer, "", 0, Style::plain, false},
      Column{"switch", "switch", Type::text},
  };
  for (Column& c : spec::routing_columns()) t.columns.push_back(std::move(c));
  for (Column c : {
           Column{"copper_gpu_leaf", "copper", Type::boolean},
           Column{"catalog", "catalog", Type::text, "", 0, Style::plain, false},
           Column{"tiers", "tiers", Type::integer},
           Column{"switches", "switches", Type::integer},
           Column{"cost_usd", "cost", Type::real, "", 2, Style::usd},
           Column{"power_w", "power", Type::real, "W", 4, Style::si},
       })
    t.columns.push_back(std::move(c));

  for (const auto& m : r.model_names) {
    t.columns.push_back(
        Column{m + "_iteration_time_s", m + " time", Type::real, "s", 4, Style::si});
    t.columns.push_back(Column{m + "_plan", m + " plan", Type::text, "", 0, Style::plain, false});
    if (r.train_tokens)
      t.columns.push_back(Column{m + "_train_days", m + " days", Type::real, "", 1});
  }
  t.columns.push_back(Column{"meets_target", "meets", Type::boolean});
  t.columns.push_back(Column{"within_budget", "budget", Type::boolean});
  t.columns.push_back(Column{"binding_model", "binds", Type::text});
  t.columns.push_back(Column{"on_frontier", "frontier", Type::boolean, "", 0, Style::plain, false});
  for (Column& c : spec::software_columns()) t.columns.push_back(std::move(c));
  std::vector<std::size_t> rows;
  if (all) {
    for (std::size_t i = 0; i < r.candidates.size(); ++i)
      if (r.candidates[i].evaluated) rows.push_back(i);
  } else {
    rows = r.frontier;
  }
  std::int64_t rank = 0;
  for (std::size_t i : rows) {
    const Candidate& c = r.candidates[i];
    std::vector<report::Cell> cells = {
        ++rank,
        std::string(spec::to_string(c.design.kind)),
        c.design.oversubscription,
        c.cluster.hb_domain,
        units::Bps_to_gbps(c.cluster.nic_bw_Bps),
        static_cast<std::int64_t>(c.cluster.nics_per_gpu),
        c.design.planes,
        c.design.nic_ports,
        c.design.sw.name,
    };
    spec::append_routing_cells(cells, c.design);
    for (report::Cell x : std::initializer_list<report::Cell>{
             c.design.copper_gpu_leaf,
             c.catalog,
             static_cast<std::int64_t>(c.tiers),
             c.switches,
             c.cost_usd,
             c.power_w,
         })
      cells.push_back(std::move(x));
    for (const auto& o : c.models) {
      if (o.best) {
        cells.emplace_back(o.best->time.iteration_time_s);
        cells.emplace_back(perf::describe(o.best->strategy));
      } else {
        cells.emplace_back(report::Missing{});
        cells.emplace_back(o.no_plan_reason);
      }
      if (r.train_tokens)
        cells.emplace_back(o.best ? report::Cell(perf::days_to_train(o.best->time, *r.train_tokens))
                                  : report::Cell(report::Missing{}));
    }
    cells.emplace_back(c.meets);
    cells.emplace_back(c.within_budget);
    cells.emplace_back(c.binding >= 0 ? r.model_names[static_cast<std::size_t>(c.binding)]
                                      : std::string());
    cells.emplace_back(std::find(r.frontier.begin(), r.frontier.end(), i) != r.frontier.end());
    spec::append_software_cells(cells, r.training);
    t.add_row(std::move(cells));
  }
  return t;
}

std::string explain(const Result& r) {
  if (!r.cheapest) return "";
  const Candidate& c = r.candidates[*r.cheapest];
  std::string s = fmt::format(
      "cheapest network meeting the target: {}\n  {} tier{}, {} switches, "
      "{}, {:.1f} kW\n",
      c.name(), c.tiers, c.tiers == 1 ? "" : "s", c.switches, report::money(c.cost_usd),
      c.power_w / 1e3);
  for (std::size_t i = 0; i < c.models.size(); ++i) {
    const ModelOutcome& o = c.models[i];
    s += fmt::format("  {}: {:.4f} s ({}), limit {}, slack {:+.2f}%{}\n", r.model_names[i],
                     o.best->time.iteration_time_s, perf::describe(o.best->strategy),
                     std::isfinite(o.limit_s) ? fmt::format("{:.4f} s", o.limit_s) : "none",
                     100 * o.slack, static_cast<int>(i) == c.binding ? " (binds)" : "");
  }
  if (r.next_cheaper) {
    const Candidate& n = r.candidates[*r.next_cheaper];
    const auto b = static_cast<std::size_t>(std::max(0, n.binding));
    const ModelOutcome& o = n.models[b];
    s += fmt::format("the next cheaper, {} ({}), misses: ", n.name(), report::money(n.cost_usd));
    if (!o.best)
      s += fmt::format("{} has no plan ({})\n", r.model_names[b], o.no_plan_reason);
    else
      s += fmt::format("{} takes {:.4f} s, {:.2f}% over its limit\n", r.model_names[b],
                       o.best->time.iteration_time_s, -100 * o.slack);
  } else {
    s += "no cheaper candidate network\n";
  }
  s += fmt::format("{} candidate networks ({} combinations invalid), {} plan searches\n",
                   r.candidates.size(), r.invalid, r.plans_computed);
  return s;
}

namespace {

// Decimals that tell apart ticks about a fifth of `span` apart (gnuplot's own choice of ticks),
// so that no tick is written as 1e+06 or two ticks alike.
int tick_decimals(double span) {
  if (!(span > 0)) return 1;
  return std::clamp(static_cast<int>(std::ceil(-std::log10(span / 5))), 0, 6);
}

// What a frontier point is: "rail_only 3:1 Q3400 $80.9M".
std::string point_label(const Candidate& c) {
  std::string d(spec::to_string(c.design.kind));
  if (c.design.oversubscription > 1.0) d += fmt::format(" {:g}:1", c.design.oversubscription);
  return fmt::format("{} {} ${:.1f}M", d, c.design.sw.name, c.cost_usd / 1e6);
}

}  // namespace

// The y axis is the slowest model's time in percent above the fastest frontier point, from 0:
// the frontier's spread is often under 1% of the time, and an axis fitted to the data drew a
// 0.7% step as a cliff.
report::LineChart frontier_chart(const Result& r) {
  report::LineChart c;
  c.title = "Network cost against training time";
  std::string models;
  for (const auto& m : r.model_names) models += (models.empty() ? "" : ", ") + m;
  double fastest = std::numeric_limits<double>::infinity(), lo = fastest, hi = 0, top = 0;
  for (std::size_t i : r.frontier) {
    fastest = std::min(fastest, r.candidates[i].worst_relative);
    lo = std::min(lo, r.candidates[i].cost_usd / 1e6);
    hi = std::max(hi, r.candidates[i].cost_usd / 1e6);
  }
  const auto above = [&](double rel) { return 100 * (rel / fastest - 1); };
  for (std::size_t i : r.frontier) top = std::max(top, above(r.candidates[i].worst_relative));
  c.subtitle = fmt::format(
      "{} on {} x {}: the frontier of {} candidate networks; 0% = {:.4f} x the ideal-cluster "
      "time",
      models, r.candidates.empty() ? 0 : r.candidates.front().cluster.gpus,
      r.candidates.empty() ? "" : r.candidates.front().cluster.gpu.name, r.candidates.size(),
      std::isfinite(fastest) ? fastest : 0.0);
  c.x.label = "network cost ($ millions)";
  c.x.format = fmt::format("%.{}f", tick_decimals(hi - lo));
  c.y.label = "slowest model's iteration time, % above the fastest frontier network";
  c.y.format = fmt::format("%.{}f%%", tick_decimals(top));
  c.y.from_zero = true;
  report::Series f{"frontier (each faster than every cheaper network)", {}, {}, {}};
  for (std::size_t i : r.frontier) {
    f.x.push_back(r.candidates[i].cost_usd / 1e6);
    f.y.push_back(above(r.candidates[i].worst_relative));
    f.labels.push_back(point_label(r.candidates[i]));
  }
  c.series.push_back(std::move(f));
  if (r.cheapest) {
    const Candidate& a = r.candidates[*r.cheapest];
    c.series.push_back({"cheapest meeting the target: " + a.name(),
                        {a.cost_usd / 1e6},
                        {above(a.worst_relative)},
                        {}});
  }
  return c;
}

Json to_json(const Result& r) {
  Json j;
  j["models"] = r.model_names;
  j["reference_s"] = Json::array();
  for (double x : r.reference_s) j["reference_s"].push_back(std::isfinite(x) ? Json(x) : Json());
  j["candidates"] = r.candidates.size();
  j["invalid"] = r.invalid;
  j["plans_computed"] = r.plans_computed;
  j["frontier"] = report::to_json(candidates_table(r, false));
  if (r.cheapest) {
    report::Table all = candidates_table(r, true);
    const Json rows = report::to_json(all);
    std::size_t idx = 0;
    for (std::size_t i = 0; i < r.candidates.size() && i < *r.cheapest; ++i)
      idx += r.candidates[i].evaluated ? 1 : 0;
    j["cheapest"] = rows.at(idx);
    if (r.next_cheaper) {
      std::size_t n = 0;
      for (std::size_t i = 0; i < *r.next_cheaper; ++i) n += r.candidates[i].evaluated ? 1 : 0;
      j["next_cheaper"] = rows.at(n);
    }
  }
  j["explain"] = explain(r);
  return j;
}

RoutingFlip under_contrasting_routing(const spec::GpuSpec& gpu, std::int64_t gpus,
                                      const std::vector<ModelSpec>& models, const Space& space,
                                      const Target& target, const Budget& budget,
                                      const Options& options, const Result& r) {
  RoutingFlip f;
  f.routing = space.routing ? perf::contrasting_routing(*space.routing) : spec::Routing::ecmp;
  if (!r.cheapest) return f;
  const Candidate& answer = r.candidates[*r.cheapest];
  Space other = space;
  other.routing = f.routing;
  Options first = options;
  first.frontier = false;
  try {
    const Result o = optimize(gpu, gpus, models, other, target, budget, first);
    if (o.cheapest) {
      f.cheapest = o.candidates[*o.cheapest].name();
      f.cost_usd = o.candidates[*o.cheapest].cost_usd;
    }
  } catch (const InputError&) {
    // no candidate meets the target under that routing
  }
  f.flips = !f.cheapest || *f.cheapest != answer.name();
  if (!f.flips) return f;
  f.line = f.cheapest ? fmt::format(
                            "the routing decides the network: under --routing {} the "
                            "cheapest meeting the target is {} (${:.2f}M)",
                            spec::to_string(f.routing), *f.cheapest, f.cost_usd / 1e6)
                      : fmt::format(
                            "the routing decides the network: under --routing {} no "
                            "candidate meets the target",
                            spec::to_string(f.routing));
  return f;
}

Json to_json(const RoutingFlip& f) {
  return Json{{"routing", std::string(spec::to_string(f.routing))},
              {"flips", f.flips},
              {"cheapest", f.cheapest ? Json(*f.cheapest) : Json(nullptr)},
              {"cost_usd", f.cheapest ? Json(f.cost_usd) : Json(nullptr)}};
}

Json optimize_document(const Result& r, const RoutingFlip& f, bool all) {
  Json j = to_json(r);
  if (all) j["all"] = report::to_json(candidates_table(r, true));
  j["routing_flip"] = to_json(f);
  return j;
}

Space make_space(const SpaceChoices& c) {
  Space space;
  space.designs.clear();
  for (const std::string& d : c.designs) {
    const spec::DesignKind k = spec::parse_design_kind(d, "--design");
    if (k == spec::DesignKind::ideal)
      throw InputError("--design", "ideal is the reference, not a network to buy");
    space.designs.push_back(k);
  }
  for (double o : c.oversubscription) check_number("--oversubscription", o, Range::between(1, 64));
  space.oversubscription = c.oversubscription;
  space.hb_domain = c.hb_domain;
  space.nic_gbps = c.nic_gbps;
  space.nics_per_gpu = c.nics_per_gpu;
  for (std::int64_t p : c.planes) check_integer("--planes", p, 1, spec::kMaxPlanes);
  space.planes = c.planes;
  space.switches = c.switches;
  space.catalogs = c.catalogs;
  if (c.routing != "auto")
    space.routing = spec::resolve_routing(c.routing, spec::SwitchSpec{}, "--routing");
  space.copper.clear();
  for (const std::string& v : c.copper) {
    if (v != "on" && v != "off")
      throw InputError("--copper-gpu-leaf", fmt::format("'{}': give on, off or on,off", v));
    space.copper.push_back(v == "on");
  }
  return space;
}

std::int64_t cluster_gpus(const spec::GpuSpec& gpu, std::int64_t gpus) {
  if (gpus < 0) throw InputError("--gpus", "must be positive");
  if (gpus > 0) return check_integer("--gpus", gpus, 1, spec::kMaxGpus);
  return spec::kDefaultGpus / gpu.default_hb_domain * gpu.default_hb_domain;
}

}  // namespace railsim::optimize
