// Property tests (RapidCheck): invariants that must hold for any valid input, checked on random
// clusters, designs, strategies, workloads and tables. The case count and seed come from RC_PARAMS
// (CMakeLists.txt sets a modest count and a fixed seed so that the suite stays fast and
// repeatable).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "../common/read_csv.hpp"
#include "../common/small_network.hpp"
#include "railsim/core/json.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/placement.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/report/table.hpp"
#include "railsim/sim/check.hpp"
#include "railsim/sim/flow_sim.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/stack.hpp"
#include "railsim/spec/switch.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/fabric.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

namespace {

using namespace railsim;

const char* const kGpus[] = {"H100-SXM", "A100-SXM-80GB", "B200", "GB200"};
const char* const kSwitches[] = {"ETH-51.2T-128x400G", "ETH-51.2T-64x800G", "QM9700", "Q3400",
                                 "TH4-64x400G"};
const char* const kModels[] = {"Llama-3-8B", "GPT-3-175B", "Megatron-22B", "Mixtral-8x7B",
                               "Llama-3-70B"};

// A cluster of a random preset GPU: HB domain of 1 to 72 (or the preset's), domains counted so that
// N stays up to `max_gpus`.
spec::Cluster gen_cluster(std::int64_t max_gpus) {
  const std::string gpu =
      *rc::gen::elementOf(std::vector<std::string>(std::begin(kGpus), std::end(kGpus)));
  const std::int64_t k = *rc::gen::elementOf(std::vector<std::int64_t>{1, 2, 4, 8, 16, 36, 72});
  const std::int64_t domains =
      *rc::gen::inRange<std::int64_t>(1, std::max<std::int64_t>(2, max_gpus / k + 1));
  spec::ClusterOptions o;
  o.gpu = gpu;
  o.gpus = k * domains;
  o.hb_domain = k;
  return spec::make_cluster(o);
}

spec::NetworkDesign gen_design(const spec::Cluster& c) {
  spec::NetworkOptions no;
  no.design = *rc::gen::elementOf(std::vector<std::string>{"rail_optimized", "rail_only", "ideal"});
  no.sw = *rc::gen::elementOf(std::vector<std::string>(std::begin(kSwitches), std::end(kSwitches)));
  no.oversubscription = *rc::gen::elementOf(std::vector<double>{1.0, 1.5, 2.0, 3.0, 7.0});
  return spec::fit_to_cluster(c, spec::make_network_design(no));
}

}  // namespace

// Ports used never exceed the ports there are: in every tier of every sized design, the ports
// facing down and up fit the switch's radix; in every built graph, no switch has more links than
// its radix.
RC_GTEST_PROP(Property, PortsUsedNeverAbovePortsAvailable, ()) {
  const spec::Cluster c = gen_cluster(2048);
  const spec::NetworkDesign d = gen_design(c);
  const topo::NetworkPlan np = topo::plan_network(c, d);
  for (const topo::ClosTier& t : np.plan.tiers)
    RC_ASSERT(t.down_ports + t.up_ports <= np.plan.radix);
  const topo::Fabric f = topo::build_fabric(c, d);
  std::vector<int> degree(f.nodes.size(), 0);
  for (const topo::Link& l : f.links) {
    ++degree[static_cast<std::size_t>(l.a)];
    ++degree[static_cast<std::size_t>(l.b)];
  }
  for (std::size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].kind == topo::NodeKind::network_switch) RC_ASSERT(degree[i] <= d.sw.radix);
}

