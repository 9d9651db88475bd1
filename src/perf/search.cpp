#include "railsim/perf/search.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>

#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/core/units.hpp"
#include "railsim/perf/zero_bubble.hpp"

namespace railsim::perf {

namespace {

auto key(const Strategy& s) {
  return std::make_tuple(s.tp, s.pp, s.dp, s.ep, s.micro_batch, s.interleave,
                         static_cast<int>(s.recompute), s.sp, s.dist_opt, s.dp_overlap, s.cp,
                         static_cast<int>(s.schedule), s.hsdp, s.offload_layers, s.expert_tp());
}

void divisors(std::int64_t n, std::vector<std::int64_t>& out) {
  out.clear();
  std::vector<std::int64_t> hi;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    out.push_back(d);
    if (d != n / d) hi.push_back(n / d);
  }
  out.insert(out.end(), hi.rbegin(), hi.rend());
}

// The (tp, pp, dp, ep, micro_batch, interleave, cp, etp) shapes to visit; the inner boolean knobs
// are enumerated by the workers.
struct Shape {
  std::int64_t tp, pp, dp, ep, mb, v, cp = 1;
  std::int64_t etp = 0;  // below tp: the experts folded (Strategy::etp); 0 unfolded
};

// The cp degrees to try with this tp (kMaxSearchCp, kMinCpChunk), or the pinned one if it divides
// N / tp.
void cp_degrees(const EstimateContext& ctx, const StrategyPins& pins, std::int64_t rest,
                std::vector<std::int64_t>& out) {
  const std::int64_t seq = ctx.training.seq_len;
  if (pins.cp) {
    out.assign(*pins.cp >= 1 && rest % *pins.cp == 0 ? 1 : 0, *pins.cp);
    return;
  }
  out.assign(1, 1);
  if (!ctx.training.stack.knobs.context_parallel) return;
  for (std::int64_t cp = 2; cp <= kMaxSearchCp && cp <= rest; ++cp)
    if (rest % cp == 0 && seq % (2 * cp) == 0 && seq / (2 * cp) >= kMinCpChunk) out.push_back(cp);
}

// The divisors of n, or the pinned value alone if it is one of them (none otherwise).
void pick(const std::optional<std::int64_t>& pin, std::int64_t n, std::vector<std::int64_t>& v) {
  divisors(n, v);
  if (pin) {
    const bool ok = std::find(v.begin(), v.end(), *pin) != v.end();
    v.assign(ok ? 1 : 0, *pin);
  }
}

// The expert layouts of a tp: unfolded (0) and, where the stack folds an MoE model and tp > 1,
// folded to whole experts on every GPU (etp 1, what NVIDIA's MoE configurations run on the
// stacks that fold). A size between them is visited where etp pins it (every size would multiply
// the folded shapes by up to 3 at tp 8). A pin of etp keeps its own layout alone (tp, or 1 at
// tp 1: unfolded).
void expert_layouts(const EstimateContext& ctx, const StrategyPins& pins, std::int64_t tp,
                    std::vector<std::int64_t>& out) {
  out.clear();
  if (!pins.etp || *pins.etp == tp || (*pins.etp == 1 && tp == 1)) out.push_back(0);
  if (!ctx.model->is_moe() || tp == 1 || !ctx.training.stack.knobs.expert_folding) return;
  const std::int64_t folded = pins.etp ? *pins.etp : 1;
  if (folded < tp && Degrees{.tp = tp, .etp = folded}.etp_divides_tp()) out.push_back(folded);
}

// The expert-parallel degrees of an MoE shape: unfolded (etp 0), the divisors of gcd(dp, E) (ep
// carved from DP); folded to etp, those of gcd(tp cp dp / etp, E). A pin of ep keeps its own
// alone.
void expert_degrees(const EstimateContext& ctx, const StrategyPins& pins, std::int64_t tp,
                    std::int64_t cp, std::int64_t dp, std::int64_t etp,
                    std::vector<std::int64_t>& out) {
  const Model& m = *ctx.model;
  out.clear();
  if (etp > 0)
    pick(pins.ep, std::gcd(tp * cp * dp / etp, m.experts), out);
  else if (m.is_moe())
    pick(pins.ep, std::gcd(dp, m.experts), out);
  else
    out.assign(!pins.ep || *pins.ep == 1 ? 1 : 0, 1);
}

// The shapes of one (tp, cp): every pp, ep (unfolded and folded), micro-batch and interleave.
void shapes_of(const EstimateContext& ctx, const StrategyPins& pins, std::int64_t tp,
               std::int64_t cp, std::vector<Shape>& out) {
  const Model& m = *ctx.model;
  const std::int64_t N = ctx.cluster->gpus / cp;  // tp x pp x dp
  const std::int64_t B = ctx.training.global_batch;
  const spec::StackKnobs& knobs = ctx.training.stack.knobs;
  std::vector<std::int64_t> pps, eps, mbs, vs, etps;
  expert_layouts(ctx, pins, tp, etps);
  // Any pp dividing N / (tp cp) up to the layer count (uneven stages where the stack has them;
  // pp = 1 on a stack without pipelines).
  pick(pins.pp, N / tp, pps);
  pps.erase(std::remove_if(pps.begin(), pps.end(),
                           [&](std::int64_t pp) {
                             return pp > m.layers || (pp > 1 && !knobs.pipeline) ||
                                    (!knobs.uneven_stages && m.layers % pp != 0);
                           }),
            pps.end());
  for (std::int64_t pp : pps) {
    const std::int64_t dp = N / (tp * pp);
    if (pins.dp && *pins.dp != dp) continue;
    if (B % dp != 0) continue;
    pick(pins.micro_batch, B / dp, mbs);
    if (pp > 1) {
      // Any v with pp x v <= layers (chunks of floor or ceil L / (pp v) layers; layers + 2 where
      // the stack's split counts the embedding and the loss).
      vs.clear();
      // Without uneven stages pp x v must divide them; without interleaving v = 1.
      const std::int64_t vmax = knobs.max_interleave(m.layers, pp);
      for (std::int64_t v = 1; v <= vmax; ++v)
        if ((!pins.interleave || *pins.interleave == v) && knobs.splits(m.layers, pp, v))
          vs.push_back(v);
    } else
      vs.assign(!pins.interleave || *pins.interleave == 1 ? 1 : 0, 1);
    for (std::int64_t etp : etps) {
      expert_degrees(ctx, pins, tp, cp, dp, etp, eps);
      for (std::int64_t ep : eps)
        for (std::int64_t mb : mbs)
          for (std::int64_t v : vs) {
            if (v > 1 && (B / (dp * mb)) % pp != 0) continue;
            out.push_back({tp, pp, dp, ep, mb, v, cp, etp});
          }
    }
  }
}

std::vector<Shape> shapes(const EstimateContext& ctx, const StrategyPins& pins) {
  const std::int64_t N = ctx.cluster->gpus;
  std::vector<Shape> out;
  std::vector<std::int64_t> tps, cps;
  pick(pins.tp, std::gcd(ctx.model->heads, N), tps);
  for (std::int64_t tp : tps) {
    cp_degrees(ctx, pins, N / tp, cps);
    for (std::int64_t cp : cps) shapes_of(ctx, pins, tp, cp, out);
  }
  return out;
}
struct Acc {
  std::vector<Plan> top;
  std::int64_t evaluated = 0, feasible = 0;
  double min_mem = std::numeric_limits<double>::infinity();
};

// Keeps the k best plans, in order; with `distinct`, at most one plan per shape (the best of it).
// Deterministic under any merge order: the kept set is the best k of the best plan per shape.
void keep(std::vector<Plan>& top, std::size_t k, const Plan& p, bool distinct) {
  if (distinct) {
    const auto same = std::find_if(
        top.begin(), top.end(), [&](const Plan& q) { return same_shape(q.strategy, p.strategy); });
    if (same != top.end()) {
      if (!plan_before(p, *same)) return;
      top.erase(same);
    }
  }
  if (top.size() == k && !plan_before(p, top.back())) return;
  auto it = std::upper_bound(top.begin(), top.end(), p, plan_before);
  top.insert(it, p);
  if (top.size() > k) top.pop_back();
}

// The boolean knobs of one shape: every one the stack has (pins fix them). With fused (flash)
// attention selective recomputation has nothing to recompute (no s x s tensor is kept): its time
// and memory are recompute none's, so unless it is pinned it is visited once, as none.
template <class Visit>
void visit_knobs(const Shape& sh, const StrategyPins& pins, const spec::StackKnobs& knobs,
                 bool flash, std::int64_t batch, std::int64_t hb_domain, std::int64_t layers,
                 Visit&& visit) {
  Strategy s{sh.tp, sh.pp, sh.dp, sh.ep, sh.mb, sh.v};  // tp, pp, dp, ep, micro-batch, interleave
  s.cp = sh.cp;
  s.etp = sh.etp;
  s.offload_layers = pins.offload_layers.value_or(0);
  const std::int64_t dp_cp = sh.dp * sh.cp;  // the gradients' data-parallel group
  // The pipeline schedules of this shape: 1F1B (interleaved when v > 1), and where the stack has
  // them and the pipeline is not interleaved, ZB-H1, ZB-V and DualPipe (ZB-V with at least two
  // layers per stage, DualPipe with an even pp and an even number of micro-batches,
  // perf::validate's rules); a pin keeps its own alone.
  std::array<PipelineSchedule, std::size(spec::kPipelineSchedules)> schedules{};
  std::size_t n_schedules = 0;
  for (PipelineSchedule sch : spec::kPipelineSchedules) {
    if (pins.schedule && *pins.schedule != sch) continue;
    if (sch != PipelineSchedule::one_f_one_b && (sh.pp == 1 || sh.v > 1 || !knobs.has(sch)))
      continue;
    if (sch == PipelineSchedule::zb_v && !zbv_fits(layers, sh.pp)) continue;
    if (sch == PipelineSchedule::dualpipe && (sh.pp % 2 != 0 || (batch / (sh.dp * sh.mb)) % 2 != 0))
      continue;
    schedules[n_schedules++] = sch;
  }
  // The FSDP shard groups (HSDP) of this shape: the whole group (0) and, where the stack has
  // hybrid sharding, the largest proper divisor g of dp x cp whose group stays in one HB domain
  // (tp x g <= K: the gathers on NVLink, the replicas across domains; ours); a pin keeps its own
  // alone where it divides dp x cp. A group g > 0 needs the distributed optimizer.
  std::array<std::int64_t, 2> groups{0, 0};
  std::size_t n_groups = 1;
  const bool hybrid = knobs.hsdp && sh.ep == 1 && sh.etp == 0;  // perf::validate's rules
  if (pins.hsdp) {
    groups[0] = *pins.hsdp;
    n_groups = *pins.hsdp == 0 || (*pins.hsdp > 0 && dp_cp % *pins.hsdp == 0 && hybrid) ? 1 : 0;
  } else if (hybrid) {
    for (std::int64_t g = std::min(dp_cp - 1, hb_domain / sh.tp); g > 1; --g)
      if (dp_cp % g == 0) {
        groups[n_groups++] = g;
        break;
      }
  }
  for (Recompute r : spec::kRecomputeModes) {
    if (pins.recompute && *pins.recompute != r) continue;
    if (!knobs.has(r)) continue;
    if (r == Recompute::selective && flash && !pins.recompute) continue;
    // Offloaded activations are not recomputed, and only without pipelining (perf::validate).
    if (s.offload_layers > 0 && (r != Recompute::none || sh.pp != 1)) continue;
    s.recompute = r;
    for (int sp = 0; sp < 2; ++sp) {
      if (pins.sp ? (*pins.sp != (sp == 1)) : (sp == 1 && sh.tp == 1)) continue;
      if (sp == 1 && !knobs.sequence_parallel) continue;
      if (sp == 0 && s.folded()) continue;  // folded experts take the SP shard (perf::validate)
      s.sp = sp == 1;
      for (int dopt = 0; dopt < 2; ++dopt) {
        if (pins.dist_opt ? (*pins.dist_opt != (dopt == 1)) : (dopt == 1 && dp_cp == 1)) continue;
        if (dopt == 1 && knobs.distributed_optimizer == spec::Sharding::none) continue;
        s.dist_opt = dopt == 1;
        for (int ov = 0; ov < 2; ++ov) {
          if (pins.dp_overlap ? (*pins.dp_overlap != (ov == 1)) : (ov == 1 && dp_cp == 1)) continue;
          if (ov == 1 && !knobs.dp_overlap) continue;
          s.dp_overlap = ov == 1;
          for (std::size_t i = 0; i < n_schedules; ++i) {
            s.schedule = schedules[i];
            for (std::size_t j = 0; j < n_groups; ++j) {
              if (groups[j] > 0 && dopt == 0) continue;
              s.hsdp = groups[j];
              visit(s);
            }
          }
        }
      }
    }
  }
}

}  // namespace

