#pragma once
// Commands as library requests. Each railsim command (estimate, plan, fail goodput, ...) is a
// Command: a path, a summary, one declarative table of its inputs (Field: the logical key, the
// command-line flag, the Python keyword, type, unit, default, range, choices, help) and one run
// function that resolves those inputs (Args), calls the library and writes the command's output.
// The command line (apps/railsim), the Python module and docs/cli.md's option tables are all built
// from these tables, so that every front end offers the same inputs with the same defaults and
// checks, and gets the same answer.
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/core/checks.hpp"

namespace railsim::command {

// What a field holds, and how each front end reads it.
enum class Kind : std::uint8_t {
  integer,  // a decimal integer of 64 bits ("32768"); Python: int
  count,    // an integer that may be written as a number ("1e4"); huge values get the range message
  number,   // a real number; Python: int or float
  text,     // a name, a file, a list written with commas, a size ("512MB"); Python: str
  on_off,   // on or off (also true/false, 1/0); Python: bool
  flag,     // present or not; Python: bool
  pair,     // two words (--export FORMAT FILE); Python: a tuple or list of two str
  texts,    // words, as many as given, the flag repeatable (--fail gpu:1 nic:2 --fail leaf:0);
            // Python: a list of str
};

struct Field {
  std::string key;   // logical key and Python keyword: "hb_domain"
  std::string flag;  // command-line flag: "--hb-domain"; empty for a positional argument
  Kind kind = Kind::text;
  std::string help;
  std::string default_text;  // shown as the default; empty: none (the library decides)
  std::string unit;          // "Gb/s", "GB/s", "s", ... (empty: none)
  // integer/count: [min, max]; number: range (checked when the value is read).
  std::int64_t min = 0, max = 0;
  std::optional<Range> range;
  std::vector<std::string> choices;  // the names a text field accepts (empty: any)
  std::string type_name;             // shown in --help ("FORMAT FILE"); empty: from the kind
  // Where it is shown: how a user finds it in the CLI (the flag, or the positional's name).
  std::string spelled() const { return flag.empty() ? key : flag; }
};

// A command's inputs as given: the fields set (by their key) and their text. Both front ends fill
// one; the run function reads typed values from it, with the field's default, range and errors
// (InputError naming the flag; the Python front end respells it as the keyword).
class Args {
 public:
  explicit Args(const std::vector<Field>& fields) : fields_(&fields) {}

  // Sets a field given by its key; a pair field takes two calls. Unknown key: std::logic_error.
  void set(const std::string& key, std::string value);
  bool given(std::string_view key) const;
  const Field& field(std::string_view key) const;
  bool has(std::string_view key) const;  // the command's table holds `key`
  const std::vector<Field>& fields() const { return *fields_; }

  // The value given, else the default; the optional forms return nullopt when neither exists.
  std::string text(std::string_view key) const;
  std::optional<std::string> text_if(std::string_view key) const;
  std::int64_t integer(std::string_view key) const;
  std::optional<std::int64_t> integer_if(std::string_view key) const;
  double number(std::string_view key) const;
  std::optional<double> number_if(std::string_view key) const;
  std::optional<bool> on_off_if(std::string_view key) const;
  bool flag(std::string_view key) const;
  const std::vector<std::string>& values(std::string_view key) const;  // pair, texts: every word

  // The first of `keys` given, or nullptr.
  const Field* first_given(const std::vector<std::string>& keys) const;
  // An input the command would ignore is refused rather than accepted silently: throws
  // InputError(<the first of `keys` given>, "has no effect <why>").
  void refuse(const std::vector<std::string>& keys, const std::string& why) const;

 private:
  const std::vector<Field>* fields_;
  std::map<std::string, std::vector<std::string>, std::less<>> given_;
};

// Where a command writes what it prints: a stream (the CLI: stdout) or a string (Python).
class Output {
 public:
  explicit Output(std::FILE* stream) : stream_(stream) {}
  Output() = default;
  void write(std::string_view s);
  template <typename... T>
  void print(fmt::format_string<T...> f, T&&... args) {
    write(fmt::format(f, std::forward<T>(args)...));
  }
  const std::string& text() const { return text_; }
  // Hands what was written to the stream; false when the stream failed (a full disk, a closed
  // pipe). A string never fails.
  bool flush();

 private:
  std::FILE* stream_ = nullptr;
  std::string text_;
};

struct Command {
  std::string path;     // "estimate", "fail goodput"
  std::string summary;  // one line
  std::vector<Field> fields;
  std::function<void(const Args&, Output&)> run;
  // Python: the function's name ("fail_goodput") and how it asks for a document to return (the
  // key of a flag to set, "json"; empty: the text printed).
  std::string python_name;
  std::string python_sets;
};

// A command that groups others ("fail": goodput, whatif).
struct Group {
  std::string name;
  std::string summary;
};

// Thrown by a command whose output is written but whose check failed (validate): the CLI prints
// "railsim: <message>" on stderr and exits with `code`.
struct Failed {
  int code = 1;
  std::string message;
};

// Every command, in the order `railsim --help` lists them; every group.
const std::vector<Command>& commands();
const std::vector<Group>& groups();
// The command at `path`, or nullptr.
const Command* find(std::string_view path);

// Runs `cmd` on `args`, writing to `out`.
void run(const Command& cmd, const Args& args, Output& out);

// docs/cli.md's option table of a command: one Markdown row per field (flag, Python keyword,
// type, default, what it is).
std::string markdown_options(const Command& cmd);

// docs/cli.md's option reference: for every command a heading and its markdown_options table.
std::string markdown_reference();

// Why `text` cannot be a value of `f` by its form, or empty: an integer field takes a decimal
// integer of 64 bits written in full, a number field a number. The CLI checks it as it parses
// (so that a malformed value is the first error), Args again when the value is read.
std::string form_error(const Field& f, std::string_view text);

// The type a field is shown with ("INT", "FLOAT", "TEXT", "on|off", ...).
std::string type_name(const Field& f);

}  // namespace railsim::command