// Raising any bandwidth (HB, NIC, switch ports) never makes the same strategy's iteration slower.
RC_GTEST_PROP(Property, IterationTimeNeverRisesWhenABandwidthRises, ()) {
  const std::string model =
      *rc::gen::elementOf(std::vector<std::string>(std::begin(kModels), std::end(kModels)));
  const perf::Model m = perf::load_model(model);
  const spec::Training tr = spec::make_training(1024, m.seq_len, spec::Stack{});
  const std::int64_t k = *rc::gen::elementOf(std::vector<std::int64_t>{4, 8, 16});
  const std::int64_t n = k * *rc::gen::elementOf(std::vector<std::int64_t>{8, 16, 32, 64, 128});
  const double hb = *rc::gen::inRange(100, 1000);  // GB/s
  const double nic = *rc::gen::inRange(100, 800);  // Gb/s
  const double factor = 1.0 + *rc::gen::inRange(1, 400) / 100.0;
  const int which = *rc::gen::inRange(0, 3);  // 0 HB, 1 NIC, 2 switch ports
  const std::string design =
      *rc::gen::elementOf(std::vector<std::string>{"rail_optimized", "rail_only"});
  auto time = [&](double hb_GBps, double nic_gbps, double port_gbps) {
    spec::ClusterOptions o;
    o.gpus = n;
    o.hb_domain = k;
    o.hb_gbytes_per_s = hb_GBps;
    o.nic_gbps = nic_gbps;
    const spec::Cluster c = spec::make_cluster(o);
    spec::SwitchSpec sw = spec::load_switch("ETH-51.2T-128x400G");
    sw.port_gbps = port_gbps;
    sw.modes = {{sw.radix, port_gbps}};
    const spec::NetworkDesign d =
        spec::fit_to_cluster(c, spec::make_network_design(spec::parse_design_kind(design), sw));
    const perf::Strategy s = perf::default_strategy(m, tr, {}, c);
    return perf::estimate(perf::make_context(m, tr, c, d), s).iteration_time_s;
  };
  const double port = std::max(nic, 400.0);
  const double base = time(hb, nic, port);
  const double raised = which == 0   ? time(hb * factor, nic, port)
                        : which == 1 ? time(hb, nic * factor, std::max(nic * factor, port))
                                     : time(hb, nic, port * factor);
  RC_ASSERT(std::isfinite(base));
  RC_ASSERT(raised <= base * (1 + 1e-12));
}

// More network capacity is never slower, in the analytic model and in the simulator: fewer leaf
// uplinks (2:1 against 1:1 at the same leaf size: 3/4 of the radix, half of it facing down in
// both), a faster NIC, a second NIC per GPU and a switch of twice the radix never lengthen the
// iteration (the analytic estimate), its analytic communication or its simulated communication,
// on random small clusters (2 to 8 GPUs per HB domain, 4 to 16 domains), rail_optimized and
// rail_only, under ecmp, adaptive and spray. At the same leaf size: with a fixed radix a 2:1 leaf
// also takes more GPUs, which can keep more of a plan's traffic under one leaf; the model and the
// simulator both see that gain (it is real), so it is not a capacity comparison. Under ECMP the
// property holds where the tier count stays, and not for the radix: a change of tiers changes
// what is hashed (a second NIC per GPU turns a 16-GPU rail on 16-port switches into two tiers,
// and ECMP's collisions make it slower), and a larger radix hashes more flows over more uplinks
// at once, whose busiest carries more (balls into bins: the expected maximum of 8 flows on 8
// uplinks is 2.6, of 4 on 4 is 2.1; 32 GPUs, K=2, tp2 pp2: 1.480 s on 16-port switches against
// 1.475 s on 8-port ones). The simulator under ECMP is left out: one hash draw per topology,
// another topology draws other collisions.
RC_GTEST_PROP(Property, MoreNetworkCapacityIsNeverSlower, ()) {
  const std::int64_t k = *rc::gen::elementOf(std::vector<std::int64_t>{2, 4, 8});
  const std::int64_t domains = *rc::gen::elementOf(std::vector<std::int64_t>{4, 8, 16});
  const std::int64_t n = k * domains;
  const int radix = *rc::gen::elementOf(std::vector<int>{8, 16, 32});
  const auto kind = *rc::gen::elementOf(
      std::vector<spec::DesignKind>{spec::DesignKind::rail_optimized, spec::DesignKind::rail_only});
  const auto routing = *rc::gen::elementOf(std::vector<spec::Routing>{
      spec::Routing::ecmp, spec::Routing::adaptive, spec::Routing::spray});
  // 0 oversubscription, 1 NIC, 2 extra NIC, 3 radix; uniform at every size (inRange alone
  // favours small values while RapidCheck's size is small)
  const int which = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 4));
  RC_PRE(!(which == 3 && routing == spec::Routing::ecmp));
  const perf::Model m = test::small_model(/*moe=*/false, /*layers=*/8);
  perf::Strategy st;
  st.tp = *rc::gen::elementOf(std::vector<std::int64_t>{1, k});
  st.pp = *rc::gen::elementOf(std::vector<std::int64_t>{1, 2});
  st.dp = n / (st.tp * st.pp);
  st.dist_opt = *rc::gen::arbitrary<bool>();
  perf::Training tr;
  tr.seq_len = m.seq_len;
  tr.global_batch = 4 * st.dp;
  struct Net {
    double over;
    double nic_gbps;
    int nics;
    int radix;
  };
  const Net base{which == 0 ? 2.0 : 1.0, which == 1 ? 200.0 : 400.0, 1,
                 which == 0 ? radix * 3 / 4 : radix};
  Net more = base;
  if (which == 0) {
    more.over = 1;
    more.radix = radix;
  }
  if (which == 1) more.nic_gbps = 400;
  if (which == 2) more.nics = 2;
  if (which == 3) more.radix = 2 * radix;
  struct Times {
    double iteration, comm_analytic, comm_sim;
    int tiers;
  };
  const auto times = [&](const Net& x) -> std::optional<Times> {
    const spec::GpuSpec g = spec::load_gpu("H100-SXM");
    const spec::Cluster c = spec::make_cluster(g, n, k, x.nic_gbps, g.hb_bw_Bps / 1e9, x.nics);
    spec::NetworkDesign d = spec::make_network_design(kind, test::small_switch(x.radix), x.over);
    d.routing = routing;
    int tiers = 0;
    try {
      d = spec::fit_to_cluster(c, d);
      tiers = topo::plan_network(c, d).tiers();
    } catch (const InputError&) {
      return std::nullopt;  // no Clos of this radix for the cluster
    }
    if (!perf::is_valid(m, tr, st, c)) return std::nullopt;
    const perf::Placement pl(c, st.degrees());
    const perf::CommSchedule cs = perf::build_comm_schedule(m, tr, st, pl);
    Times t{};
    t.tiers = tiers;
    t.iteration = perf::estimate(perf::make_context(m, tr, c, d), st).iteration_time_s;
    if (routing != spec::Routing::ecmp) {
      const topo::Fabric f = topo::build_fabric(c, d);
      const perf::Placement fp(f.cluster, st.degrees());
      const sim::ScheduleCheck chk = sim::check_schedule(f, cs, fp, sim::sim_config(d));
      t.comm_analytic = chk.analytic_total_s;
      t.comm_sim = chk.sim.total_s;
    }
    return t;
  };
  const std::optional<Times> a = times(base), b = times(more);
  RC_PRE(a.has_value() && b.has_value());
  RC_PRE(routing != spec::Routing::ecmp || a->tiers == b->tiers);
  RC_TAG(which);
  RC_ASSERT(std::isfinite(a->iteration) && a->iteration > 0);
  RC_ASSERT(b->iteration <= a->iteration * (1 + 1e-9));
  RC_ASSERT(b->comm_analytic <= a->comm_analytic * (1 + 1e-9));
  RC_ASSERT(b->comm_sim <= a->comm_sim * (1 + 1e-6));
}

