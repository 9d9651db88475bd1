// libFuzzer target: the gnuplot scripts railsim writes, with arbitrary text (model, GPU, switch
// names from spec files reach titles, legends, axis labels and bar categories). gnuplot runs
// `command` substitution in command lines outside single quotes, so the property is that no byte
// of that text is ever read by gnuplot as anything but the inside of a single-quoted string or a
// data line: the script has the same lines as with plain text, no backquote outside single quotes,
// no double-quoted string but railsim's own ("\n" and numbers), and every data block the lines it
// should.
// Anything else aborts. gnuplot itself is not run.
//
// The input: text pieces separated by NUL bytes (title, subtitle, x label, y label, x tick format,
// series names, point labels, categories, heatmap labels), used in turn.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check_error.hpp"
#include "railsim/core/error.hpp"
#include "railsim/report/heatmap.hpp"
#include "railsim/report/plot.hpp"

namespace {

using railsim_fuzz::require;

// The script's command lines with their quoted strings checked; data blocks (`$x << EOD` ...
// `EOD`) are counted, not lexed. Returns the number of command lines and each block's lines.
struct Shape {
  int command_lines = 0;
  std::vector<int> block_lines;
  bool operator==(const Shape&) const = default;
};

Shape check_script(std::string_view s) {
  Shape shape;
  std::size_t pos = 0;
  int in_block = -1;  // index of the open data block, or -1
  while (pos < s.size()) {
    std::size_t end = s.find('\n', pos);
    require(end != std::string_view::npos);  // every line ends with a newline
    const std::string_view line = s.substr(pos, end - pos);
    pos = end + 1;
    if (in_block >= 0) {
      if (line == "EOD") {
        in_block = -1;
      } else {
        ++shape.block_lines[static_cast<std::size_t>(in_block)];
      }
      continue;
    }
    ++shape.command_lines;
    if (line.size() >= 7 && line.substr(line.size() - 7) == " << EOD") {
      in_block = static_cast<int>(shape.block_lines.size());
      shape.block_lines.push_back(0);
    }
    // Lex the command line: single-quoted strings ('' is a quote inside), double-quoted ones.
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      require(c != '`');  // substitution outside single quotes
      if (c == '\'') {
        for (++i;; ++i) {
          require(i < line.size());  // a single-quoted string ends on its line
          if (line[i] != '\'') continue;
          if (i + 1 < line.size() && line[i + 1] == '\'') {
            ++i;
            continue;
          }
          break;
        }
      } else if (c == '"') {
        const std::size_t close = line.find('"', i + 1);
        require(close != std::string_view::npos);
        const std::string_view inner = line.substr(i + 1, close - i - 1);
        // railsim's own: a line break, or a number (tick labels, the missing-data marker).
        require(inner == "\\n" ||
                inner.find_first_not_of("0123456789.,+- ") == std::string_view::npos);
        i = close;
      }
    }
  }
  require(in_block < 0);  // every block closed
  return shape;
}

struct Texts {
  std::vector<std::string> pieces;
  std::size_t next = 0;
  std::string take() { return pieces.empty() ? "" : pieces[next++ % pieces.size()]; }
};

// The shapes of a line chart, a bar chart and a heatmap whose texts are taken in turn from `t`.
std::vector<Shape> chart_shapes(Texts t) {
  using namespace railsim::report;
  LineChart lc;
  lc.title = t.take();
  lc.subtitle = t.take();
  lc.x.label = t.take();
  lc.y.label = t.take();
  lc.x.format = t.take();
  lc.y.from_zero = true;
  for (int i = 0; i < 3; ++i) lc.series.push_back({t.take(), {1, 2, 3}, {4, 5, 6}});
  lc.series.push_back({t.take(), {1, 2, 3}, {4, 5, 6}, {t.take(), t.take(), t.take()}});
  BarChart bc;
  bc.title = t.take();
  bc.y.label = t.take();
  bc.categories = {t.take(), t.take()};
  bc.series = {{t.take(), {1, 2}}, {t.take(), {3, 4}}};
  Heatmap h;
  h.rows = h.cols = 2;
  h.values = {1, 0, 2, 3};
  h.title = t.take();
  h.subtitle = t.take();
  h.x_label = t.take();
  h.y_label = t.take();
  const std::string out = "/tmp/" + t.take() + ".svg";
  return {check_script(gnuplot_script(lc, PlotFormat::svg, out)),
          check_script(gnuplot_script(bc, PlotFormat::png, out)),
          check_script(gnuplot_script(h, PlotFormat::pdf, out, "--heatmap"))};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Texts t;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::size_t pos = 0;
  while (pos <= in.size() && t.pieces.size() < 32) {
    std::size_t end = in.find('\0', pos);
    if (end == std::string_view::npos) end = in.size();
    t.pieces.emplace_back(in.substr(pos, end - pos));
    pos = end + 1;
  }
  // gnuplot_quote alone: a string expression whose single-quoted pieces hold the text.
  for (const std::string& p : t.pieces) {
    const std::string q = railsim::report::gnuplot_quote(p);
    require(q.size() >= 2 && q.front() == '\'' && q.back() == '\'');
    check_script("set title " + q + "\n");
  }
  // The same charts with plain texts (empty where the input's is: an empty title has no line).
  Texts plain = t;
  for (std::string& p : plain.pieces) p = p.empty() ? "" : "x";
  try {
    // The same lines and blocks as with plain texts: nothing the text held was read as a line.
    require(chart_shapes(t) == chart_shapes(plain));
  } catch (const railsim::InputError& e) {
    railsim_fuzz::check_error(e);
  }
  return 0;
}
