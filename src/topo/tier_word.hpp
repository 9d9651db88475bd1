#pragma once
// Private to src/topo: the word of a switch tier, shared by the failure names (leaf:3) and the
// node names (leaf3), so that a switch is spelt alike in both.

namespace railsim::topo::detail {

// "leaf", "spine", "core" for tiers 1 to 3; nullptr above (those are named by number).
inline const char* tier_word(int tier) {
  switch (tier) {
    case 1:
      return "leaf";
    case 2:
      return "spine";
    case 3:
      return "core";
    default:
      return nullptr;
  }
}

}  // namespace railsim::topo::detail
