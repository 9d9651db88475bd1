#pragma once
// The message of the InputError that `f` throws, or "" when it throws none: for tests that assert
// an error's exact wording.
#include <string>

#include "railsim/core/error.hpp"

namespace railsim::test {

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace railsim::test
