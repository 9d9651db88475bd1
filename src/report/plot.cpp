#include "railsim/report/plot.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/report/file.hpp"

extern char** environ;

namespace railsim::report {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix.data(), suffix.size()) == 0;
}

// Okabe-Ito colours (distinguishable with colour-blindness), without the yellow that vanishes on
// white; each later series is drawn thinner and with smaller points, so that series lying on top
// of each other (rail-only and rail-optimized often do) all stay visible.
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000"};
constexpr int kPointTypes[] = {7, 5, 9, 13, 11, 15, 7, 5};  // filled shapes

std::string series_style(std::size_t i) {
  const double k = static_cast<double>(std::min<std::size_t>(i, 6));
  return fmt::format("lc rgb '{}' pt {} ps {} lw {} dt {}", kColours[i % std::size(kColours)],
                     kPointTypes[i % std::size(kPointTypes)], gnuplot_number(1.9 - 0.2 * k),
                     gnuplot_number(3.2 - 0.35 * k), 1 + (i / std::size(kColours)) % 4);
}

std::string legend_line(Legend l) {
  switch (l) {
    case Legend::top_left:
      return "set key inside top left";
    case Legend::bottom_right:
      return "set key inside bottom right";
    case Legend::bottom_left:
      return "set key inside bottom left";
    case Legend::outside_right:
      return "set key outside right top";
    case Legend::top_right:
      break;
  }
  return "set key inside top right";
}

// Text as a string of a data block: in double quotes, with no quote, backquote or line break
// inside, so that it stays one field of one data line.
std::string data_string(std::string text) {
  for (char& ch : text)
    if (ch == '"' || ch == '`')
      ch = '\'';
    else if (ch == '\n' || ch == '\r' || ch == '\t')
      ch = ' ';
  std::string quoted;
  quoted.reserve(text.size() + 2);
  quoted += '"';
  quoted += text;
  quoted += '"';
  return quoted;
}

std::string axis_lines(const PlotAxis& a, char axis) {
  std::string s;
  if (!a.label.empty()) s += fmt::format("set {}label {}\n", axis, gnuplot_quote(a.label));
  if (a.log_base > 1) s += fmt::format("set logscale {} {}\n", axis, a.log_base);
  s += fmt::format("set format {} {}\n", axis, gnuplot_quote(a.format.empty() ? "%g" : a.format));
  if (a.from_zero && a.log_base <= 1) s += fmt::format("set {}range [0:*]\n", axis);
  return s;
}

std::string title_lines(const std::string& title, const std::string& subtitle) {
  if (title.empty() && subtitle.empty()) return "";
  std::string t = title;
  if (!subtitle.empty()) t += (t.empty() ? "" : "\n") + subtitle;
  return fmt::format("set title {}\n", gnuplot_quote(t));
}

void check_size(int width, int height, const std::string& option) {
  if (width < 100 || height < 100 || width > 10000 || height > 10000)
    throw InputError(
        option,
        fmt::format("a plot is 100 to 10000 pixels wide and high (got {} x {})", width, height));
}

std::string temp_dir(const std::string& option) {
  const char* env = std::getenv("TMPDIR");
  std::string base = env && *env ? env : "/tmp";
  std::string tmpl = base + "/railsim-plot-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    throw InputError(option, fmt::format("cannot create a temporary directory under '{}': {}", base,
                                         std::strerror(errno)));
  return name.data();
}

// The exit status of child `pid` (gnuplot or dot), polled every 5 ms so that a cancellation
// (core/cancel.hpp) stops it and returns at once: a Ctrl-C reaches the child from the terminal, but
// a SIGTERM sent to railsim alone would leave it running.
int wait_for(pid_t pid, const std::string& program, const std::string& option) {
  ExitCleanup registered(pid);
  int status = 0;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR)
      throw InputError(option, fmt::format("waiting for {}: {}", program, std::strerror(errno)));
    if (cancel_requested()) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      check_cancelled();
    }
    ::usleep(5000);
  }
}

