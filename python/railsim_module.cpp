// The railsim library from Python: the C++ extension `railsim._railsim`. Each function takes the
// CLI's inputs as keyword arguments and returns the JSON document the CLI prints with --json (as
// text; python/railsim/__init__.py turns it into Python objects), so both give the same fields
// and numbers. Bad input raises railsim.InputError (a ValueError) carrying the CLI's one-line
// message, also a TypeError for a wrong type or an unknown argument: every function reads its
// keyword arguments through Args (below), which names the argument. The GIL is released while the
// library works.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "railsim/command/command.hpp"
#include "railsim/command/traffic.hpp"
#include "railsim/core/bytes.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/core/units.hpp"
#include "railsim/core/version.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/cost/report.hpp"
#include "railsim/fail/model.hpp"
#include "railsim/fail/monte_carlo.hpp"
#include "railsim/fail/report.hpp"
#include "railsim/fail/whatif.hpp"
#include "railsim/optimize/optimize.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/iteration.hpp"
#include "railsim/perf/report.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/report/table.hpp"
#include "railsim/sim/check.hpp"
#include "railsim/sim/options.hpp"
#include "railsim/spec/catalog.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/spec/stack.hpp"
#include "railsim/sweep/study.hpp"
#include "railsim/sweep/sweep.hpp"
#include "railsim/topo/builders.hpp"
#include "railsim/traffic/summary.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

namespace py = pybind11;
using namespace railsim;

namespace {

// While the library works without the GIL, Ctrl-C cancels it (core/cancel.hpp): Python runs its
// own SIGINT handler only between bytecodes, so a long call would otherwise run to its end first.
// For the duration of the calls in flight, SIGINT goes to a handler that raises railsim's flag and
// then calls Python's (which notes the signal, as it would have); the call unwinds and raises
// KeyboardInterrupt (translated below). Where Python does not handle SIGINT (SIG_IGN, SIG_DFL),
// nothing is changed.
std::mutex g_sigint_mutex;
int g_calls_in_flight = 0;
bool g_sigint_installed = false;
struct sigaction g_python_sigint {};

extern "C" void cancel_on_sigint(int sig, siginfo_t* info, void* context) {
  request_cancel(sig);
  if (g_python_sigint.sa_flags & SA_SIGINFO)
    g_python_sigint.sa_sigaction(sig, info, context);
  else
    g_python_sigint.sa_handler(sig);
}

class Interruptible {
 public:
  Interruptible() {
    {
      const std::lock_guard lock(g_sigint_mutex);
      if (g_calls_in_flight++ == 0) {
        reset_cancel();
        struct sigaction old {};
        const bool python_handles =
            ::sigaction(SIGINT, nullptr, &old) == 0 &&
            ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != nullptr
                                         : old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
        g_sigint_installed = python_handles;
        if (python_handles) {
          g_python_sigint = old;
          struct sigaction sa {};
          sa.sa_sigaction = cancel_on_sigint;
          ::sigemptyset(&sa.sa_mask);
          sa.sa_flags = SA_SIGINFO | SA_RESTART;
          ::sigaction(SIGINT, &sa, nullptr);
        }
      }
    }
    release_.emplace();
  }
  ~Interruptible() {
    release_.reset();
    const std::lock_guard lock(g_sigint_mutex);
    if (--g_calls_in_flight == 0 && g_sigint_installed) {
      ::sigaction(SIGINT, &g_python_sigint, nullptr);
      g_sigint_installed = false;
    }
  }
  Interruptible(const Interruptible&) = delete;
  Interruptible& operator=(const Interruptible&) = delete;

 private:
  std::optional<py::gil_scoped_release> release_;
};

// A Python str as UTF-8: a string that cannot be encoded (a lone surrogate such as '\udc80',
// which os.fsdecode makes of undecodable bytes) is an InputError naming `field`, not a
// UnicodeEncodeError surfacing as RuntimeError.
std::string utf8(const std::string& field, const py::handle& v) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(v.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    throw InputError(field,
                     "is not valid Unicode text (it holds a lone surrogate); give UTF-8 "
                     "text");
  }
  return std::string(data, static_cast<std::size_t>(size));
}

