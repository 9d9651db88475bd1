#pragma once
// Failure rates: how often each class of failure hits one unit of a cluster (a GPU, a NIC, a link,
// a switch), and which part of the cluster it takes out (its scope). Presets in data/failures/
// (`llama3-meta-2024`, from Meta's Llama 3 paper), or a user's JSON file of the same schema
// (docs/failures.md):
//
//   {"name": "...", "source": "...",
//    "classes": [{"name": "faulty_gpu", "scope": "gpu", "events": 148, "unit_hours": 21233664,
//                 "source": "..."},
//                {"name": "cable", "scope": "link", "tier": 1, "rate_per_unit_hour": 1e-6,
//                 "repair_h": 2}]}
//
// A class gives its rate either as `rate_per_unit_hour` or as `events` observed over
// `unit_hours` (rate = events / unit_hours), never both. The unit a rate counts per is fixed by
// the scope:
//   gpu, host, job: per GPU-hour (a host failure scales with the GPUs the host serves);
//   nic: per NIC-hour; link: per link-hour of the links at `tier` (1 = the NIC-leaf links, t >= 2
//   the links between switch tiers t-1 and t; default 1); switch: per switch-hour of the switches
//   at `tier` (1 = leaf; 0 or absent = every tier).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/core/json_fwd.hpp"

namespace railsim::spec {

// What a failure takes out:
//   gpu, host: the HB domain(s) holding the GPU's host, until repaired;
//   nic: one NIC; link: one link; switch: one switch (effects depend on the design);
//   job: nothing but the running job (software: bug, watchdog timeout), no repair.
enum class FailureScope { gpu, host, nic, link, network_switch, job };

std::string_view to_string(FailureScope s);  // "gpu", "host", "nic", "link", "switch", "job"
FailureScope parse_failure_scope(std::string_view s, const std::string& field);

struct FailureClass {
  std::string name;
  FailureScope scope = FailureScope::gpu;
  double rate_per_unit_hour = 0;   // >= 0, per the scope's unit
  int tier = 0;                    // link (>= 1) and switch (0 = every tier); 0 otherwise
  std::optional<double> repair_h;  // how long the component stays out; default: the run's
  std::string source;
};

struct FailureRates {
  std::string name;
  std::string about;
  std::string source;
  std::vector<FailureClass> classes;  // at least one
};

// Strict: unknown fields, a missing or negative/NaN rate, both or neither rate form, an unknown
// scope, a tier on a scope without tiers: InputError naming the field ("rates.classes[3].events").
FailureRates failure_rates_from_json(const Json& j, const std::string& path);
// arg: preset name (data/failures/) or JSON file; option names the CLI option for errors.
FailureRates load_failure_rates(const std::string& arg, const std::string& option = "--rates");

inline constexpr const char* kDefaultFailureRates = "llama3-meta-2024";

}  // namespace railsim::spec
