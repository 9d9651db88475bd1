// The Monte Carlo of a training run under failures: Meta's Llama 3 figures, the closed form of
// periodic checkpointing, Young/Daly, determinism, and rail_only's degraded mode.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>

#include "railsim/core/cancel.hpp"
#include "railsim/cost/catalog.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/fail/model.hpp"
#include "railsim/fail/monte_carlo.hpp"
#include "railsim/fail/report.hpp"
#include "test_fail_common.hpp"

using namespace railsim;
using namespace railsim::fail;
using spec::DesignKind;
using spec::FailureScope;

namespace {

// Meta's job: 16,384 H100 in HB domains of 8, 54 days; its stack stopped on a dead NIC (no PXN
// around it: Meta counted NIC failures as interruptions).
FailureModel llama3_model(DesignKind kind, bool pxn = false) {
  RunParams p;
  p.days = 54;
  p.pxn = pxn;
  return make_failure_model(test::fail_cluster("H100-SXM", 16384, 8), test::fail_design(kind),
                            spec::load_failure_rates("llama3-meta-2024"), p);
}

}  // namespace

TEST(Goodput, Llama3InterruptionsAndEffectiveTrainingTimeMatchMeta) {
  // Dubey et al. 2024 (arXiv 2407.21783) Sec. 3.3.4: 419 unexpected interruptions in a 54-day
  // snapshot on 16,384 H100, and "higher than 90% effective training time".
  // Assumptions (docs/failures.md): every Table 5 class interrupts the job (rail_optimized, where
  // a NIC or NIC-leaf link failure stops it as it did on Meta's network); checkpoint write 10 s
  // at the Young/Daly interval; restart 7 min (2 min detection + 5 min restart); a GPU or host
  // failure takes its host's HB domain (8 GPUs) out for 24 h and the job restarts on a spare
  // domain (auto spares: more in repair at once than spares has probability < 1e-4). The 47
  // planned interruptions of the same period are not modelled.
  const FailureModel m = llama3_model(DesignKind::rail_optimized);
  EXPECT_NEAR(m.interrupt_rate_per_s() * 54 * 86400, 419.0, 1e-9);
  MonteCarloOptions o;
  o.trials = 400;
  o.seed = 7;
  const GoodputResult g = run_goodput(m, o);
  // Within the Poisson spread of one 54-day run...
  EXPECT_LT(std::fabs(g.interruptions.mean - 419.0), 3 * std::sqrt(419.0));
  // ...and, tighter, of the mean of 400 runs (the job hardly ever waits for a repair).
  EXPECT_LT(std::fabs(g.interruptions.mean - 419.0), 4 * std::sqrt(419.0 / 400) + 0.5);
  EXPECT_NEAR(g.interruptions.stddev, std::sqrt(419.0), 0.2 * std::sqrt(419.0));
  EXPECT_LT(g.waits_mean, 0.2);
  EXPECT_GT(g.ettr.mean, 0.90);
  EXPECT_GT(g.ettr.p5, 0.90);
  EXPECT_LT(g.ettr.mean, 0.95);  // failures cost something: not a vacuous bound
  // The GPU-hours add up to the run.
  const double sum = g.productive_gpu_h + g.checkpoint_gpu_h + g.rework_gpu_h + g.restart_gpu_h +
                     g.wait_gpu_h + g.degraded_gpu_h;
  EXPECT_NEAR(sum / g.wall_gpu_h, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(g.wall_gpu_h, 16384.0 * 54 * 24);
}

TEST(Goodput, SingleClassMatchesTheRenewalFormulaOfPeriodicCheckpointing) {
  // One job-scope class at rate lambda (no domain lost, no repair to wait for), checkpoint every
  // tau of running time taking C, restart R started over by a failure during it. Per kept tau the
  // expected wall time is e^{lambda R} (e^{lambda (tau + C)} - 1) / lambda (renewal argument,
  // docs/failures.md), so goodput = lambda tau e^{-lambda R} / (e^{lambda (tau + C)} - 1).
  const double lambda = 1.0 / (3 * 3600.0);  // MTBF 3 h
  const spec::Cluster c = test::fail_cluster("H100-SXM", 8, 8);
  const spec::FailureRates rates = test::one_class(FailureScope::job, lambda * 3600 / 8);
  RunParams p;
  p.days = 365;
  p.checkpoint_interval_s = 20 * 60.0;
  p.checkpoint_write_s = 60;
  p.detect_s = 60;
  p.restart_s = 9 * 60;
  const FailureModel m =
      make_failure_model(c, test::fail_design(DesignKind::rail_optimized), rates, p);
  ASSERT_NEAR(m.interrupt_rate_per_s(), lambda, 1e-15);
  MonteCarloOptions o;
  o.trials = 400;
  const GoodputResult g = run_goodput(m, o);
  const double expected = periodic_checkpoint_goodput(lambda, 20 * 60.0, 60, 10 * 60.0);
  EXPECT_NEAR(expected, 0.8494, 5e-4);  // the formula's value here, by hand
  const double se = g.ettr_standard_error();
  EXPECT_GT(se, 0);
  EXPECT_LT(std::fabs(g.ettr.mean - expected), 3 * se)
      << "mean " << g.ettr.mean << " expected " << expected << " se " << se;
  // Every failure interrupts: Poisson counts over the whole run.
  const double n = lambda * 365 * 86400;
  EXPECT_LT(std::fabs(g.interruptions.mean - n), 3 * std::sqrt(n / 400));
}

TEST(Goodput, GpuClassWithAmpleSparesMatchesTheSameFormula) {
  // A GPU class loses a domain for 1 h; with 16 spare domains nothing waits, so the formula
  // holds with the Young/Daly interval.
  const double lambda = 1.0 / (2 * 3600.0);
  const spec::Cluster c = test::fail_cluster("H100-SXM", 64, 8);
  spec::FailureRates rates = test::one_class(FailureScope::gpu, lambda * 3600 / 64);
  rates.classes[0].repair_h = 1.0;
  RunParams p;
  p.days = 365;
  p.spare_domains = 16;
  const FailureModel m = make_failure_model(c, test::fail_design(DesignKind::rail_only), rates, p);
  const double tau = std::sqrt(2 * 10.0 / lambda);
  EXPECT_NEAR(m.checkpoint_interval_s, tau, 1e-9 * tau);
  MonteCarloOptions o;
  o.trials = 300;
  const GoodputResult g = run_goodput(m, o);
  const double expected = periodic_checkpoint_goodput(lambda, tau, 10, 7 * 60.0);
  EXPECT_LT(std::fabs(g.ettr.mean - expected), 3 * g.ettr_standard_error());
  EXPECT_EQ(g.wait_gpu_h, 0.0);
}

TEST(Goodput, YoungDalyIntervalIsSqrtTwoCM) {
  EXPECT_DOUBLE_EQ(young_daly_interval_s(10, 11135), std::sqrt(2.0 * 10 * 11135));
  // The Llama 3 setting: M = 54 days / 419, C = 10 s -> about 7.9 min.
  const FailureModel m = llama3_model(DesignKind::rail_optimized);
  const double mtbf = 54 * 86400.0 / 419;
  EXPECT_NEAR(m.mtbf_s(), mtbf, 1e-9 * mtbf);
  EXPECT_NEAR(m.checkpoint_interval_s, std::sqrt(2 * 10 * mtbf), 1e-9);
  EXPECT_NEAR(m.checkpoint_interval_s / 60, 7.86, 0.01);
  // It is (near) the optimum of the renewal formula: halving or doubling it loses goodput.
  const double l = 1 / mtbf, tau = m.checkpoint_interval_s;
  const double at = periodic_checkpoint_goodput(l, tau, 10, 420);
  EXPECT_GT(at, periodic_checkpoint_goodput(l, tau / 2, 10, 420));
  EXPECT_GT(at, periodic_checkpoint_goodput(l, tau * 2, 10, 420));
  // With PXN, NIC and NIC-leaf failures do not interrupt: a longer MTBF and interval.
  // The interval counts each degradation left at the next checkpoint as f/(1+f) of one.
  const FailureModel ro = llama3_model(DesignKind::rail_only, /*pxn=*/true);
  const double mtbf_ro = 54 * 86400.0 / (419 - 7 - 35);
  EXPECT_NEAR(ro.mtbf_s(), mtbf_ro, 1e-9 * mtbf_ro);
  const double m_eff = 54 * 86400.0 / (419 - 42 + 42 * 0.15 / 1.15);
  EXPECT_NEAR(ro.checkpoint_interval_s, std::sqrt(2 * 10 * m_eff), 1e-9);
}

TEST(Goodput, SameSeedSameResultsWithOneOrTwoThreads) {
  const FailureModel m = llama3_model(DesignKind::rail_only);
  MonteCarloOptions o;
  o.trials = 150;
  o.seed = 42;
  GoodputResult one, two;  // filled below
  {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 1);
    one = run_goodput(m, o);
  }
  {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 2);
    two = run_goodput(m, o);
  }
  o.threads = 2;
  const GoodputResult arena = run_goodput(m, o);
  for (const GoodputResult* g : {static_cast<const GoodputResult*>(&two), &arena}) {
    EXPECT_EQ(one.ettr.mean, g->ettr.mean);
    EXPECT_EQ(one.ettr.stddev, g->ettr.stddev);
    EXPECT_EQ(one.ettr.p5, g->ettr.p5);
    EXPECT_EQ(one.ettr.p95, g->ettr.p95);
    EXPECT_EQ(one.interruptions.mean, g->interruptions.mean);
    EXPECT_EQ(one.degradations.mean, g->degradations.mean);
    EXPECT_EQ(one.rework_gpu_h, g->rework_gpu_h);
    EXPECT_EQ(one.degraded_gpu_h, g->degraded_gpu_h);
    EXPECT_EQ(one.mean_events, g->mean_events);
  }
  // Another seed gives other draws.
  o.seed = 43;
  EXPECT_NE(run_goodput(m, o).ettr.mean, one.ettr.mean);
  // A trial is a function of (seed, trial) only.
  TrialWorkspace ws(m);
  const TrialResult a = simulate_trial(m, 42, 17, ws);
  simulate_trial(m, 42, 3, ws);
  const TrialResult b = simulate_trial(m, 42, 17, ws);
  EXPECT_EQ(a.productive_s, b.productive_s);
  EXPECT_EQ(a.interruptions, b.interruptions);
}