// Runs `args` (args[0] the program's path) with no input, its output and errors into the file
// `err`; returns its wait status.
int run_program(std::vector<std::string> args, const std::string& err, const std::string& option) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    throw InputError(option, fmt::format("cannot run '{}': {}", args[0], std::strerror(rc)));
  return wait_for(pid, std::filesystem::path(args[0]).filename().string(), option);
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A temporary directory and the files a program writes in it, registered for clean_up_now()
// (core/cancel.hpp) for as long as they exist. The destructor removes them before the members
// forget the registrations, so that a second signal arriving while a cancellation unwinds finds
// them either still registered or already gone, never left behind.
class TempDir {
 public:
  TempDir(const std::string& option, std::initializer_list<std::string_view> files)
      : path_(temp_dir(option)), folder_(ExitCleanup::Kind::folder, path_) {
    for (const std::string_view f : files) files_.emplace_back(ExitCleanup::Kind::file, file(f));
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
  ExitCleanup folder_;
  std::deque<ExitCleanup> files_;  // a deque: ExitCleanup is neither copied nor moved
};

std::string first_line(const std::string& s) {
  std::istringstream in(s);
  std::string line, last;
  // gnuplot prints the offending line, a caret, then "file, line N: message": keep the message.
  while (std::getline(in, line))
    if (!line.empty() && line.find_first_not_of(" ^") != std::string::npos) last = line;
  return last.empty() ? "no message" : last;
}

}  // namespace

PlotFormat plot_format(const std::string& path, const std::string& option) {
  if (ends_with(path, ".png")) return PlotFormat::png;
  if (ends_with(path, ".svg")) return PlotFormat::svg;
  if (ends_with(path, ".pdf")) return PlotFormat::pdf;
  throw InputError(option, fmt::format("'{}' must end in .png, .svg or .pdf", path));
}

std::string_view to_string(PlotFormat f) {
  switch (f) {
    case PlotFormat::svg:
      return "svg";
    case PlotFormat::pdf:
      return "pdf";
    case PlotFormat::png:
      break;
  }
  return "png";
}

std::string gnuplot_quote(std::string_view text) {
  std::string o = "'";
  for (char c : text) {
    if (c == '\'')
      o += "''";
    else if (c == '\n')
      o += "'.\"\\n\".'";  // end the piece, a line break, a new piece
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)  // other controls: a space
      o += ' ';
    else
      o += c;
  }
  return o + "'";
}

std::string gnuplot_number(double v) {
  if (!std::isfinite(v)) return "NaN";
  return fmt::format("{}", v);
}

std::string gnuplot_terminal(PlotFormat f, int width, int height, const std::string& output) {
  const std::string path = gnuplot_quote(output);
  std::string term;
  switch (f) {
    case PlotFormat::png:
      term = fmt::format(
          "set terminal pngcairo size {},{} noenhanced font 'DejaVu Sans,10' background '#ffffff'",
          width, height);
      break;
    case PlotFormat::svg:
      term = fmt::format(
          "set terminal svg size {},{} fixed noenhanced font 'DejaVu Sans,12' background "
          "'#ffffff'",
          width, height);
      break;
    case PlotFormat::pdf:
      term = fmt::format("set terminal pdfcairo size {}in,{}in noenhanced font 'DejaVu Sans,8'",
                         width / 100.0, height / 100.0);
      break;
  }
  return fmt::format("{}\nset output {}\nset encoding utf8\nset termoption noenhanced\n", term,
                     path);
}

