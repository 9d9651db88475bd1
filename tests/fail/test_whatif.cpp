// The failure what-if: hand-checked cases on small fabrics (cut-off counts, lost capacity, the
// simulated slowdown of forwarding against its closed form) and the job's options.
#include <gtest/gtest.h>

#include "railsim/core/error.hpp"
#include "railsim/fail/whatif.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/sim/network.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/topo/builders.hpp"
#include "test_fail_common.hpp"

using namespace railsim;

namespace {

spec::NetworkDesign small_switch(spec::DesignKind kind, int radix) {
  spec::SwitchSpec sw;
  sw.name = "test";
  sw.radix = radix;
  sw.port_gbps = 400;
  return spec::make_network_design(kind, sw);
}

struct Job {
  perf::Model model = spec::load_model("Megatron-22B");
  perf::Training training{256, 2048};
};

fail::WhatIfOptions with(std::initializer_list<const char*> specs) {
  fail::WhatIfOptions o;
  for (const char* s : specs) o.fail.emplace_back(s);
  o.plan.top = 1;
  return o;
}

const fail::JobOption& option(const fail::DesignWhatIf& d, const std::string& name) {
  for (const auto& o : d.options)
    if (o.name == name) return o;
  throw std::runtime_error("no option " + name);
}

}  // namespace

// A rail-only rail of one switch dies: every domain forwards that rail's traffic over its other
// K - 1 NICs, so a ring along the rails is paced by a NIC carrying 1 + 1/(K-1) of its load:
// exactly K/(K-1) slower (the HB hops are 9x faster and never bind).
TEST(WhatIf, SimulatedForwardingMatchesTheClosedForm) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 128, 8);
  const topo::Fabric f = topo::build_fabric(c, small_switch(spec::DesignKind::rail_only, 32));
  ASSERT_EQ(f.tiers, 1);
  const topo::DegradedFabric d(f, {topo::parse_failure("leaf:5", f)}, true);
  sim::CollectiveRequest req;
  req.op = perf::CollectiveOp::all_reduce;
  req.algorithm = perf::Algorithm::ring;
  req.bytes = 1e9;
  req.groups = sim::groups_rails(c);
  sim::SimConfig cfg;
  cfg.aggregate = sim::Aggregation::off;
  const double healthy =
      sim::simulate_collective(sim::make_sim_network(f), req, cfg).completion_time_s;
  const double degraded =
      sim::simulate_collective(sim::make_sim_network(d), req, cfg).completion_time_s;
  EXPECT_NEAR(degraded / healthy, 8.0 / 7.0, 1e-9);
  // Healthy: 2 (n-1)/n B / B_nic for a ring of 16 at 50 GB/s.
  EXPECT_NEAR(healthy, 2.0 * 15.0 / 16.0 * 1e9 / 50e9, 1e-12);
}

TEST(WhatIf, DeadLeafRunsDegradedWithPxnAndLosesDomainsWithout) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 128, 8);
  const Job job;
  auto o = with({"leaf:0"});
  const fail::DesignWhatIf ro = fail::what_if_design(
      c, small_switch(spec::DesignKind::rail_only, 8), job.model, job.training, o);
  EXPECT_TRUE(ro.pxn);
  EXPECT_EQ(ro.gpus_cut_off, 0);
  EXPECT_EQ(ro.domains_lost, 0);
  EXPECT_EQ(ro.domains_forwarding, 4);
  EXPECT_DOUBLE_EQ(ro.nic_load_factor, 8.0 / 7.0);
  ASSERT_TRUE(ro.plan.has_value());
  EXPECT_TRUE(ro.runnable);
  EXPECT_EQ(ro.pairs_unreachable, 0);
  EXPECT_GT(ro.pairs_forwarded, 0);
  EXPECT_GT(ro.degraded_s, ro.healthy_s);
  ASSERT_TRUE(ro.simulated);  // 128 GPUs: simulated by default
  EXPECT_GE(ro.sim_degraded_comm_s, ro.sim_healthy_comm_s);
  EXPECT_TRUE(option(ro, "run degraded").possible);
  EXPECT_NEAR(option(ro, "run degraded").throughput, ro.healthy_s / ro.degraded_s, 1e-15);

  // PXN is the same default on rail_optimized: it forwards the dead leaf's rail too.
  const fail::DesignWhatIf opt_pxn = fail::what_if_design(
      c, small_switch(spec::DesignKind::rail_optimized, 8), job.model, job.training, o);
  EXPECT_TRUE(opt_pxn.pxn);
  EXPECT_EQ(opt_pxn.gpus_cut_off, 0);
  EXPECT_EQ(opt_pxn.domains_forwarding, 4);
  EXPECT_TRUE(opt_pxn.runnable);
  // Without PXN the leaf's 4 domains are cut off.
  o.pxn = fail::PxnMode::off;
  const fail::DesignWhatIf opt = fail::what_if_design(
      c, small_switch(spec::DesignKind::rail_optimized, 8), job.model, job.training, o);
  EXPECT_FALSE(opt.pxn);
  EXPECT_EQ(opt.gpus_cut_off, 4);  // the leaf's 4 down ports
  EXPECT_EQ(opt.domains_lost, 4);
  EXPECT_FALSE(opt.runnable);
  EXPECT_FALSE(option(opt, "run degraded").possible);
  EXPECT_FALSE(option(opt, "swap in spares").possible);
  // 12 domains left: the best of 12, 11, ... domains with the same global batch.
  const auto& drop = option(opt, "drop domains and re-plan");
  ASSERT_TRUE(drop.possible) << drop.detail;
  EXPECT_LT(drop.throughput, 1.0);
  EXPECT_GT(drop.throughput, 0.4);
}

