#pragma once
// One switch model for the scale-out (NIC) network.
#include <string>

#include "railsim/core/json.hpp"

namespace railsim::spec {

struct SwitchSpec {
  std::string name;
  int radix = 64;          // ports at port_gbps
  double port_gbps = 400;  // per port, per direction
  std::string family;      // "infiniband" or "ethernet"; informational
  std::string source;
};

SwitchSpec switch_from_json(const Json& j, const std::string& path);
SwitchSpec load_switch(const std::string& arg, const std::string& option = "--switch");

}  // namespace railsim::spec