std::string gnuplot_script(const LineChart& c, PlotFormat f, const std::string& output,
                           const std::string& option) {
  check_size(c.width, c.height, option);
  std::string s = gnuplot_terminal(f, c.width, c.height, output);
  s += title_lines(c.title, c.subtitle);
  s += axis_lines(c.x, 'x');
  s += axis_lines(c.y, 'y');
  s += "set grid lc rgb '#dddddd' lw 1\nset autoscale xfix\n";  // x spans the data exactly
  // Labels are written above their points, to the right of those in the left half of the x
  // range and to the left of the others, so that each stays inside the plot: room above.
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  for (const Series& se : c.series)
    if (!se.labels.empty())
      for (double x : se.x)
        if (std::isfinite(x)) {
          x_lo = std::min(x_lo, x);
          x_hi = std::max(x_hi, x);
        }
  const double x_mid = x_lo <= x_hi ? (x_lo + x_hi) / 2 : 0.0;
  // An axis from 0 over points all at 0 (a frontier of one network) is an empty range to gnuplot,
  // which warns: give it a height.
  if (c.y.from_zero && c.y.log_base <= 1) {
    double y_hi = 0;
    for (const Series& se : c.series)
      for (double y : se.y)
        if (std::isfinite(y)) y_hi = std::max(y_hi, y);
    if (y_hi <= 0) s += "set yrange [0:1]\n";
  }
  if (x_lo < x_hi) s += "set offsets graph 0.03, graph 0.03, graph 0.08, 0\n";
  // Labelled points all at one x (a frontier of one network): an empty x range to gnuplot,
  // which warns; a range around it instead.
  if (x_lo == x_hi) {
    const double d = std::max(std::abs(x_lo) * 0.1, 1.0);
    s += fmt::format("set xrange [{}:{}]\n", gnuplot_number(x_lo - d), gnuplot_number(x_hi + d));
  }
  s += legend_line(c.legend) + " spacing 1.2 noautotitle\n";
  std::string plot;
  std::size_t drawn = 0;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& se = c.series[i];
    if (se.x.size() != se.y.size())
      throw InputError(option, fmt::format("series '{}' has {} x and {} y values", se.name,
                                           se.x.size(), se.y.size()));
    const bool labelled = !se.labels.empty();
    if (labelled && se.labels.size() != se.x.size())
      throw InputError(option, fmt::format("series '{}' has {} points and {} labels", se.name,
                                           se.x.size(), se.labels.size()));
    std::string block;
    std::size_t points = 0;
    for (std::size_t k = 0; k < se.x.size(); ++k) {
      const double x = se.x[k], y = se.y[k];
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if ((c.x.log_base > 1 && x <= 0) || (c.y.log_base > 1 && y <= 0)) continue;
      block += fmt::format("{} {}{}{}\n", gnuplot_number(x), gnuplot_number(y), labelled ? " " : "",
                           labelled ? data_string(se.labels[k]) : "");
      ++points;
    }
    if (points == 0) continue;
    s += fmt::format("$s{} << EOD\n{}EOD\n", i, block);
    plot += fmt::format("{}$s{} using 1:2 with linespoints {} title {}",
                        drawn == 0 ? "plot " : ", \\\n     ", i, series_style(i),
                        gnuplot_quote(se.name));
    // Each side's clause only when it has a point: gnuplot 5.4 crashed on labels that were all
    // NaN.
    std::size_t on_left = 0, on_right = 0;
    if (labelled)
      for (std::size_t k = 0; k < se.x.size(); ++k)
        if (std::isfinite(se.x[k]) && std::isfinite(se.y[k]))
          ++(se.x[k] < x_mid ? on_left : on_right);
    if (labelled)
      for (const bool left : {true, false})
        if ((left ? on_left : on_right) > 0)
          plot += fmt::format(
              ", \\\n     $s{} using 1:(($1 {} {}) ? $2 : NaN):3 with labels {} offset char "
              "{},0.7 font ',9' tc rgb '#333333' notitle",
              i, left ? "<" : ">=", gnuplot_number(x_mid), left ? "left" : "right",
              left ? "0.8" : "-0.8");
    ++drawn;
  }
  if (drawn == 0)
    throw InputError(option,
                     fmt::format("nothing to plot in '{}': no series has a point", c.title));
  return s + plot + "\n";
}

