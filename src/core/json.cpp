#include "railsim/core/json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace railsim {

namespace {

std::string type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      return "a number";
  }
}

std::string show(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

bool is_doc_key(std::string_view k) {
  return k == "source" || k == "sources" || k == "about" || k == "notes" || k == "name" ||
         (!k.empty() && k.front() == '_');
}

std::string fmt_num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:g}", v);
}

}  // namespace

Json parse_json(std::string_view text, const std::string& what) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    // parse_error for syntax; out_of_range for numbers beyond double (1e400).
    std::string msg = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] "; keep the human part.
    if (auto pos = msg.find("] "); pos != std::string::npos) msg = msg.substr(pos + 2);
    throw InputError(what, "malformed JSON: " + msg);
  }
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(what, fmt::format("cannot read file '{}'", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json read_json_file(const std::string& path, const std::string& what) {
  return parse_json(read_text_file(path, what), fmt::format("{} ({})", what, path));
}

bool Range::contains(double v) const {
  if (!std::isfinite(v)) return false;
  if (exclusive_min ? !(v > min) : !(v >= min)) return false;
  return v <= max;
}

std::string Range::describe() const {
  const bool has_min = min > -std::numeric_limits<double>::max();
  const bool has_max = max < 1e29;
  if (has_min && has_max)
    return fmt::format("a number {} {} and <= {}", exclusive_min ? ">" : ">=", fmt_num(min),
                       fmt_num(max));
  if (has_min) return fmt::format("a number {} {}", exclusive_min ? ">" : ">=", fmt_num(min));
  if (has_max) return fmt::format("a number <= {}", fmt_num(max));
  return "a finite number";
}

double check_number(const std::string& field, double value, Range r) {
  if (!r.contains(value))
    throw InputError(field, fmt::format("got {}, expected {}", fmt_num(value), r.describe()));
  return value;
}

std::int64_t check_integer(const std::string& field, std::int64_t value, std::int64_t min,
                           std::int64_t max) {
  if (value < min || value > max)
    throw InputError(field,
                     fmt::format("got {}, expected an integer from {} to {}", value, min, max));
  return value;
}

JsonObject::JsonObject(const Json& j, std::string path) : j_(&j), path_(std::move(path)) {
  if (!j.is_object())
    throw InputError(path_.empty() ? "json" : path_,
                     fmt::format("expected a JSON object, got {}", type_name(j)));
}

std::string JsonObject::field(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool JsonObject::has(std::string_view key) const {
  return j_->contains(key);
}

const Json& JsonObject::get(std::string_view key) {
  auto it = j_->find(key);
  if (it == j_->end()) throw InputError(field(key), "missing required field");
  used_.emplace_back(key);
  return *it;
}

const Json& JsonObject::raw(std::string_view key) {
  return get(key);
}

double JsonObject::number(std::string_view key, Range r) {
  const Json& v = get(key);
  if (!v.is_number())
    throw InputError(field(key),
                     fmt::format("expected {}, got {} ({})", r.describe(), type_name(v), show(v)));
  return check_number(field(key), v.get<double>(), r);
}

double JsonObject::number_or(std::string_view key, double fallback, Range r) {
  return has(key) ? number(key, r) : fallback;
}

std::int64_t JsonObject::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  const Json& v = get(key);
  const std::string what = fmt::format("an integer from {} to {}", min, max);
  if (!v.is_number())
    throw InputError(field(key),
                     fmt::format("expected {}, got {} ({})", what, type_name(v), show(v)));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9e15)
    throw InputError(field(key), fmt::format("expected {}, got {}", what, show(v)));
  return check_integer(field(key), static_cast<std::int64_t>(d), min, max);
}

std::int64_t JsonObject::integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                                    std::int64_t max) {
  return has(key) ? integer(key, min, max) : fallback;
}

std::string JsonObject::string(std::string_view key) {
  const Json& v = get(key);
  if (!v.is_string())
    throw InputError(field(key),
                     fmt::format("expected a string, got {} ({})", type_name(v), show(v)));
  return v.get<std::string>();
}

std::string JsonObject::string_or(std::string_view key, std::string fallback) {
  return has(key) ? string(key) : fallback;
}

bool JsonObject::boolean_or(std::string_view key, bool fallback) {
  if (!has(key)) return fallback;
  const Json& v = get(key);
  if (!v.is_boolean())
    throw InputError(field(key),
                     fmt::format("expected true or false, got {} ({})", type_name(v), show(v)));
  return v.get<bool>();
}

JsonObject JsonObject::object(std::string_view key) {
  return JsonObject(get(key), field(key));
}

std::optional<JsonObject> JsonObject::object_opt(std::string_view key) {
  if (!has(key)) return std::nullopt;
  return object(key);
}

void JsonObject::finish() const {
  for (auto it = j_->begin(); it != j_->end(); ++it) {
    const std::string& k = it.key();
    if (is_doc_key(k)) continue;
    if (std::find(used_.begin(), used_.end(), k) == used_.end()) {
      std::string known;
      throw InputError(field(k),
                       "unknown field (check its spelling; see docs/cli.md for the schema)");
    }
  }
}

}  // namespace railsim
