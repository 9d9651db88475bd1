// libFuzzer target: the library's validation of what the command line hands it, as `railsim
// design`, `estimate`, `plan`, `sim --fail`, `sim` (MoE token routing), `sweep` (the value
// syntax of its lists) and `fail goodput` (the run, the failure rates, the Monte Carlo's bound on
// work) resolve it. The input is text, one `key=value` per
// line (keys below; an unknown key or a number that does not parse is skipped, as CLI11 would
// refuse it before the library sees it). Every step either throws railsim::InputError or returns
// values that are finite and consistent: ports used within the ports there are, a positive finite
// iteration time, a bounded candidate estimate. Anything else aborts.
//
// keys: gpu gpus hb_domain nic_gbps hb_gbps nics design switch oversub tier split management
//       planes ports dual_tor balance conns model
//       stack batch seq tp pp dp ep etp mb v schedule bytes fail
//       list_ints list_reals list_names max_points (sweep's value syntax)
//       tokens experts topk skew max_domains (MoE routing, over the first GPUs, up to 64)
//       days ckpt_min ckpt_write_s restart_min repair_h spares trials degraded rates (goodput)
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "check_error.hpp"
#include "railsim/core/bytes.hpp"
#include "railsim/core/error.hpp"
#include "railsim/fail/model.hpp"
#include "railsim/fail/monte_carlo.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/sim/moe.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/stack.hpp"
#include "railsim/sweep/values.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/failures.hpp"