std::string gnuplot_script(const BarChart& c, PlotFormat f, const std::string& output,
                           const std::string& option) {
  check_size(c.width, c.height, option);
  if (c.categories.empty() || c.series.empty())
    throw InputError(option, fmt::format("nothing to plot in '{}': no bars", c.title));
  std::string s = gnuplot_terminal(f, c.width, c.height, output);
  s += title_lines(c.title, c.subtitle);
  s += axis_lines(c.y, 'y');
  if (c.y.log_base == 0) s += "set yrange [0:*]\n";
  s += "set style data histograms\nset style histogram clustered gap 1\n";
  s += "set style fill solid 0.85 border rgb '#333333'\nset boxwidth 0.9\n";
  s += "set xtics nomirror scale 0\nset grid ytics lc rgb '#dddddd' lw 1\n";
  s += legend_line(c.legend) + " spacing 1.2 noautotitle\n";
  s += "$bars << EOD\n";
  for (std::size_t k = 0; k < c.categories.size(); ++k) {
    s += data_string(c.categories[k]);
    for (const BarSeries& b : c.series) {
      if (b.values.size() != c.categories.size())
        throw InputError(option, fmt::format("bar series '{}' has {} values for {} categories",
                                             b.name, b.values.size(), c.categories.size()));
      s += ' ';
      s += gnuplot_number(b.values[k]);
    }
    s += "\n";
  }
  s += "EOD\nplot ";
  for (std::size_t i = 0; i < c.series.size(); ++i)
    s += fmt::format("{}$bars using {}{} lc rgb '{}' title {}", i == 0 ? "" : ", \\\n     ", i + 2,
                     i == 0 ? ":xtic(1)" : "", kColours[i % std::size(kColours)],
                     gnuplot_quote(c.series[i].name));
  return s + "\n";
}

std::string find_program(std::string_view name) {
  const char* env = std::getenv("PATH");
  if (!env) return "";
  const std::string path = env;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = std::min(path.find(':', start), path.size());
    // An empty PATH entry is the current directory.
    const std::string file =
        (end == start ? std::string(1, '.') : path.substr(start, end - start)) + "/" +
        std::string(name);
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(file.c_str(), X_OK) == 0)
      return file;
    start = end + 1;
  }
  return "";
}

std::string find_gnuplot() {
  return find_program("gnuplot");
}

void require_gnuplot(const std::string& option) {
  if (find_gnuplot().empty())
    throw InputError(option,
                     "plots are drawn by gnuplot, which is not on PATH: install gnuplot-nox "
                     "(apt-get install gnuplot-nox)");
}

bool complete_picture(std::string_view bytes, PlotFormat f) {
  const auto ends = [&](std::string_view tail) {
    std::string_view b = bytes;
    while (!b.empty() && (b.back() == '\n' || b.back() == '\r' || b.back() == ' '))
      b.remove_suffix(1);
    return b.size() >= tail.size() && b.substr(b.size() - tail.size()) == tail;
  };
  switch (f) {
    case PlotFormat::svg:
      return ends("</svg>");
    case PlotFormat::pdf:
      return ends("%%EOF");
    case PlotFormat::png:
      break;
  }
  // A PNG ends with its IEND chunk: length 0, "IEND", the chunk's CRC.
  static constexpr std::string_view kIend("\0\0\0\0IEND\xae\x42\x60\x82", 12);
  return bytes.size() >= 8 + kIend.size() && bytes.substr(0, 8) == "\x89PNG\r\n\x1a\n" &&
         bytes.substr(bytes.size() - kIend.size()) == kIend;
}