bool plan_before(const Plan& a, const Plan& b) {
  if (a.time.iteration_time_s != b.time.iteration_time_s)
    return a.time.iteration_time_s < b.time.iteration_time_s;
  return key(a.strategy) < key(b.strategy);
}

std::int64_t count_strategies(const EstimateContext& ctx, const StrategyPins& pins) {
  std::int64_t n = 0;
  for (const Shape& sh : shapes(ctx, pins))
    visit_knobs(
        sh, pins, ctx.training.stack.knobs, ctx.training.flash_attention, ctx.training.global_batch,
        ctx.cluster->hb_domain, ctx.model->layers,
        [&](const Strategy& s) { n += is_valid(*ctx.model, ctx.training, s, *ctx.cluster); });
  return n;
}

std::int64_t estimate_candidates(const EstimateContext& ctx, const StrategyPins& pins) {
  // The loops of shapes() without storing a shape: per (tp, cp, pp), |ep| x sum over micro-
  // batches of the interleave factors allowed, times the boolean knobs of that (tp, dp, cp).
  // Saturates at INT64_MAX.
  const Model& m = *ctx.model;
  const std::int64_t N = ctx.cluster->gpus;
  const std::int64_t B = ctx.training.global_batch;
  const spec::StackKnobs& knobs = ctx.training.stack.knobs;
  std::vector<std::int64_t> tps, cps, pps, eps, mbs, etps;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t total = 0;
  auto add = [&](std::int64_t a, std::int64_t b) {
    std::int64_t p = 0;
    if (__builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(total, p, &total)) total = kMax;
  };
  pick(pins.tp, std::gcd(m.heads, N), tps);
  for (std::int64_t tp : tps) {
    expert_layouts(ctx, pins, tp, etps);
    cp_degrees(ctx, pins, N / tp, cps);
    for (std::int64_t cp : cps) {
      pick(pins.pp, N / (tp * cp), pps);
      for (std::int64_t pp : pps) {
        if (pp > m.layers || (pp > 1 && !knobs.pipeline) ||
            (!knobs.uneven_stages && m.layers % pp != 0))
          continue;
        const std::int64_t dp = N / (tp * cp * pp);
        if ((pins.dp && *pins.dp != dp) || B % dp != 0) continue;
        pick(pins.micro_batch, B / dp, mbs);
        // v = 1, and (pp > 1) the v > 1 that shapes() keeps when pp divides B / (dp mb).
        const std::int64_t v1 = !pins.interleave || *pins.interleave == 1 ? 1 : 0;
        std::int64_t vmore = 0;
        if (pp > 1) {
          const std::int64_t vmax = knobs.max_interleave(m.layers, pp);
          if (pins.interleave)
            vmore = *pins.interleave > 1 && *pins.interleave <= vmax &&
                    knobs.splits(m.layers, pp, *pins.interleave);
          else if (knobs.uneven_stages)
            vmore = std::max<std::int64_t>(0, vmax - 1);
          else
            for (std::int64_t v = 2; v <= vmax; ++v) vmore += knobs.splits(m.layers, pp, v);
        }
        std::int64_t per_ep = 0;
        for (std::int64_t mb : mbs) per_ep += v1 + ((B / (dp * mb)) % pp == 0 ? vmore : 0);
        for (std::int64_t etp : etps) {
          expert_degrees(ctx, pins, tp, cp, dp, etp, eps);
          const auto n_ep = static_cast<std::int64_t>(eps.size());
          std::int64_t variants = 0;
          visit_knobs(Shape{tp, pp, dp, 1, 1, 1, cp, etp}, pins, knobs,
                      ctx.training.flash_attention, B, ctx.cluster->hb_domain, m.layers,
                      [&](const Strategy&) { ++variants; });
          std::int64_t shapes_n = 0;
          if (__builtin_mul_overflow(n_ep, per_ep, &shapes_n)) shapes_n = kMax;
          add(shapes_n, variants);
        }
      }
    }
  }
  return total;
}

