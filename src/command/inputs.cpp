#include "railsim/command/inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <limits>
#include <system_error>

#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/perf/placement.hpp"

namespace railsim::command {

std::vector<Field> join(std::initializer_list<std::vector<Field>> groups,
                        std::vector<Field> extra) {
  std::vector<Field> all;
  for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
  all.insert(all.end(), extra.begin(), extra.end());
  return all;
}

namespace {
// A field with its names, kind, help and default; the makers below add what their kind needs.
Field field(std::string key, std::string flag, Kind kind, std::string help,
            std::string default_text = "") {
  Field f;
  f.key = std::move(key);
  f.flag = std::move(flag);
  f.kind = kind;
  f.help = std::move(help);
  f.default_text = std::move(default_text);
  return f;
}
}  // namespace

Field flag_field(std::string key, std::string flag, std::string help) {
  return field(std::move(key), std::move(flag), Kind::flag, std::move(help));
}

Field text_field(std::string key, std::string flag, std::string help, std::string default_text,
                 std::vector<std::string> choices) {
  Field f =
      field(std::move(key), std::move(flag), Kind::text, std::move(help), std::move(default_text));
  f.choices = std::move(choices);
  return f;
}

Field integer_field(std::string key, std::string flag, std::string help, std::int64_t min,
                    std::int64_t max, std::string default_text) {
  Field f = field(std::move(key), std::move(flag), Kind::integer, std::move(help),
                  std::move(default_text));
  f.min = min;
  f.max = max;
  return f;
}

Field number_field(std::string key, std::string flag, std::string help, Range range,
                   std::string default_text, std::string unit) {
  Field f = field(std::move(key), std::move(flag), Kind::number, std::move(help),
                  std::move(default_text));
  f.range = range;
  f.unit = std::move(unit);
  return f;
}

namespace {
Field on_off_field(std::string key, std::string flag, std::string help) {
  Field f = text_field(std::move(key), std::move(flag), std::move(help));
  f.kind = Kind::on_off;
  return f;
}

// A number whose range the library checks where it is used (the message names the context).
Field unchecked_number(std::string key, std::string flag, std::string help, std::string unit) {
  Field f = text_field(std::move(key), std::move(flag), std::move(help));
  f.kind = Kind::number;
  f.unit = std::move(unit);
  return f;
}

constexpr const char* kRoutingHelp =
    "Path choice above the leaf: ecmp (a hash per flow: flows may collide on one uplink; the "
    "analytic model charges the expected busiest link), adaptive (per-packet adaptive "
    "routing: InfiniBand AR, Spectrum-X) or spray (per-packet spraying): adaptive and spray "
    "spread a flow evenly over every equal-cost uplink, in the analytic model and in sim; auto: "
    "the switch's default, adaptive on InfiniBand (the subnet manager and NCCL enable it), ecmp "
    "on Ethernet";
constexpr const char* kSeedHelp =
    "Salt of the ECMP hash, 0 to 2^62 (0: the default hash; sim hashes with it, the analytic "
    "model takes the expectation over hashes; with spray it changes no switch path)";
}  // namespace

Field job_gpus_field() {
  return integer_field("job_gpus", "--job-gpus",
                       "Plan a job on this many of the cluster's GPUs (whole HB domains, the first "
                       "of the network; default: all): the network, its cost and contention stay "
                       "the whole cluster's",
                       1, spec::kMaxGpus);
}

spec::Cluster job_of(const Args& a, const spec::Cluster& c) {
  const auto j = a.integer_if("job_gpus");
  return j ? spec::job_cluster(c, *j) : c;
}

bool cluster_given(const Args& a) {
  return a.first_given({"gpus", "gpu", "hb_domain", "nic_gbps", "hb_GBps", "nics_per_gpu"});
}

std::vector<Field> cluster_fields() {
  std::vector<Field> f;
  f.push_back(integer_field("gpus", "--gpus",
                            "Number of GPUs N (default 32768, rounded down to a multiple of the "
                            "HB-domain size K: 32760 for K = 72)",
                            1, spec::kMaxGpus));
  f.push_back(text_field("gpu", "--gpu", "GPU preset name or JSON file (see `railsim presets`)",
                         spec::kDefaultGpu));
  f.push_back(integer_field("hb_domain", "--hb-domain",
                            "GPUs per HB (NVLink) domain K; must divide N (default: the GPU "
                            "preset's)",
                            1, spec::kMaxGpus));
  f.push_back(unchecked_number("nic_gbps", "--nic-gbps",
                               "NIC speed per GPU in Gb/s (default: the GPU preset's)", "Gb/s"));
  f.push_back(unchecked_number(
      "hb_GBps", "--hb-GBps",
      "HB-domain bandwidth per GPU per direction in GB/s (default: the GPU preset's)", "GB/s"));
  f.push_back(integer_field("nics_per_gpu", "--nics-per-gpu",
                            "NICs per GPU (default: the GPU preset's)", 1, 64));
  return f;
}

spec::ClusterOptions cluster_options(const Args& a) {
  spec::ClusterOptions o;
  o.gpu = a.text("gpu");
  o.gpus = a.integer_if("gpus").value_or(0);
  o.hb_domain = a.integer_if("hb_domain");
  o.nic_gbps = a.number_if("nic_gbps");
  o.hb_gbytes_per_s = a.number_if("hb_GBps");
  o.nics_per_gpu = a.integer_if("nics_per_gpu");
  return o;
}

std::vector<Field> network_fields(bool with_design) {
  const spec::NetworkOptions d;
  std::vector<Field> f;
  if (with_design)
    f.push_back(text_field("design", "--design",
                           "Network design: rail_optimized, rail_only or ideal", d.design));
  f.push_back(text_field("switch", "--switch",
                         "Switch preset name or JSON file (see `railsim presets switches`)", d.sw));
  f.push_back(number_field("oversubscription", "--oversubscription",
                           "Down:up port ratio R (R:1) at the oversubscribed tier; 1 = "
                           "non-blocking",
                           Range{}, "1"));
  f.back().range.reset();  // make_network_design checks it
  f.push_back(integer_field("oversubscribed_tier", "--oversubscribed-tier",
                            "Tier whose uplinks are oversubscribed: 1 = leaf, 2 = spine, ...", 1, 8,
                            "1"));
  f.push_back(text_field("port_split", "--port-split",
                         "Down:up ports D:U per switch at the oversubscribed tier, the rest unused "
                         "(instead of --oversubscription; Alibaba HPN's ToR: 128:120)"));
  f.push_back(
      flag_field("copper_gpu_leaf", "--copper-gpu-leaf",
                 "Passive copper DAC for in-rack GPU-leaf links (no transceivers on them)"));
  f.push_back(integer_field("management_links", "--management-links",
                            "Extra leaf links to non-GPU endpoints such as the UFM fabric manager "
                            "(DGX H100 SuperPOD RA: 4)",
                            0, 1 << 20, "0"));
  f.push_back(integer_field("planes", "--planes",
                            "Network planes: the design built once per plane, each GPU's NIC ports "
                            "dealt over them (port e in plane e mod P; Spectrum-X multiplane, "
                            "Alibaba HPN dual plane); must divide the NIC ports of a GPU",
                            0, 0, "1"));
  f.push_back(integer_field("nic_ports", "--nic-ports",
                            "Ports each NIC is split into, each at 1/n of its speed (an 800G NIC "
                            "as 2 x 400G or 4 x 200G); the switch needs that port mode",
                            0, 0, "1"));
  f.push_back(flag_field("dual_tor", "--dual-tor",
                         "Each port of a NIC on a different leaf (a ToR pair, Alibaba HPN): one "
                         "leaf lost costs capacity, not connectivity; needs --nic-ports >= 2"));
  f.push_back(text_field("port_balance", "--port-balance",
                         "How a transfer leaving the HB domain spreads over its GPU's NIC ports "
                         "(and planes): spray (an equal share on each: NCCL's channels over every "
                         "NIC, Spectrum-X plane load balancing) or hash (--connections "
                         "connections, each whole on the port its hash picks)",
                         spec::NetworkOptions{}.port_balance));
  f.push_back(integer_field("connections", "--connections",
                            "Connections per transfer with --port-balance hash, each hashed on "
                            "its own onto a NIC port and, under ecmp, onto the switches' uplinks "
                            "(one-port GPUs too; Meta's Llama 3: 16 flows per GPU pair)",
                            0, 0, "1"));
  return f;
}

Field train_tokens_field() {
  Field tokens = text_field("train_tokens", "--train-tokens",
                            "Tokens to train on, in (0, 1e18]: the days each iteration time shown "
                            "takes for them (tokens / tokens per second; no failures)");
  tokens.kind = Kind::number;
  return tokens;
}

Field routing_field() {
  return text_field("routing", "--routing", kRoutingHelp, spec::NetworkOptions{}.routing);
}

Field routing_seed_field() {
  return integer_field("seed", "--seed", kSeedHelp, 0, 0, "0");
}

std::vector<Field> routing_fields() {
  const spec::NetworkOptions d;
  std::vector<Field> f;
  f.push_back(routing_field());
  f.push_back(routing_seed_field());
  f.push_back(text_field(
      "forwarding", "--forwarding",
      "Rail-only forwarding of cross-rail transfers through an HB-domain peer: store (each "
      "transfer whole, leg after leg), pipelined (in --chunks pieces, the legs overlapping) or "
      "two-phase (every first leg, a barrier, then the rest: the paper's non-overlapped "
      "all-to-all)",
      d.forwarding));
  f.push_back(text_field("forward_via", "--forward-via",
                         "Forwarding peer: hb_first (HB hop, then the destination's rail) or "
                         "rail_first",
                         d.forward_via));
  f.push_back(integer_field("chunks", "--chunks", "Pieces per forwarded transfer when pipelined", 0,
                            0, std::to_string(d.chunks)));
  return f;
}

spec::NetworkOptions network_options(const Args& a) {
  spec::NetworkOptions o;
  if (a.has("design")) o.design = a.text("design");
  o.sw = a.text("switch");
  o.oversubscription = a.number("oversubscription");
  o.oversubscribed_tier = static_cast<int>(a.integer("oversubscribed_tier"));
  if (const auto p = a.text_if("port_split")) o.port_split = *p;
  o.copper_gpu_leaf = a.flag("copper_gpu_leaf");
  o.management_links = static_cast<int>(a.integer("management_links"));
  if (a.has("planes")) {
    o.planes = a.integer("planes");
    o.nic_ports = a.integer("nic_ports");
    o.dual_tor = a.flag("dual_tor");
    o.port_balance = a.text("port_balance");
    o.connections = a.integer("connections");
  }
  if (a.has("routing")) o.routing = a.text("routing");
  // The rest of routing_fields(): a command with routing_field() alone may have a "seed" of its
  // own (traffic's is the shuffled placement's).
  if (a.has("forwarding")) {
    o.seed = a.integer("seed");
    o.forwarding = a.text("forwarding");
    o.forward_via = a.text("forward_via");
    o.chunks = a.integer("chunks");
  }
  return o;
}

spec::NetworkDesign resolve_network(const Args& a) {
  return spec::make_network_design(network_options(a));
}

std::vector<Field> cost_fields() {
  return {
      text_field("catalog", "--catalog",
                 "Component price/power catalog: preset name (`railsim presets catalogs`) or JSON "
                 "file",
                 cost::kDefaultCatalog),
      text_field("switch_counting", "--switch-counting",
                 "whole: buy every switch box; ports: pay for cabled ports only (small rails "
                 "sharing partitioned switches)",
                 "whole")};
}

ResolvedCost resolve_cost(const Args& a) {
  return {cost::load_catalog(a.text("catalog"), "--catalog"),
          cost::parse_switch_counting(a.text("switch_counting"))};
}

std::vector<Field> software_fields() {
  return {
      text_field("stack", "--stack",
                 "Training software: which knobs exist, their defaults and constraints "
                 "(preset or JSON file, see `railsim presets stacks`)",
                 std::string(spec::kDefaultStack)),
      text_field(
          "dtype", "--dtype",
          "GEMM precision: bf16 (default), fp8, mxfp8 or nvfp4 (if the stack and the GPU have it)"),
      on_off_field("flash_attention", "--flash-attention",
                   "Fused attention kernels: on or off (default: the stack's)"),
      on_off_field("compile", "--compile",
                   "torch.compile on a stack that has it (torchtitan-2024): on fuses the "
                   "element-wise kernels of each layer, off runs them eagerly, one PyTorch op "
                   "per kernel (default: the stack's)"),
      text_field("ep_dispatch", "--ep-dispatch",
                 "MoE all-to-all: direct (every routed copy to its expert's GPU) or hierarchical "
                 "(one copy per HB domain along the rail, then over the HB domain: DeepSeek-V3's, "
                 "DeepEP's) (default: the stack's)"),
      on_off_field("ep_overlap", "--ep-overlap",
                   "MoE all-to-all under another micro-batch's computation (Megatron-Core's "
                   "combined 1F1B, --overlap-moe-expert-parallel-comm), on a stack that has it "
                   "(nemo-perf-2025): on or off (default: the stack's)"),
      on_off_field("fp8_output_layer", "--fp8-output-layer",
                   "The output layer (LM head) in MXFP8 under --dtype mxfp8 (Megatron-Core's "
                   "fp8_output_proj), on a stack that has it (nemo-perf-2025): on or off (default: "
                   "the stack's, BF16)"),
      text_field("cp_comm", "--cp-comm",
                 "Context parallelism's K/V exchange: all_gather (gathered before the attention, "
                 "on its critical path: Llama 3's) or p2p (passed around the CP ring under the "
                 "attention: ring attention, Megatron-Core's default) (default: the stack's)")};
}

Software resolve_software(const Args& a) {
  Software sw;
  sw.stack = spec::load_stack(a.text("stack"), "--stack");
  if (const auto d = a.text_if("dtype")) sw.dtype = spec::parse_dtype(*d, "--dtype");
  sw.flash_attention = a.on_off_if("flash_attention");
  const std::optional<bool> compile = a.on_off_if("compile");
  if (const auto e = a.on_off_if("ep_overlap")) sw.stack.defaults.ep_overlap = *e;
  if (const auto f = a.on_off_if("fp8_output_layer")) sw.stack.defaults.fp8_output_layer = *f;
  (void)spec::make_training(1, 1, sw.stack, sw.dtype, sw.flash_attention, compile);  // checks them
  // The choice travels as the stack's default, so every training made from it has it.
  if (compile) sw.stack.defaults.compile = *compile;
  if (const auto e = a.text_if("ep_dispatch"))
    sw.stack.hierarchical_ep_dispatch = spec::parse_ep_dispatch(*e, "--ep-dispatch");
  if (const auto e = a.text_if("cp_comm")) {
    sw.stack.ring_cp = spec::parse_cp_comm(*e, "--cp-comm");
    if (sw.stack.ring_cp && !sw.stack.knobs.context_parallel)
      throw InputError("--cp-comm", fmt::format("p2p needs context parallelism, which stack {} "
                                                "does not have",
                                                sw.stack.name));
  }
  return sw;
}

std::vector<Field> strategy_fields() {
  const std::int64_t maxdeg = spec::kMaxGpus;
  std::vector<Field> f;
  f.push_back(text_field("model", "--model",
                         "Model preset name or JSON file (see `railsim presets models`)",
                         spec::kDefaultModel));
  f.push_back(integer_field(
      "batch", "--batch",
      fmt::format("Global batch in sequences (default {})", spec::kDefaultGlobalBatch), 1,
      std::int64_t{1} << 40));
  f.push_back(integer_field("seq", "--seq", "Sequence length in tokens (default: the model's)", 1,
                            1 << 24));
  for (Field& s : software_fields()) f.push_back(std::move(s));
  f.push_back(integer_field("tp", "--tp", "Tensor-parallel degree", 1, maxdeg));
  f.push_back(integer_field("pp", "--pp", "Pipeline-parallel degree", 1, maxdeg));
  f.push_back(
      integer_field("dp", "--dp", "Data-parallel degree (tp x cp x pp x dp = GPUs)", 1, maxdeg));
  f.push_back(integer_field(
      "cp", "--cp", "Context-parallel degree (sequence split in 2 cp chunks; 2 cp divides --seq)",
      1, maxdeg));
  f.push_back(integer_field(
      "ep", "--ep",
      "Expert-parallel degree (MoE; divides dp, or with --etp below tp, tp x cp x dp / etp)", 1,
      maxdeg));
  f.push_back(integer_field("etp", "--etp",
                            "Expert tensor-parallel size (MoE): a divisor of tp below it folds "
                            "the experts, split over etp GPUs (1: whole on every GPU) with ep "
                            "spanning the TP ranks (stacks with expert folding); default tp",
                            1, maxdeg));
  f.push_back(integer_field("hsdp", "--hsdp",
                            "Hybrid sharding: shard weights, gradients and optimizer state over "
                            "groups of this many DP x CP ranks and replicate across the groups "
                            "(stacks with hybrid sharding; 0 = over the whole group)",
                            0, maxdeg));
  f.push_back(text_field("offload_layers", "--offload-layers",
                         "Activation offload: the activations of this many first layers go to "
                         "host memory after their forward and come back before their backward "
                         "(stacks with activation offload; pp 1, recompute none; 0 = none); plan "
                         "takes auto: the fewest layers that make a strategy fit (default: none)"));
  f.push_back(integer_field("micro_batch", "--micro-batch", "Micro-batch size in sequences", 1,
                            std::int64_t{1} << 40));
  f.push_back(
      integer_field("interleave", "--interleave", "Virtual pipeline stages per GPU", 1, 1 << 16));
  f.push_back(text_field("pp_schedule", "--pp-schedule",
                         "Pipeline schedule: 1f1b (interleaved with --interleave > 1), zb-h1, zb-v "
                         "or dualpipe, where the stack has it (see `railsim presets stacks`)"));
  f.push_back(text_field(
      "recompute", "--recompute",
      "Activation recomputation: none, selective (attention core), op (per-op: every second "
      "matmul), qkv (keep the Q, K and V projections), layer (every second layer) or full; op, "
      "qkv and layer where the stack has them"));
  f.push_back(on_off_field("sp", "--sp", "Sequence parallelism: on or off"));
  f.push_back(on_off_field("dist_opt", "--dist-opt", "Distributed optimizer: on or off"));
  f.push_back(on_off_field("dp_overlap", "--dp-overlap",
                           "Overlap the DP gradient reduction with the backward pass: on or off"));
  f.push_back(text_field("placement", "--placement",
                         "Rank placement: rail_aligned, tp_across_domains or shuffled",
                         "rail_aligned"));
  return f;
}

const std::vector<std::string>& strategy_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const Field& f : strategy_fields()) k.push_back(f.key);
    return k;
  }();
  return keys;
}