// The traffic matrix carries exactly the bytes the CommSchedule puts on the wire, per parallelism.
RC_GTEST_PROP(Property, TrafficMatrixTotalsEqualTheScheduleBytes, ()) {
  const std::string model =
      *rc::gen::elementOf(std::vector<std::string>(std::begin(kModels), std::end(kModels)));
  const perf::Model m = perf::load_model(model);
  const spec::Training tr = spec::make_training(512, m.seq_len, spec::Stack{});
  const spec::Cluster c = gen_cluster(256);
  const spec::NetworkDesign d = gen_design(c);
  const perf::EstimateContext ctx = perf::make_context(m, tr, c, d);
  perf::PlanOptions po;
  po.top = 50;
  const perf::PlanResult r = perf::plan(ctx, po);
  RC_PRE(!r.plans.empty());
  const auto i = *rc::gen::inRange<std::size_t>(0, r.plans.size());
  const perf::Strategy& s = r.plans[i].strategy;
  const auto kind = *rc::gen::elementOf(std::vector<perf::PlacementKind>{
      perf::PlacementKind::rail_aligned, perf::PlacementKind::tp_across_domains,
      perf::PlacementKind::shuffled});
  const perf::Placement pl(c, s.degrees(), kind);
  const perf::CommSchedule cs = perf::build_comm_schedule(m, tr, s, pl);
  const traffic::TrafficMatrix tm = traffic::TrafficMatrix::build(cs, pl, c);
  const perf::WireBytes wb = perf::wire_bytes(cs, pl);
  std::array<double, perf::kParallelismCount> by{};
  for (std::size_t e = 0; e < tm.size(); ++e)
    by[static_cast<std::size_t>(tm[e].parallelism)] += tm[e].bytes;
  for (std::size_t p = 0; p < by.size(); ++p)
    RC_ASSERT(std::abs(by[p] - wb.by_parallelism[p]) <= 1e-9 * std::max(1.0, wb.by_parallelism[p]));
  RC_ASSERT(std::abs(tm.total_bytes() - wb.total()) <= 1e-9 * std::max(1.0, wb.total()));
}

