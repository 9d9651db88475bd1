#include "railsim/core/json.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>

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

// A string cut to its first `limit` bytes, as JSON: a cut through a multi-byte UTF-8 character
// leaves its first bytes, which are written as U+FFFD instead of failing the serialisation.
std::string cut_string(const std::string& s, std::size_t limit) {
  return Json(s.substr(0, limit)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Appends v as JSON to out, stopping once out holds more than `limit` characters: a value of any
// size or depth is shown by its first characters without serialising the rest.
void show_into(const Json& v, std::string& out, std::size_t limit, int depth) {
  if (out.size() > limit) return;
  if (v.is_array() || v.is_object()) {
    if (depth >= 4) {
      out += v.is_array() ? "[...]" : "{...}";
      return;
    }
    out += v.is_array() ? '[' : '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() <= limit; ++it) {
      if (!first) out += ',';
      first = false;
      if (v.is_object()) out += cut_string(it.key(), limit) + ':';
      show_into(*it, out, limit, depth + 1);
    }
    out += v.is_array() ? ']' : '}';
  } else if (v.is_string()) {
    out += cut_string(v.get_ref<const std::string&>(), limit);
  } else {
    out += v.dump();
  }
}

std::string show(const Json& v) {
  std::string s;
  show_into(v, s, 40, 0);
  return printable(s, 40);
}

}  // namespace

bool is_doc_key(std::string_view k) {
  return k == "source" || k == "sources" || k == "about" || k == "notes" || k == "name" ||
         (!k.empty() && k.front() == '_');
}

Json parse_json(std::string_view text, const std::string& what) {
  // nlohmann stops at a NUL byte as at the end of the input: whatever follows would be ignored.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw InputError(what, fmt::format("malformed JSON: a NUL byte at offset {} (a spec is text; "
                                       "nothing may follow its value)",
                                       nul));
  // The parser's callback sees every object and array open and close and every key: it bounds
  // the nesting (deeper values would exhaust the stack of whoever walks them) and refuses a key
  // given twice in one object (nlohmann would silently keep the last).
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;           // the key being read (objects)
    std::size_t elements = 0;  // values read so far (arrays)
  };
  std::vector<Frame> stack;
  auto path = [&stack] {
    std::string p;
    for (const Frame& f : stack) {
      if (f.object && !f.key.empty())
        p += (p.empty() ? "" : ".") + printable(f.key, 40);
      else if (!f.object)
        p += fmt::format("[{}]", f.elements);
    }
    return p.empty() ? std::string("the top level") : p;
  };
  auto value_done = [&stack] {
    if (!stack.empty() && !stack.back().object) ++stack.back().elements;
  };
  using Event = Json::parse_event_t;
  Json::parser_callback_t cb = [&](int, Event event, Json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (stack.size() >= static_cast<std::size_t>(kMaxJsonDepth))
          throw InputError(what, fmt::format("malformed JSON: nested deeper than {} levels at {}",
                                             kMaxJsonDepth, printable(path(), 160)));
        stack.push_back({event == Event::object_start, {}, {}, 0});
        break;
      case Event::key: {
        Frame& f = stack.back();
        f.key.clear();
        const std::string& k = parsed.get_ref<const std::string&>();
        if (!f.keys.insert(k).second)
          throw InputError(what, fmt::format("malformed JSON: duplicate key '{}' at {} (each key "
                                             "may appear once in an object)",
                                             printable(k, 40), printable(path(), 160)));
        f.key = k;
        break;
      }
      case Event::object_end:
      case Event::array_end:
        stack.pop_back();
        value_done();
        break;
      case Event::value:
        value_done();
        break;
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), cb);
  } catch (const Json::exception& e) {
    // parse_error for syntax; out_of_range for numbers beyond double (1e400).
    std::string msg = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] "; keep the human part.
    if (auto pos = msg.find("] "); pos != std::string::npos) msg = msg.substr(pos + 2);
    throw InputError(what, "malformed JSON: " + printable(msg, 200));
  }
}

std::string read_text_file(const std::string& path, const std::string& what,
                           std::size_t max_bytes) {
  const std::string shown = printable(path);
  auto fail = [&](const std::string& why) {
    throw InputError(what, fmt::format("cannot read file '{}': {}", shown, why));
  };
  auto check_kind = [&](const struct stat& st) {
    if (S_ISDIR(st.st_mode)) fail("it is a directory; give a JSON file");
    if (!S_ISREG(st.st_mode))
      fail("not a regular file (a device, FIFO or socket); give a JSON file");
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
      fail(fmt::format("{} bytes, above the {} MiB a spec file may have",
                       static_cast<std::uint64_t>(st.st_size), max_bytes >> 20));
  };
  // stat first: opening a FIFO would block until someone writes to it.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(std::strerror(errno));
  check_kind(st);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(std::strerror(errno));
  std::string text;
  try {
    if (::fstat(fd, &st) != 0) fail(std::strerror(errno));
    check_kind(st);  // the same file as the one stat()ed, even if the path was swapped since
    text.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(std::strerror(errno));
      if (n == 0) break;
      // Files such as /proc's report size 0: the limit is checked on what is read too.
      if (text.size() + static_cast<std::size_t>(n) > max_bytes)
        fail(fmt::format("above the {} MiB a spec file may have", max_bytes >> 20));
      text.append(buf, static_cast<std::size_t>(n));
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

Json read_json_file(const std::string& path, const std::string& what) {
  return parse_json(read_text_file(path, what), fmt::format("{} ({})", what, printable(path)));
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
  std::string s = v.get<std::string>();
  check_printable(field(key), s);
  return s;
}

std::string JsonObject::source() {
  if (!has("source")) return "";
  const Json& v = get("source");
  if (!v.is_string())
    throw InputError(
        field("source"),
        fmt::format("expected a string naming the source, got {} ({})", type_name(v), show(v)));
  std::string s = v.get<std::string>();
  check_printable(field("source"), s);
  return s;
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
      // The key is the user's text: escaped and cut like any echoed value.
      throw InputError(field(printable(k)),
                       "unknown field (check its spelling; see docs/cli.md for the schema)");
    }
  }
}

}  // namespace railsim
