// The railsim library from Python: the C++ extension `railsim._railsim`. Each function takes the
// CLI's inputs as keyword arguments and returns the JSON document the CLI prints with --json (as
// text; python/railsim/__init__.py turns it into Python objects), so both give the same fields
// and numbers. Bad input raises railsim.InputError (a ValueError) carrying the CLI's one-line
// message. The GIL is released while the library works.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "railsim/core/error.hpp"
#include "railsim/cost/cost.hpp"
#include "railsim/fail/whatif.hpp"
#include "railsim/optimize/optimize.hpp"
#include "railsim/perf/comm_schedule.hpp"
#include "railsim/perf/search.hpp"
#include "railsim/perf/validation.hpp"
#include "railsim/spec/catalog.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/model.hpp"
#include "railsim/spec/network.hpp"
#include "railsim/spec/preset.hpp"
#include "railsim/spec/stack.hpp"
#include "railsim/traffic/summary.hpp"
#include "railsim/traffic/traffic_matrix.hpp"

namespace py = pybind11;
using namespace railsim;

namespace {

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

// Keyword arguments shared by every function, in the CLI's names.
#define CLUSTER_ARGS                                                                   \
  py::arg("gpu") = "H100-SXM", py::arg("gpus") = 0, py::arg("hb_domain") = py::none(), \
  py::arg("nic_gbps") = py::none(), py::arg("hb_GBps") = py::none(),                   \
  py::arg("nics_per_gpu") = py::none()
#define JOB_ARGS                                                                                   \
  py::arg("model") = "GPT-1T", py::arg("batch") = 4096, py::arg("seq") = py::none(),               \
  py::arg("stack") = "megatron-core-2024", py::arg("dtype") = py::none(),                          \
  py::arg("flash_attention") = py::none(), py::arg("tp") = py::none(), py::arg("pp") = py::none(), \
  py::arg("dp") = py::none(), py::arg("ep") = py::none(), py::arg("micro_batch") = py::none(),     \
  py::arg("interleave") = py::none()

std::string design(const std::string& gpu, std::int64_t gpus, OptI k, OptD nic, OptD hb, OptI m,
                   const std::string& kind, const std::string& sw, double oversub,
                   const std::string& catalog) {
  const spec::Cluster c = cluster(gpu, gpus, k, nic, hb, m);
  const cost::DesignReport r =
      cost::evaluate(c, network(kind, sw, oversub), spec::load_catalog(catalog, "catalog"));
  Json j = cost::to_json(r, false);
  j["gpu"] = c.gpu.name;
  return j.dump();
}

std::string plan(const std::string& gpu, std::int64_t gpus, OptI k, OptD nic, OptD hb, OptI m,
                 const std::string& kind, const std::string& sw, double oversub,
                 const std::string& model, std::int64_t batch, OptI seq, const std::string& stack,
                 OptS dtype, std::optional<bool> flash, OptI tp, OptI pp, OptI dp, OptI ep, OptI mb,
                 OptI v, int top, int threads) {
  const spec::Cluster c = cluster(gpu, gpus, k, nic, hb, m);
  const spec::NetworkDesign d = network(kind, sw, oversub);
  const Job jb = job(model, batch, seq, stack, dtype, flash, tp, pp, dp, ep, mb, v);
  perf::PlanOptions po;
  po.pins = jb.pins;
  po.top = static_cast<int>(check_integer("top", top, 1, 100000));
  po.threads = static_cast<int>(check_integer("threads", threads, 0, 4096));
  const perf::PlanResult res = perf::plan(perf::make_context(jb.model, jb.training, c, d), po);
  if (res.plans.empty()) throw perf::explain_no_plan(res, jb.model, jb.training, jb.pins, c);
  const perf::ErrorBand band = perf::error_band(c.gpu.name, jb.training.stack.name);
  Json plans = Json::array();
  for (const perf::Plan& p : res.plans) {
    plans.push_back(perf::to_json(p.strategy, p.time));
    plans.back()["rank"] = plans.size();
    plans.back()["error_band"] = perf::to_json(band, p.time.iteration_time_s);
  }
  return Json{{"model", jb.model.name},
              {"gpus", c.gpus},
              {"gpu", c.gpu.name},
              {"hb_domain", c.hb_domain},
              {"design", std::string(spec::to_string(d.kind))},
              {"evaluated", res.evaluated},
              {"feasible", res.feasible},
              {"plans", plans}}
      .dump();
}

std::string whatif(const std::string& gpu, std::int64_t gpus, OptI k, OptD nic, OptD hb, OptI m,
                   const std::vector<std::string>& designs, const std::string& sw,
                   const std::string& model, std::int64_t batch, OptI seq, const std::string& stack,
                   const std::vector<std::string>& fail, std::int64_t random, std::int64_t seed,
                   const std::string& pxn, const std::string& sim, std::int64_t spares) {
  const spec::Cluster c = cluster(gpu, gpus, k, nic, hb, m);
  const Job jb = job(model, batch, seq, stack, std::nullopt, std::nullopt, {}, {}, {}, {}, {}, {});
  fail::WhatIfOptions o;
  o.fail = fail;
  o.random = check_integer("fail_random", random, 0, 1'000'000);
  o.seed = static_cast<std::uint64_t>(check_integer("seed", seed, 0, std::int64_t{1} << 53));
  o.pxn = fail::parse_pxn_mode(pxn, "pxn");
  o.sim = fail::parse_sim_mode(sim, "sim");
  o.spare_domains = check_integer("spare_domains", spares, 0, spec::kMaxGpus);
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
  const std::int64_t n = gpus > 0 ? check_integer("gpus", gpus, 1, spec::kMaxGpus)
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
  if (within) t.within = *within / 100;
  t.within_of = spec::parse_design_kind(of, "of");
  t.max_iteration_s = max_iteration_time;
  optimize::Budget b;
  b.max_cost_usd = max_cost;
  return optimize::to_json(optimize::optimize(g, n, ms, s, t, b)).dump();
}

// The traffic of one iteration: the summary `railsim traffic --json` prints (its summary
// fields) and every GPU pair with traffic as NumPy arrays (COO: src, dst, bytes per
// parallelism tp, sp, pp, dp, ep).
py::dict traffic_coo(const std::string& gpu, std::int64_t gpus, OptI k, OptD nic, OptD hb, OptI m,
                     const std::string& kind, const std::string& sw, const std::string& model,
                     std::int64_t batch, OptI seq, const std::string& stack, OptI tp, OptI pp,
                     OptI dp, OptI ep) {
  std::vector<std::int64_t> src, dst;
  std::vector<double> bytes;
  std::string summary;
  {
    py::gil_scoped_release release;
    const spec::Cluster c = cluster(gpu, gpus, k, nic, hb, m);
    const spec::NetworkDesign d = network(kind, sw, 1.0);
    const Job jb = job(model, batch, seq, stack, {}, {}, tp, pp, dp, ep, {}, {});
    perf::Strategy s;
    if (tp || pp || dp) {
      s = perf::default_strategy(jb.model, jb.training, jb.pins, c);
    } else {
      perf::PlanOptions po;
      po.pins = jb.pins;
      po.top = 1;
      const perf::PlanResult r = perf::plan(perf::make_context(jb.model, jb.training, c, d), po);
      if (r.plans.empty()) throw perf::explain_no_plan(r, jb.model, jb.training, jb.pins, c);
      s = r.plans.front().strategy;
    }
    const perf::Placement pl(c, s.degrees());
    const perf::CommSchedule cs = perf::build_comm_schedule(jb.model, jb.training, s, pl);
    const traffic::TrafficMatrix tm = traffic::TrafficMatrix::build(cs, pl, c);
    Json j = traffic::to_json(traffic::summarize(tm, c, d.kind), c);
    j["model"] = jb.model.name;
    j["gpu"] = c.gpu.name;
    j["strategy"] = perf::to_json(s);
    summary = j.dump();
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

}  // namespace

PYBIND11_MODULE(_railsim, m) {
  m.doc() = "railsim: rail-only vs rail-optimized networks for LLM training clusters";
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      input_error(e.what());
    }
  });
  m.def("presets", &spec::preset_names, py::arg("kind"),
        "Names of the shipped presets of a kind: gpus, switches, catalogs, models, failures, "
        "stacks");
  m.def("design", &design, CLUSTER_ARGS, py::arg("design") = "rail_optimized",
        py::arg("switch") = "ETH-51.2T-128x400G", py::arg("oversubscription") = 1.0,
        py::arg("catalog") = spec::kDefaultCatalog, py::call_guard<py::gil_scoped_release>());
  m.def("plan", &plan, CLUSTER_ARGS, py::arg("design") = "rail_optimized",
        py::arg("switch") = "ETH-51.2T-128x400G", py::arg("oversubscription") = 1.0, JOB_ARGS,
        py::arg("top") = 5, py::arg("threads") = 0, py::call_guard<py::gil_scoped_release>());
  m.def("traffic", &traffic_coo, CLUSTER_ARGS, py::arg("design") = "rail_optimized",
        py::arg("switch") = "ETH-51.2T-128x400G", py::arg("model") = "GPT-1T",
        py::arg("batch") = 4096, py::arg("seq") = py::none(),
        py::arg("stack") = "megatron-core-2024", py::arg("tp") = py::none(),
        py::arg("pp") = py::none(), py::arg("dp") = py::none(), py::arg("ep") = py::none());
  m.def("whatif", &whatif, CLUSTER_ARGS,
        py::arg("designs") = std::vector<std::string>{"rail_optimized", "rail_only"},
        py::arg("switch") = "ETH-51.2T-128x400G", py::arg("model") = "GPT-1T",
        py::arg("batch") = 4096, py::arg("seq") = py::none(),
        py::arg("stack") = "megatron-core-2024", py::arg("fail") = std::vector<std::string>{},
        py::arg("fail_random") = 0, py::arg("seed") = 1, py::arg("pxn") = "auto",
        py::arg("sim") = "auto", py::arg("spare_domains") = 0,
        py::call_guard<py::gil_scoped_release>());
  m.def("optimize", &optimize_, py::arg("gpu") = "H100-SXM", py::arg("gpus") = 0,
        py::arg("models") = std::vector<std::string>{"GPT-1T"}, py::arg("batch") = 4096,
        py::arg("hb_domain") = std::vector<std::int64_t>{},
        py::arg("nic_gbps") = std::vector<double>{},
        py::arg("switches") = std::vector<std::string>{},
        py::arg("oversubscription") = std::vector<double>{}, py::arg("within") = py::none(),
        py::arg("of") = "ideal", py::arg("max_iteration_time") = py::none(),
        py::arg("max_network_cost") = py::none(), py::call_guard<py::gil_scoped_release>());
}
