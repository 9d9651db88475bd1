#include "railsim/sim/moe.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "railsim/core/cancel.hpp"
#include "railsim/core/enum.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/hash.hpp"
#include "railsim/core/json.hpp"

namespace railsim::sim {

namespace {

// SplitMix64 stream (Steele, Lea and Flood, OOPSLA 2014): small, fast, and the same numbers on
// every platform (std:: distributions are not specified bit for bit).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() { return s_.next(); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::uint64_t below(std::uint64_t n) { return static_cast<std::uint64_t>(uniform() * n); }

 private:
  SplitMix64 s_;
};

// Walker's alias method (Vose's construction): O(1) draws from a discrete law.
class AliasTable {
 public:
  explicit AliasTable(const std::vector<double>& p) : prob_(p.size()), alias_(p.size(), 0) {
    const std::size_t n = p.size();
    double sum = 0;
    for (double x : p) sum += x;
    std::vector<double> q(n);
    std::vector<std::int32_t> small, large;
    for (std::size_t i = 0; i < n; ++i) {
      q[i] = p[i] / sum * static_cast<double>(n);
      (q[i] < 1.0 ? small : large).push_back(static_cast<std::int32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const auto s = small.back(), l = large.back();
      small.pop_back();
      prob_[static_cast<std::size_t>(s)] = q[static_cast<std::size_t>(s)];
      alias_[static_cast<std::size_t>(s)] = l;
      q[static_cast<std::size_t>(l)] += q[static_cast<std::size_t>(s)] - 1.0;
      if (q[static_cast<std::size_t>(l)] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (auto i : large) prob_[static_cast<std::size_t>(i)] = 1.0;
    for (auto i : small) prob_[static_cast<std::size_t>(i)] = 1.0;  // rounding leftovers
  }
  std::int32_t draw(Rng& rng) const {
    const double u = rng.uniform() * static_cast<double>(prob_.size());
    const auto i = std::min(static_cast<std::size_t>(u), prob_.size() - 1);
    return u - static_cast<double>(i) < prob_[i] ? static_cast<std::int32_t>(i) : alias_[i];
  }

 private:
  std::vector<double> prob_;
  std::vector<std::int32_t> alias_;
};

constexpr EnumNames<MoePhase, 3> kPhaseNames{
    {{{MoePhase::dispatch, "dispatch"}, {MoePhase::combine, "combine"}, {MoePhase::both, "both"}}}};

// The HB domains of a group, numbered 0.. in order of first appearance, for each member.
std::vector<std::int32_t> member_domains(const Group& group, const spec::Cluster& c,
                                         std::int32_t& count) {
  std::vector<std::int64_t> seen;
  std::vector<std::int32_t> out(group.size());
  for (std::size_t m = 0; m < group.size(); ++m) {
    const std::int64_t d = c.domain_of(group[m]);
    auto it = std::find(seen.begin(), seen.end(), d);
    if (it == seen.end()) {
      seen.push_back(d);
      it = seen.end() - 1;
    }
    out[m] = static_cast<std::int32_t>(it - seen.begin());
  }
  count = static_cast<std::int32_t>(seen.size());
  return out;
}

// Everything a source needs to route its tokens, built once per group.
struct Router {
  const MoeRouting& r;
  std::int64_t n;
  std::vector<double> p;
  AliasTable alias;
  std::vector<std::int32_t> expert_domain;                // per expert
  std::vector<std::vector<std::int32_t>> domain_experts;  // per domain

  Router(const MoeRouting& routing, const Group& group, const spec::Cluster& c)
      : r(routing),
        n(static_cast<std::int64_t>(group.size())),
        p(expert_popularity(routing)),
        alias(p) {
    std::int32_t domains = 0;
    const auto md = member_domains(group, c, domains);
    expert_domain.resize(static_cast<std::size_t>(r.experts));
    domain_experts.resize(static_cast<std::size_t>(domains));
    for (std::int64_t e = 0; e < r.experts; ++e) {
      const auto d = md[static_cast<std::size_t>(expert_host(e, r.experts, n))];
      expert_domain[static_cast<std::size_t>(e)] = d;
      domain_experts[static_cast<std::size_t>(d)].push_back(static_cast<std::int32_t>(e));
    }
  }

  // Token by token: Plackett-Luce picks (alias draws, rejecting experts already taken; an
  // explicit draw over what is left once taken experts hold half the mass or the token's M
  // domains are fixed). Writes tokens x topk ids to out; returns the sum over tokens of the
  // domains each reaches.
  std::int64_t route(std::uint64_t stream, std::int32_t* out) const {
    Rng rng(splitmix64(r.seed ^ splitmix64(stream)));
    const auto k = static_cast<std::size_t>(r.topk);
    const std::size_t limit =
        r.max_domains > 0 ? static_cast<std::size_t>(r.max_domains) : domain_experts.size();
    std::vector<std::int32_t> doms;
    std::vector<std::int32_t> cand;
    std::int64_t domain_sum = 0;
    for (std::int64_t t = 0; t < r.tokens; ++t) {
      if ((t & 0xffff) == 0) check_cancelled();
      std::int32_t* chosen = out + static_cast<std::size_t>(t) * k;
      std::size_t got = 0;
      double mass = 0;
      doms.clear();
      auto taken = [&](std::int32_t e) {
        return std::find(chosen, chosen + got, e) != chosen + got;
      };
      auto take = [&](std::int32_t e) {
        chosen[got++] = e;
        mass += p[static_cast<std::size_t>(e)];
        const auto d = expert_domain[static_cast<std::size_t>(e)];
        if (std::find(doms.begin(), doms.end(), d) == doms.end()) doms.push_back(d);
      };
      while (got < k) {
        const bool fixed = doms.size() >= limit;
        if (!fixed && mass < 0.5) {
          const auto e = alias.draw(rng);
          if (!taken(e)) take(e);
          continue;
        }
        cand.clear();
        if (fixed) {
          for (auto d : doms)
            for (auto e : domain_experts[static_cast<std::size_t>(d)])
              if (!taken(e)) cand.push_back(e);
          std::sort(cand.begin(), cand.end());
        } else {
          for (std::int32_t e = 0; e < static_cast<std::int32_t>(r.experts); ++e)
            if (!taken(e)) cand.push_back(e);
        }
        double total = 0;
        for (auto e : cand) total += p[static_cast<std::size_t>(e)];
        if (cand.empty()) throw std::logic_error("moe routing: no expert left to pick");
        std::int32_t pick = cand.back();
        if (total > 0) {
          double u = rng.uniform() * total;
          for (auto e : cand) {
            const double w = p[static_cast<std::size_t>(e)];
            if (w > 0 && u < w) {
              pick = e;
              break;
            }
            u -= w;
          }
          if (p[static_cast<std::size_t>(pick)] <= 0)  // rounding: the last positive one
            for (auto it = cand.rbegin(); it != cand.rend(); ++it)
              if (p[static_cast<std::size_t>(*it)] > 0) {
                pick = *it;
                break;
              }
        } else {  // the allowed domains hold only experts of zero weight: any of them
          pick = cand[static_cast<std::size_t>(rng.below(cand.size()))];
        }
        take(pick);
      }
      domain_sum += static_cast<std::int64_t>(doms.size());
    }
    return domain_sum;
  }
};

void check_weights(const std::vector<double>& w, const std::string& option) {
  for (std::size_t i = 0; i < w.size(); ++i)
    if (!(w[i] >= 0) || !std::isfinite(w[i]))
      throw InputError(option,
                       fmt::format("entry {} is {}; weights must be finite and >= 0", i, w[i]));
}

// The dispatch matrix of one group, and the sum over its tokens of the domains they reach.
std::vector<double> dispatch(const MoeRouting& r, const Group& group, const spec::Cluster& c,
                             double bytes_per_token, double& domain_sum) {
  check_moe(r, group, c);
  if (!(bytes_per_token > 0) || !std::isfinite(bytes_per_token))
    throw InputError(
        "--bytes-per-token",
        fmt::format("must be a positive finite number of bytes, got {}", bytes_per_token));
  const auto n = static_cast<std::size_t>(group.size());
  std::vector<double> m(n * n, 0.0);
  domain_sum = 0;
  const double total = static_cast<double>(n) * static_cast<double>(r.tokens) *
                       static_cast<double>(r.topk) * bytes_per_token;
  if (r.popularity == Popularity::pair_weights) {
    double sum = 0;
    for (double w : r.weights) sum += w;
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = r.weights[i] / sum * total;
    return m;
  }
  const Router router(r, group, c);
  std::vector<std::int64_t> dom(n, 0);
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t src) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(r.tokens * r.topk));
    dom[src] = router.route(static_cast<std::uint64_t>(group[src]), ids.data());
    std::vector<std::int64_t> count(n, 0);
    for (auto e : ids) ++count[static_cast<std::size_t>(expert_host(e, r.experts, router.n))];
    for (std::size_t j = 0; j < n; ++j)
      m[src * n + j] = static_cast<double>(count[j]) * bytes_per_token;
  });
  for (auto d : dom) domain_sum += static_cast<double>(d);
  return m;
}

}  // namespace