TEST(Goodput, PxnRunsThroughNicFailuresOnEitherDesign) {
  // A NIC class alone. With PXN (the default, on both designs) the dead NIC's traffic goes
  // through a peer's NIC and the job runs degraded (slowdown 1 + f = 1.15); without, it stops at
  // each failure. `opt` is rail_optimized without PXN, `only` rail_only with it.
  const spec::Cluster c = test::fail_cluster("H100-SXM", 4096, 8);
  const spec::FailureRates rates = test::one_class(FailureScope::nic, 1e-5);  // ~1 a day
  RunParams p;
  p.days = 60;
  MonteCarloOptions o;
  o.trials = 200;
  RunParams off = p;
  off.pxn = false;
  const FailureModel opt =
      make_failure_model(c, test::fail_design(DesignKind::rail_optimized), rates, off);
  const FailureModel only =
      make_failure_model(c, test::fail_design(DesignKind::rail_only), rates, p);
  ASSERT_EQ(only.streams.size(), 1u);
  EXPECT_FALSE(only.streams[0].effect.interrupts);
  EXPECT_DOUBLE_EQ(only.streams[0].effect.slowdown, 1.15);
  EXPECT_TRUE(opt.streams[0].effect.interrupts);
  // The same default on both designs: each forwards with PXN, and neither does without.
  for (DesignKind k : {DesignKind::rail_optimized, DesignKind::rail_only}) {
    const FailureModel on = make_failure_model(c, test::fail_design(k), rates, p);
    EXPECT_FALSE(on.streams[0].effect.interrupts) << spec::to_string(k);
    EXPECT_DOUBLE_EQ(on.streams[0].effect.slowdown, 1.15) << spec::to_string(k);
    EXPECT_TRUE(
        make_failure_model(c, test::fail_design(k), rates, off).streams[0].effect.interrupts)
        << spec::to_string(k);
  }
  const GoodputResult go = run_goodput(opt, o);
  const GoodputResult gr = run_goodput(only, o);
  const double n = 1e-5 * 4096 * 60 * 24;  // 58.98 failures per run
  // (the same failure draws on both designs: seed 1's 200 runs average 60.7, 3.2 sigma high)
  EXPECT_NEAR(go.interruptions.mean, n, 4 * std::sqrt(n / 200) + 0.5);
  EXPECT_EQ(gr.interruptions.mean, 0.0);
  EXPECT_NEAR(gr.degradations.mean, n, 4 * std::sqrt(n / 200));
  // Swapped for a spare at the next checkpoint: a planned restart each, no lost work.
  // (two failures before one checkpoint share a restart)
  EXPECT_GT(gr.planned_restarts.mean, 0.9 * gr.degradations.mean);
  EXPECT_LE(gr.planned_restarts.mean, gr.degradations.mean);
  EXPECT_EQ(gr.rework_gpu_h, 0.0);
  EXPECT_GT(go.rework_gpu_h, 0.0);
  EXPECT_GT(gr.ettr.mean, go.ettr.mean);

  // Until repair (24 h at 1.15): the slowdown costs f/(1+f) of each day degraded.
  p.policy = DegradedPolicy::until_repair;
  const GoodputResult gu =
      run_goodput(make_failure_model(c, test::fail_design(DesignKind::rail_only), rates, p), o);
  EXPECT_EQ(gu.interruptions.mean, 0.0);
  EXPECT_EQ(gu.planned_restarts.mean, 0.0);
  EXPECT_GT(gu.degraded_gpu_h, 0.0);
  EXPECT_LT(gu.ettr.mean, gr.ettr.mean);

  // With Meta's rates: fewer interruptions with PXN (no NIC or NIC-leaf link stops the job).
  const FailureModel lo = llama3_model(DesignKind::rail_optimized);
  const FailureModel lr = llama3_model(DesignKind::rail_only, /*pxn=*/true);
  const GoodputResult a = run_goodput(lo, o), b = run_goodput(lr, o);
  EXPECT_LT(b.interruptions.mean, a.interruptions.mean - 30);
  EXPECT_NEAR(b.degradations.mean, 42.0, 3 * std::sqrt(42.0 / 200) + 0.5);
}