// The flow engine never finishes faster than physics allows: the completion time is at least the
// bytes each channel carries over its capacity, and at least each flow's bytes over its path's
// narrowest channel.
RC_GTEST_PROP(Property, SimulatedTimeNeverBelowTheLowerBound, ()) {
  const int channels = *rc::gen::inRange(1, 12);
  std::vector<double> cap(static_cast<std::size_t>(channels));
  for (double& x : cap) x = *rc::gen::inRange(1, 1000) * 1e9;
  sim::Workload w(cap);
  const int flows = *rc::gen::inRange(1, 60);
  std::vector<double> load(cap.size(), 0.0);
  double flow_bound = 0;
  for (int f = 0; f < flows; ++f) {
    const int hops = *rc::gen::inRange(1, std::min(4, channels) + 1);
    std::vector<sim::ChannelId> path;
    for (int h = 0; h < hops; ++h) {
      const auto ch = static_cast<sim::ChannelId>(*rc::gen::inRange(0, channels));
      if (std::find(path.begin(), path.end(), ch) == path.end()) path.push_back(ch);
    }
    const double bytes = *rc::gen::inRange(1, 10000) * 1e6;
    const double weight = *rc::gen::inRange(1, 4);
    const sim::FlowId id = w.add_flow(path, bytes, weight);
    if (f > 0 && *rc::gen::inRange(0, 4) == 0)
      w.add_dependency(static_cast<sim::FlowId>(*rc::gen::inRange(0, f)), id);
    double narrowest = 1e300;
    for (auto ch : path) {
      load[static_cast<std::size_t>(ch)] += bytes * weight;
      narrowest = std::min(narrowest, cap[static_cast<std::size_t>(ch)]);
    }
    flow_bound = std::max(flow_bound, bytes / narrowest);
  }
  const sim::SimResult r = sim::simulate(w);
  double channel_bound = 0;
  for (std::size_t c = 0; c < cap.size(); ++c)
    channel_bound = std::max(channel_bound, load[c] / cap[c]);
  RC_ASSERT(std::isfinite(r.completion_time_s));
  RC_ASSERT(r.completion_time_s >= channel_bound * (1 - 1e-9));
  RC_ASSERT(r.completion_time_s >= flow_bound * (1 - 1e-9));
  for (std::size_t c = 0; c < cap.size(); ++c)
    RC_ASSERT(std::abs(r.channel_bytes[c] - load[c]) <= 1e-6 * std::max(1.0, load[c]));
}

// CSV and JSON of any table read back to the same numbers, bit for bit, and the same text.
RC_GTEST_PROP(Property, CsvAndJsonParseBackToTheSameValues, ()) {
  report::Table t;
  t.columns = {{.name = "name", .type = report::Type::text},
               {.name = "count", .type = report::Type::integer},
               {.name = "value_s", .type = report::Type::real},
               {.name = "ok", .type = report::Type::boolean}};
  const int rows = *rc::gen::inRange(1, 20);
  std::vector<std::string> names;
  std::vector<std::int64_t> counts;
  std::vector<double> values;
  for (int i = 0; i < rows; ++i) {
    names.push_back(*rc::gen::container<std::string>(
        rc::gen::elementOf(std::vector<char>{'a', 'z', ',', '"', ' ', '\n', '\r', ';', '1', '.'})));
    counts.push_back(*rc::gen::arbitrary<std::int64_t>());
    // Any finite double, from subnormals to the largest.
    const double mant = *rc::gen::inRange(-1000000, 1000000) / 7.0;
    const int exp = *rc::gen::inRange(-1074, 1000);
    values.push_back(std::ldexp(mant, exp));
    t.add_row({names.back(), counts.back(), values.back(), i % 2 == 0});
  }
  const auto csv = test::read_csv(report::to_csv(t));
  RC_ASSERT(csv.size() == static_cast<std::size_t>(rows) + 1);
  const Json j = Json::parse(report::to_json(t).dump());
  for (int i = 0; i < rows; ++i) {
    const auto& row = csv[static_cast<std::size_t>(i) + 1];
    RC_ASSERT(row.size() == 4u);
    RC_ASSERT(row[0] == names[static_cast<std::size_t>(i)]);
    RC_ASSERT(std::strtoll(row[1].c_str(), nullptr, 10) == counts[static_cast<std::size_t>(i)]);
    RC_ASSERT(std::strtod(row[2].c_str(), nullptr) == values[static_cast<std::size_t>(i)]);
    const Json& o = j[static_cast<std::size_t>(i)];
    RC_ASSERT(o["name"].get<std::string>() == names[static_cast<std::size_t>(i)]);
    RC_ASSERT(o["count"].get<std::int64_t>() == counts[static_cast<std::size_t>(i)]);
    RC_ASSERT(o["value_s"].get<double>() == values[static_cast<std::size_t>(i)]);
  }
}
