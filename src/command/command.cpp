#include "railsim/command/command.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

#include "railsim/core/checks.hpp"
#include "railsim/core/error.hpp"

namespace railsim::command {

namespace {
const std::vector<std::string> kNone;

std::string decimal_form_error(std::string_view text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, v);
  if (r.ec == std::errc::result_out_of_range)
    return fmt::format("'{}' is beyond the range of a 64-bit integer (-2^63 .. 2^63 - 1)",
                       printable(text));
  if (r.ec != std::errc() || r.ptr != end)
    return fmt::format("cannot read '{}' as an integer (write it in full, in decimal)",
                       printable(text));
  if (text.size() > 1 && (text[0] == '0' || (text[0] == '-' && text[1] == '0')))
    return fmt::format("'{}' has a leading zero; write it in decimal", printable(text));
  return "";
}

std::string number_form_error(std::string_view text) {
  const std::string t(text);
  char* end = nullptr;
  (void)std::strtod(t.c_str(), &end);
  if (!t.empty() && end != t.c_str() && *end == '\0') return "";
  return fmt::format(
      "cannot read '{}' as the expected type (see --help; integers must be written in full, in "
      "range)",
      printable(text));
}
}  // namespace

std::string form_error(const Field& f, std::string_view text) {
  switch (f.kind) {
    case Kind::integer:
      return decimal_form_error(text);
    case Kind::number:
      return number_form_error(text);
    default:
      return "";  // a count is read as a number, with the range message (read_count)
  }
}

namespace {

// Decimal, 64 bits, no leading zero: what every integer option accepts.
std::int64_t read_decimal(const Field& f, const std::string& text) {
  if (const std::string e = form_error(f, text); !e.empty()) throw InputError(f.spelled(), e);
  std::int64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

// "32768", and also "1e12" or "3.2e4", so that a huge or fractional value gets the range message
// rather than a bare conversion failure.
std::int64_t read_count(const Field& f, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string range = fmt::format("an integer from {} to {}", f.min, f.max);
  if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(v))
    throw InputError(f.spelled(), fmt::format("'{}' is not a number; expected {}", text, range));
  if (v != std::floor(v) || v < static_cast<double>(f.min) || v > static_cast<double>(f.max))
    throw InputError(f.spelled(), fmt::format("got {}, expected {}", text, range));
  return static_cast<std::int64_t>(v);
}

double read_number(const Field& f, const std::string& text) {
  if (const std::string e = form_error(f, text); !e.empty()) throw InputError(f.spelled(), e);
  return std::strtod(text.c_str(), nullptr);
}
}  // namespace

void Args::set(const std::string& key, std::string value) {
  (void)field(key);
  given_[key].push_back(std::move(value));
}

bool Args::has(std::string_view key) const {
  return std::any_of(fields_->begin(), fields_->end(),
                     [&](const Field& f) { return f.key == key; });
}

bool Args::given(std::string_view key) const {
  return given_.find(key) != given_.end();
}

const Field& Args::field(std::string_view key) const {
  for (const Field& f : *fields_)
    if (f.key == key) return f;
  throw std::logic_error(fmt::format("command field '{}' is not in its table", key));
}

std::optional<std::string> Args::text_if(std::string_view key) const {
  const Field& f = field(key);
  if (const auto it = given_.find(key); it != given_.end()) {
    const std::string& v = it->second.back();
    if (!f.choices.empty() && std::find(f.choices.begin(), f.choices.end(), v) == f.choices.end()) {
      std::string valid;
      for (const std::string& c : f.choices) valid += (valid.empty() ? "" : ", ") + c;
      throw InputError(f.spelled(),
                       fmt::format("got '{}', expected one of: {}", printable(v), valid));
    }
    return v;
  }
  if (f.default_text.empty()) return std::nullopt;
  return f.default_text;
}

std::string Args::text(std::string_view key) const {
  return text_if(key).value_or("");
}

std::optional<std::int64_t> Args::integer_if(std::string_view key) const {
  const Field& f = field(key);
  const auto t = text_if(key);
  if (!t) return std::nullopt;
  const std::int64_t v = f.kind == Kind::count ? read_count(f, *t) : read_decimal(f, *t);
  if (f.min < f.max) return check_integer(f.spelled(), v, f.min, f.max);
  return v;
}

std::int64_t Args::integer(std::string_view key) const {
  const auto v = integer_if(key);
  if (!v) throw std::logic_error(fmt::format("command field '{}' has no default", key));
  return *v;
}