TEST(WhatIf, SparesAndDomains) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 128, 8);
  const Job job;
  auto o = with({"domain:3"});
  o.spare_domains = 1;
  const fail::DesignWhatIf d = fail::what_if_design(c, small_switch(spec::DesignKind::rail_only, 8),
                                                    job.model, job.training, o);
  EXPECT_EQ(d.gpus_dead, 8);
  EXPECT_EQ(d.domains_lost, 1);
  EXPECT_FALSE(d.runnable);
  const auto& swap = option(d, "swap in spares");
  ASSERT_TRUE(swap.possible);
  EXPECT_DOUBLE_EQ(swap.throughput, 1.0);
  EXPECT_TRUE(swap.restart);
  o.spare_domains = 0;
  EXPECT_FALSE(option(fail::what_if_design(c, small_switch(spec::DesignKind::rail_only, 8),
                                           job.model, job.training, o),
                      "swap in spares")
                   .possible);
}

TEST(WhatIf, DeadSpineSlowsWithoutCuttingAnything) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 128, 8);
  const Job job;
  const fail::DesignWhatIf d = fail::what_if_design(c, small_switch(spec::DesignKind::rail_only, 8),
                                                    job.model, job.training, with({"spine:0"}));
  EXPECT_EQ(d.gpus_cut_off + d.gpus_dead + d.domains_forwarding, 0);
  ASSERT_EQ(d.uplink_ratio.size(), 2u);
  EXPECT_DOUBLE_EQ(d.uplink_ratio[1], 2.0);  // half the leaf uplinks of rail 0
  EXPECT_TRUE(d.runnable);
  EXPECT_GE(d.degraded_s, d.healthy_s);
  EXPECT_FALSE(option(d, "drop domains and re-plan").possible);
  EXPECT_NE(option(d, "drop domains and re-plan").detail.find("above the leaves"),
            std::string::npos);
}

TEST(WhatIf, BadFailureSets) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 128, 8);
  const Job job;
  const std::vector<spec::NetworkDesign> both = {small_switch(spec::DesignKind::rail_optimized, 8),
                                                 small_switch(spec::DesignKind::rail_only, 8)};
  auto message = [&](const fail::WhatIfOptions& o) {
    try {
      fail::what_if(c, both, job.model, job.training, o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(with({})).find("give at least one component"), std::string::npos);
  EXPECT_NE(message(with({"leaf:999"})).find("out of range"), std::string::npos);
  EXPECT_NE(message(with({"fan:1"})).find("unknown component"), std::string::npos);
  // core:0: rail_optimized has three tiers here, rail_only two: absent from rail_only only.
  const auto r = fail::what_if(c, both, job.model, job.training, with({"core:0"}));
  EXPECT_TRUE(r.designs[1].not_present.size() == 1 && r.designs[0].not_present.empty());
  std::vector<std::string> all;
  for (int dom = 0; dom < 16; ++dom) all.push_back("domain:" + std::to_string(dom));
  fail::WhatIfOptions every;
  every.fail = all;
  EXPECT_NE(message(every).find("cut off every one of the 128 GPUs"), std::string::npos)
      << message(every);
}

TEST(WhatIf, GoodputEffectsFromTheFabric) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 128, 8);
  const Job job;
  const auto rates = test::one_class(spec::FailureScope::nic, 1e-5);
  fail::RunParams p;
  fail::WhatIfOptions o;
  o.plan.top = 1;
  for (auto kind : {spec::DesignKind::rail_only, spec::DesignKind::rail_optimized}) {
    const spec::NetworkDesign d = small_switch(kind, 8);
    fail::FailureModel m = fail::make_failure_model(c, d, rates, p);
    ASSERT_EQ(m.streams.size(), 1u);
    const auto notes = fail::fabric_effects(m, c, d, job.model, job.training, o);
    EXPECT_EQ(notes.size(), 1u);
    auto w = o;
    w.fail = {"nic:0"};
    w.sim = fail::SimMode::off;
    const fail::DesignWhatIf ref = fail::what_if_design(c, d, job.model, job.training, w);
    const fail::FailureEffect& e = m.streams[0].effect;
    // PXN on both designs (the default): the dead NIC's traffic is forwarded and the job
    // runs at the whatif's degraded speed.
    EXPECT_FALSE(e.interrupts);
    EXPECT_EQ(e.domains_lost, 1);
    EXPECT_DOUBLE_EQ(e.slowdown, ref.degraded_s / ref.healthy_s);
    EXPECT_GT(e.slowdown, 1.0);
    EXPECT_LT(e.slowdown, 1.15);  // the input default 1 + f it replaces
  }
}

TEST(WhatIf, DeadNvSwitchPlaneSlowsTheDomainsHbTraffic) {
  const spec::Cluster c = test::fail_cluster("H100-SXM", 128, 8);
  const Job job;
  const fail::DesignWhatIf d = fail::what_if_design(c, small_switch(spec::DesignKind::rail_only, 8),
                                                    job.model, job.training, with({"nvswitch:1"}));
  EXPECT_EQ(d.domains_hb_degraded, 1);
  EXPECT_DOUBLE_EQ(d.hb_factor, 0.75);
  EXPECT_TRUE(d.runnable);
  EXPECT_GT(d.degraded_s, d.healthy_s);  // TP inside the domain at 3/4 of the HB bandwidth
  ASSERT_TRUE(d.simulated);
  EXPECT_GT(d.sim_degraded_comm_s, d.sim_healthy_comm_s);
}
