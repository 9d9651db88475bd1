#pragma once
// The InputError that `f` throws, its message or its field: for tests that assert an error's exact
// wording or the option it names.
#include <optional>
#include <string>

#include "railsim/core/error.hpp"

namespace railsim::test {

// The InputError that `f` throws, or nothing when it throws none.
template <typename F>
std::optional<InputError> caught(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

// The message of the InputError that `f` throws, or "" when it throws none.
template <typename F>
std::string error_of(F f) {
  const auto e = caught(f);
  return e ? e->what() : "";
}

// The field of the InputError that `f` throws, or "(no error)" when it throws none.
template <typename F>
std::string field_of(F f) {
  const auto e = caught(f);
  return e ? e->field() : "(no error)";
}

}  // namespace railsim::test