bool same_shape(const Strategy& a, const Strategy& b) {
  return a.tp == b.tp && a.cp == b.cp && a.pp == b.pp && a.dp == b.dp && a.ep == b.ep &&
         a.expert_tp() == b.expert_tp();
}

StrategyPins parse_plan_text(std::string_view text, const std::string& option) {
  StrategyPins p;
  bool any_degree = false;
  auto set = [&](auto& slot, auto value, std::string_view word) {
    if (slot) throw InputError(option, fmt::format("'{}' sets a knob given before", word));
    slot = value;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',' || text[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != ',' && text[j] != '\t') ++j;
    if (j == i) break;
    const std::string_view w = text.substr(i, j - i);
    i = j;
    // A degree or count: letters, then a decimal number of at most 9 digits.
    std::size_t digits = 0;
    while (digits < w.size() && std::isalpha(static_cast<unsigned char>(w[digits]))) ++digits;
    const std::string_view name = w.substr(0, digits), number = w.substr(digits);
    if (!name.empty() && !number.empty() && number.size() <= 9 &&
        std::all_of(number.begin(), number.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      const std::int64_t v = std::stoll(std::string(number));
      if (v < 1) throw InputError(option, fmt::format("'{}': a degree is at least 1", w));
      const bool degree =
          name == "tp" || name == "cp" || name == "pp" || name == "dp" || name == "ep";
      if (name == "etp")
        set(p.etp, v, w);
      else if (name == "tp")
        set(p.tp, v, w);
      else if (name == "cp")
        set(p.cp, v, w);
      else if (name == "pp")
        set(p.pp, v, w);
      else if (name == "dp")
        set(p.dp, v, w);
      else if (name == "ep")
        set(p.ep, v, w);
      else if (name == "mb")
        set(p.micro_batch, v, w);
      else if (name == "v")
        set(p.interleave, v, w);
      else
        throw InputError(option, fmt::format("cannot read '{}'; a plan reads as railsim prints "
                                             "it: tp8 pp16 dp64 mb1 v8 selective sp dopt ovl",
                                             printable(w)));
      any_degree = any_degree || degree;
      continue;
    }
    const auto mode =
        std::find_if(std::begin(spec::kRecomputeModes), std::end(spec::kRecomputeModes),
                     [&](Recompute r) { return w == to_string(r); });
    const auto sch =
        std::find_if(std::begin(spec::kPipelineSchedules), std::end(spec::kPipelineSchedules),
                     [&](PipelineSchedule x) { return w == to_string(x); });
    if (mode != std::end(spec::kRecomputeModes))
      set(p.recompute, *mode, w);
    else if (sch != std::end(spec::kPipelineSchedules))
      set(p.schedule, *sch, w);
    else if (w == "sp" || w == "no-sp")
      set(p.sp, w == "sp", w);
    else if (w == "dopt" || w == "no-dopt")
      set(p.dist_opt, w == "dopt", w);
    else if (w == "ovl" || w == "no-ovl")
      set(p.dp_overlap, w == "ovl", w);
    else
      throw InputError(option, fmt::format("cannot read '{}'; a plan reads as railsim prints it: "
                                           "tp8 pp16 dp64 mb1 v8 selective sp dopt ovl",
                                           printable(w)));
  }
  if (!any_degree)
    throw InputError(option, "give the plan's degrees: tp8 pp16 dp64 (tp, cp, pp, dp, ep)");
  return p;
}

Strategy plan_from_text(const Model& m, const Training& tr, std::string_view text,
                        const spec::Cluster& c, const std::string& option) {
  const StrategyPins pins = parse_plan_text(text, option);
  try {
    return default_strategy(m, tr, pins, c);
  } catch (const InputError& e) {  // the knob it names is the plan's, not an option of its own
    throw InputError(option, fmt::format("{} ({})", e.message(), e.field()));
  }
}

PlanResult plan(const EstimateContext& ctx, const PlanOptions& opt) {
  // Bounded before it starts: the shapes are stored and every knob visited, so a model at the
  // allowed maximums (100,000 layers: interleaving up to layers / pp) would take minutes and
  // gigabytes; the count is estimated first and refused over the limit.
  if (opt.max_candidates > 0) {
    const std::int64_t n = estimate_candidates(ctx, opt.pins);
    if (n > opt.max_candidates)
      throw InputError("--max-candidates",
                       fmt::format("the search would visit about {} candidate strategies, more "
                                   "than --max-candidates {}; pin knobs (--tp, --pp, "
                                   "--micro-batch, --interleave, ...) or raise the limit",
                                   n, opt.max_candidates));
  }
  const std::vector<Shape> all = shapes(ctx, opt.pins);
  const std::size_t k = static_cast<std::size_t>(std::max(1, opt.top));
  const spec::GpuSpec& gpu = ctx.cluster->gpu;
  const double hbm = gpu.hbm_bytes;
  // Activation offload is tried, unpinned, on strategies it can run (perf::validate's rules).
  const bool offload_auto = opt.pins.offload_auto && !opt.pins.offload_layers &&
                            ctx.training.stack.knobs.activation_offload && gpu.host_bw_Bps > 0 &&
                            gpu.host_memory_bytes > 0;
  auto offload_candidate = [&](const Strategy& s) {
    return offload_auto && s.pp == 1 && s.recompute == Recompute::none && s.offload_layers == 0;
  };
  auto body = [&](const tbb::blocked_range<std::size_t>& r, Acc acc) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      check_cancelled();
      const Shape& sh = all[i];
      Strategy base;
      base.tp = sh.tp;
      base.pp = sh.pp;
      base.dp = sh.dp;
      base.ep = sh.ep;
      base.cp = sh.cp;
      base.etp = sh.etp;
      Strategy shape{sh.tp, sh.pp, sh.dp, sh.ep, sh.mb, sh.v};
      shape.cp = sh.cp;
      shape.etp = sh.etp;
      shape.sp = shape.folded();  // folded experts need SP; the knob loop keeps it on
      shape.offload_layers = opt.pins.offload_layers.value_or(0);
      if (!is_valid(*ctx.model, ctx.training, shape, *ctx.cluster)) continue;
      const Placement pl(*ctx.cluster, base.degrees(), ctx.placement);
      visit_knobs(
          sh, opt.pins, ctx.training.stack.knobs, ctx.training.flash_attention,
          ctx.training.global_batch, ctx.cluster->hb_domain, ctx.model->layers,
          [&](const Strategy& s) {
            ++acc.evaluated;
            const MemoryUse use = memory_use(*ctx.model, ctx.training, s);
            const double mem = use.total();
            acc.min_mem = std::min(acc.min_mem, mem);
            if (fits(use, gpu)) {
              ++acc.feasible;
              const CommSchedule cs = build_comm_schedule(*ctx.model, ctx.training, s, pl);
              keep(acc.top, k, Plan{s, estimate(ctx, s, pl, cs)}, opt.distinct_shapes);
              return;
            }
            // Too full without recomputation or pipelining: where the stack and GPU can
            // offload activations and --offload-layers does not fix it, the fewest
            // offloaded layers that make it fit (each frees one layer's activations past
            // the first, perf::memory_use).
            if (mem <= hbm || !offload_candidate(s)) return;
            Strategy o = s;
            o.offload_layers = 1;
            const double one = memory_use(*ctx.model, ctx.training, o).activations_bytes;
            o.offload_layers = 2;
            const double layer = one - memory_use(*ctx.model, ctx.training, o).activations_bytes;
            if (!(layer > 0)) return;
            o.offload_layers = 1 + static_cast<std::int64_t>(std::ceil((mem - hbm) / layer));
            if (o.offload_layers >= ctx.model->layers) return;
            // (Counted as the strategy evaluated above, offloaded: count_strategies' count.)
            const MemoryUse use_o = memory_use(*ctx.model, ctx.training, o);
            acc.min_mem = std::min(acc.min_mem, use_o.total());
            if (!fits(use_o, gpu)) return;  // the host memory too
            ++acc.feasible;
            const CommSchedule cs = build_comm_schedule(*ctx.model, ctx.training, o, pl);
            keep(acc.top, k, Plan{o, estimate(ctx, o, pl, cs)}, opt.distinct_shapes);
          });
    }
    return acc;
  };
  auto join = [&](Acc a, const Acc& b) {
    for (const Plan& p : b.top) keep(a.top, k, p, opt.distinct_shapes);
    a.evaluated += b.evaluated;
    a.feasible += b.feasible;
    a.min_mem = std::min(a.min_mem, b.min_mem);
    return a;
  };
  auto run = [&] {
    return tbb::parallel_reduce(tbb::blocked_range<std::size_t>(0, all.size(), 4), Acc{}, body,
                                join);
  };
  Acc acc = with_threads(opt.threads, run);
  PlanResult res;
  res.plans = std::move(acc.top);
  res.evaluated = acc.evaluated;
  res.feasible = acc.feasible;
  res.min_memory_bytes = acc.evaluated > 0 ? acc.min_mem : 0.0;
  res.hbm_bytes = hbm;
  return res;
}

