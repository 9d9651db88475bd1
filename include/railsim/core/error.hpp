#pragma once
// Errors. Bad user input throws InputError (the CLI prints it on one line and exits 2); anything
// else that escapes is an internal bug (exit 1).
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace railsim {

class InputError : public std::runtime_error {
 public:
  // `field` names what was wrong (a CLI option such as "--gpus" or a JSON path such as
  // "gpu.hbm_gib"); `message` says what the value was and what would be valid.
  InputError(const std::string& field, const std::string& message)
      : std::runtime_error(field + ": " + message), field_(field) {}
  const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

// A user's value as it may be echoed in an error: control characters (newline, escape, ...) written
// as \n, \t, \xHH so that the error stays one line and nothing reaches the terminal as a
// command, and cut to `max` characters with "..." (values can be megabytes long).
std::string printable(std::string_view s, std::size_t max = 80);

}  // namespace railsim