void parse_skew(std::string_view text, MoeRouting& r, const std::string& option) {
  if (text == "uniform") {
    r.popularity = Popularity::uniform;
    r.zipf_s = 0;
    return;
  }
  if (text.rfind("zipf:", 0) == 0) {
    const std::string_view v = text.substr(5);
    double s = 0;
    const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), s);
    if (ec != std::errc() || ptr != v.data() + v.size() || v.empty())
      throw InputError(option, fmt::format("'{}': the Zipf exponent is not a number", text));
    if (!(s >= 0 && s <= kMaxZipfExponent))
      throw InputError(
          option, fmt::format("Zipf exponent {} is out of range [0, {:g}]", s, kMaxZipfExponent));
    r.popularity = Popularity::zipf;
    r.zipf_s = s;
    return;
  }
  throw InputError(option, fmt::format("unknown skew '{}'; valid: uniform, zipf:S (S in [0, {:g}])",
                                       text, kMaxZipfExponent));
}

void load_weights(const std::string& path, Popularity kind, MoeRouting& r,
                  const std::string& option) {
  const Json j = read_json_file(path, option);
  if (!j.is_array() || j.empty())
    throw InputError(option, "expected a non-empty JSON array of weights (or of rows of weights)");
  std::vector<double> w;
  std::int64_t rows = 0;
  auto number = [&](const Json& x, std::size_t i) {
    if (!x.is_number()) throw InputError(option, fmt::format("entry {} is not a number", i));
    return x.get<double>();
  };
  if (j.front().is_array()) {
    const std::size_t cols = j.front().size();
    for (std::size_t row = 0; row < j.size(); ++row) {
      if (!j[row].is_array() || j[row].size() != cols)
        throw InputError(option,
                         fmt::format("row {} is not an array of {} numbers like row 0", row, cols));
      for (const auto& x : j[row]) w.push_back(number(x, w.size()));
    }
    rows = static_cast<std::int64_t>(j.size());
    if (static_cast<std::size_t>(rows) != cols)
      throw InputError(option,
                       fmt::format("the matrix is {} x {}; a pair matrix is square", rows, cols));
  } else {
    for (const auto& x : j) w.push_back(number(x, w.size()));
  }
  check_weights(w, option);
  if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0; }))
    throw InputError(option, "every weight is zero");
  r.popularity = kind;
  r.weights = std::move(w);
  r.weight_rows = rows;
}