std::optional<Plan> fastest_of_shape(const EstimateContext& ctx, PlanOptions opt,
                                     const Strategy& shape) {
  StrategyPins& p = opt.pins;
  p.tp = shape.tp;
  p.cp = shape.cp;
  p.pp = shape.pp;
  p.dp = shape.dp;
  p.ep = shape.ep;
  if (ctx.model->is_moe()) p.etp = shape.expert_tp();  // folded or not, as the shape has it
  opt.top = 1;
  opt.distinct_shapes = false;
  PlanResult r = plan(ctx, opt);
  if (r.plans.empty()) return std::nullopt;
  return std::move(r.plans.front());
}

Json to_json(const Strategy& s, PlacementKind placement) {
  Json j{{"tp", s.tp},
         {"pp", s.pp},
         {"dp", s.dp},
         {"ep", s.ep},
         {"micro_batch", s.micro_batch},
         {"interleave", s.interleave},
         {"recompute", std::string(to_string(s.recompute))},
         {"sp", s.sp},
         {"dist_opt", s.dist_opt},
         {"dp_overlap", s.dp_overlap},
         {"placement", std::string(to_string(placement))}};
  if (s.cp > 1) j["cp"] = s.cp;  // only with context parallelism: documents without stay as were
  if (s.pp > 1) j["pp_schedule"] = std::string(to_string(s.schedule));
  if (s.folded()) j["etp"] = s.expert_tp();  // only when folded: documents without stay as were
  if (s.hsdp > 0) j["hsdp"] = s.hsdp;        // only with hybrid sharding
  if (s.offload_layers > 0) j["offload_layers"] = s.offload_layers;  // only with offload
  return j;
}

