#pragma once
// Checks on the picture files that plots write: a PNG's signature and size (from its IHDR chunk),
// an SVG read by a real XML parser (Python's xml.dom.minidom) with its text content returned; and
// the data blocks of the gnuplot scripts that draw them.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace railsim::test {

// The lines of a gnuplot script's data block `name` ("$s0", "$matrix"); none when it has no such
// block.
inline std::vector<std::string> data_block(const std::string& script, const std::string& name) {
  const std::string open = name + " << EOD\n";
  const auto a = script.find(open);
  const auto b = script.find("EOD\n", a + open.size());
  std::vector<std::string> lines;
  if (a == std::string::npos || b == std::string::npos) return lines;
  std::istringstream in(script.substr(a + open.size(), b - a - open.size()));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string slurp_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct PngSize {
  std::uint32_t width = 0, height = 0;
};
// The size of a PNG file's bytes, or nothing when they do not start with the PNG signature and an
// IHDR chunk.
inline std::optional<PngSize> png_size(const std::string& bytes) {
  if (bytes.size() < 24 || bytes.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) != 0 ||
      bytes.compare(12, 4, "IHDR") != 0)
    return std::nullopt;
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  return PngSize{be32(16), be32(20)};
}

// The text of every text node of an XML file, joined by '|', or nothing when it does not parse.
inline std::optional<std::string> xml_text(const std::string& path) {
  const std::string out = path + ".text";
  const std::string cmd =
      "python3 -c \"import sys, xml.dom.minidom as m\n"
      "def walk(n, acc):\n"
      "    if n.nodeType == n.TEXT_NODE and n.data.strip(): acc.append(n.data.strip())\n"
      "    for c in n.childNodes: walk(c, acc)\n"
      "acc = []\nwalk(m.parse(sys.argv[1]), acc)\n"
      "open(sys.argv[2], 'w', encoding='utf-8').write('|'.join(acc))\" '" +
      path + "' '" + out + "' 2>/dev/null";
  const int status = std::system(cmd.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  std::string text = slurp_binary(out);
  std::remove(out.c_str());
  return text;
}

}  // namespace railsim::test