TEST(Goodput, EffectsFollowTheDesignAndTier) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 32768, 8);
  RunParams p;
  // A leaf takes the 64 domains whose NICs it holds (one rail); a spine loses 1/X of a block.
  spec::FailureRates sw = test::one_class(FailureScope::network_switch, 1e-6);
  RunParams off = p;  // rail_optimized without PXN: a dead leaf stops the job
  off.pxn = false;
  const FailureModel opt =
      make_failure_model(c, test::fail_design(DesignKind::rail_optimized), sw, off);
  ASSERT_EQ(opt.tiers, 3);
  ASSERT_EQ(opt.streams.size(), 3u);
  EXPECT_EQ(opt.streams[0].name, "only tier 1");
  EXPECT_TRUE(opt.streams[0].effect.interrupts);
  EXPECT_EQ(opt.streams[0].effect.domains_lost, 64);
  EXPECT_FALSE(opt.streams[1].effect.interrupts);
  EXPECT_GT(opt.streams[1].effect.slowdown, 1.0);
  EXPECT_LT(opt.streams[1].effect.slowdown, 1.01);
  const FailureModel only = make_failure_model(c, test::fail_design(DesignKind::rail_only), sw, p);
  ASSERT_EQ(only.tiers, 2);
  EXPECT_FALSE(only.streams[0].effect.interrupts);
  EXPECT_EQ(only.streams[0].effect.domains_lost, 64);
  EXPECT_DOUBLE_EQ(only.streams[0].effect.slowdown, 1.15);
  // Units: switches of each tier; rail_only has no third tier.
  EXPECT_EQ(only.streams.size(), 2u);
  EXPECT_LT(only.streams[0].units + only.streams[1].units,
            opt.streams[0].units + opt.streams[1].units + opt.streams[2].units);
  // GH200 in domains of 256: a GPU failure takes 256 GPUs out, K=8 takes 8.
  const spec::Cluster gh = test::fail_cluster("GH200", 32768, 256);
  const FailureModel big = make_failure_model(gh, test::fail_design(DesignKind::rail_only),
                                              test::one_class(FailureScope::gpu, 1e-6), p);
  EXPECT_EQ(big.streams[0].effect.domains_lost, 1);
  EXPECT_EQ(big.domains, 128);
  // K=4 with hosts of 8: a host failure drains two domains.
  const FailureModel small = make_failure_model(test::fail_cluster("H100-SXM", 64, 4),
                                                test::fail_design(DesignKind::rail_only),
                                                test::one_class(FailureScope::host, 1e-6), p);
  EXPECT_EQ(small.streams[0].effect.domains_lost, 2);
  // ideal has nothing to compare.
  try {
    make_failure_model(c, test::fail_design(DesignKind::ideal), sw, p);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--design");
  }
}

