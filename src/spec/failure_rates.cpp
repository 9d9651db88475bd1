#include "railsim/spec/failure_rates.hpp"

#include <fmt/format.h>

#include "railsim/core/enum.hpp"
#include "railsim/core/json.hpp"
#include "railsim/spec/preset.hpp"

namespace railsim::spec {

namespace {

constexpr EnumNames<FailureScope, 6> kScopeNames{{{{FailureScope::gpu, "gpu"},
                                                   {FailureScope::host, "host"},
                                                   {FailureScope::nic, "nic"},
                                                   {FailureScope::link, "link"},
                                                   {FailureScope::network_switch, "switch"},
                                                   {FailureScope::job, "job"}}}};

// 1 per hour per unit is a unit that fails every hour: beyond it the figure is a typo.
constexpr double kMaxRate = 1.0;

FailureClass class_from_json(const Json& j, const std::string& path) {
  JsonObject o(j, path);
  FailureClass c;
  c.name = o.string("name");
  if (c.name.empty()) throw InputError(o.field("name"), "empty name");
  c.scope = parse_failure_scope(o.string("scope"), o.field("scope"));
  const bool has_rate = o.has("rate_per_unit_hour");
  const bool has_events = o.has("events") || o.has("unit_hours");
  if (has_rate && has_events)
    throw InputError(o.field("rate_per_unit_hour"),
                     "give either rate_per_unit_hour or events and unit_hours, not both");
  if (!has_rate && !has_events)
    throw InputError(o.field("rate_per_unit_hour"),
                     "missing: give rate_per_unit_hour, or events observed over unit_hours");
  if (has_rate) {
    c.rate_per_unit_hour = o.number("rate_per_unit_hour", Range::non_negative(kMaxRate));
  } else {
    const double events = o.number("events", Range::non_negative(1e12));
    const double hours = o.number("unit_hours", Range::positive(1e18));
    c.rate_per_unit_hour =
        check_number(o.field("events"), events / hours, Range::non_negative(kMaxRate));
  }
  switch (c.scope) {
    case FailureScope::link:
      c.tier = static_cast<int>(o.integer_or("tier", 1, 1, 8));
      break;
    case FailureScope::network_switch:
      c.tier = static_cast<int>(o.integer_or("tier", 0, 0, 8));
      break;
    default:
      if (o.has("tier"))
        throw InputError(o.field("tier"), fmt::format("scope '{}' has no tiers; tier applies to "
                                                      "link and switch",
                                                      to_string(c.scope)));
  }
  if (o.has("repair_h")) {
    if (c.scope == FailureScope::job)
      throw InputError(o.field("repair_h"), "scope 'job' repairs nothing; remove repair_h");
    // A repair takes time: 0 would return the part before the job could restart.
    c.repair_h = o.number("repair_h", Range::positive(1e5));
  }
  c.source = o.source();
  o.finish();
  return c;
}

}  // namespace

std::string_view to_string(FailureScope s) {
  return kScopeNames.name(s);
}

FailureScope parse_failure_scope(std::string_view s, const std::string& field) {
  return kScopeNames.parse(s, field, "failure scope");
}

FailureRates failure_rates_from_json(const Json& j, const std::string& path) {
  JsonObject o(j, path);
  FailureRates r;
  r.name = o.string("name");
  r.about = o.string_or("about", "");
  r.source = o.source();
  const Json& classes = o.raw("classes");
  if (!classes.is_array() || classes.empty())
    throw InputError(o.field("classes"), "expected a non-empty array of failure classes");
  for (std::size_t i = 0; i < classes.size(); ++i) {
    r.classes.push_back(class_from_json(classes[i], fmt::format("{}[{}]", o.field("classes"), i)));
    for (std::size_t k = 0; k + 1 < r.classes.size(); ++k)
      if (r.classes[k].name == r.classes.back().name)
        throw InputError(fmt::format("{}[{}].name", o.field("classes"), i),
                         fmt::format("duplicate class name '{}'", r.classes.back().name));
  }
  o.finish();
  return r;
}

FailureRates load_failure_rates(const std::string& arg, const std::string& option) {
  return failure_rates_from_json(load_preset_or_file("failures", arg, option), "rates");
}

}  // namespace railsim::spec