Json to_json(const Strategy& s, const IterationTime& it, PlacementKind placement) {
  const Breakdown& b = it.breakdown;
  const MemoryUse& m = it.memory;
  Json j{{"strategy", to_json(s, placement)},
         {"feasible", it.feasible},
         {"iteration_time_s", it.iteration_time_s},
         {"memory_gib", m.total() / units::kGiB},
         {"mfu", it.mfu},
         {"hfu", it.hfu},
         {"tokens_per_s", it.tokens_per_s},
         {"cross_rail", it.cross_rail},
         {"tp_comm_hidden_s", b.tp_hidden_s},
         {"pp_comm_hidden_s", b.pp_hidden_s},
         {"breakdown",
          {{"compute_s", b.compute_s},
           {"recompute_s", b.recompute_s},
           {"tp_comm_s", b.tp_comm_s},
           {"tp_overlap_s", b.tp_overlap_s},
           {"ep_comm_s", b.ep_comm_s},
           {"pp_comm_s", b.pp_comm_s},
           {"dp_comm_s", b.dp_comm_s},
           {"rail_forwarding_s", b.rail_forwarding_s},
           {"bubble_s", b.bubble_s},
           {"pipeline_overhead_s", b.pipeline_overhead_s},
           {"optimizer_s", b.optimizer_s}}},
         {"memory",
          {{"weights_gib", m.weights_bytes / units::kGiB},
           {"gradients_gib", m.gradients_bytes / units::kGiB},
           {"optimizer_gib", m.optimizer_bytes / units::kGiB},
           {"activations_gib", m.activations_bytes / units::kGiB},
           {"step_gib", m.step_bytes / units::kGiB},
           {"reserved_gib", m.reserved_bytes / units::kGiB}}}};
  if (s.offload_layers > 0) {
    j["breakdown"]["offload_s"] = b.offload_s;
    j["memory"]["host_gib"] = m.host_bytes / units::kGiB;
  }
  if (s.cp > 1) {
    j["breakdown"]["cp_comm_s"] = b.cp_comm_s;
    j["cp_comm_hidden_s"] = b.cp_hidden_s;
  }
  return j;
}