TEST(Goodput, WithoutSparesTheJobWaitsForRepairs) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 1024, 8);
  const spec::FailureRates rates = test::one_class(FailureScope::gpu, 2e-5);  // ~0.5 a day
  RunParams p;
  p.days = 30;
  p.spare_domains = 0;
  p.repair_s = 6 * 3600.0;
  MonteCarloOptions o;
  o.trials = 100;
  const GoodputResult none = run_goodput(
      make_failure_model(c, test::fail_design(DesignKind::rail_optimized), rates, p), o);
  // Every failure waits out its 6 h repair (plus the failures during the wait).
  EXPECT_GT(none.waits_mean, 10);
  EXPECT_GT(none.wait_gpu_h / none.wall_gpu_h, 0.08);
  p.spare_domains.reset();
  const FailureModel autom =
      make_failure_model(c, test::fail_design(DesignKind::rail_optimized), rates, p);
  EXPECT_TRUE(autom.spares_auto);
  EXPECT_EQ(autom.spare_domains, poisson_quantile(autom.mean_domains_in_repair(), 1e-4));
  const GoodputResult spared = run_goodput(autom, o);
  EXPECT_LT(spared.wait_gpu_h, 0.01 * none.wait_gpu_h);
  EXPECT_GT(spared.ettr.mean, none.ettr.mean + 0.05);
}

