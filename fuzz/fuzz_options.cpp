// libFuzzer target: the library's validation of what the command line hands it, as `railsim
// design`, `estimate`, `plan` and `sim --fail` resolve it. The input is text, one `key=value` per
// line (keys below; an unknown key or a number that does not parse is skipped, as CLI11 would
// refuse it before the library sees it). Every step either throws railsim::InputError or returns
// values that are finite and consistent: ports used within the ports there are, a positive finite
// iteration time, a bounded candidate estimate. Anything else aborts.
//
// keys: gpu gpus hb_domain nic_gbps hb_gbps nics design switch oversub tier management model
//       stack batch seq tp pp dp ep mb v bytes fail
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
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/stack.hpp"
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
  const spec::NetworkDesign d = spec::fit_to_cluster(c, spec::make_network_design(no));
  const topo::NetworkPlan np = topo::plan_network(c, d);
  // Ports used never above ports available: on every tier, what faces down and up fits the radix.
  for (const auto& t : np.plan.tiers) {
    require(t.down_ports >= 0 && t.up_ports >= 0);
    require(t.down_ports + t.up_ports <= np.plan.radix);
  }
  if (np.instances > 0) require(np.plan.endpoints() >= c.gpus / np.instances);

  if (kv.count("fail") && c.gpus <= 1024) {
    const topo::Fabric f = topo::build_fabric(c, d);
    (void)topo::parse_failure(kv.at("fail"), f, "--fail");
  }

  if (!kv.count("model")) return;
  const perf::Model m = perf::load_model(text("model", ""), "--model");
  const spec::Stack st = spec::load_stack(text("stack", std::string(spec::kDefaultStack)), "--stack");
  const spec::Training tr =
      spec::make_training(integer(kv, "batch").value_or(1024), integer(kv, "seq").value_or(m.seq_len),
                          st);
  perf::StrategyPins pins;
  pins.tp = integer(kv, "tp");
  pins.pp = integer(kv, "pp");
  pins.dp = integer(kv, "dp");
  pins.ep = integer(kv, "ep");
  pins.micro_batch = integer(kv, "mb");
  pins.interleave = integer(kv, "v");
  const perf::EstimateContext ctx = perf::make_context(m, tr, c, d);
  const std::int64_t n = perf::estimate_candidates(ctx, pins);
  require(n >= 0);
  const perf::Strategy s = perf::default_strategy(m, tr, pins, c);
  perf::validate(m, tr, s, c);
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
