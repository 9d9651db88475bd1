#include "railsim/spec/calculon.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>
#include <utility>

#include "railsim/core/json.hpp"
#include "railsim/core/units.hpp"

namespace railsim::spec {

namespace {

constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;
const Range kRate = Range::between(1.0, 1e6);
const Range kFraction = Range::between(0.01, 1.0);

// Keys of `j` (an object) outside `mapped`, as "<prefix><key>".
void collect_unmapped(const Json& j, std::initializer_list<std::string_view> mapped,
                      const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [k, v] : j.items()) {
    (void)v;
    if (std::find(mapped.begin(), mapped.end(), k) == mapped.end()) out.push_back(prefix + k);
  }
}

// One of Calculon's efficiency tables: [[size, efficiency], ...], any order. Returned sorted by
// size, ascending; every size >= 0 and every efficiency a fraction, sizes distinct.
std::vector<std::pair<double, double>> efficiency_table(const Json& t, const std::string& field) {
  if (!t.is_array() || t.empty())
    throw InputError(field, "expected a non-empty array of [size, efficiency] pairs");
  std::vector<std::pair<double, double>> rows;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string f = fmt::format("{}[{}]", field, i);
    const Json& r = t[i];
    if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number())
      throw InputError(f, "expected [size, efficiency], two numbers");
    const double size = check_number(f + "[0]", r[0].get<double>(), Range::non_negative(1e12));
    const double eff = check_number(f + "[1]", r[1].get<double>(), kFraction);
    rows.emplace_back(size, eff);
  }
  std::sort(rows.begin(), rows.end());
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].first == rows[i - 1].first)
      throw InputError(field, fmt::format("size {:g} appears twice", rows[i].first));
  return rows;
}

// Calculon's table of efficiency by GEMM size in GFLOP gives railsim's gemm_max: the efficiency
// of the largest size listed (ours). Smaller sizes are not mapped: railsim derives the efficiency
// of a GEMM from its shape (tiles and waves over the SMs, the k-loop, the HBM roofline), so the
// table's lower rows only reach the caller's warning.
double gemm_curve(const std::vector<std::pair<double, double>>& rows) {
  return rows.back().second;
}

std::mutex g_warn_mutex;
std::set<std::string> g_warned;
void default_sink(const std::string& line) {
  std::lock_guard lock(g_warn_mutex);
  if (!g_warned.insert(line).second) return;
  std::fprintf(stderr, "railsim: warning: %s\n", line.c_str());
  std::fflush(stderr);
}
WarningSink g_sink = &default_sink;

}  // namespace

namespace {

// True when `j` has one of `theirs` (Calculon's own keys) and none of `ours` (railsim's); both is
// an error naming one key of each.
bool has_keys_of(const Json& j, std::initializer_list<std::string_view> theirs,
                 std::initializer_list<std::string_view> ours, const std::string& path,
                 std::string_view what) {
  if (!j.is_object()) return false;
  const auto first_of = [&](std::initializer_list<std::string_view> keys) {
    for (std::string_view k : keys)
      if (j.contains(k)) return std::string(k);
    return std::string();
  };
  const std::string calculon = first_of(theirs), railsim = first_of(ours);
  if (!calculon.empty() && !railsim.empty())
    throw InputError(path,
                     fmt::format("the file mixes railsim's {} fields (\"{}\") and Calculon's "
                                 "{} fields (\"{}\"); give one format (docs/calculon.md)",
                                 what == "application" ? "model" : "GPU", railsim, what, calculon));
  return !calculon.empty();
}

}  // namespace

bool is_calculon_application(const Json& j, const std::string& path) {
  return has_keys_of(
      j, {"num_blocks", "attn_heads", "attn_size", "feedforward", "seq_size", "vocab_size"},
      {"layers", "heads", "ffn_hidden", "seq_len", "vocab", "experts", "top_k", "expert_ffn_hidden",
       "moe_every", "gated_ffn", "tied_embeddings"},
      path, "application");
}

