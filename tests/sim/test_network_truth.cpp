// One network truth: perf, traffic and sim read the same Fabric (through perf's NetworkView and
// the same switch fitting) and the same expansion of the CommSchedule (perf/expansion.hpp).
//
// The property test draws random clusters, designs, switches and strategies and checks every
// collective of the strategy's schedule: traffic's bytes equal the bytes sim's senders hand to
// the network, and on uncontended placements (no flow needs a hashed ECMP choice above its leaf)
// perf's time equals the simulated time within 1%. Where flows climb above a leaf, hashed ECMP
// may put two flows on one uplink, which the analytic model (perfect spreading) ignores: there
// the simulation may only be slower, and the test counts those cases.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "railsim/core/error.hpp"
#include "railsim/core/units.hpp"
#include "railsim/cost/bill_of_materials.hpp"
#include "railsim/cost/catalog.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/perf/expansion.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/model.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/sim/check.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/network_view.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

using namespace railsim;

namespace {

spec::Cluster cluster(const std::string& gpu, std::int64_t n, std::int64_t k, double nic_gbps) {
  const spec::GpuSpec g = spec::load_gpu(gpu);
  return spec::make_cluster(g, n, k, nic_gbps, g.hb_bw_Bps / 1e9, 1);
}

spec::NetworkDesign design(spec::DesignKind kind, const std::string& sw) {
  return spec::make_network_design(kind, spec::load_switch(sw));
}

sim::SimNetwork without_hop_latency(const topo::Fabric& f, sim::SimConfig& cfg) {
  sim::SimNetwork net = sim::like_for_like(f, cfg);
  cfg.hop_latency_s = 0;
  return net;
}

}  // namespace

// An 800G NIC on a switch sold as 128 x 400G: the switch runs in its 64 x 800G mode in the bill
// of materials, the graph, the simulator and the analytic model alike (it used to be priced at
// 400G ports, simulated at 400G and timed at 800G).
TEST(NetworkTruth, NicFasterThanPresetPortUsesTheSwitchsMatchingPortMode) {
  const spec::Cluster c = cluster("H100-SXM", 1024, 8, 800);
  const spec::NetworkDesign d = design(spec::DesignKind::rail_optimized, "ETH-51.2T-128x400G");
  const cost::BillOfMaterials bom = cost::bill_of_materials(c, d);
  EXPECT_EQ(bom.radix, 64);
  EXPECT_DOUBLE_EQ(bom.port_gbps, 800);
  const cost::BillOfMaterials native =
      cost::bill_of_materials(c, design(spec::DesignKind::rail_optimized, "ETH-51.2T-64x800G"));
  EXPECT_EQ(bom.switches, native.switches);
  EXPECT_EQ(bom.switches_per_tier, native.switches_per_tier);

  const topo::Fabric f = topo::build_fabric(c, d);
  EXPECT_DOUBLE_EQ(f.links[static_cast<std::size_t>(f.nic_link(0, 0))].capacity_Bps, 100e9);
  const topo::NetworkView v = topo::make_network_view(c, d);
  EXPECT_DOUBLE_EQ(v.nic_link_Bps, 100e9);
  const perf::NetworkModel nm = perf::make_network_model(c, d);
  EXPECT_DOUBLE_EQ(nm.nic_Bps, 100e9 * c.gpu.eff.nic);

  // The simulated 1 GB transfer between two domains of one rail takes what perf says.
  sim::SimConfig cfg;
  const sim::SimNetwork net = without_hop_latency(f, cfg);
  sim::CollectiveRequest req;
  req.op = perf::CollectiveOp::send_recv;
  req.algorithm = perf::Algorithm::p2p;
  req.bytes = 1e9;
  req.groups = {{0, 8}};
  const double simulated = sim::simulate_collective(net, req, cfg).completion_time_s;
  perf::CommOp op;
  op.op = perf::CollectiveOp::send_recv;
  op.algorithm = perf::Algorithm::p2p;
  op.bytes = 1e9;
  const double analytic = perf::collective_time(op, perf::GroupShape{2, 1, 2, true}, nm).time_s;
  EXPECT_NEAR(simulated / analytic, 1.0, 1e-9);
}

