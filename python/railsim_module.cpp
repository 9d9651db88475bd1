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
#include "railsim/core/bytes.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/core/units.hpp"
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

using OptI = std::optional<std::int64_t>;
using OptD = std::optional<double>;
using OptS = std::optional<std::string>;

spec::Cluster cluster(const std::string& gpu, std::int64_t gpus, OptI hb_domain, OptD nic_gbps,
                      OptD hb_GBps, OptI nics_per_gpu) {
  spec::ClusterOptions o;
  o.gpu = gpu;
  o.gpus = gpus;
  o.hb_domain = hb_domain;
  o.nic_gbps = nic_gbps;
  o.hb_gbytes_per_s = hb_GBps;
  o.nics_per_gpu = nics_per_gpu;
  return spec::make_cluster(o);
}

spec::NetworkDesign network(const std::string& design, const std::string& sw, double oversub) {
  spec::NetworkOptions o;
  o.design = design;
  o.sw = sw;
  o.oversubscription = oversub;
  return spec::make_network_design(o);
}

struct Job {
  perf::Model model;
  perf::Training training;
  perf::StrategyPins pins;
};

Job job(const std::string& model, std::int64_t batch, OptI seq, const std::string& stack,
        OptS dtype, std::optional<bool> flash, OptI tp, OptI pp, OptI dp, OptI ep, OptI micro_batch,
        OptI interleave) {
  Job j;
  j.model = spec::load_model(model, "model");
  const spec::Stack st = spec::load_stack(stack, "stack");
  std::optional<spec::Dtype> dt;
  if (dtype) dt = spec::parse_dtype(*dtype, "dtype");
  j.training = spec::make_training(check_integer("batch", batch, 1, std::int64_t{1} << 40),
                                   check_integer("seq", seq.value_or(j.model.seq_len), 1, 1 << 24),
                                   st, dt, flash);
  auto pin = [](OptI v, const char* name) -> OptI {
    if (v) check_integer(name, *v, 1, spec::kMaxGpus);
    return v;
  };
  j.pins.tp = pin(tp, "tp");
  j.pins.pp = pin(pp, "pp");
  j.pins.dp = pin(dp, "dp");
  j.pins.ep = pin(ep, "ep");
  j.pins.micro_batch = pin(micro_batch, "micro_batch");
  j.pins.interleave = pin(interleave, "interleave");
  perf::check_pins(j.model, j.training, j.pins);
  return j;
}

std::string whatif(const std::string& gpu, std::int64_t gpus, OptI k, OptD nic, OptD hb, OptI m,
                   const std::vector<std::string>& designs, const std::string& sw,
                   const std::string& model, std::int64_t batch, OptI seq, const std::string& stack,
                   const std::vector<std::string>& fail, std::int64_t random, std::int64_t seed,
                   const std::string& pxn, const std::string& sim, OptI spares) {
  const spec::Cluster c = cluster(gpu, gpus, k, nic, hb, m);
  const Job jb = job(model, batch, seq, stack, std::nullopt, std::nullopt, {}, {}, {}, {}, {}, {});
  fail::WhatIfOptions o;
  o.fail = fail;
  o.random = check_integer("fail_random", random, 0, 1'000'000);
  o.seed = static_cast<std::uint64_t>(check_integer("seed", seed, 0, std::int64_t{1} << 53));
  o.pxn = fail::parse_pxn_mode(pxn, "pxn");
  o.sim = fail::parse_sim_mode(sim, "sim");
  if (spares) o.spare_domains = check_integer("spare_domains", *spares, 0, spec::kMaxGpus);
  o.plan.top = 1;
  std::vector<spec::NetworkDesign> ds;
  for (const auto& d : designs) ds.push_back(network(d, sw, 1.0));
  return fail::to_json(fail::what_if(c, ds, jb.model, jb.training, o)).dump();
}

std::string optimize_(const std::string& gpu, std::int64_t gpus,
                      const std::vector<std::string>& models, std::int64_t batch,
                      const std::vector<std::int64_t>& hb_domain,
                      const std::vector<double>& nic_gbps, const std::vector<std::string>& sws,
                      const std::vector<double>& oversub, OptD within, const std::string& of,
                      OptD max_iteration_time, OptD max_cost) {
  const spec::GpuSpec g = spec::load_gpu(gpu, "gpu");
  const std::int64_t n = gpus != 0 ? check_integer("gpus", gpus, 1, spec::kMaxGpus)
                                   : spec::kDefaultGpus / g.default_hb_domain * g.default_hb_domain;
  std::vector<optimize::ModelSpec> ms;
  for (const auto& name : models) {
    const Job jb = job(name, batch, {}, "megatron-core-2024", {}, {}, {}, {}, {}, {}, {}, {});
    ms.push_back({jb.model, jb.training, jb.pins});
  }
  optimize::Space s;
  s.hb_domain = hb_domain;
  s.nic_gbps = nic_gbps;
  s.switches = sws;
  if (!oversub.empty()) s.oversubscription = oversub;
  optimize::Target t;
  std::optional<double> b_cost;
  if (within) t.within = check_number("within", *within, Range::between(0, 1e4)) / 100;
  if (max_iteration_time)
    t.max_iteration_s =
        check_number("max_iteration_time", *max_iteration_time, Range::positive(1e9));
  if (max_cost) b_cost = check_number("max_network_cost", *max_cost, Range::positive(1e15));
  t.within_of = spec::parse_design_kind(of, "of");
  optimize::Budget b;
  b.max_cost_usd = b_cost;
  const optimize::Result r = optimize::optimize(g, n, ms, s, t, b);
  return optimize::optimize_document(r,
                                     optimize::under_contrasting_routing(g, n, ms, s, t, b, {}, r))
      .dump();
}