std::optional<double> Args::number_if(std::string_view key) const {
  const Field& f = field(key);
  const auto t = text_if(key);
  if (!t) return std::nullopt;
  const double v = read_number(f, *t);
  if (f.range) return check_number(f.spelled(), v, *f.range);
  return v;
}

double Args::number(std::string_view key) const {
  const auto v = number_if(key);
  if (!v) throw std::logic_error(fmt::format("command field '{}' has no default", key));
  return *v;
}

std::optional<bool> Args::on_off_if(std::string_view key) const {
  const Field& f = field(key);
  const auto t = text_if(key);
  if (!t) return std::nullopt;
  if (*t == "on" || *t == "true" || *t == "1") return true;
  if (*t == "off" || *t == "false" || *t == "0") return false;
  throw InputError(f.spelled(), fmt::format("got '{}', expected on or off", *t));
}

bool Args::flag(std::string_view key) const {
  (void)field(key);
  const auto it = given_.find(key);
  return it != given_.end() && it->second.back() == "true";
}

const std::vector<std::string>& Args::values(std::string_view key) const {
  (void)field(key);
  const auto it = given_.find(key);
  return it == given_.end() ? kNone : it->second;
}

const Field* Args::first_given(const std::vector<std::string>& keys) const {
  for (const std::string& k : keys)
    if (given(k)) return &field(k);
  return nullptr;
}

void Args::refuse(const std::vector<std::string>& keys, const std::string& why) const {
  if (const Field* f = first_given(keys)) throw InputError(f->spelled(), "has no effect " + why);
}

void Output::write(std::string_view s) {
  if (stream_ == nullptr) {
    text_.append(s);
    return;
  }
  fmt::print(stream_, "{}", s);
}

bool Output::flush() {
  return stream_ == nullptr || (std::fflush(stream_) == 0 && std::ferror(stream_) == 0);
}

const Command* find(std::string_view path) {
  for (const Command& c : commands())
    if (c.path == path) return &c;
  return nullptr;
}

void run(const Command& cmd, const Args& args, Output& out) {
  cmd.run(args, out);
}

std::string type_name(const Field& f) {
  if (!f.type_name.empty()) return f.type_name;
  switch (f.kind) {
    case Kind::integer:
    case Kind::count:
      return "INT";
    case Kind::number:
      return "FLOAT";
    case Kind::on_off:
      return "on|off";
    case Kind::flag:
      return "";
    case Kind::pair:
      return "TEXT TEXT";
    case Kind::texts:  // CLI11 adds " ..." in --help
    case Kind::text:
      break;
  }
  if (f.choices.empty()) return "TEXT";
  std::string s;
  for (const std::string& c : f.choices) s += (s.empty() ? "" : "|") + c;
  return s;
}

namespace {
// A Markdown table cell: pipes escaped, one line.
std::string cell(std::string s) {
  std::string out;
  for (const char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string python_type(const Field& f) {
  switch (f.kind) {
    case Kind::integer:
    case Kind::count:
      return "int";
    case Kind::number:
      return "float";
    case Kind::on_off:
    case Kind::flag:
      return "bool";
    case Kind::pair:
      return "(str, str)";
    case Kind::texts:
      return "[str]";
    case Kind::text:
      break;
  }
  return "str";
}
}  // namespace

std::string markdown_options(const Command& cmd) {
  std::string s =
      "| Option | Python | Type | Default | What it is |\n"
      "|---|---|---|---|---|\n";
  for (const Field& f : cmd.fields) {
    std::string type = type_name(f);
    if (f.kind == Kind::flag) type = "flag";
    if (f.kind == Kind::texts) type += " ...";
    if (!f.unit.empty()) type += " (" + f.unit + ")";
    std::string range;
    if ((f.kind == Kind::integer || f.kind == Kind::count) && f.min < f.max)
      range = fmt::format(" ({} to {})", f.min, f.max);
    else if (f.range)
      range = " (" + f.range->describe() + ")";
    const std::string def = f.default_text.empty() ? "" : fmt::format("`{}`", cell(f.default_text));
    s += fmt::format("| `{}` | `{}` {} | {} | {} | {}{} |\n", cell(f.spelled()), f.key,
                     python_type(f), cell(type), def, cell(f.help), cell(range));
  }
  return s;
}

std::string markdown_reference() {
  std::string s;
  for (const Command& c : commands())
    s += fmt::format("### railsim {}\n\n{}\n\n{}\n", c.path, c.summary, markdown_options(c));
  return s;
}

}  // namespace railsim::command
