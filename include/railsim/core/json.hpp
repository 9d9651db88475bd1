#pragma once
// Strict JSON reading for specs: every field is checked for presence, type and range, and
// unknown fields are rejected, each with an InputError that names the field's full path.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/core/checks.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json_fwd.hpp"

namespace railsim {

// Limits of a spec's JSON: objects and arrays nested at most kMaxJsonDepth deep (the presets use
// 4), and files of at most kMaxSpecFileBytes (16 MiB; the presets are a few KiB).
inline constexpr int kMaxJsonDepth = 64;
inline constexpr std::size_t kMaxSpecFileBytes = std::size_t{16} << 20;

// Parses text as one JSON value and throws InputError(what, "malformed JSON: ...") on a syntax
// error, trailing bytes after the value (a NUL byte included), a number beyond double, a key
// that appears twice in one object (named with its path), or nesting deeper than kMaxJsonDepth.
Json parse_json(std::string_view text, const std::string& what);
// Reads a file and parses it; throws InputError(what, ...) when it cannot be read or parsed.
Json read_json_file(const std::string& path, const std::string& what);
// Reads a regular file of at most `max_bytes`; a directory, FIFO, device, missing or unreadable
// file or a larger one throws InputError(what, ...) saying which (a FIFO is never opened, so
// this never blocks).
std::string read_text_file(const std::string& path, const std::string& what,
                           std::size_t max_bytes = kMaxSpecFileBytes);

// Whether a key is documentation, allowed in any spec object: "source", "sources", "about",
// "notes", "name" and keys starting with "_".
bool is_doc_key(std::string_view k);

// A view on one JSON object that records which keys were read; finish() rejects the rest.
// Keys "source", "sources", "about", "notes", "name" and keys starting with "_" are documentation
// and are always allowed.
class JsonObject {
 public:
  JsonObject(const Json& j, std::string path);

  bool has(std::string_view key) const;
  double number(std::string_view key, Range r);
  double number_or(std::string_view key, double fallback, Range r);
  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                          std::int64_t max);
  // Strings are names and notes shown on terminals: check_printable (core/error.hpp) applies.
  std::string string(std::string_view key);
  std::string string_or(std::string_view key, std::string fallback);
  // The "source" note: where the values come from ("" when absent); a string, printable.
  std::string source();
  bool boolean_or(std::string_view key, bool fallback);
  // A nested object; the returned view must be finish()ed by the caller.
  JsonObject object(std::string_view key);
  std::optional<JsonObject> object_opt(std::string_view key);
  const Json& raw(std::string_view key);  // marks the key used; throws if missing

  // Throws for any key that was not read (a typo or an unsupported field).
  void finish() const;
  const std::string& path() const { return path_; }
  std::string field(std::string_view key) const;

 private:
  const Json& get(std::string_view key);
  const Json* j_;
  std::string path_;
  std::vector<std::string> used_;
};

}  // namespace railsim