TEST(Goodput, PoissonQuantile) {
  EXPECT_EQ(poisson_quantile(0, 1e-3), 0);
  // Poisson(10): P(X > 20) = 0.0016, P(X > 21) = 0.00072.
  EXPECT_EQ(poisson_quantile(10, 1e-3), 21);
  // Far out the pmf is summed in log space (exp(-1000) underflows).
  const std::int64_t q = poisson_quantile(1000, 1e-3);
  EXPECT_GT(q, 1000 + 3.0 * std::sqrt(1000.0));
  EXPECT_LT(q, 1000 + 3.3 * std::sqrt(1000.0));
}

TEST(Goodput, TimeToTrainAndCostPerEffectiveGpuHour) {
  GoodputResult g;
  g.model.gpus = 1000;
  g.ettr.mean = 0.8;
  g.ettr.p5 = 0.75;
  g.ettr.p95 = 0.85;
  const TimeToTrain t = time_to_train(g, 86400.0 * 1e6, 1e6);  // one day of work
  EXPECT_DOUBLE_EQ(t.ideal_days, 1.0);
  EXPECT_DOUBLE_EQ(t.days_mean, 1.25);
  EXPECT_DOUBLE_EQ(t.days_fast, 1.0 / 0.85);
  EXPECT_DOUBLE_EQ(t.days_slow, 1.0 / 0.75);
  EXPECT_DOUBLE_EQ(network_cost_per_effective_gpu_hour(g, 8766.0 * 800, 1), 1.0);
  EXPECT_THROW(time_to_train(g, 0, 1), InputError);
  EXPECT_THROW(network_cost_per_effective_gpu_hour(g, 1, 0), InputError);
}

