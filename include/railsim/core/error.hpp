#pragma once
// Errors. Bad user input throws InputError (the CLI prints it on one line and exits 2); anything
// else that escapes is an internal bug (exit 1).
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace railsim {

// A user's value as it may be echoed in an error or shown on a terminal: control characters
// (newline, escape, C1 controls such as CSI), bidirectional-text controls (which reorder what a
// terminal shows) and bytes that are not UTF-8 written as \n, \t, \xHH or \uHHHH, so that an
// error stays one line and nothing reaches the terminal as a command; cut to at most `max` bytes
// with "..." after the last whole character (values can be megabytes long).
std::string printable(std::string_view s, std::size_t max = 80);

// The longest message an InputError keeps (bytes, before "..."): one line of the program's output.
inline constexpr std::size_t kMaxErrorBytes = 2000;

class InputError : public std::runtime_error {
 public:
  // `field` names what was wrong (a CLI option such as "--gpus" or a JSON path such as
  // "gpu.hbm_gib"); `message` says what the value was and what would be valid. what() is
  // "field: message", or the message alone when no field is named (field empty: an error about
  // the command line as a whole). Both are kept printable (whatever value a message echoes,
  // it stays one line without control characters) and bounded (kMaxErrorBytes).
  InputError(const std::string& field, const std::string& message)
      : InputError(printable(field, 200), printable(message, kMaxErrorBytes), 0) {}
  const std::string& field() const noexcept { return field_; }
  // The message without the field.
  const std::string& message() const noexcept { return message_; }

 private:
  InputError(std::string field, std::string message, int)
      : std::runtime_error(field.empty() ? message : field + ": " + message),
        field_(std::move(field)),
        message_(std::move(message)) {}
  std::string field_;
  std::string message_;
};

// The first character of `s` that printable() would escape (see above), or nullopt: its byte
// offset and a description ("U+001B (a control character)", "byte 0xff (not UTF-8)").
struct Unprintable {
  std::size_t byte = 0;
  std::string what;
};
std::optional<Unprintable> find_unprintable(std::string_view s);

// Throws InputError(field, ...) when `text` holds an unprintable character: names and notes read
// from spec files are shown on terminals and in reports, so they must be printable text.
void check_printable(const std::string& field, std::string_view text);

// An error as Python spells it: a command-line option in the field or the message ("--hb-domain")
// becomes the keyword argument that carries the same input ("hb_domain"); JSON paths, values and
// "--help" are left as they are. The CLI prints InputError::what() unchanged.
std::string python_spelling(std::string_view text);

}  // namespace railsim
