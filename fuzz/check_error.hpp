#pragma once
// What every fuzz target asks of an InputError: it names a field, and its text is one bounded
// line with no control character (user values are echoed through railsim::printable, cut to 80
// characters), as the program prints it.
#include <cstdlib>
#include <string_view>

#include "railsim/core/error.hpp"

namespace railsim_fuzz {

inline void require(bool ok) {
  if (!ok) std::abort();
}

inline void check_error(const railsim::InputError& e) {
  const std::string_view what = e.what();
  require(!e.field().empty());
  require(what.size() < 1000);
  for (const char c : what) require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
}

}  // namespace railsim_fuzz