// The seed `railsim traffic --json` reports by default (--seed 1); it moves only a shuffled
// placement, and traffic() places ranks rail-aligned.
constexpr std::int64_t kTrafficSeed = 1;

// The traffic of one iteration: the document `railsim traffic --json` prints and every GPU pair
// with traffic as NumPy arrays (COO: src, dst, bytes per parallelism tp, sp, pp, dp, ep).
py::dict traffic_coo(const std::string& gpu, std::int64_t gpus, OptI k, OptD nic, OptD hb, OptI m,
                     const std::string& kind, const std::string& sw, const std::string& model,
                     std::int64_t batch, OptI seq, const std::string& stack, OptI tp, OptI pp,
                     OptI dp, OptI ep) {
  std::vector<std::int64_t> src, dst;
  std::vector<double> bytes;
  std::string summary;
  {
    const Interruptible release;
    const spec::Cluster c = cluster(gpu, gpus, k, nic, hb, m);
    const spec::NetworkDesign d = network(kind, sw, 1.0);
    const Job jb = job(model, batch, seq, stack, {}, {}, tp, pp, dp, ep, {}, {});
    // The strategy as `railsim traffic` takes it: the one given, or the best plan's.
    perf::Strategy s;
    std::string source = "given";
    if (tp || pp || dp || ep) {
      s = perf::default_strategy(jb.model, jb.training, jb.pins, c);
    } else {
      perf::PlanOptions po;
      po.pins = jb.pins;
      po.top = 1;
      const perf::PlanResult r = perf::plan(perf::make_context(jb.model, jb.training, c, d), po);
      if (r.plans.empty()) throw perf::explain_no_plan(r, jb.model, jb.training, jb.pins, c);
      s = r.plans.front().strategy;
      source = fmt::format("best plan of {} strategies", cost::with_commas(double(r.evaluated)));
    }
    const perf::Placement pl(c, s.degrees());
    const perf::CommSchedule cs = perf::build_comm_schedule(jb.model, jb.training, s, pl);
    const traffic::TrafficMatrix tm = traffic::TrafficMatrix::build(cs, pl, c);
    const perf::IterationTime it =
        perf::estimate(perf::make_context(jb.model, jb.training, c, d), s, pl, cs);
    summary =
        traffic::traffic_document(tm, traffic::summarize(tm, c, d.kind), c, jb.model, jb.training,
                                  s, perf::PlacementKind::rail_aligned, source, kTrafficSeed, it, d)
            .dump();
    traffic::for_each_pair(tm, [&](std::int64_t a, std::int64_t b, const auto& per) {
      src.push_back(a);
      dst.push_back(b);
      bytes.insert(bytes.end(), per.begin(), per.end());
    });
  }
  const auto n = static_cast<py::ssize_t>(src.size());
  py::array_t<std::int64_t> s_arr(n, src.data()), d_arr(n, dst.data());
  py::array_t<double> b_arr({n, static_cast<py::ssize_t>(traffic::kParallelisms)}, bytes.data());
  py::dict out;
  out["summary"] = summary;
  out["src"] = s_arr;
  out["dst"] = d_arr;
  out["bytes"] = b_arr;
  return out;
}

// ---------------------------------------------------------------------------------------------
// estimate, sim, sweep, fail_goodput take their keyword arguments as a dict read here, so that a
// wrong type, an unknown name or a bad value is an InputError naming the argument (as the CLI
// names its option), never a pybind11 TypeError listing signatures.
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

