#include "railsim/spec/switch.hpp"

#include <fmt/format.h>

#include "railsim/spec/preset.hpp"

namespace railsim::spec {

SwitchSpec switch_from_json(const Json& j, const std::string& path) {
  JsonObject o(j, path);
  SwitchSpec s;
  s.name = o.string("name");
  const auto radix = o.integer("radix", 2, 1 << 16);
  if (radix % 2 != 0)
    throw InputError(o.field("radix"),
                     fmt::format("got {}, expected an even number >= 2 (a folded Clos splits ports "
                                 "half down, half up)",
                                 radix));
  s.radix = static_cast<int>(radix);
  s.port_gbps = o.number("port_gbps", Range::positive(1e6));
  s.family = o.string_or("family", "");
  if (o.has("source"))
    s.source = o.raw("source").is_string() ? o.raw("source").get<std::string>() : "";
  o.finish();
  return s;
}

SwitchSpec load_switch(const std::string& arg, const std::string& option) {
  return switch_from_json(load_preset_or_file("switches", arg, option), "switch");
}

}  // namespace railsim::spec