namespace {
// --offload-layers N: a count from 0 to 2^24 (the model's layers bound it in perf::validate).
std::int64_t parse_offload_layers(const std::string& text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, v);
  if (text.empty() || r.ec != std::errc() || r.ptr != end)
    throw InputError("--offload-layers",
                     fmt::format("got '{}', expected a count of layers or auto", printable(text)));
  return check_integer("--offload-layers", v, 0, spec::kMaxGpus);
}
}  // namespace

StrategyInputs resolve_strategy_inputs(const Args& a) {
  return resolve_strategy_inputs(a, a.text("model"));
}

StrategyInputs resolve_strategy_inputs(const Args& a, const std::string& model) {
  StrategyInputs in;
  in.model = perf::load_model(model, "--model");
  const Software sw = resolve_software(a);
  const std::int64_t batch = a.integer_if("batch").value_or(spec::kDefaultGlobalBatch);
  const std::int64_t seq =
      a.integer_if("seq").value_or(check_integer("--seq", in.model.seq_len, 1, 1 << 24));
  in.training = spec::make_training(batch, seq, sw.stack, sw.dtype, sw.flash_attention);
  in.pins.tp = a.integer_if("tp");
  in.pins.pp = a.integer_if("pp");
  in.pins.dp = a.integer_if("dp");
  in.pins.ep = a.integer_if("ep");
  in.pins.etp = a.integer_if("etp");
  in.pins.cp = a.integer_if("cp");
  in.pins.hsdp = a.integer_if("hsdp");
  if (const auto o = a.text_if("offload_layers")) {
    if (*o == "auto")
      in.pins.offload_auto = true;
    else
      in.pins.offload_layers = parse_offload_layers(*o);
  }
  in.pins.micro_batch = a.integer_if("micro_batch");
  in.pins.interleave = a.integer_if("interleave");
  if (const auto r = a.text_if("recompute"))
    in.pins.recompute = perf::parse_recompute(*r, "--recompute");
  in.pins.sp = a.on_off_if("sp");
  in.pins.dist_opt = a.on_off_if("dist_opt");
  in.pins.dp_overlap = a.on_off_if("dp_overlap");
  if (const auto sch = a.text_if("pp_schedule"))
    in.pins.schedule = spec::parse_schedule(*sch, "--pp-schedule");
  in.placement = perf::parse_placement_kind(a.text("placement"), "--placement");
  perf::check_pins(in.model, in.training, in.pins);
  return in;
}