bool is_calculon_system(const Json& j, const std::string& path) {
  return has_keys_of(j, {"matrix", "vector", "mem1", "mem2", "networks", "processing_mode"},
                     {"peak_bf16_tflops", "peak_fp8_tflops", "hbm_gib", "hbm_gbytes_per_s",
                      "hb_gbytes_per_s_per_direction", "nic_gbps", "default_hb_domain",
                      "nics_per_gpu", "hb_planes", "efficiency"},
                     path, "system");
}

Model model_from_calculon(const Json& j, const std::string& name, const std::string& path,
                          CalculonImport* info) {
  JsonObject o(j, path);
  CalculonImport local;
  CalculonImport& in = info ? *info : local;
  Model m;
  m.name = name;
  m.layers = o.integer("num_blocks", 1, 100000);
  m.hidden = o.integer("hidden", 1, kMaxDim);
  m.heads = o.integer("attn_heads", 1, m.hidden);
  const std::int64_t attn_size = o.integer("attn_size", 1, kMaxDim);
  // railsim's attention has heads x head_dim = hidden (its parameter and FLOP counts assume it).
  if (m.heads * attn_size != m.hidden)
    throw InputError(o.field("attn_size"),
                     fmt::format("attn_heads x attn_size = {} x {} = {} differs from hidden = {}; "
                                 "railsim models attention with heads x head size = hidden",
                                 m.heads, attn_size, m.heads * attn_size, m.hidden));
  m.kv_heads = o.integer_or("kv_heads", m.heads, 1, m.heads);
  if (m.heads % m.kv_heads != 0)
    throw InputError(o.field("kv_heads"),
                     fmt::format("kv_heads = {} must divide attn_heads = {}", m.kv_heads, m.heads));
  m.ffn_hidden = o.integer("feedforward", 1, kMaxDim);
  m.seq_len = o.integer("seq_size", 1, kMaxDim);
  if (o.has("vocab_size")) {
    m.vocab = o.integer("vocab_size", 1, kMaxDim);
  } else {
    m.vocab = kCalculonDefaultVocab;
    in.assumed.push_back(fmt::format("vocab {}", kCalculonDefaultVocab));
  }
  collect_unmapped(j,
                   {"num_blocks", "hidden", "attn_heads", "attn_size", "kv_heads", "feedforward",
                    "seq_size", "vocab_size"},
                   "", in.unmapped);
  m.source = "Calculon application file (github.com/calculon-ai/calculon), mapped by railsim";
  return m;
}