Json comm_to_json(const CommSchedule& cs, const Placement& pl, const NetworkModel& net) {
  Json a = Json::array();
  for (const CommOp& op : cs) {
    const GroupShape g = pl.shape(op.axis);
    const CollectiveTime t = collective_time(op, pl, net);
    a.push_back(Json{{"parallelism", std::string(to_string(op.parallelism))},
                     {"op", std::string(to_string(op.op))},
                     {"axis", std::string(to_string(op.axis))},
                     {"algorithm", std::string(to_string(op.algorithm))},
                     {"phase", std::string(to_string(op.phase))},
                     {"bytes", op.bytes},
                     {"count", op.count},
                     {"wrap_count", op.wrap_count},
                     {"overlappable", op.overlappable},
                     {"group",
                      {{"size", g.size},
                       {"per_domain", g.per_domain},
                       {"domains", g.domains},
                       {"rail_aligned", g.rail_aligned}}},
                     {"time_s", t.time_s},
                     {"forwarding_s", t.forwarding_s},
                     {"cross_rail", t.cross_rail}});
  }
  return a;
}

void check_pins(const Model& m, const Training& tr, const StrategyPins& p) {
  // Degrees and sizes are positive whoever pins them (the CLI checks its options; a library
  // caller's tp = 0 divided by zero in default_strategy).
  auto positive = [](const std::optional<std::int64_t>& v, const char* option) {
    if (v && *v < 1)
      throw InputError(option, fmt::format("got {}, expected a positive integer", *v));
  };
  positive(p.tp, "--tp");
  positive(p.pp, "--pp");
  positive(p.dp, "--dp");
  positive(p.ep, "--ep");
  positive(p.micro_batch, "--micro-batch");
  positive(p.interleave, "--interleave");
  positive(p.cp, "--cp");
  positive(p.etp, "--etp");
  if (p.etp && !tr.stack.knobs.expert_folding && (p.tp ? *p.etp < *p.tp : *p.etp == 1))
    throw InputError("--etp",
                     fmt::format("stack {} has no expert folding (use etp = tp)", tr.stack.name));
  if (p.offload_layers && *p.offload_layers != 0 && !tr.stack.knobs.activation_offload)
    throw InputError("--offload-layers",
                     fmt::format("stack {} has no activation offload (use 0)", tr.stack.name));
  if (p.hsdp && *p.hsdp > 0 && !tr.stack.knobs.hsdp)
    throw InputError("--hsdp",
                     fmt::format("stack {} has no hybrid sharding (use 0)", tr.stack.name));
  // Only the pinned knobs (the others at values every stack runs), through validate_stack.
  Strategy s;
  s.pp = p.pp.value_or(1);
  s.interleave = p.interleave.value_or(1);
  s.recompute = p.recompute.value_or(Recompute::none);
  s.sp = p.sp.value_or(false);
  s.dist_opt = p.dist_opt.value_or(false);
  s.dp_overlap = p.dp_overlap.value_or(false);
  s.cp = p.cp.value_or(1);
  if (p.schedule && !tr.stack.knobs.has(*p.schedule))
    throw InputError("--pp-schedule", fmt::format("stack {} has no {} schedule (use 1f1b)",
                                                  tr.stack.name, to_string(*p.schedule)));
  if (s.pp > m.layers) return;  // default_strategy names it
  validate_stack(m, tr, s);
}

Strategy default_strategy(const Model& m, const Training& tr, const StrategyPins& p,
                          const spec::Cluster& c) {
  check_pins(m, tr, p);
  Strategy s;
  std::int64_t tp_default = 1;
  for (std::int64_t t = std::min<std::int64_t>(8, c.hb_domain); t >= 1; --t)
    if (m.heads % t == 0 && c.gpus % t == 0) {
      tp_default = t;
      break;
    }
  s.tp = p.tp.value_or(tp_default);
  s.pp = p.pp.value_or(1);
  s.cp = p.cp.value_or(1);
  // Model-side rules first, so that the error names the knob that is wrong.
  validate_tp_pp(m, s);
  validate_cp(tr, s);
  if (p.dp) {
    s.dp = *p.dp;
  } else if (s.cp > 1) {
    if (c.gpus % (s.tp * s.cp * s.pp) != 0)
      throw InputError("--cp",
                       fmt::format("tp x cp x pp = {} x {} x {} = {} does not divide the {} "
                                   "GPUs",
                                   s.tp, s.cp, s.pp, s.tp * s.cp * s.pp, c.gpus));
    s.dp = c.gpus / (s.tp * s.cp * s.pp);
  } else {
    if (c.gpus % (s.tp * s.pp) != 0)
      throw InputError(p.pp ? "--pp" : "--tp",
                       fmt::format("tp x pp = {} x {} = {} does not divide the {} GPUs", s.tp, s.pp,
                                   s.tp * s.pp, c.gpus));
    s.dp = c.gpus / (s.tp * s.pp);
  }
  s.ep = p.ep.value_or(1);
  s.micro_batch = p.micro_batch.value_or(1);
  s.interleave = p.interleave.value_or(1);
  // The stack's defaults for the knobs not given.
  const spec::StackDefaults& def = tr.stack.defaults;
  s.recompute = p.recompute.value_or(def.recompute);
  s.sp = p.sp.value_or(def.sp && s.tp > 1);
  s.dist_opt = p.dist_opt.value_or(def.dist_opt && s.dp * s.cp > 1);
  s.dp_overlap = p.dp_overlap.value_or(def.dp_overlap);
  s.schedule = p.schedule.value_or(PipelineSchedule::one_f_one_b);
  s.hsdp = p.hsdp.value_or(0);
  s.offload_layers = p.offload_layers.value_or(0);
  s.etp = p.etp && *p.etp != s.tp ? *p.etp : 0;
  if (p.offload_auto)
    throw InputError("--offload-layers",
                     "auto is a search (plan, compare, sweep, optimize): give a count of layers");
  validate(m, tr, s, c);
  return s;
}