perf::Strategy resolve_strategy(const StrategyInputs& in, const spec::Cluster& c) {
  return perf::default_strategy(in.model, in.training, in.pins, c);
}

void one_format(const Args& a) {
  if (a.flag("json") && a.flag("csv")) throw InputError("--csv", "choose one of --json and --csv");
}

void refuse_beyond_int(const Args& a, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    const auto text = a.text_if(key);
    if (!text) continue;
    std::int64_t v = 0;
    const char* end = text->data() + text->size();
    const auto r = std::from_chars(text->data(), end, v);
    if (r.ec != std::errc() || r.ptr != end) continue;  // the field's own read says why
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      throw InputError(a.field(key).spelled(),
                       fmt::format("cannot read '{}' as the expected type (see --help; integers "
                                   "must be written in full, in range)",
                                   printable(*text)));
  }
}

std::string given_options(const Args& a) {
  std::string s;
  auto word = [&s](const std::string& w) {
    if (!s.empty()) s.push_back(' ');
    const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_.,:/=+@%", c);
    });
    if (plain) {
      s.append(w);
      return;
    }
    s.push_back('\'');
    for (char c : w)
      if (c == '\'')
        s.append("'\\''");
      else
        s.push_back(c);
    s.push_back('\'');
  };
  for (const Field& f : a.fields()) {
    if (!a.given(f.key)) continue;
    const std::vector<std::string>& values = a.values(f.key);
    if (f.kind == Kind::flag || f.kind == Kind::pair) {
      word(f.spelled());
      if (f.kind == Kind::pair)
        for (const std::string& v : values) word(v);
      continue;
    }
    for (const std::string& v : values) {
      word(f.spelled());
      word(v);
    }
  }
  return s;
}

}  // namespace railsim::command
