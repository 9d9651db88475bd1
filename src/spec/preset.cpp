#include "railsim/spec/preset.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "railsim/core/json.hpp"

namespace railsim::spec {

namespace {
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}
bool looks_like_file(const std::string& s) {
  return s.find('/') != std::string::npos ||
         (s.size() > 5 && s.compare(s.size() - 5, 5, ".json") == 0);
}
}  // namespace

std::vector<std::string> preset_names(std::string_view folder) {
  std::vector<std::string> out;
  for (const auto& p : embedded_presets()) {
    if (p.key.size() > folder.size() && p.key.substr(0, folder.size()) == folder &&
        p.key[folder.size()] == '/')
      out.emplace_back(p.key.substr(folder.size() + 1));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Json load_preset_or_file(std::string_view folder, const std::string& arg,
                         const std::string& option) {
  if (arg.empty()) throw InputError(option, "empty value; give a preset name or a JSON file path");
  if (looks_like_file(arg)) return read_json_file(arg, option);
  for (const auto& p : embedded_presets()) {
    if (p.key.size() > folder.size() && p.key.substr(0, folder.size()) == folder &&
        p.key[folder.size()] == '/' && iequals(p.key.substr(folder.size() + 1), arg))
      return parse_json(p.json, option + " (preset " + arg + ")");
  }
  throw InputError(option, fmt::format("unknown preset '{}'; valid: {} (or a path to a .json file)",
                                       printable(arg), fmt::join(preset_names(folder), ", ")));
}

}  // namespace railsim::spec