void check_moe(const MoeRouting& r, const Group& group, const spec::Cluster& c) {
  const auto n = static_cast<std::int64_t>(group.size());
  if (n < 2) throw InputError("--group", "an all-to-all group needs at least 2 GPUs");
  check_integer("--tokens", r.tokens, 1, 10'000'000);
  check_integer("--experts", r.experts, 1, 1'000'000);
  if (r.topk < 1 || r.topk > r.experts)
    throw InputError("--topk", fmt::format("{} is out of range: a token picks 1 to --experts ({}) "
                                           "distinct experts",
                                           r.topk, r.experts));
  const std::int64_t routed =
      checked_mul("--tokens", checked_mul("--tokens", r.tokens, r.topk, "tokens x topk"), n,
                  "tokens x topk x GPUs");
  // Routing is bounded before it starts (about 20 s on one core at the bound).
  if (r.popularity != Popularity::pair_weights && routed > kMaxRoutedTokens)
    throw InputError(
        "--tokens",
        fmt::format("{} tokens x top-{} x {} GPUs routes {:.3g} token copies, more "
                    "than one run takes ({:.0g}, about 20 s); take at most {} tokens "
                    "per GPU",
                    r.tokens, r.topk, n, static_cast<double>(routed),
                    static_cast<double>(kMaxRoutedTokens), kMaxRoutedTokens / (r.topk * n)));
  if (r.popularity == Popularity::pair_weights) {
    if (r.weight_rows != n || static_cast<std::int64_t>(r.weights.size()) != n * n)
      throw InputError("--pair-matrix",
                       fmt::format("the matrix has {} rows; the all-to-all group has {} GPUs, so "
                                   "it must be {} x {}",
                                   r.weight_rows, n, n, n));
    check_weights(r.weights, "--pair-matrix");
    // The diagonal is a GPU's tokens to its own experts: nothing crosses a link.
    bool sends = false;
    for (std::int64_t i = 0; i < n && !sends; ++i)
      for (std::int64_t j = 0; j < n && !sends; ++j)
        sends = i != j && r.weights[static_cast<std::size_t>(i * n + j)] > 0;
    if (!sends)
      throw InputError("--pair-matrix",
                       "only the diagonal (a GPU to itself) has weight, so the all-to-all sends "
                       "nothing over any link; give weight to some pair of two GPUs");
    if (r.max_domains > 0)
      throw InputError("--max-domains", "has no effect with --pair-matrix (no token routing)");
    return;
  }
  if (r.experts < n)
    throw InputError("--experts", fmt::format("{} experts over an all-to-all group of {} GPUs: "
                                              "every GPU hosts at least one expert (E >= n)",
                                              r.experts, n));
  if (r.popularity == Popularity::zipf && !(r.zipf_s >= 0 && r.zipf_s <= kMaxZipfExponent))
    throw InputError("--skew", fmt::format("Zipf exponent {} is out of range [0, {:g}]", r.zipf_s,
                                           kMaxZipfExponent));
  if (r.popularity == Popularity::expert_weights) {
    if (r.weight_rows != 0 || static_cast<std::int64_t>(r.weights.size()) != r.experts)
      throw InputError(
          "--expert-weights",
          fmt::format("expected a flat array of --experts ({}) weights, got {}", r.experts,
                      r.weight_rows != 0 ? fmt::format("{} rows", r.weight_rows)
                                         : std::to_string(r.weights.size())));
    check_weights(r.weights, "--expert-weights");
    const auto positive =
        std::count_if(r.weights.begin(), r.weights.end(), [](double x) { return x > 0; });
    if (positive < r.topk)
      throw InputError("--expert-weights",
                       fmt::format("only {} experts have a positive weight, fewer than --topk {}",
                                   positive, r.topk));
  }
  if (r.max_domains < 0)
    throw InputError("--max-domains",
                     fmt::format("must be >= 1 (0: no limit), got {}", r.max_domains));
  if (r.max_domains > 0) {
    std::int32_t domains = 0;
    const auto md = member_domains(group, c, domains);
    std::vector<std::int64_t> per(static_cast<std::size_t>(domains), 0);
    for (std::int64_t e = 0; e < r.experts; ++e)
      ++per[static_cast<std::size_t>(md[static_cast<std::size_t>(expert_host(e, r.experts, n))])];
    std::sort(per.begin(), per.end());
    std::int64_t fewest = 0;
    for (std::int64_t d = 0; d < std::min<std::int64_t>(r.max_domains, domains); ++d)
      fewest += per[static_cast<std::size_t>(d)];
    if (fewest < r.topk)
      throw InputError("--max-domains",
                       fmt::format("{} HB domain(s) may hold only {} experts, fewer than --topk "
                                   "{}; allow more domains",
                                   r.max_domains, fewest, r.topk));
  }
}

