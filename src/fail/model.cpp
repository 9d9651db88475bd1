#include "railsim/fail/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "railsim/core/checks.hpp"
#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/network_view.hpp"

namespace railsim::fail {

namespace {

constexpr EnumNames<DegradedPolicy, 2> kPolicyNames{
    {{{DegradedPolicy::swap_at_checkpoint, "swap-at-checkpoint"},
      {DegradedPolicy::until_repair, "until-repair"}}}};

constexpr double kHour = 3600.0;
constexpr double kDay = 24 * kHour;

// Slowdown of a synchronous job when ECMP spreads a block's traffic over the capacity left after
// losing a fraction x of it: its communication (fraction f of the iteration) takes 1 / (1 - x).
double capacity_slowdown(double f, double x) {
  return 1.0 + f * x / (1.0 - x);
}

}  // namespace

std::string_view to_string(DegradedPolicy p) {
  return kPolicyNames.name(p);
}

DegradedPolicy parse_degraded_policy(std::string_view s, const std::string& option) {
  return kPolicyNames.parse(s, option, "degraded policy");
}

void validate(const RunParams& p) {
  check_number("--days", p.days, Range::positive(36500));
  // At least a second: no job checkpoints more often (writing one takes seconds), and below it the
  // run would be all checkpoints (a cost per effective GPU-hour of hundreds of digits).
  if (p.checkpoint_interval_s)
    check_number("--checkpoint-interval-min", *p.checkpoint_interval_s / 60.0,
                 Range::between(1.0 / 60.0, 1e7));
  check_number("--checkpoint-write-s", p.checkpoint_write_s, Range::positive(1e7));
  check_number("--detect-min", p.detect_s / 60.0, Range::non_negative(1e6));
  check_number("--restart-min", p.restart_s / 60.0, Range::positive(1e6));
  check_number("--repair-h", p.repair_s / kHour, Range::positive(1e5));
  if (p.spare_domains) check_integer("--spare-domains", *p.spare_domains, 0, spec::kMaxGpus);
  check_integer("--gpus-per-host", p.gpus_per_host, 1, 1024);
  check_number("--comm-fraction", p.comm_fraction, Range::between(0.0, 10.0));
  if (p.degraded_slowdown)
    check_number("--degraded-slowdown", *p.degraded_slowdown, Range::between(1.0, 1e6));
}

double FailureModel::rate_per_s() const {
  double r = 0;
  for (const EventStream& s : streams) r += s.rate_per_s;
  return r;
}

double FailureModel::interrupt_rate_per_s() const {
  double r = 0;
  for (const EventStream& s : streams)
    if (s.effect.interrupts) r += s.rate_per_s;
  return r;
}

double FailureModel::mtbf_s() const {
  const double r = interrupt_rate_per_s();
  return r > 0 ? 1.0 / r : std::numeric_limits<double>::infinity();
}

double FailureModel::checkpoint_rate_per_s() const {
  double r = 0;
  for (const EventStream& s : streams) {
    if (s.effect.interrupts)
      r += s.rate_per_s;
    else if (policy == DegradedPolicy::swap_at_checkpoint && s.effect.domains_lost > 0)
      r += s.rate_per_s * (1.0 - 1.0 / s.effect.slowdown);
  }
  return r;
}

double FailureModel::mean_domains_in_repair() const {
  double m = 0;
  for (const EventStream& s : streams) {
    const FailureEffect& e = s.effect;
    // A loss of every domain cannot be covered by spares: the job waits for that repair.
    if (e.domains_lost <= 0 || e.domains_lost >= domains) continue;
    if (!e.interrupts && policy != DegradedPolicy::swap_at_checkpoint) continue;
    m += s.rate_per_s * static_cast<double>(e.domains_lost) * e.repair_s;
  }
  return m;
}

FailureModel make_streams(const spec::Cluster& cluster, const spec::NetworkDesign& design,
                          const spec::FailureRates& rates, const RunParams& params) {
  validate(params);
  if (design.kind == spec::DesignKind::ideal)
    throw InputError("--design",
                     "fail compares rail_optimized and rail_only; ideal has no scale-out network "
                     "and one HB domain over every GPU");
  const topo::NetworkPlan np = topo::plan_network(cluster, design);
  const topo::NetworkView view = topo::make_network_view(cluster, design);
  const topo::ClosPlan& plan = np.plan;

  FailureModel m;
  m.design = design.kind;
  m.gpus = cluster.gpus;
  m.hb_domain = cluster.hb_domain;
  m.domains = cluster.domains();
  m.tiers = np.tiers();
  m.policy = params.policy;

  const double N = static_cast<double>(cluster.gpus);
  const double nics = N * cluster.nics_per_gpu;
  const std::int64_t K = cluster.hb_domain;
  // A host is drained whole: a host wider than the HB domain takes several domains with it.
  const std::int64_t host_domains = std::min<std::int64_t>(
      m.domains, params.gpus_per_host > K ? (params.gpus_per_host + K - 1) / K : 1);
  const double f = params.comm_fraction;
  const double pxn_slowdown = params.degraded_slowdown.value_or(1.0 + f);

  // A dead NIC port (NIC, its link, a leaf, a block cut off) for `domains` domains: with PXN
  // (either design) their traffic is forwarded through peer NICs and the job runs degraded;
  // without, the job stops and loses them.
  auto nic_side = [&](std::int64_t domains, double repair_s) {
    FailureEffect e;
    e.interrupts = !params.pxn;
    e.domains_lost = domains;
    e.slowdown = params.pxn ? pxn_slowdown : 1.0;
    e.repair_s = repair_s;
    return e;
  };
  // Capacity lost above the leaf (a fraction x of a block's links); x = 1 cuts the block off.
  auto upper = [&](int tier, double x, double repair_s) {
    if (x >= 1.0)
      return nic_side(view.rail_domains_under[static_cast<std::size_t>(tier)], repair_s);
    FailureEffect e;
    e.interrupts = false;
    e.domains_lost = 0;
    e.slowdown = capacity_slowdown(f, x);
    e.repair_s = repair_s;
    return e;
  };

  for (std::size_t i = 0; i < rates.classes.size(); ++i) {
    const spec::FailureClass& c = rates.classes[i];
    const double repair_s = c.repair_h ? *c.repair_h * kHour : params.repair_s;
    auto add = [&](int tier, double units, const FailureEffect& e, bool tier_in_name) {
      if (units <= 0) return;
      EventStream s;
      s.name = tier_in_name ? fmt::format("{} tier {}", c.name, tier) : c.name;
      s.class_index = i;
      s.scope = c.scope;
      s.tier = tier;
      s.units = units;
      s.rate_per_s = c.rate_per_unit_hour * units / kHour;
      s.effect = e;
      m.streams.push_back(s);
    };
    switch (c.scope) {
      case spec::FailureScope::gpu:
      case spec::FailureScope::host:
        add(0, N, FailureEffect{true, host_domains, 1.0, repair_s}, false);
        break;
      case spec::FailureScope::job:
        add(0, N, FailureEffect{true, 0, 1.0, 0.0}, false);
        break;
      case spec::FailureScope::nic:
        add(0, nics, nic_side(host_domains, repair_s), false);
        break;
      case spec::FailureScope::link: {
        const int t = c.tier;
        if (t > m.tiers) break;
        if (t == 1) {
          add(1, nics, nic_side(1, repair_s), false);
        } else {
          const topo::ClosTier& below = plan.tiers[static_cast<std::size_t>(t - 2)];
          const double units = static_cast<double>(np.instances() * below.uplinks());
          // One of the P uplinks of a tier-(t-1) block.
          const double x = 1.0 / static_cast<double>(below.up_ports_per_block());
          add(t, units, upper(t - 1, x, repair_s), false);
        }
        break;
      }
      case spec::FailureScope::network_switch: {
        const int lo = c.tier == 0 ? 1 : c.tier;
        const int hi = c.tier == 0 ? m.tiers : std::min(c.tier, m.tiers);
        for (int t = lo; t <= hi; ++t) {
          const double units = static_cast<double>(np.switches_at(t));
          if (t == 1) {
            add(1, units, nic_side(view.rail_domains_under[1], repair_s), c.tier == 0);
          } else {
            const topo::ClosTier& ct = plan.tiers[static_cast<std::size_t>(t - 1)];
            const double x = 1.0 / static_cast<double>(ct.switches_per_block);
            add(t, units, upper(t, x, repair_s), c.tier == 0);
          }
        }
        break;
      }
    }
  }
  m.run_s = params.days * kDay;
  return m;
}

void resolve_run(FailureModel& m, const RunParams& params) {
  validate(params);
  m.run_s = params.days * kDay;
  m.policy = params.policy;
  m.checkpoint_write_s = params.checkpoint_write_s;
  m.restart_s = params.detect_s + params.restart_s;
  m.checkpoint_interval_auto = !params.checkpoint_interval_s.has_value();
  if (params.checkpoint_interval_s) {
    m.checkpoint_interval_s = *params.checkpoint_interval_s;
  } else {
    // Nothing that checkpoints bound: one a day keeps the loop finite.
    const double rate = m.checkpoint_rate_per_s();
    m.checkpoint_interval_s =
        rate > 0 ? young_daly_interval_s(m.checkpoint_write_s, 1.0 / rate) : kDay;
  }
  m.spares_auto = !params.spare_domains.has_value();
  m.spare_domains = params.spare_domains ? *params.spare_domains : auto_spare_domains(m);
}

FailureModel make_failure_model(const spec::Cluster& cluster, const spec::NetworkDesign& design,
                                const spec::FailureRates& rates, const RunParams& params) {
  FailureModel m = make_streams(cluster, design, rates, params);
  resolve_run(m, params);
  return m;
}

double young_daly_interval_s(double checkpoint_write_s, double mtbf_s) {
  return std::sqrt(2.0 * checkpoint_write_s * mtbf_s);
}

double periodic_checkpoint_goodput(double rate_per_s, double interval_s, double write_s,
                                   double restart_s) {
  if (rate_per_s <= 0) return interval_s / (interval_s + write_s);
  const double l = rate_per_s;
  return l * interval_s * std::exp(-l * restart_s) / std::expm1(l * (interval_s + write_s));
}

std::int64_t poisson_quantile(double mean, double tail) {
  if (!(mean > 0)) return 0;
  // The pmf in log space: exp(-mean) underflows for a mean above ~745.
  const double log_mean = std::log(mean);
  const auto limit = static_cast<std::int64_t>(mean + 50 * std::sqrt(mean) + 100);
  double cdf = 0;
  for (std::int64_t s = 0; s < limit; ++s) {
    const double k = static_cast<double>(s);
    cdf += std::exp(-mean + k * log_mean - std::lgamma(k + 1));
    if (1.0 - cdf <= tail) return s;
  }
  return limit;
}

std::int64_t auto_spare_domains(const FailureModel& m) {
  return poisson_quantile(m.mean_domains_in_repair(), kSpareTailProbability);
}

}  // namespace railsim::fail