class Args {
 public:
  Args(const py::kwargs& kw, std::vector<std::string> names) : names_(std::move(names)) {
    for (const auto& [k, v] : kw) {
      const std::string key = utf8("argument name", k);
      if (std::find(names_.begin(), names_.end(), key) == names_.end()) {
        std::string valid;
        for (const auto& n : names_) {
          if (!valid.empty()) valid += ", ";
          valid += n;
        }
        throw InputError(printable(key), "unknown argument; valid: " + valid);
      }
      if (!v.is_none()) d_[key] = py::reinterpret_borrow<py::object>(v);
    }
  }
  bool has(const std::string& k) const { return d_.count(k) > 0; }
  OptI integer(const std::string& k) const {
    auto it = d_.find(k);
    if (it == d_.end()) return std::nullopt;
    return as_integer(k, it->second);
  }
  std::int64_t integer(const std::string& k, std::int64_t fallback) const {
    return integer(k).value_or(fallback);
  }
  OptD number(const std::string& k) const {
    auto it = d_.find(k);
    if (it == d_.end()) return std::nullopt;
    return as_number(k, it->second);
  }
  double number(const std::string& k, double fallback) const {
    return number(k).value_or(fallback);
  }
  OptS string(const std::string& k) const {
    auto it = d_.find(k);
    if (it == d_.end()) return std::nullopt;
    return as_string(k, it->second);
  }
  // A list (or tuple) of integers, numbers or strings; one value is a list of one.
  std::optional<std::vector<std::int64_t>> integers(const std::string& k) const {
    return list<std::int64_t>(k, &as_integer);
  }
  std::optional<std::vector<double>> numbers(const std::string& k) const {
    return list<double>(k, &as_number);
  }
  std::optional<std::vector<std::string>> strings(const std::string& k) const {
    return list<std::string>(k, &as_string);
  }
  std::string string(const std::string& k, const std::string& fallback) const {
    return string(k).value_or(fallback);
  }
  std::optional<bool> boolean(const std::string& k) const {
    auto it = d_.find(k);
    if (it == d_.end()) return std::nullopt;
    if (!py::isinstance<py::bool_>(it->second))
      throw InputError(k, "expected True or False, got " + type_of(it->second));
    return py::cast<bool>(it->second);
  }
  // A size in bytes: a number or the CLI's text ("512MB", "1GiB").
  std::optional<double> bytes(const std::string& k) const {
    auto it = d_.find(k);
    if (it == d_.end()) return std::nullopt;
    if (py::isinstance<py::str>(it->second)) return units::parse_bytes(utf8(k, it->second), k);
    return number(k);
  }
  // A swept value in the CLI's syntax: a string ("8,16,32", "200:800:200", "1024..8192x2"), one
  // value, or a list of values (joined with commas).
  OptS sweep_values(const std::string& k) const {
    auto it = d_.find(k);
    if (it == d_.end()) return std::nullopt;
    const py::object& v = it->second;
    auto one = [&](const py::handle& x) -> std::string {
      if (py::isinstance<py::bool_>(x)) throw InputError(k, "expected numbers or names, got bool");
      if (py::isinstance<py::str>(x)) return utf8(k, x);
      if (py::isinstance<py::int_>(x)) return py::cast<std::string>(py::str(x));  // any size
      if (py::isinstance<py::float_>(x)) return fmt::format("{}", py::cast<double>(x));
      throw InputError(k, "expected a number, a name or a list of them, got " + type_of(x));
    };
    if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
      std::string out;
      for (const auto& x : v) {
        if (!out.empty()) out += ',';
        out += one(x);
      }
      if (out.empty()) throw InputError(k, "empty list");
      return out;
    }
    return one(v);
  }

 private:
  static std::int64_t as_integer(const std::string& k, const py::handle& v) {
    if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
      throw InputError(k, "expected an integer, got " + type_of(v));
    try {
      return py::cast<std::int64_t>(v);
    } catch (const py::cast_error&) {
      throw InputError(k, "integer beyond 64 bits");
    }
  }
  static double as_number(const std::string& k, const py::handle& v) {
    if (!(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) ||
        py::isinstance<py::bool_>(v))
      throw InputError(k, "expected a number, got " + type_of(v));
    const double x = py::cast<double>(v);
    if (!std::isfinite(x)) throw InputError(k, "expected a finite number");
    return x;
  }
  static std::string as_string(const std::string& k, const py::handle& v) {
    if (!py::isinstance<py::str>(v)) throw InputError(k, "expected a string, got " + type_of(v));
    return utf8(k, v);
  }
  template <class T>
  std::optional<std::vector<T>> list(const std::string& k,
                                     T (*conv)(const std::string&, const py::handle&)) const {
    auto it = d_.find(k);
    if (it == d_.end()) return std::nullopt;
    std::vector<T> out;
    if (py::isinstance<py::list>(it->second) || py::isinstance<py::tuple>(it->second)) {
      for (const auto& x : it->second) out.push_back(conv(k, x));
    } else {
      out.push_back(conv(k, it->second));
    }
    return out;
  }
  static std::string type_of(const py::handle& v) {
    return py::cast<std::string>(py::str(py::type::handle_of(v).attr("__name__")));
  }
  std::vector<std::string> names_;
  std::map<std::string, py::object> d_;
};

const std::vector<std::string> kClusterNames = {"gpu",      "gpus",    "hb_domain",
                                                "nic_gbps", "hb_GBps", "nics_per_gpu"};
const std::vector<std::string> kNetworkNames = {"design",           "switch",
                                                "oversubscription", "oversubscribed_tier",
                                                "copper_gpu_leaf",  "management_links"};
