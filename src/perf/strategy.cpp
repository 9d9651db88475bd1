#include "railsim/perf/strategy.hpp"

#include <fmt/format.h>

#include "railsim/core/error.hpp"
#include "railsim/perf/pipeline_order.hpp"
#include "railsim/perf/zero_bubble.hpp"

namespace railsim::perf {

namespace {
constexpr std::int64_t kMaxDegree = spec::kMaxGpus;

// What the software stack can run (spec/stack.hpp): the first knob it lacks.
template <class Fail>
bool check_stack(const Model& m, const Training& tr, const Strategy& s, Fail&& fail) {
  if (s.pp < 1 || s.interleave < 1) return true;  // check() names the bad degree
  const spec::Stack& st = tr.stack;
  if (s.pp > 1 && !st.knobs.pipeline)
    return fail("--pp", fmt::format("stack {} has no pipeline parallelism (pp = {}; use pp = 1)",
                                    st.name, s.pp));
  if (s.interleave > 1 && !st.knobs.interleave)
    return fail("--interleave",
                fmt::format("stack {} has no interleaved schedule (interleave = {}; use 1)",
                            st.name, s.interleave));
  if (!st.knobs.uneven_stages && m.layers % s.pp != 0)
    return fail("--pp", fmt::format("stack {} has no uneven stages: pp = {} must divide the {} "
                                    "layers of {}",
                                    st.name, s.pp, m.layers, m.name));
  const std::int64_t units = st.knobs.pipeline_units(m.layers);
  if (!st.knobs.uneven_stages && s.interleave > 1 && units % (s.pp * s.interleave) != 0)
    return fail(
        "--interleave",
        fmt::format("stack {} has no uneven stages: pp x interleave = {} x {} = {} must "
                    "divide the {} layers of {}{}",
                    st.name, s.pp, s.interleave, s.pp * s.interleave, m.layers, m.name,
                    units > m.layers ? fmt::format(" and its embedding and loss ({})", units)
                                     : std::string()));
  if (s.sp && !st.knobs.sequence_parallel)
    return fail("--sp", fmt::format("stack {} has no sequence parallelism (use off)", st.name));
  if (!st.knobs.has(s.recompute)) {
    std::string modes;
    for (Recompute r : spec::kRecomputeModes)
      if (st.knobs.has(r)) modes += fmt::format("{}{}", modes.empty() ? "" : ", ", to_string(r));
    return fail("--recompute", fmt::format("stack {} has no {} recompute (it has {})", st.name,
                                           to_string(s.recompute), modes));
  }
  if (s.dist_opt && st.knobs.distributed_optimizer == spec::Sharding::none)
    return fail("--dist-opt",
                fmt::format("stack {} has no distributed optimizer (use off)", st.name));
  if (s.dp_overlap && !st.knobs.dp_overlap)
    return fail("--dp-overlap",
                fmt::format("stack {} does not overlap the DP reduction with the backward pass "
                            "(use off)",
                            st.name));
  if (s.cp > 1 && !st.knobs.context_parallel)
    return fail("--cp", fmt::format("stack {} has no context parallelism (cp = {}; use cp = 1)",
                                    st.name, s.cp));
  if (s.hsdp != 0) {
    if (!st.knobs.hsdp)
      return fail("--hsdp", fmt::format("stack {} has no hybrid sharding (use 0)", st.name));
    if (!s.dist_opt)
      return fail("--hsdp",
                  "hybrid sharding shards with the distributed optimizer: needs "
                  "--dist-opt on");
    if (s.ep > 1)
      return fail("--hsdp", "hybrid sharding with expert parallelism is not modelled (use ep 1)");
    if (s.folded())
      return fail("--hsdp", "hybrid sharding with folded experts is not modelled (use etp = tp)");
    if (s.hsdp < 1 || s.dp < 1 || s.cp < 1 || (s.dp * s.cp) % s.hsdp != 0)
      return fail("--hsdp", fmt::format("the shard group of {} must divide dp x cp = {} x {}",
                                        s.hsdp, s.dp, s.cp));
  }
  if (s.etp != 0 && s.etp != s.tp) {
    if (!s.degrees().etp_divides_tp())
      return fail("--etp", fmt::format("got {}, expected a divisor of tp = {} (1: whole experts on "
                                       "every GPU; tp: the experts split like the dense FFN)",
                                       s.etp, s.tp));
    if (!m.is_moe())
      return fail("--etp", fmt::format("etp = {} folds the expert layers of a mixture-of-experts "
                                       "model; {} is dense",
                                       s.etp, m.name));
    if (!st.knobs.expert_folding)
      return fail("--etp",
                  fmt::format("stack {} has no expert folding (use etp = tp = {})", st.name, s.tp));
    if (!s.sp)
      return fail("--etp",
                  "folded expert layers take the sequence-parallel shard of the tokens: "
                  "needs --sp on");
  }
  if (s.offload_layers != 0) {
    // Megatron-Core's conditions on cpu_offloading (TransformerConfig).
    if (!st.knobs.activation_offload)
      return fail("--offload-layers",
                  fmt::format("stack {} has no activation offload (use 0)", st.name));
    if (s.offload_layers < 0 || s.offload_layers >= m.layers)
      return fail("--offload-layers",
                  fmt::format("got {}, expected 0 to {} (fewer than the {} layers of {})",
                              s.offload_layers, m.layers - 1, m.layers, m.name));
    if (s.pp != 1)
      return fail("--offload-layers",
                  fmt::format("activation offload runs without pipeline parallelism (pp = {}; "
                              "use pp 1)",
                              s.pp));
    if (s.recompute != Recompute::none)
      return fail("--offload-layers",
                  fmt::format("activation offload runs without recomputation (recompute {}; "
                              "use none)",
                              to_string(s.recompute)));
  }
  if (!st.knobs.has(s.schedule))
    return fail("--pp-schedule", fmt::format("stack {} has no {} schedule (use 1f1b)", st.name,
                                             to_string(s.schedule)));
  if (s.schedule != PipelineSchedule::one_f_one_b) {
    if (s.pp < 2)
      return fail("--pp-schedule",
                  fmt::format("{} is a pipeline schedule: it needs pp > 1 (pp = {})",
                              to_string(s.schedule), s.pp));
    if (s.interleave > 1)
      return fail("--pp-schedule",
                  fmt::format("{} runs without interleaving (interleave = {}; use 1)",
                              to_string(s.schedule), s.interleave));
    // ZB-V: zbv_fits, the failing part named (its order is timed pass by pass, perf::zbv_idle).
    if (s.schedule == PipelineSchedule::zb_v && !zbv_fits(m.layers, s.pp)) {
      if (s.pp > kZbvMaxStages)
        return fail("--pp-schedule",
                    fmt::format("zb-v is timed up to pp {} (pp = {})", kZbvMaxStages, s.pp));
      return fail("--pp-schedule",
                  fmt::format("zb-v cuts the model into 2 pp = {} chunks but it has {} layers "
                              "(use pp <= {})",
                              2 * s.pp, m.layers, m.layers / 2));
    }
    // DualPipe feeds half the micro-batches from each end of a pipeline folded in two (DeepSeek-
    // V3 report, Sec. 3.2.1: stages and micro-batches divisible by 2).
    // (Nested division: no overflow before the batch rule has been checked.)
    const std::int64_t mb =
        s.dp >= 1 && s.micro_batch >= 1 ? tr.global_batch / s.dp / s.micro_batch : 0;
    if (s.schedule == PipelineSchedule::dualpipe && (s.pp % 2 != 0 || mb % 2 != 0))
      return fail("--pp-schedule",
                  fmt::format("dualpipe needs an even pp and an even number of micro-batches "
                              "(pp = {}, {} micro-batches)",
                              s.pp, mb));
  }
  // Megatron-Core's combined 1F1B needs virtual pipeline stages when pipelined and is a 1F1B
  // schedule (DualPipe overlaps the all-to-all its own way).
  if (st.defaults.ep_overlap && m.is_moe() && s.ep > 1) {
    if (s.schedule == PipelineSchedule::zb_h1 || s.schedule == PipelineSchedule::zb_v)
      return fail("--ep-overlap",
                  fmt::format("combined 1F1B is a 1F1B schedule: it does not run with {} (use "
                              "--pp-schedule 1f1b, or --ep-overlap off)",
                              to_string(s.schedule)));
    if (s.schedule == PipelineSchedule::one_f_one_b && s.pp > 1 && s.interleave < 2)
      return fail("--ep-overlap",
                  fmt::format("combined 1F1B needs interleaving when pipelined (pp = {}, "
                              "interleave 1; use --interleave 2 or more, or --ep-overlap off)",
                              s.pp));
  }
  if (tr.flash_attention && !st.knobs.flash_attention)
    return fail("--flash-attention",
                fmt::format("stack {} has no flash attention (use off)", st.name));
  if (tr.compile && !st.knobs.compile)
    return fail("--compile", fmt::format("stack {} has no torch.compile (use off)", st.name));
  if (!st.knobs.has(tr.dtype))
    return fail("--dtype", fmt::format("stack {} has no {} training (it has {})", st.name,
                                       spec::to_string(tr.dtype), spec::dtypes_of(st.knobs)));

  return true;
}

// The model's rules on tp and pp.
template <class Fail>
bool check_tp_pp(const Model& m, const Strategy& s, Fail&& fail) {
  if (m.heads % s.tp != 0)
    return fail("--tp", fmt::format("tp = {} must divide the {} attention heads of {}", s.tp,
                                    m.heads, m.name));
  if (s.pp > m.layers)
    return fail("--pp",
                fmt::format("pp = {} is above the {} layers of {}", s.pp, m.layers, m.name));
  // The last stage holds the MTP modules in place of two layers each (detail::stage_shape).
  if (s.pp > 1 && m.mtp_layers > 0 &&
      perf::model_stage_layers(m.layers, m.mtp_layers, s.pp, s.pp - 1) < 0)
    return fail("--pp", fmt::format("pp = {} leaves the last stage of {} room for {} layer(s), "
                                    "less than its {} multi-token-prediction module(s) take "
                                    "(two layers each: the module's layer and output head); "
                                    "pp must be at most {}",
                                    s.pp, m.name, m.pipeline_layers() / s.pp, m.mtp_layers,
                                    m.pipeline_layers() / (2 * m.mtp_layers)));
  return true;
}

// Context parallelism splits every sequence into 2 cp chunks (Megatron-Core's load balancing of
// causal attention): the sequence must divide into them.
template <class Fail>
bool check_cp(const Training& tr, const Strategy& s, Fail&& fail) {
  if (s.cp > 1 && tr.seq_len % (2 * s.cp) != 0)
    return fail("--cp", fmt::format("the sequence of {} tokens is not divisible by 2 x cp = {} "
                                    "(context parallelism splits it into 2 cp chunks)",
                                    tr.seq_len, 2 * s.cp));
  return true;
}

// The degrees' product with context parallelism: tp x cp x pp x dp = N (--cp names it: the
// product without cp is the familiar one).
template <class Fail>
bool check_world_cp(const Strategy& s, const spec::Cluster& c, Fail&& fail) {
  std::int64_t a = 0, b = 0, world = 0;
  if (__builtin_mul_overflow(s.tp, s.cp, &a) || __builtin_mul_overflow(a, s.pp, &b) ||
      __builtin_mul_overflow(b, s.dp, &world) || world != c.gpus)
    return fail("--cp", fmt::format("tp x cp x pp x dp = {} x {} x {} x {} must equal the {} GPUs "
                                    "(cp must divide N / (tp x pp x dp))",
                                    s.tp, s.cp, s.pp, s.dp, c.gpus));
  return true;
}

// One check, shared by validate() (which throws) and is_valid() (which does not): returns the
// first violated rule, or nullptr. `fail` builds the error only when asked to.
template <class Fail>
bool check(const Model& m, const Training& tr, const Strategy& s, const spec::Cluster& c,
           Fail&& fail) {
  auto deg = [&](const char* opt, std::int64_t v, std::int64_t max) {
    if (v < 1 || v > max)
      return fail(opt, fmt::format("got {}, expected an integer from 1 to {}", v, max));
    return true;
  };
  if (!deg("--tp", s.tp, kMaxDegree) || !deg("--pp", s.pp, kMaxDegree) ||
      !deg("--dp", s.dp, kMaxDegree) || !deg("--ep", s.ep, kMaxDegree) ||
      !deg("--cp", s.cp, kMaxDegree) ||
      !deg("--micro-batch", s.micro_batch, std::int64_t{1} << 30) ||
      !deg("--interleave", s.interleave, 1 << 16) ||
      !deg("--batch", tr.global_batch, std::int64_t{1} << 40) ||
      !deg("--seq", tr.seq_len, std::int64_t{1} << 24))
    return false;
  if (!check_tp_pp(m, s, fail) || !check_cp(tr, s, fail)) return false;

  if (!check_stack(m, tr, s, fail)) return false;
  if (s.interleave > 1 && s.pp == 1)
    return fail("--interleave",
                fmt::format("interleave = {} needs pipeline parallelism (pp > 1)", s.interleave));
  // Model chunks get floor or ceil of L / (pp v) layers, so every chunk needs one layer (or, on
  // a stack whose split counts them, the embedding or the loss).
  const std::int64_t units = tr.stack.knobs.pipeline_units(m.layers);
  if (s.interleave > 1 && s.pp * s.interleave > units) {
    // Where the embedding and loss chunks would make room (Llama 3 405B's 16 x 8 chunks over 126
    // layers), say which stack knob allows them.
    spec::StackKnobs with_chunks = tr.stack.knobs;
    with_chunks.embedding_loss_chunks = true;
    const bool room_with_chunks = !tr.stack.knobs.embedding_loss_chunks &&
                                  s.pp * s.interleave <= with_chunks.pipeline_units(m.layers);
    return fail("--interleave",
                fmt::format("interleave = {} makes pp x interleave = {} model chunks, more than "
                            "the {} layers of {}{}{}",
                            s.interleave, s.pp * s.interleave, m.layers, m.name,
                            units > m.layers ? " and its embedding and loss chunks" : "",
                            room_with_chunks
                                ? fmt::format("; stack {} does not count the embedding and the "
                                              "loss as a chunk each (a stack with "
                                              "\"embedding_loss_chunks\": true does)",
                                              tr.stack.name)
                                : std::string()));
  }
  // Each degree is at most 2^24, so the product can pass 2^63: multiply with overflow checks.
  if (s.cp > 1) {
    if (!check_world_cp(s, c, fail)) return false;
  } else {
    std::int64_t tp_pp = 0, world = 0;
    if (__builtin_mul_overflow(s.tp, s.pp, &tp_pp) || __builtin_mul_overflow(tp_pp, s.dp, &world))
      return fail("--dp", fmt::format("tp x pp x dp = {} x {} x {} is beyond 2^63, not the {} GPUs",
                                      s.tp, s.pp, s.dp, c.gpus));
    if (world != c.gpus)
      return fail("--dp", fmt::format("tp x pp x dp = {} x {} x {} = {} must equal the {} GPUs",
                                      s.tp, s.pp, s.dp, world, c.gpus));
  }
  if (s.offload_layers > 0 && !(c.gpu.host_memory_bytes > 0))
    return fail("--offload-layers",
                fmt::format("GPU {} has no host memory size in its preset (host_memory_gib): "
                            "activation offload cannot be checked for room",
                            c.gpu.name));
  if (s.offload_layers > 0 && !(c.gpu.host_bw_Bps > 0))
    return fail("--offload-layers",
                fmt::format("GPU {} has no host link bandwidth in its preset "
                            "(host_gbytes_per_s_per_direction): activation offload cannot be "
                            "timed",
                            c.gpu.name));
  if (!m.is_moe() && s.ep != 1)
    return fail("--ep",
                fmt::format("ep = {} needs a mixture-of-experts model; {} is dense", s.ep, m.name));
  if (s.folded()) {
    if (!s.degrees().folded_experts_tile())
      return fail("--ep", fmt::format("etp x ep = {} x {} must divide tp x cp x dp = {} x {} x {} "
                                      "(folded experts are spread over them)",
                                      s.expert_tp(), s.ep, s.tp, s.cp, s.dp));
  } else if (s.dp % s.ep != 0) {
    const bool fold =
        tr.stack.knobs.expert_folding && m.is_moe() && s.tp > 1 && (s.tp * s.cp * s.dp) % s.ep == 0;
    return fail("--ep",
                fmt::format("ep = {} must divide dp = {} (experts are spread over data-"
                            "parallel ranks){}",
                            s.ep, s.dp, fold ? "; folded (--etp 1) it may span tp x cp x dp" : ""));
  }
  if (m.is_moe() && m.experts % s.ep != 0)
    return fail("--ep",
                fmt::format("ep = {} must divide the {} experts of {}", s.ep, m.experts, m.name));
  if (tr.global_batch % (s.dp * s.micro_batch) != 0)
    return fail("--batch",
                fmt::format("global batch {} is not divisible by dp x micro-batch = {} x "
                            "{} = {}",
                            tr.global_batch, s.dp, s.micro_batch, s.dp * s.micro_batch));
  const std::int64_t mb = tr.global_batch / (s.dp * s.micro_batch);
  if (s.interleave > 1 && mb % s.pp != 0)
    return fail("--interleave",
                fmt::format("the interleaved schedule needs the {} micro-batches per "
                            "pipeline to be a multiple of pp = {}",
                            mb, s.pp));
  return true;
}
}  // namespace

void validate(const Model& m, const Training& tr, const Strategy& s, const spec::Cluster& c) {
  check(m, tr, s, c,
        [](const char* opt, const std::string& msg) -> bool { throw InputError(opt, msg); });
}

void validate_stack(const Model& m, const Training& tr, const Strategy& s) {
  check_stack(m, tr, s,
              [](const char* opt, const std::string& msg) -> bool { throw InputError(opt, msg); });
}

void validate_cp(const Training& tr, const Strategy& s) {
  check_cp(tr, s,
           [](const char* opt, const std::string& msg) -> bool { throw InputError(opt, msg); });
}

void validate_tp_pp(const Model& m, const Strategy& s) {
  check_tp_pp(m, s,
              [](const char* opt, const std::string& msg) -> bool { throw InputError(opt, msg); });
}

bool is_valid(const Model& m, const Training& tr, const Strategy& s, const spec::Cluster& c) {
  // The message is never formatted: fmt::format arguments are evaluated, but the search calls
  // this only with degrees it built itself, so the failing branches are rare.
  return check(m, tr, s, c, [](const char*, const std::string&) { return false; });
}

std::string describe_ep(const Strategy& s, std::string_view gap) {
  return s.folded() ? fmt::format("{} etp{}{}", s.ep, gap, s.expert_tp()) : fmt::format("{}", s.ep);
}

std::string describe(const Strategy& s) {
  // cp and the schedule are named only when used, so that the lines of strategies without them
  // stay as they were.
  return fmt::format(
      "tp {}{} pp {} dp {} ep {}, micro-batch {}, interleave {}, recompute {}, sp {}, dist-opt {}, "
      "dp-overlap {}{}{}{}",
      s.tp, s.cp > 1 ? fmt::format(" cp {}", s.cp) : "", s.pp, s.dp, describe_ep(s, " "),
      s.micro_batch, s.interleave, to_string(s.recompute), s.sp ? "on" : "off",
      s.dist_opt ? "on" : "off", s.dp_overlap ? "on" : "off",
      s.schedule != PipelineSchedule::one_f_one_b
          ? fmt::format(", pp-schedule {}", to_string(s.schedule))
          : "",
      s.hsdp > 0 ? fmt::format(", hsdp {}", s.hsdp) : "",
      s.offload_layers > 0 ? fmt::format(", offload-layers {}", s.offload_layers) : "");
}

std::string describe_degrees(const Strategy& s) {
  return fmt::format("tp{}{} pp{} dp{}{}{}", s.tp, s.cp > 1 ? fmt::format(" cp{}", s.cp) : "", s.pp,
                     s.dp, s.ep > 1 ? fmt::format(" ep{}", s.ep) : "",
                     s.folded() ? fmt::format(" etp{}", s.expert_tp()) : "");
}

std::string describe_for_people(const Strategy& s) {
  std::string o = fmt::format("{}; micro-batch {}", describe_degrees(s), s.micro_batch);
  if (s.interleave > 1) o += fmt::format(", {} virtual stages", s.interleave);
  if (s.schedule != PipelineSchedule::one_f_one_b)
    o += fmt::format(", {} schedule", to_string(s.schedule));
  if (s.recompute != Recompute::none) o += fmt::format(", {} recompute", to_string(s.recompute));
  if (s.sp && s.tp > 1) o += ", sequence parallel";
  if (s.dist_opt && s.dp > 1) o += ", distributed optimizer";
  if (s.hsdp > 0) o += fmt::format(" (hybrid over {})", s.hsdp);
  if (s.dp_overlap && s.dp > 1) o += ", DP overlapped";
  return o;
}

}  // namespace railsim::perf
