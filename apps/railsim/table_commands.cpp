// The commands of the library's table (railsim/command/command.hpp) as CLI11 subcommands: each
// field becomes an option (or a flag, or a positional argument) that records its text in the
// command's Args; the command's run function resolves and checks them.
#include <memory>
#include <string>

#include "commands.hpp"
#include "railsim/command/command.hpp"

namespace railsim::cli {

namespace {
// An integer or number field's text is read when the command runs; its form is checked as CLI11
// parses, so that a malformed value is reported before any other error.
CLI::Validator form_of(const command::Field& f) {
  return CLI::Validator([&f](std::string& text) { return command::form_error(f, text); }, "",
                        f.kind == command::Kind::integer ? "decimal" : "number");
}

void add_field(CLI::App& cmd, const command::Field& f, const std::shared_ptr<command::Args>& args) {
  const std::string key = f.key;
  CLI::Option* opt = nullptr;
  switch (f.kind) {
    case command::Kind::flag:
      cmd.add_flag_callback(
          f.flag, [args, key] { args->set(key, "true"); }, f.help);
      return;
    case command::Kind::pair:
      opt = cmd.add_option_function<std::vector<std::string>>(
          f.flag,
          [args, key](const std::vector<std::string>& v) {
            for (const std::string& s : v) args->set(key, s);
          },
          f.help);
      opt->expected(2);
      break;
    case command::Kind::texts:  // as many words as given, the option repeatable
      opt = cmd.add_option_function<std::vector<std::string>>(
          f.flag,
          [args, key](const std::vector<std::string>& v) {
            for (const std::string& s : v) args->set(key, s);
          },
          f.help);
      break;
    default:
      opt = cmd.add_option_function<std::string>(
          f.flag.empty() ? f.key : f.flag, [args, key](const std::string& v) { args->set(key, v); },
          f.help);
      break;
  }
  opt->type_name(command::type_name(f));
  if (f.kind == command::Kind::integer || f.kind == command::Kind::number) opt->check(form_of(f));
  if (!f.default_text.empty()) opt->default_str(f.default_text);
}

CLI::App& parent_of(CLI::App& app, const std::string& path) {
  const auto space = path.find(' ');
  if (space == std::string::npos) return app;
  const std::string group = path.substr(0, space);
  for (CLI::App* sub : app.get_subcommands({}))  // CLI11's lookup by name throws when absent
    if (sub->get_name() == group) return *sub;
  for (const command::Group& g : command::groups())
    if (g.name == group) {
      CLI::App* sub = app.add_subcommand(g.name, g.summary);
      sub->require_subcommand(1);
      return *sub;
    }
  return app;
}
}  // namespace

void add_table_command(CLI::App& app, const std::string& path) {
  const command::Command* c = command::find(path);
  if (c == nullptr) return;
  CLI::App& parent = parent_of(app, path);
  const std::string name =
      path.substr(path.find(' ') == std::string::npos ? 0 : path.find(' ') + 1);
  CLI::App* cmd = parent.add_subcommand(name, c->summary);
  auto args = std::make_shared<command::Args>(c->fields);
  for (const command::Field& f : c->fields) add_field(*cmd, f, args);
  cmd->callback([c, args] {
    command::Output out(stdout);
    command::run(*c, *args, out);
  });
}

}  // namespace railsim::cli