std::vector<double> expert_popularity(const MoeRouting& r) {
  const auto e = static_cast<std::size_t>(r.experts);
  std::vector<double> p(e, 1.0);
  if (r.popularity == Popularity::expert_weights) {
    p = r.weights;
  } else if (r.popularity == Popularity::zipf) {
    // Ranks dealt to experts by a seeded Fisher-Yates shuffle.
    std::vector<std::size_t> perm(e);
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    Rng rng(splitmix64(r.seed ^ 0x5A1F5A1F5A1F5A1Full));
    for (std::size_t i = e; i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
    for (std::size_t rank = 0; rank < e; ++rank)
      p[perm[rank]] = std::pow(static_cast<double>(rank + 1), -r.zipf_s);
  } else if (r.popularity == Popularity::pair_weights) {
    throw std::logic_error("expert_popularity: a pair matrix has no expert popularity");
  }
  double sum = 0;
  for (double x : p) sum += x;
  for (double& x : p) x /= sum;
  return p;
}

std::vector<std::int32_t> route_tokens(const MoeRouting& r, const Group& group,
                                       const spec::Cluster& c, std::int64_t src) {
  check_moe(r, group, c);
  if (r.popularity == Popularity::pair_weights)
    throw InputError("--pair-matrix", "a pair matrix routes no tokens");
  if (src < 0 || src >= static_cast<std::int64_t>(group.size()))
    throw std::logic_error("route_tokens: source outside the group");
  const Router router(r, group, c);
  std::vector<std::int32_t> out(static_cast<std::size_t>(r.tokens * r.topk));
  router.route(static_cast<std::uint64_t>(group[static_cast<std::size_t>(src)]), out.data());
  return out;
}

std::vector<double> moe_dispatch_bytes(const MoeRouting& r, const Group& group,
                                       const spec::Cluster& c, double bytes_per_token) {
  double domain_sum = 0;
  return dispatch(r, group, c, bytes_per_token, domain_sum);
}

std::vector<double> transpose_square(const std::vector<double>& m) {
  const auto n = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(m.size()))));
  if (n * n != m.size()) throw std::logic_error("transpose_square: not a square matrix");
  std::vector<double> t(m.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) t[j * n + i] = m[i * n + j];
  return t;
}