// 18,432 GB200 (K = 72) with 800G NICs: the default 51.2T switch is priced as the 64 x 800G
// network it has to be, not as a 400G one.
TEST(NetworkTruth, Gb200With800gNicsIsPricedOn800gPorts) {
  const spec::Cluster c = cluster("GB200", 18432, 72, 800);
  const cost::Catalog cat = cost::load_catalog(cost::kDefaultCatalog);
  for (auto kind : {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only}) {
    const auto fitted =
        cost::evaluate(c, design(kind, "ETH-51.2T-128x400G"), cat, cost::SwitchCounting::whole);
    const auto native =
        cost::evaluate(c, design(kind, "ETH-51.2T-64x800G"), cat, cost::SwitchCounting::whole);
    EXPECT_DOUBLE_EQ(fitted.cost.cost_usd(), native.cost.cost_usd());
    EXPECT_EQ(fitted.switch_name, "ETH-51.2T-128x400G in 64 x 800G mode");
  }
}

TEST(NetworkTruth, NicFasterThanEveryPortModeIsRefusedNamingBothSpeeds) {
  const spec::Cluster c = cluster("H100-SXM", 1024, 8, 800);
  try {
    (void)topo::plan_network(c, design(spec::DesignKind::rail_only, "QM9700"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--nic-gbps"), std::string::npos) << what;
    EXPECT_NE(what.find("800 Gb/s"), std::string::npos) << what;
    EXPECT_NE(what.find("400 Gb/s"), std::string::npos) << what;
  }
}

// A NIC slower than the port, with no mode at its speed, runs its link at the NIC's speed; a 200G
// NIC on a 400G switch with a 200G mode uses that mode (twice the ports per switch).
TEST(NetworkTruth, SlowerNicsUseABreakoutModeOrRunTheirLinkAtTheirSpeed) {
  const spec::Cluster c200 = cluster("H100-SXM", 1024, 8, 200);
  const spec::NetworkDesign d = design(spec::DesignKind::rail_only, "QM9700");
  EXPECT_EQ(cost::bill_of_materials(c200, d).radix, 128);
  EXPECT_DOUBLE_EQ(topo::make_network_view(c200, d).nic_link_Bps, 25e9);
  const spec::Cluster c100 = cluster("H100-SXM", 1024, 8, 100);
  EXPECT_EQ(cost::bill_of_materials(c100, d).radix, 64);
  EXPECT_DOUBLE_EQ(topo::make_network_view(c100, d).nic_link_Bps, 12.5e9);
}

// `sim --schedule` used to run hierarchical reduce-scatter and all-gather as one flat ring (while
// labelling them hierarchical): 1.87x the analytic time for Megatron-22B, tp 4, dp 16, the
// distributed optimizer and SP on 64 H100.
TEST(NetworkTruth, HierarchicalReduceScatterAndAllGatherAreSimulatedHierarchically) {
  const spec::Cluster c = cluster("H100-SXM", 64, 8, 400);
  const spec::NetworkDesign d = design(spec::DesignKind::rail_optimized, "ETH-51.2T-128x400G");
  const topo::Fabric f = topo::build_fabric(c, d);
  sim::SimConfig cfg;
  const sim::SimNetwork net = without_hop_latency(f, cfg);
  const perf::Model m = perf::load_model("Megatron-22B");
  perf::Training tr;
  tr.global_batch = 64;
  tr.seq_len = m.seq_len;
  perf::Strategy s;
  s.tp = 4;
  s.dp = 16;
  s.sp = true;
  s.dist_opt = true;
  perf::validate(m, tr, s, c);
  const perf::Placement pl(f.cluster, s.degrees());
  const perf::CommSchedule cs = perf::build_comm_schedule(m, tr, s, pl);
  const auto r = sim::simulate_schedule(net, cs, pl, cfg);
  const perf::NetworkModel nm = perf::make_network_model(c, d);
  int hierarchical = 0;
  for (const auto& o : r.ops) {
    if (o.op.algorithm != perf::Algorithm::hierarchical) continue;
    ++hierarchical;
    const double an = perf::collective_time(o.op, pl.shape(o.op.axis), nm).time_s;
    EXPECT_NEAR(o.time_s / an, 1.0, 0.01) << perf::to_string(o.op.op);
    EXPECT_GE(o.detail.phases.size(), 2u) << perf::to_string(o.op.op);
  }
  EXPECT_EQ(hierarchical, 2);  // the DP reduce-scatter and all-gather
}

namespace {

struct Case {
  std::int64_t k = 8, domains = 2;
  spec::DesignKind kind = spec::DesignKind::rail_only;
  std::string sw;
  perf::Model model;
  perf::Training training;
  perf::Strategy strategy;
  perf::PlacementKind placement = perf::PlacementKind::rail_aligned;
  std::string name() const {
    return fmt::format("{} GPUs K={} {} {} {} {} {}", k * domains, k, spec::to_string(kind), sw,
                       model.name, perf::describe(strategy), perf::to_string(placement));
  }
};

perf::Model small_model(bool moe) {
  perf::Model m;
  m.name = moe ? "moe-small" : "dense-small";
  m.layers = 12;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.vocab = 32000;
  m.seq_len = 1024;
  if (moe) {
    m.experts = 16;
    m.top_k = 2;
    m.expert_ffn_hidden = 2048;
  }
  return m;
}

std::int64_t pick_divisor(std::mt19937_64& rng, std::int64_t n, std::int64_t cap) {
  std::vector<std::int64_t> d;
  for (std::int64_t x = 1; x <= n && x <= cap; ++x)
    if (n % x == 0) d.push_back(x);
  return d[std::uniform_int_distribution<std::size_t>(0, d.size() - 1)(rng)];
}

bool draw(std::mt19937_64& rng, Case& c) {
  const std::int64_t ks[] = {2, 4, 8};
  const std::int64_t ds[] = {2, 3, 4, 6, 8, 12, 16};
  const char* sws[] = {"QM9700", "ETH-51.2T-128x400G", "TH4-64x400G"};
  c.k = ks[rng() % 3];
  c.domains = ds[rng() % 7];
  c.kind = static_cast<spec::DesignKind>(rng() % 3);
  c.sw = sws[rng() % 3];
  c.model = small_model(rng() % 2 == 0);
  const std::int64_t n = c.k * c.domains;
  perf::Strategy& s = c.strategy;
  s = {};
  s.tp = pick_divisor(rng, n, 16);
  s.pp = pick_divisor(rng, n / s.tp, 12);
  s.dp = n / (s.tp * s.pp);
  s.ep = c.model.is_moe() ? pick_divisor(rng, s.dp, 16) : 1;
  s.sp = s.tp > 1 && rng() % 2 == 0;
  s.dist_opt = rng() % 2 == 0;
  s.micro_batch = 1;
  c.training.seq_len = c.model.seq_len;
  c.training.global_batch = s.dp * static_cast<std::int64_t>(1 + rng() % 4);
  c.placement =
      rng() % 4 == 0 ? perf::PlacementKind::tp_across_domains : perf::PlacementKind::rail_aligned;
  const spec::Cluster cl = cluster("H100-SXM", n, c.k, 400);
  return perf::is_valid(c.model, c.training, s, cl);
}

// True when some transfer of the op (forwarding legs included) leaves its leaf switch: then a
// hashed ECMP choice decides its uplink.
bool climbs_above_leaf(const topo::Fabric& f, const perf::CommOp& op, const perf::Placement& pl) {
  if (f.instances == 0) return false;
  const spec::Cluster& c = f.cluster;
  std::vector<traffic::Transfer> tr;
  std::vector<std::int64_t> scratch;
  for (std::int64_t g = 0; g < pl.group_count(op.axis); ++g) {
    tr.clear();
    traffic::expand_group(op, pl, g, tr, scratch);
    for (const auto& t : tr) {
      if (c.domain_of(t.src) == c.domain_of(t.dst)) continue;
      std::int64_t from = t.src;
      if (f.instances > 1 && c.rail_of(t.src) != c.rail_of(t.dst))
        from = c.gpu_at(c.domain_of(t.src), c.rail_of(t.dst));  // hb_first forwarding
      if (f.leaf_of(from, 0) != f.leaf_of(t.dst, 0)) return true;
    }
  }
  return false;
}

// Why the simulation may differ from the model for one op; empty when it may not.
// - Rings and pipelines: every member sends one stream, so no link carries more than one
//   member's bytes unless two streams meet on it: hashed ECMP onto one uplink, or, on rail_only,
//   groups that are not rail-aligned forwarding through the same peer's NIC (the model charges
//   each group's forwarding as if it had the NIC to itself).
// - All-to-all: the model spreads the inter-domain bytes evenly; it holds while nothing climbs
//   above a leaf.
std::string contention(const topo::Fabric& f, const sim::ScheduleOpResult& o,
                       const perf::CommOp& once, const perf::Placement& pl) {
  if (once.op == perf::CollectiveOp::all_to_all)
    return climbs_above_leaf(f, once, pl) ? "all-to-all above a leaf (ECMP)" : "";
  const double n = static_cast<double>(pl.axis_size(once.axis));
  const double f_ = once.op == perf::CollectiveOp::all_reduce ? 2.0 : 1.0;
  const double one_stream =
      once.op == perf::CollectiveOp::send_recv ? once.bytes : f_ * (n - 1.0) / n * once.bytes;
  if (o.detail.busiest.empty() || o.detail.busiest.front().bytes <= one_stream * (1 + 1e-9))
    return "";
  return f.design.kind == spec::DesignKind::rail_only && !pl.shape(once.axis).rail_aligned
             ? "forwarding streams share a NIC"
             : "ECMP streams share an uplink";
}

}  // namespace

TEST(NetworkTruth, PerfTrafficAndSimAgreeOnRandomCases) {
  std::mt19937_64 rng(20261130);
  int cases = 0, ops_checked = 0, uncontended = 0, contended_slower = 0;
  std::map<std::string, int> contended;
  std::string worst;
  double worst_err = 0;
  while (cases < 1000) {
    Case cs;
    if (!draw(rng, cs)) continue;
    ++cases;
    SCOPED_TRACE(cs.name());
    const spec::Cluster cl = cluster("H100-SXM", cs.k * cs.domains, cs.k, 400);
    const spec::NetworkDesign d = design(cs.kind, cs.sw);
    const topo::Fabric f = topo::build_fabric(cl, d);
    sim::SimConfig cfg;
    cfg.mode = sim::ForwardingMode::two_phase;  // the model's non-overlapped forwarding
    const sim::SimNetwork net = without_hop_latency(f, cfg);
    const perf::Placement pl(f.cluster, cs.strategy.degrees(), cs.placement);
    const perf::CommSchedule sched =
        perf::build_comm_schedule(cs.model, cs.training, cs.strategy, pl);
    const auto r = sim::simulate_schedule(net, sched, pl, cfg);
    const perf::NetworkModel nm = perf::make_network_model(cl, d);
    for (const auto& o : r.ops) {
      if (pl.axis_size(o.op.axis) < 2 || o.op.bytes <= 0) continue;
      ++ops_checked;
      // Bytes: one occurrence of the op (sim does not simulate the interleaving wrap).
      perf::CommOp once = o.op;
      once.count = 1;
      once.wrap_count = 0;
      perf::CommSchedule one;
      one.add(once);
      const double tbytes = traffic::TrafficMatrix::build(one, pl, f.cluster).total_bytes();
      EXPECT_NEAR(o.detail.bytes_sent, tbytes, 1e-12 * tbytes)
          << perf::to_string(o.op.parallelism) << " " << perf::to_string(o.op.op);
      EXPECT_NEAR(tbytes, perf::op_wire_bytes(once, pl), 1e-12 * tbytes);

      const double an = perf::collective_time(o.op, pl.shape(o.op.axis), nm).time_s;
      const double ratio = o.time_s / an;
      const std::string why = contention(f, o, once, pl);
      if (!why.empty()) {
        ++contended[why];
        contended_slower += ratio > 1.01;
        EXPECT_GE(ratio, 0.99) << "sim faster than the model: " << perf::to_string(o.op.op);
      } else {
        ++uncontended;
        EXPECT_NEAR(ratio, 1.0, 0.01)
            << perf::to_string(o.op.parallelism) << " " << perf::to_string(o.op.op) << " "
            << perf::to_string(o.op.algorithm) << " sim " << o.time_s << " s, perf " << an << " s";
        if (std::abs(ratio - 1) > worst_err) {
          worst_err = std::abs(ratio - 1);
          worst = cs.name();
        }
      }
    }
  }
  EXPECT_EQ(cases, 1000);
  EXPECT_GT(uncontended, 2000);
  std::string classes;
  for (const auto& [why, count] : contended) classes += fmt::format("; {}: {}", why, count);
  std::printf(
      "%d cases, %d ops: %d uncontended (worst |sim/perf - 1| = %.2e in %s), contended "
      "(%d of them slower in simulation by more than 1%%)%s\n",
      cases, ops_checked, uncontended, worst_err, worst.c_str(), contended_slower, classes.c_str());
}