TEST(Goodput, BadRunParametersNameTheOption) {
  auto field = [](auto mutate) {
    RunParams p;
    mutate(p);
    try {
      validate(p);
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string();
  };
  EXPECT_EQ(field([](RunParams& p) { p.days = 0; }), "--days");
  EXPECT_EQ(field([](RunParams& p) { p.days = std::nan(""); }), "--days");
  EXPECT_EQ(field([](RunParams& p) { p.checkpoint_interval_s = 0.0; }),
            "--checkpoint-interval-min");
  EXPECT_EQ(field([](RunParams& p) { p.checkpoint_write_s = -1; }), "--checkpoint-write-s");
  EXPECT_EQ(field([](RunParams& p) { p.restart_s = 0; }), "--restart-min");
  EXPECT_EQ(field([](RunParams& p) { p.detect_s = -60; }), "--detect-min");
  EXPECT_EQ(field([](RunParams& p) { p.repair_s = std::nan(""); }), "--repair-h");
  EXPECT_EQ(field([](RunParams& p) { p.spare_domains = -1; }), "--spare-domains");
  EXPECT_EQ(field([](RunParams& p) { p.comm_fraction = -0.1; }), "--comm-fraction");
  EXPECT_EQ(field([](RunParams& p) { p.degraded_slowdown = 0.5; }), "--degraded-slowdown");
  EXPECT_EQ(field([](RunParams& p) { p.gpus_per_host = 0; }), "--gpus-per-host");
  EXPECT_EQ(field([](RunParams&) {}), "");
  MonteCarloOptions o;
  o.trials = 0;
  try {
    validate(o);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--trials");
  }
}

// goodput_report (the study behind `fail goodput` in the CLI and Python): per design, in order,
// the Monte Carlo of that design's failure model and its network priced as `railsim design` does,
// and the caller's figures carried through.
TEST(Goodput, ReportRunsEachDesignsModelInOrder) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 1024, 8);
  GoodputRequest req;
  req.designs = {test::fail_design(DesignKind::rail_optimized),
                 test::fail_design(DesignKind::rail_only)};
  req.rates = spec::load_failure_rates(spec::kDefaultFailureRates, "rates");
  req.mc.trials = 50;
  req.mc.seed = 3;
  req.catalog = cost::load_catalog(cost::kDefaultCatalog);
  req.tokens = 1e12;
  req.tokens_per_s = 1e6;
  const GoodputReport rep = goodput_report(c, req);
  EXPECT_EQ(rep.gpu, "H100-SXM");
  EXPECT_EQ(rep.rates, req.rates.name);
  EXPECT_EQ(rep.effects, "inputs");
  EXPECT_TRUE(rep.effect_notes.empty());
  ASSERT_EQ(rep.designs.size(), 2u);
  ASSERT_EQ(rep.network_cost_usd.size(), 2u);
  EXPECT_EQ(rep.tokens, 1e12);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rep.network_cost_usd[i],
              cost::evaluate(c, req.designs[i], *req.catalog).cost.cost_usd())
        << i;
    const GoodputResult direct =
        run_goodput(make_failure_model(c, req.designs[i], req.rates, req.run), req.mc);
    EXPECT_EQ(rep.designs[i].ettr.mean, direct.ettr.mean) << i;
    EXPECT_EQ(rep.designs[i].interruptions.mean, direct.interruptions.mean) << i;
    EXPECT_EQ(rep.designs[i].trials, 50);
  }
  // The same PXN on both designs: the same NIC failures degrade rather than interrupt, and each
  // design's interruptions are its switch failures above the leaf and the domains it loses.
  EXPECT_TRUE(rep.pxn);
  EXPECT_EQ(rep.network.routing, req.designs[0].routing);
  // rail_optimized buys a spine tier that rail_only does without.
  EXPECT_GT(*rep.network_cost_usd[0], *rep.network_cost_usd[1]);
  req.run.pxn = false;
  req.catalog.reset();  // not priced: no figure
  const GoodputReport off = goodput_report(c, req);
  EXPECT_TRUE(off.network_cost_usd.empty());
  for (std::size_t i = 0; i < 2; ++i)
    EXPECT_GT(off.designs[i].interruptions.mean, rep.designs[i].interruptions.mean) << i;
}

TEST(Goodput, DesignsAreBothOrOneNamedAndAnythingElseNamesTheOption) {
  EXPECT_EQ(parse_designs("both", "--design"),
            (std::vector<DesignKind>{DesignKind::rail_optimized, DesignKind::rail_only}));
  EXPECT_EQ(parse_designs("rail_only", "design"), std::vector<DesignKind>{DesignKind::rail_only});
  try {
    parse_designs("mesh", "design");
    ADD_FAILURE() << "mesh accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "design");
    EXPECT_NE(std::string(e.what()).find("valid: rail_optimized, rail_only, both"),
              std::string::npos);
  }
}

TEST(Goodput, TheTrialsStopWhenCancelled) {
  const FailureModel m = llama3_model(DesignKind::rail_optimized);
  MonteCarloOptions o;
  o.trials = 1000;
  request_cancel();
  EXPECT_THROW((void)run_goodput(m, o), Cancelled);
  reset_cancel();
}