// The CLI's routing options (plan, compare, estimate, sim): --routing, --seed, --forwarding,
// --forward-via, --chunks.
const std::vector<std::string> kRoutingNames = {"routing", "seed", "forwarding", "forward_via",
                                                "chunks"};
const std::vector<std::string> kStrategyNames = {
    "model",     "batch", "seq",      "stack",      "dtype",       "flash_attention",
    "tp",        "pp",    "dp",       "ep",         "micro_batch", "interleave",
    "recompute", "sp",    "dist_opt", "dp_overlap", "placement"};

std::vector<std::string> names(std::initializer_list<const std::vector<std::string>*> groups,
                               std::initializer_list<std::string> more) {
  std::vector<std::string> out;
  for (const auto* g : groups) out.insert(out.end(), g->begin(), g->end());
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

spec::ClusterOptions cluster_options(const Args& a) {
  spec::ClusterOptions o;
  o.gpu = a.string("gpu", o.gpu);
  // Unset is the default (32,768 in whole HB domains); a given count is checked like --gpus.
  o.gpus = a.has("gpus") ? check_integer("gpus", *a.integer("gpus"), 1, spec::kMaxGpus) : 0;
  o.hb_domain = a.integer("hb_domain");
  o.nic_gbps = a.number("nic_gbps");
  o.hb_gbytes_per_s = a.number("hb_GBps");
  o.nics_per_gpu = a.integer("nics_per_gpu");
  return o;
}

spec::NetworkOptions network_options(const Args& a) {
  spec::NetworkOptions o;
  o.design = a.string("design", o.design);
  o.sw = a.string("switch", o.sw);
  o.oversubscription = a.number("oversubscription", o.oversubscription);
  o.oversubscribed_tier = static_cast<int>(
      check_integer("oversubscribed_tier", a.integer("oversubscribed_tier", 1), 1, 16));
  o.copper_gpu_leaf = a.boolean("copper_gpu_leaf").value_or(false);
  o.management_links = static_cast<int>(
      check_integer("management_links", a.integer("management_links", 0), 0, 1 << 20));
  o.routing = a.string("routing", o.routing);
  o.seed = a.integer("seed", o.seed);
  o.forwarding = a.string("forwarding", o.forwarding);
  o.forward_via = a.string("forward_via", o.forward_via);
  o.chunks = a.integer("chunks", o.chunks);
  return o;
}

struct StrategyIn {
  perf::Model model;
  perf::Training training;
  perf::StrategyPins pins;
  perf::PlacementKind placement = perf::PlacementKind::rail_aligned;
};

// The CLI's resolve_strategy_inputs, with the argument names as fields.
StrategyIn strategy_inputs(const Args& a) {
  StrategyIn in;
  in.model = spec::load_model(a.string("model", spec::kDefaultModel), "model");
  const spec::Stack st =
      spec::load_stack(a.string("stack", std::string(spec::kDefaultStack)), "stack");
  std::optional<spec::Dtype> dt;
  if (auto d = a.string("dtype")) dt = spec::parse_dtype(*d, "dtype");
  in.training =
      spec::make_training(check_integer("batch", a.integer("batch", spec::kDefaultGlobalBatch), 1,
                                        std::int64_t{1} << 40),
                          check_integer("seq", a.integer("seq", in.model.seq_len), 1, 1 << 24), st,
                          dt, a.boolean("flash_attention"));
  auto pin = [&](const char* name, std::int64_t max) -> OptI {
    OptI v = a.integer(name);
    if (v) check_integer(name, *v, 1, max);
    return v;
  };
  in.pins.tp = pin("tp", spec::kMaxGpus);
  in.pins.pp = pin("pp", spec::kMaxGpus);
  in.pins.dp = pin("dp", spec::kMaxGpus);
  in.pins.ep = pin("ep", spec::kMaxGpus);
  in.pins.micro_batch = pin("micro_batch", std::int64_t{1} << 40);
  in.pins.interleave = pin("interleave", 1 << 16);
  if (auto r = a.string("recompute")) in.pins.recompute = perf::parse_recompute(*r, "recompute");
  in.pins.sp = a.boolean("sp");
  in.pins.dist_opt = a.boolean("dist_opt");
  in.pins.dp_overlap = a.boolean("dp_overlap");
  in.placement = perf::parse_placement_kind(a.string("placement", "rail_aligned"), "placement");
  perf::check_pins(in.model, in.training, in.pins);
  return in;
}

// railsim estimate --json.
std::string estimate_(const py::kwargs& kw) {
  const Args a(kw, names({&kClusterNames, &kNetworkNames, &kRoutingNames, &kStrategyNames}, {}));
  const spec::ClusterOptions co = cluster_options(a);
  const spec::NetworkOptions no = network_options(a);
  const StrategyIn in = strategy_inputs(a);  // reads the arguments: with the GIL
  const Interruptible release;
  const spec::Cluster c = spec::make_cluster(co);
  const spec::NetworkDesign d = spec::make_network_design(no);
  const perf::Strategy s = perf::default_strategy(in.model, in.training, in.pins, c);
  return perf::estimate_document(in.model, in.training, s, c, d, in.placement).dump();
}

// railsim sim: one collective, or (schedule=True) every collective of one iteration.
std::string sim_(const py::kwargs& kw) {
  const Args a(kw,
               names({&kClusterNames, &kNetworkNames, &kRoutingNames, &kStrategyNames},
                     {"collective", "algorithm", "group", "bytes", "hop_latency_us", "aggregate",
                      "max_flows", "top", "batch_tolerance", "schedule", "efficiency"}));
  const spec::ClusterOptions co = cluster_options(a);
  const spec::NetworkOptions no = network_options(a);
  const bool schedule = a.boolean("schedule").value_or(false);
  const bool efficiency = a.boolean("efficiency").value_or(false);
  const std::string collective = a.string("collective", "all_reduce");
  const std::string algorithm = a.string("algorithm", "ring");
  const std::string group = a.string("group", "all");
  const std::optional<double> bytes = a.bytes("bytes");
  const double hop_latency_us = a.number("hop_latency_us", 0.5);
  const std::string aggregate = a.string("aggregate", "auto");
  const std::int64_t max_flows = a.integer("max_flows", 4'000'000);
  const std::int64_t top = a.integer("top", 5);
  const double batch_tolerance = a.number("batch_tolerance", 1e-9);
  if (!schedule)
    for (const auto& n : kStrategyNames)
      if (a.has(n))
        throw InputError(n,
                         "has no effect without schedule=True (the model and strategy "
                         "arguments time one iteration's collectives; a single collective "
                         "takes collective, bytes, group)");
  std::optional<StrategyIn> in;
  if (schedule) in = strategy_inputs(a);

  const Interruptible release;
  const spec::Cluster c = spec::make_cluster(co);
  const spec::NetworkDesign d = spec::make_network_design(no);
  sim::SimConfig cfg = sim::sim_config(d);
  cfg.hop_latency_s =
      check_number("hop_latency_us", hop_latency_us, Range::non_negative(1e6)) * 1e-6;
  cfg.max_flows = check_integer("max_flows", max_flows, 1000, 200'000'000);
  cfg.aggregate = sim::parse_aggregation(aggregate, "aggregate");
  cfg.batch_tolerance = check_number("batch_tolerance", batch_tolerance, Range::between(0, 0.01));
  const int top_n = static_cast<int>(check_integer("top", top, 0, 1000));

  if (schedule) {
    const perf::Strategy s = perf::default_strategy(in->model, in->training, in->pins, c);
    const topo::Fabric fabric = topo::build_fabric(c, d);
    const perf::Placement pl(fabric.cluster, s.degrees(), in->placement);
    const perf::CommSchedule sched = perf::build_comm_schedule(in->model, in->training, s, pl);
    const sim::ScheduleCheck chk = sim::check_schedule(fabric, sched, pl, cfg);
    return sim::schedule_document(chk, fabric, s).dump();
  }
  const perf::CollectiveOp op = perf::parse_collective_op(collective, "collective");
  sim::CollectiveRequest req;
  req.op = op;
  req.algorithm = sim::parse_collective_algorithm(algorithm, op, "algorithm");
  req.bytes = bytes ? check_number("bytes", *bytes, Range::positive(1e18))
                    : units::parse_bytes("1GB", "bytes");
  const topo::Fabric fabric = topo::build_fabric(c, d);
  const sim::SimNetwork net =
      efficiency ? sim::like_for_like(fabric, cfg) : sim::make_sim_network(fabric);
  req.groups = sim::parse_groups(group, fabric.cluster, "group");
  const sim::CollectiveResult r = sim::simulate_collective(net, req, cfg, top_n);
  return sim::collective_document(r, req, group, fabric, cfg, efficiency).dump();
}

// railsim sweep: the rows of --json.
std::string sweep_(const py::kwargs& kw) {
  const Args a(
      kw,
      {"study",        "gpus",        "gpu",     "hb_domain",        "nic_gbps",        "hb_GBps",
       "nics_per_gpu", "switch",      "catalog", "oversubscription", "model",           "batch",
       "seq",          "stack",       "dtype",   "flash_attention",  "switch_counting", "zip",
       "perf",         "max_points",  "threads", "alltoall",         "forwarding",      "routing",
       "seed",         "forward_via", "chunks"});
  const std::int64_t m = check_integer(
      "max_points", a.integer("max_points", sweep::kDefaultMaxPoints), 1, sweep::kMaxSweepPoints);
  const int threads = check_threads("threads", a.integer("threads", 0));
  std::optional<sweep::Study> study;
  if (auto s = a.string("study")) study = sweep::make_study(*s, "study");
  sweep::SweepOptions s = study ? study->options : sweep::SweepOptions{};
  sweep::SweepAxes& ax = s.axes;
  if (auto v = a.sweep_values("gpu")) ax.gpu = sweep::parse_names("gpu", *v, m);
  if (auto v = a.sweep_values("gpus")) ax.gpus = sweep::parse_integers("gpus", *v, m);
  if (auto v = a.sweep_values("hb_domain"))
    ax.hb_domain = sweep::parse_integers("hb_domain", *v, m);
  if (auto v = a.sweep_values("nic_gbps")) ax.nic_gbps = sweep::parse_reals("nic_gbps", *v, m);
  if (auto v = a.sweep_values("hb_GBps")) ax.hb_GBps = sweep::parse_reals("hb_GBps", *v, m);
  if (auto v = a.sweep_values("nics_per_gpu"))
    ax.nics_per_gpu = sweep::parse_integers("nics_per_gpu", *v, m);
  if (auto v = a.sweep_values("switch")) ax.sw = sweep::parse_names("switch", *v, m);
  if (auto v = a.sweep_values("catalog")) ax.catalog = sweep::parse_names("catalog", *v, m);
  if (auto v = a.sweep_values("oversubscription"))
    ax.oversubscription = sweep::parse_reals("oversubscription", *v, m);
  if (auto v = a.sweep_values("model")) ax.model = sweep::parse_names("model", *v, m);
  if (auto v = a.sweep_values("batch")) ax.batch = sweep::parse_integers("batch", *v, m);
  if (auto v = a.sweep_values("seq")) ax.seq = sweep::parse_integers("seq", *v, m);
  if (auto v = a.sweep_values("routing")) ax.routing = sweep::parse_names("routing", *v, m);
  s.zip = a.boolean("zip").value_or(false);
  if (auto p = a.boolean("perf"); p && !*p) s.perf = false;
  if (auto b = a.bytes("alltoall"))
    s.alltoall_bytes = check_number("alltoall", *b, Range::positive(1e18));
  if (auto f = a.string("forwarding")) s.network.forwarding = *f;
  if (auto f = a.string("forward_via")) s.network.forward_via = *f;
  if (auto v = a.integer("seed")) s.network.seed = *v;
  if (auto v = a.integer("chunks")) s.network.chunks = *v;
  s.max_points = m;
  s.threads = threads;
  s.counting = cost::parse_switch_counting(a.string("switch_counting", "whole"), "switch_counting");
  s.stack = spec::load_stack(a.string("stack", std::string(spec::kDefaultStack)), "stack");
  if (auto d = a.string("dtype")) s.dtype = spec::parse_dtype(*d, "dtype");
  s.flash_attention = a.boolean("flash_attention");
  (void)spec::make_training(1, 1, s.stack, s.dtype, s.flash_attention);  // checks them

  const Interruptible release;
  const sweep::SweepResult r = sweep::run_sweep(s);
  if (r.valid_points() == 0) throw sweep::no_valid_point(*r.points.front().invalid);
  return report::to_json(sweep::sweep_table(r)).dump();
}

// railsim fail goodput.
std::string goodput_(const py::kwargs& kw) {
  const Args a(kw, names({&kClusterNames, &kStrategyNames}, {"design",
                                                             "switch",
                                                             "rates",
                                                             "days",
                                                             "trials",
                                                             "seed",
                                                             "threads",
                                                             "checkpoint_interval_min",
                                                             "checkpoint_write_s",
                                                             "detect_min",
                                                             "restart_min",
                                                             "repair_h",
                                                             "spare_domains",
                                                             "gpus_per_host",
                                                             "comm_fraction",
                                                             "degraded_slowdown",
                                                             "degraded",
                                                             "tokens",
                                                             "tokens_per_s",
                                                             "catalog",
                                                             "amortize_years",
                                                             "pxn"}));
  const spec::ClusterOptions co = cluster_options(a);
  fail::RunParams run;
  fail::MonteCarloOptions mc;
  run.days = a.number("days", run.days);
  if (auto v = a.integer("trials")) mc.trials = check_integer("trials", *v, 1, 10'000'000);
  if (auto v = a.integer("seed"))
    mc.seed = static_cast<std::uint64_t>(check_integer("seed", *v, 0, std::int64_t{1} << 53));
  if (auto v = a.integer("threads")) mc.threads = check_threads("threads", *v);
  if (auto v = a.number("checkpoint_interval_min"))
    run.checkpoint_interval_s =
        check_number("checkpoint_interval_min", *v, Range::positive(1e7)) * 60;
  run.checkpoint_write_s = a.number("checkpoint_write_s", run.checkpoint_write_s);
  if (auto v = a.number("detect_min")) run.detect_s = *v * 60;
  if (auto v = a.number("restart_min")) run.restart_s = *v * 60;
  if (auto v = a.number("repair_h")) run.repair_s = *v * 3600;
  if (auto v = a.integer("spare_domains"))
    run.spare_domains = check_integer("spare_domains", *v, 0, spec::kMaxGpus);
  if (auto v = a.integer("gpus_per_host"))
    run.gpus_per_host = check_integer("gpus_per_host", *v, 1, 1024);
  run.comm_fraction = a.number("comm_fraction", run.comm_fraction);
  run.degraded_slowdown = a.number("degraded_slowdown");
  if (auto v = a.string("degraded")) run.policy = fail::parse_degraded_policy(*v, "degraded");
  const OptD tokens = a.number("tokens"), tokens_per_s = a.number("tokens_per_s");
  const double amortize_years = a.number("amortize_years", 4);
  const std::string design = a.string("design", "both");
  const std::string sw_name = a.string("switch", spec::NetworkOptions{}.sw);
  const std::string rates_name = a.string("rates", spec::kDefaultFailureRates);
  const std::string catalog_name = a.string("catalog", cost::kDefaultCatalog);
  const bool from_fabric = a.has("model");
  if (!from_fabric)
    for (std::size_t i = 1; i < kStrategyNames.size(); ++i)
      if (a.has(kStrategyNames[i]))
        throw InputError(kStrategyNames[i],
                         "has no effect without model (the network failure "
                         "effects come from the inputs)");
  const std::string pxn = a.string("pxn", "on");
  std::optional<StrategyIn> in;
  if (from_fabric) in = strategy_inputs(a);

  const Interruptible release;
  const spec::Cluster cluster = spec::make_cluster(co);
  fail::validate(run);
  fail::validate(mc);
  check_number("amortize_years", amortize_years, Range::positive(100));
  if (tokens.has_value() != tokens_per_s.has_value())
    throw InputError(tokens ? "tokens_per_s" : "tokens",
                     "give both tokens and tokens_per_s for the time to train");
  if (tokens) check_number("tokens", *tokens, Range::positive(1e30));
  if (tokens_per_s) check_number("tokens_per_s", *tokens_per_s, Range::positive(1e30));
  const std::vector<spec::DesignKind> kinds = fail::parse_designs(design, "design");
  const spec::SwitchSpec sw = spec::load_switch(sw_name, "switch");
  const spec::FailureRates rates = spec::load_failure_rates(rates_name, "rates");
  const cost::Catalog catalog = cost::load_catalog(catalog_name, "catalog");
  fail::GoodputRequest req;
  for (spec::DesignKind kind : kinds) {
    req.designs.push_back(spec::make_network_design(kind, sw));
    spec::apply_routing_options(req.designs.back(), spec::NetworkOptions{});
  }
  req.catalog = catalog;
  req.rates = rates;
  req.run = run;
  req.run.pxn = fail::parse_pxn_mode(pxn, "pxn") == fail::PxnMode::on;
  req.mc = mc;
  if (from_fabric) {
    fail::WhatIfOptions w;
    w.plan.pins = in->pins;
    req.fabric = fail::GoodputRequest::FabricJob{in->model, in->training, w};
  }
  req.amortize_years = amortize_years;
  req.tokens = tokens;
  req.tokens_per_s = tokens_per_s;
  return fail::to_json(fail::goodput_report(cluster, req)).dump();
}

// railsim design --json.
std::string design2(const py::kwargs& kw) {
  const Args a(kw, names({&kClusterNames, &kNetworkNames}, {"catalog", "switch_counting"}));
  const spec::ClusterOptions co = cluster_options(a);
  const spec::NetworkOptions no = network_options(a);
  const std::string catalog = a.string("catalog", std::string(spec::kDefaultCatalog));
  const std::string counting = a.string("switch_counting", "whole");
  const Interruptible release;
  const spec::Cluster c = spec::make_cluster(co);
  const spec::NetworkDesign d = spec::make_network_design(no);
  const cost::DesignReport r =
      cost::evaluate(c, d, spec::load_catalog(catalog, "catalog"),
                     cost::parse_switch_counting(counting, "switch_counting"));
  return cost::design_document(c, r).dump();
}

// railsim plan --json (without --explain).
std::string plan2(const py::kwargs& kw) {
  const Args a(kw, names({&kClusterNames, &kNetworkNames, &kRoutingNames, &kStrategyNames},
                         {"top", "threads"}));
  const spec::ClusterOptions co = cluster_options(a);
  const spec::NetworkOptions no = network_options(a);
  const StrategyIn in = strategy_inputs(a);
  perf::PlanOptions po;
  po.pins = in.pins;
  po.top = static_cast<int>(check_integer("top", a.integer("top", 5), 1, 100000));
  po.threads = check_threads("threads", a.integer("threads", 0));
  const Interruptible release;
  const spec::Cluster c = spec::make_cluster(co);
  const spec::NetworkDesign d = spec::make_network_design(no);
  const perf::PlanResult res =
      perf::plan(perf::make_context(in.model, in.training, c, d, in.placement), po);
  if (res.plans.empty()) throw perf::explain_no_plan(res, in.model, in.training, in.pins, c);
  const perf::RoutingFlip flip = perf::plan_under_contrasting_routing(
      in.model, in.training, c, d, po, in.placement, res.plans.front());
  return perf::plan_document(in.model, in.training, c, d, res, in.placement, &flip).dump();
}

// whatif, optimize and traffic: their arguments read by Args, then the functions above.
std::string whatif_kw(const py::kwargs& kw) {
  const Args a(
      kw, names({&kClusterNames}, {"designs", "switch", "model", "batch", "seq", "stack", "fail",
                                   "fail_random", "seed", "pxn", "sim", "spare_domains"}));
  const spec::ClusterOptions co = cluster_options(a);
  const std::vector<std::string> designs =
      a.strings("designs").value_or(std::vector<std::string>{"rail_optimized", "rail_only"});
  if (designs.empty()) throw InputError("designs", "an empty list: give at least one design");
  const std::string sw = a.string("switch", spec::NetworkOptions{}.sw);
  const std::string model = a.string("model", spec::kDefaultModel);
  const std::int64_t batch = a.integer("batch", spec::kDefaultGlobalBatch);
  const OptI seq = a.integer("seq");
  const std::string stack = a.string("stack", std::string(spec::kDefaultStack));
  const std::vector<std::string> fail = a.strings("fail").value_or(std::vector<std::string>{});
  const std::int64_t random = a.integer("fail_random", 0), seed = a.integer("seed", 1);
  const std::string pxn = a.string("pxn", "on"), sim = a.string("sim", "auto");
  const OptI spares = a.integer("spare_domains");
  const Interruptible release;
  return whatif(co.gpu, co.gpus, co.hb_domain, co.nic_gbps, co.hb_gbytes_per_s, co.nics_per_gpu,
                designs, sw, model, batch, seq, stack, fail, random, seed, pxn, sim, spares);
}

std::string optimize_kw(const py::kwargs& kw) {
  const Args a(kw, {"gpu", "gpus", "models", "batch", "hb_domain", "nic_gbps", "switches",
                    "oversubscription", "within", "of", "max_iteration_time", "max_network_cost"});
  const std::string gpu = a.string("gpu", "H100-SXM");
  const std::int64_t gpus =
      a.has("gpus") ? check_integer("gpus", *a.integer("gpus"), 1, spec::kMaxGpus) : 0;
  const std::vector<std::string> models =
      a.strings("models").value_or(std::vector<std::string>{spec::kDefaultModel});
  const std::int64_t batch = a.integer("batch", spec::kDefaultGlobalBatch);
  const std::vector<std::int64_t> k = a.integers("hb_domain").value_or(std::vector<std::int64_t>{});
  const std::vector<double> nic = a.numbers("nic_gbps").value_or(std::vector<double>{});
  const std::vector<std::string> sws = a.strings("switches").value_or(std::vector<std::string>{});
  const std::vector<double> over = a.numbers("oversubscription").value_or(std::vector<double>{});
  const OptD within = a.number("within"), max_time = a.number("max_iteration_time"),
             max_cost = a.number("max_network_cost");
  const std::string of = a.string("of", "ideal");
  // A list given empty is an error, not the default.
  const bool empty[] = {a.has("models") && models.empty(), a.has("hb_domain") && k.empty(),
                        a.has("nic_gbps") && nic.empty(), a.has("switches") && sws.empty(),
                        a.has("oversubscription") && over.empty()};
  const char* list_names[] = {"models", "hb_domain", "nic_gbps", "switches", "oversubscription"};
  for (std::size_t i = 0; i < std::size(empty); ++i)
    if (empty[i]) throw InputError(list_names[i], "an empty list: give at least one value");
  const Interruptible release;
  return optimize_(gpu, gpus, models, batch, k, nic, sws, over, within, of, max_time, max_cost);
}

py::dict traffic_kw(const py::kwargs& kw) {
  const Args a(kw, names({&kClusterNames}, {"design", "switch", "model", "batch", "seq", "stack",
                                            "tp", "pp", "dp", "ep"}));
  const spec::ClusterOptions co = cluster_options(a);
  return traffic_coo(
      co.gpu, co.gpus, co.hb_domain, co.nic_gbps, co.hb_gbytes_per_s, co.nics_per_gpu,
      a.string("design", "rail_optimized"), a.string("switch", spec::NetworkOptions{}.sw),
      a.string("model", spec::kDefaultModel), a.integer("batch", spec::kDefaultGlobalBatch),
      a.integer("seq"), a.string("stack", std::string(spec::kDefaultStack)), a.integer("tp"),
      a.integer("pp"), a.integer("dp"), a.integer("ep"));
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
  m.def("commands", &command_tables, "Every command: its path, Python name and field table");
  m.def("traffic", &traffic_kw, "railsim traffic: the summary and the pairs as arrays");
  m.def("whatif", &whatif_kw, "railsim fail whatif --json");
  m.def("optimize", &optimize_kw, "railsim optimize --json");
  // Keyword arguments read by Args (the GIL is released inside, once they are read).
  m.def("design", &design2, "railsim design --json");
  m.def("plan", &plan2, "railsim plan --json");
  m.def("estimate", &estimate_, "railsim estimate --json");
  m.def("sim", &sim_, "railsim sim --json");
  m.def("sweep", &sweep_, "railsim sweep --json: the rows");
  m.def("fail_goodput", &goodput_, "railsim fail goodput --json");
}