std::string run_gnuplot(const std::function<std::string(const std::string&)>& script, PlotFormat f,
                        const std::string& option) {
  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) require_gnuplot(option);
  const std::string ext = "plot." + std::string(to_string(f));
  // The folder holds these three files and nothing else.
  const TempDir dir(option, {"plot.gp", "gnuplot.err", ext});
  const std::string out = dir.file(ext), gp = dir.file("plot.gp"), err = dir.file("gnuplot.err");
  {
    std::ofstream o(gp, std::ios::binary);
    o << script(out);
    if (!o.flush())
      throw InputError(option, fmt::format("cannot write the gnuplot script in '{}'", dir.path()));
  }
  // -d: ignore the user's and the system's gnuplot initialisation files (same picture anywhere).
  const int status = run_program({gnuplot, "-d", gp}, err, option);
  std::string bytes = read_whole(out);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bytes.empty())
    throw InputError(option, fmt::format("gnuplot failed: {}", first_line(read_whole(err))));
  // gnuplot can exit 0 on a picture cut short (a full temporary directory): check its end.
  if (!complete_picture(bytes, f))
    throw InputError(option, fmt::format("gnuplot wrote an incomplete {} ({} bytes) in '{}': is "
                                         "the temporary directory full?",
                                         to_string(f), bytes.size(), dir.path()));
  if (f == PlotFormat::pdf) {  // cairo stamps the time of day; fix it (same length, offsets hold)
    const std::string key = "/CreationDate (D:";
    const auto p = bytes.find(key);
    if (p != std::string::npos && p + key.size() + 14 <= bytes.size())
      bytes.replace(p + key.size(), 14, "20000101000000");
  }
  return bytes;
}

std::string find_dot() {
  return find_program("dot");
}

void require_dot(const std::string& option) {
  if (find_dot().empty())
    throw InputError(option,
                     "graphs are drawn by Graphviz, and graphviz (dot) is not installed: install "
                     "graphviz (apt-get install graphviz)");
}

std::string render_dot_svg(std::string_view dot, const std::string& option) {
  const std::string program = find_dot();
  if (program.empty()) require_dot(option);
  const TempDir dir(option, {"graph.dot", "graph.svg", "dot.err"});
  const std::string in = dir.file("graph.dot"), out = dir.file("graph.svg"),
                    err = dir.file("dot.err");
  {
    std::ofstream o(in, std::ios::binary);
    o.write(dot.data(), static_cast<std::streamsize>(dot.size()));
    if (!o.flush())
      throw InputError(option,
                       fmt::format("cannot write the graph for Graphviz in '{}'", dir.path()));
  }
  const int status = run_program({program, "-Tsvg", "-o", out, in}, err, option);
  std::string bytes = read_whole(out);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bytes.empty())
    throw InputError(option, fmt::format("graphviz (dot) failed: {}", first_line(read_whole(err))));
  if (!complete_picture(bytes, PlotFormat::svg))
    throw InputError(option, fmt::format("graphviz (dot) wrote an incomplete SVG ({} bytes) in "
                                         "'{}': is the temporary directory full?",
                                         bytes.size(), dir.path()));
  return bytes;
}

std::string render(const LineChart& c, PlotFormat f, const std::string& option) {
  gnuplot_script(c, f, "check", option);  // bad input before any process runs
  return run_gnuplot([&](const std::string& out) { return gnuplot_script(c, f, out, option); }, f,
                     option);
}

std::string render(const BarChart& c, PlotFormat f, const std::string& option) {
  gnuplot_script(c, f, "check", option);
  return run_gnuplot([&](const std::string& out) { return gnuplot_script(c, f, out, option); }, f,
                     option);
}

void write_plot(const LineChart& c, const std::string& path, const std::string& option) {
  const PlotFormat f = plot_format(path, option);
  check_writable(path, option);
  write_file_atomic(path, render(c, f, option), option);
}

void write_plot(const BarChart& c, const std::string& path, const std::string& option) {
  const PlotFormat f = plot_format(path, option);
  check_writable(path, option);
  write_file_atomic(path, render(c, f, option), option);
}

}  // namespace railsim::report