InputError explain_no_plan(const PlanResult& r, const Model& m, const Training& tr,
                           const StrategyPins& pins, const spec::Cluster& c) {
  try {
    check_pins(m, tr, pins);  // a knob the stack lacks
  } catch (const InputError& e) {
    return e;
  }
  if (r.evaluated > 0)
    return InputError("--model",
                      fmt::format("no feasible strategy: the smallest memory need is {:.1f} GiB "
                                  "per GPU, the GPU has {:.1f} GiB",
                                  r.min_memory_bytes / units::kGiB, r.hbm_bytes / units::kGiB));
  const bool pinned = pins.tp || pins.pp || pins.dp || pins.ep || pins.micro_batch ||
                      pins.interleave || pins.cp || pins.schedule || pins.hsdp ||
                      pins.offload_layers || pins.etp;
  if (pinned) {
    try {
      (void)default_strategy(m, tr, pins, c);  // names the pinned knob that cannot work
    } catch (const InputError& e) {
      return e;
    }
  }
  // Otherwise the batch cannot be split: dp = N / (tp pp) never divides it. The dps a cluster of
  // n GPUs offers: n / (tp pp) with tp dividing the heads and pp at most the layers.
  auto splits = [&](std::int64_t n, auto&& take) {
    for (std::int64_t tp = 1; tp <= std::gcd(m.heads, n); ++tp) {
      if (m.heads % tp != 0 || n % tp != 0) continue;
      const std::int64_t rest = n / tp;
      for (std::int64_t pp = 1; pp <= std::min(m.layers, rest); ++pp)
        if (rest % pp == 0 && take(n / (tp * pp))) return true;
    }
    return false;
  };
  std::int64_t min_dp = c.gpus;
  splits(c.gpus, [&](std::int64_t dp) {
    min_dp = std::min(min_dp, dp);
    return false;
  });
  // What would split: the nearest batches (multiples of the smallest dp) and the nearest GPU
  // counts in whole HB domains whose some dp divides this batch (ours: validity, not speed).
  const std::int64_t b = tr.global_batch;
  const std::int64_t below = b / min_dp * min_dp, above = below + min_dp;
  std::string batches =
      below > 0 ? fmt::format("{} or {}", below, above) : fmt::format("{}", above);
  const std::int64_t k = c.hb_domain;
  auto fits = [&](std::int64_t n) {
    return n >= k && splits(n, [&](std::int64_t dp) { return b % dp == 0; });
  };
  std::int64_t fewer = 0, more = 0;
  for (std::int64_t d = 1; d <= 4096 && (fewer == 0 || more == 0); ++d) {
    const std::int64_t lo = c.gpus - d * k, hi = c.gpus + d * k;
    if (fewer == 0 && lo >= k && fits(lo)) fewer = lo;
    if (more == 0 && hi <= spec::kMaxGpus && fits(hi)) more = hi;
  }
  std::string counts;
  if (fewer > 0 && more > 0)
    counts = fmt::format("; or {} or {} GPUs ({} or {} HB domains of {})", fewer, more, fewer / k,
                         more / k, k);
  else if (fewer > 0 || more > 0)
    counts = fmt::format("; or {} GPUs", fewer > 0 ? fewer : more);
  return InputError(
      "--batch",
      fmt::format("no valid strategy: the global batch of {} sequences is not divisible by any "
                  "dp = N / (tp x pp) with tp dividing the {} heads and pp at most the {} layers "
                  "(the smallest such dp on {} GPUs is {}; use a multiple of it{}): a batch of {} "
                  "splits{}",
                  b, m.heads, m.layers, c.gpus, min_dp, pinned ? " or other pinned knobs" : "",
                  batches, counts));
}

spec::Routing contrasting_routing(spec::Routing r) {
  return r == spec::Routing::ecmp ? spec::Routing::adaptive : spec::Routing::ecmp;
}

namespace {
// `d` under routing `r`, chosen rather than defaulted.
spec::NetworkDesign routed_as(spec::NetworkDesign d, spec::Routing r) {
  d.routing = r;
  d.routing_default = false;
  return d;
}
}  // namespace