// ---------------------------------------------------------------------------------------------
// Every command of the library's table (railsim/command/command.hpp), from its field table: each
// keyword argument is the field's key, read by its kind (an int for integers, a number, a str, a
// bool for on/off options and flags, a list or tuple of values where the CLI takes a list written
// with commas) into the text the CLI would have given, so that both run the same resolution and
// checks. Errors name the keyword (python_spelling).
std::string type_of(const py::handle& v) {
  return py::cast<std::string>(py::str(py::type::handle_of(v).attr("__name__")));
}

std::string one_value(const command::Field& f, const py::handle& v) {
  const std::string& k = f.key;
  if (py::isinstance<py::bool_>(v)) throw InputError(k, "expected a number or a name, got bool");
  if (py::isinstance<py::str>(v)) return utf8(k, v);
  if (py::isinstance<py::int_>(v)) return py::cast<std::string>(py::str(v));  // any size
  if (py::isinstance<py::float_>(v)) {
    const double x = py::cast<double>(v);
    if (!std::isfinite(x)) throw InputError(k, "expected a finite number");
    return fmt::format("{}", x);
  }
  throw InputError(k, "expected a number, a name or a list of them, got " + type_of(v));
}

std::string integer_text(const command::Field& f, const py::handle& v) {
  if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
    throw InputError(f.key, "expected an integer, got " + type_of(v));
  try {
    return std::to_string(py::cast<std::int64_t>(v));
  } catch (const py::cast_error&) {
    throw InputError(f.key, "integer beyond 64 bits");
  }
}

// Sets one keyword argument on `args` as the CLI would have given it.
void set_from_python(command::Args& args, const command::Field& f, const py::handle& v) {
  const std::string& k = f.key;
  switch (f.kind) {
    case command::Kind::integer:
    case command::Kind::count:
      args.set(k, integer_text(f, v));
      return;
    case command::Kind::number:
      if (!(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) ||
          py::isinstance<py::bool_>(v))
        throw InputError(k, "expected a number, got " + type_of(v));
      args.set(k, one_value(f, v));
      return;
    case command::Kind::flag:
      if (!py::isinstance<py::bool_>(v))
        throw InputError(k, "expected True or False, got " + type_of(v));
      if (py::cast<bool>(v)) args.set(k, "true");
      return;
    case command::Kind::on_off:
      if (!py::isinstance<py::bool_>(v))
        throw InputError(k, "expected True or False, got " + type_of(v));
      args.set(k, py::cast<bool>(v) ? "on" : "off");
      return;
    case command::Kind::texts:  // words: a list of them, or one
      if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
        if (py::len(v) == 0) throw InputError(k, "an empty list: give at least one value");
        for (const auto& x : v) args.set(k, one_value(f, x));
      } else {
        args.set(k, one_value(f, v));
      }
      return;
    case command::Kind::pair: {
      if (!(py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) || py::len(v) != 2)
        throw InputError(k, "expected a pair of strings (" + command::type_name(f) + ")");
      for (const auto& x : v) {
        if (!py::isinstance<py::str>(x)) throw InputError(k, "expected strings, got " + type_of(x));
        args.set(k, utf8(k, x));
      }
      return;
    }
    case command::Kind::text:
      break;
  }
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::string joined;
    for (const auto& x : v) {
      if (!joined.empty() && !py::type::handle_of(x).is(py::type::handle_of(v[py::int_(0)])))
        throw InputError(k, "a list of mixed types (" + type_of(v[py::int_(0)]) + " and " +
                                type_of(x) + "); give numbers or names");
      joined += (joined.empty() ? "" : ",") + one_value(f, x);
    }
    if (joined.empty()) throw InputError(k, "an empty list: give at least one value");
    args.set(k, joined);
    return;
  }
  args.set(k, one_value(f, v));
}

const command::Command& command_at(const std::string& path) {
  const command::Command* c = command::find(path);
  if (c == nullptr) throw InputError("command", "no command '" + printable(path) + "'");
  return *c;
}