MoePhase parse_moe_phase(std::string_view s, const std::string& option) {
  return kPhaseNames.parse(s, option, "MoE phase");
}

std::string_view to_string(MoePhase p) {
  return kPhaseNames.name(p);
}

MoeResult simulate_moe(const SimNetwork& net, const MoeRequest& req, const SimConfig& cfg,
                       int busiest) {
  MoeResult out;
  // Refused before any token is routed: every pair may carry bytes.
  double pairs = 0;
  for (const auto& g : req.groups)
    pairs += static_cast<double>(g.size()) * static_cast<double>(g.size() - 1);
  if (pairs > static_cast<double>(cfg.max_flows))
    throw InputError("--max-flows",
                     fmt::format("a skewed all-to-all over these groups may need {:.0f} "
                                 "transfers, more than --max-flows {}; raise it, or use fewer GPUs "
                                 "or smaller groups",
                                 pairs, cfg.max_flows));
  AllToAllV disp{"dispatch", {}};
  double domain_sum = 0, tokens = 0, in_max = 0, out_max = 0, net_bytes = 0, cross = 0;
  std::int64_t gpus = 0;
  for (const auto& g : req.groups) {
    double ds = 0;
    disp.pair_bytes.push_back(dispatch(req.routing, g, net.cluster, req.bytes_per_token, ds));
    domain_sum += ds;
    tokens += static_cast<double>(req.routing.tokens) * static_cast<double>(g.size());
    const auto& m = disp.pair_bytes.back();
    const std::size_t n = g.size();
    std::vector<double> in(n, 0.0), o(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const double b = m[i * n + j];
        out.stats.total_bytes += b;
        if (i == j) continue;
        in[j] += b;
        o[i] += b;
        net_bytes += b;
        if (net.cluster.domain_of(g[i]) != net.cluster.domain_of(g[j])) cross += b;
      }
    in_max = std::max(in_max, *std::max_element(in.begin(), in.end()));
    out_max = std::max(out_max, *std::max_element(o.begin(), o.end()));
    gpus += static_cast<std::int64_t>(n);
  }
  const double mean = gpus > 0 ? net_bytes / static_cast<double>(gpus) : 0;
  out.stats.max_in_over_mean = mean > 0 ? in_max / mean : 0;
  out.stats.max_out_over_mean = mean > 0 ? out_max / mean : 0;
  out.stats.cross_domain_share = net_bytes > 0 ? cross / net_bytes : 0;
  out.stats.domains_per_token =
      req.routing.popularity == Popularity::pair_weights || tokens == 0 ? 0 : domain_sum / tokens;
  std::vector<AllToAllV> phases;
  if (req.phase != MoePhase::combine) phases.push_back(disp);
  if (req.phase != MoePhase::dispatch) {
    AllToAllV comb{"combine", {}};
    for (const auto& m : disp.pair_bytes) comb.pair_bytes.push_back(transpose_square(m));
    phases.push_back(std::move(comb));
  }
  out.sim = simulate_alltoallv(net, req.groups, phases, cfg, busiest);
  return out;
}

std::string describe_popularity(const MoeRouting& r) {
  switch (r.popularity) {
    case Popularity::uniform:
      return "uniform";
    case Popularity::zipf:
      return fmt::format("Zipf s={:g}", r.zipf_s);
    case Popularity::expert_weights:
      return "expert weights from a file";
    case Popularity::pair_weights:
      return "GPU-pair weights from a file";
  }
  return "?";
}

Json to_json(const MoeRequest& req, const MoeStats& stats) {
  const auto& r = req.routing;
  static constexpr const char* kNames[] = {"uniform", "zipf", "expert_weights", "pair_weights"};
  return Json{{"skew", kNames[static_cast<int>(r.popularity)]},
              {"zipf_s", r.zipf_s},
              {"experts", r.experts},
              {"topk", r.topk},
              {"max_domains", r.max_domains},
              {"tokens", r.tokens},
              {"bytes_per_token", req.bytes_per_token},
              {"phase", std::string(to_string(req.phase))},
              {"seed", r.seed},
              {"dispatch_bytes", stats.total_bytes},
              {"max_in_over_mean", stats.max_in_over_mean},
              {"max_out_over_mean", stats.max_out_over_mean},
              {"cross_domain_share", stats.cross_domain_share},
              {"domains_per_token", stats.domains_per_token}};
}

}  // namespace railsim::sim