std::vector<BetterSize> better_sizes(const Model& m, const Training& tr, const spec::Cluster& job,
                                     const spec::Cluster& network, const spec::NetworkDesign& d,
                                     const PlanOptions& opt, PlacementKind placement,
                                     const Plan& best) {
  std::vector<BetterSize> out;
  // Only where the plan shows it: a size that divides badly leaves few micro-batches per
  // pipeline or forces a deep one (the bubble grows), or a DP group of an awkward size whose
  // reduction is exposed (ours: the two over a quarter of the iteration).
  if (best.time.breakdown.bubble_s + best.time.breakdown.dp_comm_s <=
      kBadSizeShare * best.time.iteration_time_s)
    return out;
  const std::int64_t b = tr.global_batch, k = job.hb_domain, domains = job.domains();
  const double per_gpu = best.time.tokens_per_s / static_cast<double>(job.gpus);
  // What splits a batch over the GPUs is what they have in common: the candidates within 12.5%
  // that share more factors with the GPU count than the batch asked for, most first, then the
  // nearest (a few plan searches).
  auto pick = [](std::int64_t from, std::int64_t lo, std::int64_t hi, std::int64_t with,
                 std::int64_t step, std::size_t n) {
    std::vector<std::pair<std::int64_t, std::int64_t>> c;  // (gcd, value)
    const std::int64_t base = std::gcd(from * step, with);
    const std::int64_t stride = std::max<std::int64_t>(1, (hi - lo) / 20000);
    for (std::int64_t v = lo; v <= hi; v += stride)
      if (v != from && std::gcd(v * step, with) > base) c.emplace_back(std::gcd(v * step, with), v);
    std::sort(c.begin(), c.end(), [&](const auto& x, const auto& y) {  // a total order
      if (x.first != y.first) return x.first > y.first;
      if (std::abs(x.second - from) != std::abs(y.second - from))
        return std::abs(x.second - from) < std::abs(y.second - from);
      return x.second < y.second;
    });
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < c.size() && out.size() < n; ++i) out.push_back(c[i].second);
    return out;
  };
  const std::vector<std::int64_t> batches =
      pick(b, std::max<std::int64_t>(1, b - b / 8), b + b / 8, job.gpus, 1, 3);
  // Jobs of whole domains down to 12.5% fewer: the domain counts sharing most with the batch.
  std::vector<std::int64_t> jobs;
  for (std::int64_t dd :
       pick(domains, std::max<std::int64_t>(1, domains - domains / 8), domains - 1, b, k, 2))
    jobs.push_back(dd * k);
  PlanOptions one = opt;
  one.top = 1;
  one.distinct_shapes = false;
  auto consider = [&](std::int64_t batch, const spec::Cluster& on) {
    Training t = tr;
    t.global_batch = batch;
    try {
      const PlanResult r = plan(make_context(m, t, on, network, d, placement), one);
      if (r.plans.empty()) return;
      const Plan& p = r.plans.front();
      const double gain = p.time.tokens_per_s / static_cast<double>(on.gpus) / per_gpu - 1;
      const bool more_in_all = p.time.tokens_per_s >= best.time.tokens_per_s;
      if (gain >= kBetterSizeGain && (on.gpus == job.gpus || more_in_all))
        out.push_back({batch, on.gpus, p, gain});
    } catch (const InputError&) {  // a size the pins or the stack cannot run: not a suggestion
    }
  };
  for (std::int64_t batch : batches) consider(batch, job);
  for (std::int64_t gpus : jobs) consider(b, spec::job_cluster(job, gpus));
  std::sort(out.begin(), out.end(), [](const BetterSize& x, const BetterSize& y) {
    if (x.gain != y.gain) return x.gain > y.gain;  // ties: the larger job, then the smaller batch
    return x.job_gpus != y.job_gpus ? x.job_gpus > y.job_gpus : x.batch < y.batch;
  });
  if (out.size() > 3) out.resize(3);
  return out;
}

RoutingFlip plan_under_contrasting_routing(const Model& m, const Training& tr,
                                           const spec::Cluster& c, const spec::NetworkDesign& d,
                                           const PlanOptions& opt, PlacementKind placement,
                                           const Plan& best, const spec::Cluster* network) {
  RoutingFlip f;
  f.routing = contrasting_routing(d.routing);
  // One context (and so one link-load census) for the search and the estimate below.
  const EstimateContext ctx =
      make_context(m, tr, c, network ? *network : c, routed_as(d, f.routing), placement);
  PlanOptions one = opt;
  one.top = 1;
  const PlanResult r = plan(ctx, one);
  if (!r.plans.empty()) f.best = r.plans.front();
  f.flips = f.best && key(f.best->strategy) != key(best.strategy);
  if (f.flips)
    f.line = fmt::format(
        "the routing decides the plan: under --routing {} the best is {}, {:.3f} s, and this "
        "one takes {:.3f} s there",
        spec::to_string(f.routing), describe(f.best->strategy), f.best->time.iteration_time_s,
        estimate(ctx, best.strategy).iteration_time_s);
  return f;
}

Json to_json(const RoutingFlip& f) {
  Json j{{"routing", std::string(spec::to_string(f.routing))}, {"flips", f.flips}};
  if (f.best) {
    j["best_plan"] = describe(f.best->strategy);
    j["iteration_time_s"] = f.best->time.iteration_time_s;
  } else {
    j["best_plan"] = nullptr;
  }
  return j;
}

std::string_view rail_only_verdict(double pct) {
  if (pct < -100 * kVerdictBand) return "faster";
  if (pct > 100 * kVerdictBand) return "slower";
  return "as fast";
}

VerdictFlip rail_only_under_contrasting_routing(const Model& m, const Training& tr,
                                                const spec::Cluster& c,
                                                const spec::NetworkDesign& d, double here_pct,
                                                const spec::Cluster* network) {
  VerdictFlip f;
  f.routing = contrasting_routing(d.routing);
  PlanOptions one;
  one.top = 1;
  std::optional<double> seconds[2];
  const spec::DesignKind kinds[2] = {spec::DesignKind::rail_optimized, spec::DesignKind::rail_only};
  for (int i = 0; i < 2; ++i) {
    spec::NetworkDesign other = routed_as(d, f.routing);
    other.kind = kinds[i];
    const PlanResult r = plan(make_context(m, tr, c, network ? *network : c, other), one);
    if (!r.plans.empty()) seconds[i] = r.plans.front().time.iteration_time_s;
  }
  if (!seconds[0] || !seconds[1]) return f;
  f.there_pct = 100 * (*seconds[1] / *seconds[0] - 1);
  const std::string_view here = rail_only_verdict(here_pct);
  const std::string_view there = rail_only_verdict(*f.there_pct);
  f.flips = here != there;
  if (f.flips)
    f.line = fmt::format(
        "the routing decides the verdict: against rail_optimized, rail_only is {} here "
        "({:+.2f}%) and {} under --routing {} ({:+.2f}%)",
        here, here_pct, there, spec::to_string(f.routing), *f.there_pct);
  return f;
}

Json to_json(const VerdictFlip& f) {
  Json j{{"routing", std::string(spec::to_string(f.routing))}, {"flips", f.flips}};
  if (f.there_pct) {
    j["vs_rail_optimized_pct"] = *f.there_pct;
    j["verdict"] = std::string(rail_only_verdict(*f.there_pct));
  } else {
    j["vs_rail_optimized_pct"] = nullptr;
  }
  return j;
}

}  // namespace railsim::perf