command::Args python_args(const command::Command& c, const py::kwargs& kw) {
  command::Args args(c.fields);
  for (const auto& [k, v] : kw) {
    const std::string key = utf8("argument name", k);
    const command::Field* field = nullptr;
    for (const command::Field& f : c.fields)
      if (f.key == key) field = &f;
    if (field == nullptr) {
      std::string valid;
      for (const command::Field& f : c.fields)
        if (f.key != c.python_sets) valid += (valid.empty() ? "" : ", ") + f.key;
      throw InputError(printable(key), "unknown argument; valid: " + valid);
    }
    if (!v.is_none()) set_from_python(args, *field, v);
  }
  if (!c.python_sets.empty() && !args.given(c.python_sets)) args.set(c.python_sets, "true");
  return args;
}

// railsim <path> with the keyword arguments: what the command prints (its JSON document where it
// has one). A check that fails after the output (validate) still returns the output.
std::string run_command(const std::string& path, const py::kwargs& kw) {
  const command::Command& c = command_at(path);
  const command::Args args = python_args(c, kw);  // reads the arguments: with the GIL
  const Interruptible release;
  command::Output out;
  try {
    command::run(c, args, out);
  } catch (const command::Failed&) {
  }
  return out.text();
}

// railsim traffic: its document and every GPU pair with traffic as NumPy arrays (COO: src, dst,
// bytes per parallelism tp, sp, pp, dp, ep).
py::dict traffic_pairs(const py::kwargs& kw) {
  const command::Command& c = command_at("traffic");
  const command::Args args = python_args(c, kw);
  command::TrafficPairs pairs;
  std::string summary;
  {
    const Interruptible release;
    summary = command::traffic_with_pairs(args, pairs);
  }
  const auto n = static_cast<py::ssize_t>(pairs.src.size());
  py::dict out;
  out["summary"] = summary;
  out["src"] = py::array_t<std::int64_t>(n, pairs.src.data());
  out["dst"] = py::array_t<std::int64_t>(n, pairs.dst.data());
  out["bytes"] =
      py::array_t<double>({n, static_cast<py::ssize_t>(pairs.columns)}, pairs.bytes.data());
  return out;
}

// The table of every command, for the Python wrappers and the parity test.
py::list command_tables() {
  py::list out;
  for (const command::Command& c : command::commands()) {
    py::list fields;
    for (const command::Field& f : c.fields) {
      py::dict d;
      d["key"] = f.key;
      d["flag"] = f.flag;
      d["type"] = command::type_name(f);
      d["kind"] = static_cast<int>(f.kind);
      d["default"] = f.default_text;
      d["help"] = f.help;
      d["choices"] = f.choices;
      fields.append(d);
    }
    py::dict d;
    d["path"] = c.path;
    d["python"] = c.python_name;
    d["summary"] = c.summary;
    d["sets"] = c.python_sets;
    d["fields"] = fields;
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_railsim, m) {
  m.doc() = "railsim: rail-only vs rail-optimized networks for LLM training clusters";
  m.attr("__version__") = std::string(railsim::version());  // the CLI's --version, the report's
  // A ValueError (bad values) that is also a TypeError (wrong types), so that either except
  // clause catches it.
  static py::exception<InputError> input_error(
      m, "InputError", py::make_tuple(py::handle(PyExc_ValueError), py::handle(PyExc_TypeError)));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      // The CLI's bound: one line, escaped, at most 2,000 bytes however long the value echoed.
      // Options are named as this module's keyword arguments ("hb_domain", not "--hb-domain").
      input_error(printable(python_spelling(e.what()), 2000).c_str());
    } catch (const Cancelled&) {
      // Python's handler runs now (it was noted during the call): KeyboardInterrupt, or what a
      // handler of the user's raises. Off the main thread, or if it raises nothing, the call
      // still ended early: KeyboardInterrupt.
      if (PyErr_CheckSignals() == 0) PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
  m.def("run", &run_command, py::arg("path"),
        "Runs the railsim command at `path` with its options as keyword arguments; returns what it "
        "prints (its JSON document where it has one)");
  m.def("traffic", &traffic_pairs, "railsim traffic --json and the pairs as arrays");
  m.def("commands", &command_tables, "Every command: its path, Python name and field table");
}
