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
#include "railsim/fail/whatif.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/report/format.hpp"
#include "railsim/sim/check.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/topo/network_view.hpp"

namespace railsim::fail {

std::vector<std::string> fabric_effects(FailureModel& m, const spec::Cluster& c,
                                        const spec::NetworkDesign& design, const perf::Model& model,
                                        const perf::Training& training, const WhatIfOptions& base) {
  std::vector<std::string> notes;
  std::map<std::string, DesignWhatIf> done;
  for (EventStream& s : m.streams) {
    std::string spec;
    switch (s.scope) {
      case spec::FailureScope::nic:
        spec = "nic:0";
        break;
      case spec::FailureScope::link:
        spec = s.tier <= 1 ? "link:0" : fmt::format("uplink:{}:0", s.tier - 1);
        break;
      case spec::FailureScope::network_switch:
        spec = fmt::format("switch:{}:0", std::max(1, s.tier));
        break;
      default:
        continue;
    }
    auto it = done.find(spec);
    if (it == done.end()) {
      WhatIfOptions o = base;
      o.fail = {spec};
      o.random = 0;
      o.sim = SimMode::off;
      o.examples = 0;
      o.job_options = false;
      o.plan.top = 1;
      it = done.emplace(spec, what_if_design(c, design, model, training, o)).first;
    }
    const DesignWhatIf& w = it->second;
    if (!w.plan) continue;
    FailureEffect& e = s.effect;
    if (w.runnable) {
      e.interrupts = false;
      e.domains_lost = w.domains_forwarding;
      e.slowdown = std::max(1.0, w.degraded_s / w.healthy_s);
      notes.push_back(fmt::format(
          "{}: {} runs degraded x{:.4f}{}", s.name, spec, e.slowdown,
          w.domains_forwarding > 0 ? fmt::format(" ({} domains forwarding)", w.domains_forwarding)
                                   : std::string()));
    } else if (w.domains_lost > 0) {
      e.interrupts = true;
      e.domains_lost = w.domains_lost;
      e.slowdown = 1.0;
      notes.push_back(
          fmt::format("{}: {} stops the job, {} domains out", s.name, spec, w.domains_lost));
    }
  }
  return notes;
}

}  // namespace railsim::fail