GpuSpec gpu_from_calculon(const Json& j, const std::string& name, const std::string& path,
                          CalculonImport* info) {
  JsonObject o(j, path);
  CalculonImport local;
  CalculonImport& in = info ? *info : local;
  GpuSpec g;
  g.name = name;

  // matrix: {"tflops", "gflops_efficiency": {"float16": table, ...}} or, in later Calculon
  // versions, one such object per datatype ({"float16": {...}, "float8": {...}}).
  JsonObject mx = o.object("matrix");
  auto read_unit = [&](JsonObject& u, const std::string& prefix, bool fp8) {
    const double tflops = u.number("tflops", kRate);
    (fp8 ? g.peak_fp8_flops : g.peak_bf16_flops) = units::tflops_to_flops(tflops);
    if (fp8) {
      collect_unmapped(j.at("matrix").at("float8"), {"tflops"}, prefix, in.unmapped);
      return;
    }
    if (!u.has("gflops_efficiency")) return;
    const Json& ge = u.raw("gflops_efficiency");
    const std::string gf = u.field("gflops_efficiency");
    if (ge.is_array()) {  // one table, for the datatype of this entry
      g.eff.gemm_max = gemm_curve(efficiency_table(ge, gf));
      return;
    }
    JsonObject t(ge, gf);
    g.eff.gemm_max = gemm_curve(efficiency_table(t.raw("float16"), t.field("float16")));
    collect_unmapped(ge, {"float16"}, prefix + "gflops_efficiency.", in.unmapped);
  };
  if (mx.has("tflops")) {
    read_unit(mx, "matrix.", false);
    collect_unmapped(j.at("matrix"), {"tflops", "gflops_efficiency"}, "matrix.", in.unmapped);
  } else {
    JsonObject f16 = mx.object("float16");
    read_unit(f16, "matrix.float16.", false);
    collect_unmapped(j.at("matrix").at("float16"), {"tflops", "gflops_efficiency"},
                     "matrix.float16.", in.unmapped);
    if (mx.has("float8")) {
      JsonObject f8 = mx.object("float8");
      read_unit(f8, "matrix.float8.", true);
    }
    collect_unmapped(j.at("matrix"), {"float16", "float8"}, "matrix.", in.unmapped);
  }

  JsonObject mem = o.object("mem1");
  g.hbm_bytes = mem.number("GiB", Range::between(1.0, 1e5)) * units::kGiB;
  g.hbm_bw_Bps = units::GBps_to_Bps(mem.number("GBps", kRate));
  if (mem.has("MB_efficiency")) {
    // Element-wise kernels stream large tensors: the efficiency of the largest size listed.
    g.eff.hbm =
        efficiency_table(mem.raw("MB_efficiency"), mem.field("MB_efficiency")).back().second;
  }
  collect_unmapped(j.at("mem1"), {"GiB", "GBps", "MB_efficiency"}, "mem1.", in.unmapped);

  // networks[0]: the HB domain (NVLink), networks[1]: the scale-out network, one NIC per GPU.
  const Json& nets = o.raw("networks");
  const std::string nf = o.field("networks");
  if (!nets.is_array() || nets.size() < 2)
    throw InputError(nf,
                     "expected an array of at least two networks: the HB domain (NVLink) "
                     "first, then the scale-out network");
  const std::string f0 = nf + "[0]", f1 = nf + "[1]";
  JsonObject hb(nets[0], f0), nic(nets[1], f1);
  g.hb_bw_Bps = units::GBps_to_Bps(hb.number("bandwidth", kRate));
  g.default_hb_domain = static_cast<int>(hb.integer("size", 1, 1 << 20));
  g.nic_bw_Bps = units::gbps_to_Bps(8 * nic.number("bandwidth", Range::between(0.125, 1e6)));
  g.nics_per_gpu = 1;
  if (hb.has("efficiency")) g.eff.hb = hb.number("efficiency", kFraction);
  if (nic.has("efficiency")) g.eff.nic = nic.number("efficiency", kFraction);
  double latency = 0;
  bool has_latency = false;
  for (JsonObject* n : {&hb, &nic})
    if (n->has("latency")) {
      latency = std::max(latency, n->number("latency", Range::non_negative(1.0)));
      has_latency = true;
    }
  if (has_latency) g.eff.collective_latency_s = latency;
  for (std::size_t i = 0; i < nets.size(); ++i) {
    const std::string p = fmt::format("networks[{}]", i);
    if (i >= 2)
      in.unmapped.push_back(p);
    else
      collect_unmapped(nets[i], {"bandwidth", "size", "efficiency", "latency"}, p + ".",
                       in.unmapped);
  }
  collect_unmapped(j, {"matrix", "mem1", "networks"}, "", in.unmapped);
  in.assumed.push_back(fmt::format("attention efficiency {:g}", g.eff.attention));
  if (g.peak_fp8_flops == 0) in.assumed.push_back("no fp8");
  g.source = "Calculon system file (github.com/calculon-ai/calculon), mapped by railsim";
  return g;
}

std::string calculon_warning(const std::string& option, const std::string& file,
                             std::string_view kind, const CalculonImport& info) {
  if (info.unmapped.empty() && info.assumed.empty()) return {};
  // The file's name: a path may be long, and the user knows which file they gave.
  std::string line = fmt::format("{}: {} read as a Calculon {} file", option,
                                 printable(std::filesystem::path(file).filename().string()), kind);
  if (!info.unmapped.empty())
    line += fmt::format("; not mapped: {}", fmt::join(info.unmapped, ", "));
  if (!info.assumed.empty()) line += fmt::format("; assumed: {}", fmt::join(info.assumed, ", "));
  return line;
}

void set_warning_sink(WarningSink sink) {
  std::lock_guard lock(g_warn_mutex);
  g_sink = sink ? sink : &default_sink;
}

void warn(const std::string& line) {
  WarningSink s;
  {
    std::lock_guard lock(g_warn_mutex);
    s = g_sink;
  }
  s(line);
}

}  // namespace railsim::spec