namespace {

using railsim_fuzz::require;

std::optional<std::int64_t> integer(const std::map<std::string, std::string>& kv,
                                    const std::string& key) {
  const auto it = kv.find(key);
  if (it == kv.end()) return std::nullopt;
  std::int64_t v = 0;
  const auto& s = it->second;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> real(const std::map<std::string, std::string>& kv, const std::string& key) {
  const auto it = kv.find(key);
  if (it == kv.end()) return std::nullopt;
  double v = 0;
  const auto& s = it->second;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

void run(const std::map<std::string, std::string>& kv) {
  using namespace railsim;
  auto text = [&](const std::string& k, const std::string& def) {
    const auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  };
  if (kv.count("bytes")) {
    const double b = units::parse_bytes(kv.at("bytes"), "--bytes");
    require(std::isfinite(b) && b > 0 && b <= 1e15);
  }
  spec::ClusterOptions co;
  co.gpu = text("gpu", co.gpu);
  co.gpus = integer(kv, "gpus").value_or(64);
  co.hb_domain = integer(kv, "hb_domain");
  co.nic_gbps = real(kv, "nic_gbps");
  co.hb_gbytes_per_s = real(kv, "hb_gbps");
  co.nics_per_gpu = integer(kv, "nics");
  const spec::Cluster c = spec::make_cluster(co);
  require(c.gpus >= 1 && c.gpus % c.hb_domain == 0 && std::isfinite(c.nic_bw_per_gpu_Bps()) &&
          c.nic_bw_per_gpu_Bps() > 0 && std::isfinite(c.hb_bw_Bps) && c.hb_bw_Bps > 0);

  spec::NetworkOptions no;
  no.design = text("design", no.design);
  no.sw = text("switch", no.sw);
  no.oversubscription = real(kv, "oversub").value_or(1.0);
  no.oversubscribed_tier = static_cast<int>(integer(kv, "tier").value_or(1));
  no.management_links = static_cast<int>(integer(kv, "management").value_or(0));
  no.planes = integer(kv, "planes").value_or(1);
  no.nic_ports = integer(kv, "ports").value_or(1);
  no.dual_tor = kv.count("dual_tor") > 0;
  no.port_split = text("split", "");
  no.port_balance = text("balance", no.port_balance);
  no.connections = integer(kv, "conns").value_or(1);
  const spec::NetworkDesign d = spec::fit_to_cluster(c, spec::make_network_design(no));
  const topo::NetworkPlan np = topo::plan_network(c, d);
  // Ports used never above ports available: on every tier, what faces down and up fits the radix.
  for (const auto& t : np.plan.tiers) {
    require(t.down_ports >= 0 && t.up_ports >= 0);
    require(t.down_ports + t.up_ports <= np.plan.radix);
  }
  if (np.instances() > 0) require(np.plan.endpoints() >= c.gpus / np.instances());
  // Every NIC port is an endpoint of exactly one plane's Clos.
  if (np.instances() > 0)
    require(np.plan.endpoints() * np.instances() == c.gpus * c.nics_per_gpu * d.nic_ports &&
            np.instances() % d.planes == 0);

  // sweep's lists: at most max_points values, every one of the kind asked for.
  const std::int64_t max_points = integer(kv, "max_points").value_or(100);
  if (kv.count("list_ints")) {
    const auto v = sweep::parse_integers("--gpus", kv.at("list_ints"), max_points);
    require(!v.empty() && static_cast<std::int64_t>(v.size()) <= max_points);
  }
  if (kv.count("list_reals")) {
    const auto v = sweep::parse_reals("--nic-gbps", kv.at("list_reals"), max_points);
    require(!v.empty() && static_cast<std::int64_t>(v.size()) <= max_points);
    for (double x : v) require(std::isfinite(x));
  }
  if (kv.count("list_names")) {
    const auto v = sweep::parse_names("--model", kv.at("list_names"), max_points);
    require(!v.empty() && static_cast<std::int64_t>(v.size()) <= max_points);
  }

  // MoE token routing over the first GPUs: checked before any token is routed; where it is
  // small enough to run here, every token picks topk distinct experts that exist.
  if (kv.count("tokens") || kv.count("skew")) {
    sim::MoeRouting r;
    r.tokens = integer(kv, "tokens").value_or(r.tokens);
    r.experts = integer(kv, "experts").value_or(r.experts);
    r.topk = integer(kv, "topk").value_or(r.topk);
    r.max_domains = integer(kv, "max_domains").value_or(0);
    if (kv.count("skew")) sim::parse_skew(kv.at("skew"), r);
    sim::Group group;
    for (std::int64_t g = 0; g < std::min<std::int64_t>(c.gpus, 64); ++g) group.push_back(g);
    sim::check_moe(r, group, c);
    if (r.tokens * r.topk * static_cast<std::int64_t>(group.size()) <= 200'000) {
      const std::vector<std::int32_t> ids = sim::route_tokens(r, group, c, 0);
      require(static_cast<std::int64_t>(ids.size()) == r.tokens * r.topk);
      for (std::size_t t = 0; t < ids.size(); t += static_cast<std::size_t>(r.topk))
        for (std::int64_t a = 0; a < r.topk; ++a) {
          const std::int32_t e = ids[t + static_cast<std::size_t>(a)];
          require(e >= 0 && e < r.experts);
          for (std::int64_t b = 0; b < a; ++b) require(ids[t + static_cast<std::size_t>(b)] != e);
        }
    }
  }

  // fail goodput: the run's parameters, the rates, and the bound on the Monte Carlo's work
  // (checked before any trial); where a few trials are cheap, they run and give ratios in [0, 1].
  if (kv.count("trials") || kv.count("days") || kv.count("rates")) {
    fail::RunParams p;
    p.days = real(kv, "days").value_or(p.days);
    if (auto m = real(kv, "ckpt_min")) p.checkpoint_interval_s = *m * 60;
    p.checkpoint_write_s = real(kv, "ckpt_write_s").value_or(p.checkpoint_write_s);
    if (auto m = real(kv, "restart_min")) p.restart_s = *m * 60;
    if (auto h = real(kv, "repair_h")) p.repair_s = *h * 3600;
    p.spare_domains = integer(kv, "spares");
    if (kv.count("degraded")) p.policy = fail::parse_degraded_policy(kv.at("degraded"));
    fail::validate(p);
    const spec::FailureRates rates =
        spec::load_failure_rates(text("rates", "llama3-meta-2024"), "--rates");
    const fail::FailureModel fm = fail::make_failure_model(c, d, rates, p);
    fail::MonteCarloOptions mc;
    mc.trials = integer(kv, "trials").value_or(4);
    fail::validate(mc);
    const double events = static_cast<double>(mc.trials) * fm.rate_per_s() * fm.run_s;
    if (events > fail::kMaxGoodputEvents || (mc.trials <= 8 && events <= 1e5)) {
      const fail::GoodputResult g = fail::run_goodput(fm, mc);  // throws when over the bound
      require(events <= fail::kMaxGoodputEvents);
      require(std::isfinite(g.ettr.mean) && g.ettr.mean >= 0 && g.ettr.mean <= 1);
    }
  }

  if (kv.count("fail") && c.gpus <= 1024) {
    const topo::Fabric f = topo::build_fabric(c, d);
    (void)topo::parse_failure(kv.at("fail"), f, "--fail");
  }

  if (!kv.count("model")) return;
  const perf::Model m = perf::load_model(text("model", ""), "--model");
  spec::Stack st = spec::load_stack(text("stack", std::string(spec::kDefaultStack)), "--stack");
  // A pinned pipeline schedule, on a stack that lists it (as a user's stack file would).
  std::optional<spec::PipelineSchedule> schedule;
  if (kv.count("schedule")) {
    schedule = spec::parse_schedule(kv.at("schedule"));
    st.knobs.allow(*schedule);
  }
  const spec::Training tr = spec::make_training(integer(kv, "batch").value_or(1024),
                                                integer(kv, "seq").value_or(m.seq_len), st);
  perf::StrategyPins pins;
  pins.tp = integer(kv, "tp");
  pins.pp = integer(kv, "pp");
  pins.dp = integer(kv, "dp");
  pins.ep = integer(kv, "ep");
  pins.etp = integer(kv, "etp");
  pins.micro_batch = integer(kv, "mb");
  pins.interleave = integer(kv, "v");
  pins.schedule = schedule;
  const perf::Strategy s = perf::default_strategy(m, tr, pins, c);
  perf::validate(m, tr, s, c);
  // The estimate's link census is linear in the GPUs, per collective: at the 16,777,216-GPU cap
  // it is work of seconds (12 s in Release, more under the sanitizers), not a hang, so the
  // estimate runs up to 262,144 GPUs, where it takes under a second here.
  if (c.gpus > (std::int64_t{1} << 18)) return;
  const perf::EstimateContext ctx = perf::make_context(m, tr, c, d);
  const std::int64_t n = perf::estimate_candidates(ctx, pins);
  require(n >= 0);
  const perf::IterationTime it = perf::estimate(ctx, s);
  require(std::isfinite(it.iteration_time_s) && it.iteration_time_s > 0);
  require(std::isfinite(it.memory.total()) && it.memory.total() > 0);
  require(std::isfinite(it.mfu) && it.mfu >= 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::map<std::string, std::string> kv;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::size_t pos = 0;
  while (pos < in.size()) {
    std::size_t end = in.find('\n', pos);
    if (end == std::string_view::npos) end = in.size();
    const std::string_view line = in.substr(pos, end - pos);
    const std::size_t eq = line.find('=');
    if (eq != std::string_view::npos)
      kv[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    pos = end + 1;
  }
  try {
    run(kv);
  } catch (const railsim::InputError& e) {
    railsim_fuzz::check_error(e);
  }
  return 0;
}
