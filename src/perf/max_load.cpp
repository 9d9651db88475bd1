#include "max_load.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>

namespace railsim::perf {

namespace {

constexpr std::int64_t kExactBalls = 64;
constexpr std::size_t kRow = kExactBalls + 1;

// P(max <= x) for f <= 64 balls in u bins, [f * kRow + x]: P(max <= x) = f!/u^f [z^f]
// (sum_{j<=x} z^j/j!)^u (the multinomial count of throws with no bin above x). Scaled by 1/u per
// ball so that the coefficients stay in range: q(z/u)^u, raised by squaring.
std::vector<double> exact_cdf(std::int64_t u) {
  constexpr int F = kExactBalls;
  std::vector<double> cdf(kRow * kRow, 1.0);
  std::array<double, F + 1> fact{};
  fact[0] = 1;
  for (int i = 1; i <= F; ++i) fact[static_cast<std::size_t>(i)] = fact[i - 1] * i;
  const double ud = static_cast<double>(u);
  using Poly = std::array<double, F + 1>;
  auto mul = [](const Poly& a, const Poly& b) {
    Poly r{};
    for (int i = 0; i <= F; ++i)
      if (a[static_cast<std::size_t>(i)] != 0)
        for (int j = 0; i + j <= F; ++j)
          r[static_cast<std::size_t>(i + j)] +=
              a[static_cast<std::size_t>(i)] * b[static_cast<std::size_t>(j)];
    return r;
  };
  for (int x = 0; x < F; ++x) {
    Poly q{};
    double term = 1;
    for (int j = 0; j <= x; ++j) {
      q[static_cast<std::size_t>(j)] = term / fact[static_cast<std::size_t>(j)];
      term /= ud;
    }
    Poly r{};
    r[0] = 1;
    Poly base = q;
    for (std::int64_t k = u; k > 0; k >>= 1) {
      if (k & 1) r = mul(r, base);
      if (k > 1) base = mul(base, base);
    }
    for (int f = x + 1; f <= F; ++f)
      cdf[static_cast<std::size_t>(f) * kRow + static_cast<std::size_t>(x)] =
          std::clamp(r[static_cast<std::size_t>(f)] * fact[static_cast<std::size_t>(f)], 0.0, 1.0);
  }
  return cdf;
}

const std::vector<double>& exact_table(std::int64_t u) {
  static std::mutex mu;
  static std::map<std::int64_t, std::vector<double>> cache;
  const std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(u);
  if (it == cache.end()) it = cache.emplace(u, exact_cdf(u)).first;
  return it->second;
}

// P(Pois(lambda) <= x): the terms next to x by the ratio recurrence from pmf(x) (log space),
// the lower sum below the mean and one minus the upper tail above it, until a term no longer
// counts; O(sqrt(lambda)) terms.
double poisson_cdf(double lambda, std::int64_t x) {
  if (x < 0) return 0.0;
  const double xd = static_cast<double>(x);
  const double pmf_x = std::exp(xd * std::log(lambda) - lambda - std::lgamma(xd + 1));
  if (xd < lambda) {
    double sum = 0, term = pmf_x;
    for (double j = xd; j >= 0 && term > 1e-18 * sum; j -= 1) {
      sum += term;
      term *= j / lambda;
    }
    return std::min(sum, 1.0);
  }
  double tail = 0, term = pmf_x * lambda / (xd + 1);
  for (double j = xd + 1; term > 1e-18 * std::max(tail, 1e-300); j += 1) {
    tail += term;
    term *= lambda / (j + 1);
  }
  return std::clamp(1.0 - tail, 0.0, 1.0);
}

// The exact table of u (the last one asked for in this thread kept at hand).
const std::vector<double>& exact_table_cached(std::int64_t u) {
  thread_local std::int64_t last_u = -1;
  thread_local const std::vector<double>* last = nullptr;
  if (u != last_u) {
    last = &exact_table(u);
    last_u = u;
  }
  return *last;
}

}  // namespace

double max_load_cdf(std::int64_t f, std::int64_t u, std::int64_t x) {
  if (x < 0) return 0.0;
  if (f <= 0 || x >= f) return 1.0;
  if (u <= 1) return 0.0;     // x < f balls in one bin
  if (x * u < f) return 0.0;  // some bin holds at least ceil(f / u)
  if (f <= kExactBalls)
    return exact_table_cached(u)[static_cast<std::size_t>(f) * kRow + static_cast<std::size_t>(x)];
  const double p = poisson_cdf(static_cast<double>(f) / static_cast<double>(u), x);
  return std::pow(p, static_cast<double>(u));
}

double expected_max_load(std::int64_t f, std::int64_t u) {
  if (f <= 1 || u <= 1) return static_cast<double>(std::max<std::int64_t>(f, 0));
  double e = 0;
  for (std::int64_t x = 0; x < f; ++x) {
    const double tail = 1.0 - max_load_cdf(f, u, x);
    if (tail < 1e-15 && x * u >= f) break;
    e += tail;
  }
  return e;
}

namespace detail {

namespace {

// The Binomial(f, p) probabilities of b = 0 .. f balls (f <= 64), kept per thread: a shaped
// kind's groups are asked for at every load x that expected_max_over steps through.
const double* binomial_pmf(std::int64_t f, double p) {
  struct Entry {
    std::int64_t f = -1;
    double p = -1;
    std::array<double, kRow> pmf{};
  };
  thread_local std::array<Entry, 16> cache;
  thread_local std::size_t next = 0;
  for (const Entry& e : cache)
    if (e.f == f && e.p == p) return e.pmf.data();
  Entry& e = cache[next++ % cache.size()];
  e.f = f;
  e.p = p;
  const double lp = std::log(p), lq = std::log1p(-std::min(p, 1.0 - 1e-16));
  const double lf = std::lgamma(static_cast<double>(f) + 1);
  for (std::int64_t b = 0; b <= f; ++b) {
    const double bd = static_cast<double>(b);
    e.pmf[static_cast<std::size_t>(b)] =
        std::exp(lf - std::lgamma(bd + 1) - std::lgamma(static_cast<double>(f - b) + 1) + bd * lp +
                 static_cast<double>(f - b) * lq);
  }
  return e.pmf.data();
}

// P(busiest link <= x) of a shaped kind (ours): the switches' balls drawn as independent, each
// switch's Binomial(f, share / ports) balls thrown evenly into its links (exact up to 64 balls,
// beyond them each link Poisson, as max_load_cdf does).
double shaped_cdf(const HashedBundles& k, std::int64_t x) {
  const std::int64_t f = k.flows;
  if (x >= f) return 1.0;
  if (x < 0) return 0.0;
  const std::vector<double>& sh = *k.shape;
  const double ports = static_cast<double>(k.ports);
  double log_p = 0;
  for (std::size_t g = 0; g + 2 < sh.size(); g += 3) {
    const auto n = static_cast<std::int64_t>(sh[g]);
    const double p = sh[g + 1] / ports, like = sh[g + 2] * ports;
    double c = 0;
    if (p <= 0) continue;
    if (f <= kExactBalls) {
      const double* pmf = binomial_pmf(f, p);
      for (std::int64_t b = 0; b <= f; ++b)
        c += pmf[static_cast<std::size_t>(b)] * max_load_cdf(b, n, x);
    } else {
      c = std::pow(poisson_cdf(static_cast<double>(f) * p / static_cast<double>(n), x),
                   static_cast<double>(n));
    }
    if (c <= 0) return 0.0;
    log_p += like * std::log(std::min(c, 1.0));
  }
  return std::exp(log_p);
}

double kind_cdf(const HashedBundles& k, std::int64_t x) {
  return k.shape ? shaped_cdf(k, x) : max_load_cdf(k.flows, k.links, x);
}

}  // namespace

// Sub-block i's down links over round-robin tier `hi` as a HashedBundles shape: the flows'
// `share` of each top switch of the parent block (summing to 1), the switches grouped by (links
// to i, share) into flattened triples {links, share, switches}; empty where every link is
// equally likely.
std::vector<double> switch_shape(const topo::ClosTier& hi, std::int64_t i,
                                 std::span<const double> share) {
  std::map<std::pair<std::int64_t, double>, double> like;  // (links, share) -> switches
  double q0 = -1;
  bool even = true;
  for (std::int64_t j = 0; j < hi.switches_per_block; ++j) {
    const std::int64_t n = hi.links_between(i, j);
    const double w = share[static_cast<std::size_t>(j)];
    const double q = w / static_cast<double>(n);  // one link's
    if (q0 < 0) q0 = q;
    even = even && std::abs(q - q0) <= 1e-9 * q0;
    like[{n, w}] += 1;
  }
  std::vector<double> sh;
  if (even) return sh;
  for (const auto& [key, switches] : like)
    sh.insert(sh.end(), {static_cast<double>(key.first), key.second, switches});
  return sh;
}

// E[max(d, T)], T the busiest link of independent hashed bundles: T <= tau when every bundle's
// busiest link holds at most floor(tau / seconds) flows, so E = d + integral over tau > d of
// 1 - prod_b P(M_b <= floor(tau / seconds_b)), piecewise constant between the multiples of each
// kind's `seconds`.
double expected_max_over(double d, const std::vector<HashedBundles>& kinds) {
  double top = d;
  for (const auto& k : kinds) top = std::max(top, static_cast<double>(k.flows) * k.seconds);
  if (top <= d) return d;
  // Below the load every kind's busiest link reaches almost surely, the tail is 1: start there.
  double start = d;
  for (const auto& k : kinds) {
    std::int64_t lo = 0, hi = k.flows;  // the first x with P(M <= x)^count above 1e-15
    while (lo < hi) {
      const std::int64_t mid = (lo + hi) / 2;
      if (std::pow(kind_cdf(k, mid), k.count) > 1e-15)
        hi = mid;
      else
        lo = mid + 1;
    }
    start = std::max(start, static_cast<double>(lo) * k.seconds);
  }
  double e = start, tau = start;
  while (tau < top) {
    double next = top, log_p = 0;
    bool zero = false;
    for (const auto& k : kinds) {
      const auto x = static_cast<std::int64_t>(std::floor(tau / k.seconds * (1 + 1e-12)));
      next = std::min(next, static_cast<double>(x + 1) * k.seconds);
      if (zero) continue;
      const double c = kind_cdf(k, x);
      if (c <= 0)
        zero = true;
      else
        log_p += k.count * std::log(c);
    }
    const double tail = zero ? 1.0 : 1.0 - std::exp(log_p);
    e += tail * (next - tau);
    if (!zero && tail < 1e-13) break;
    tau = next;
  }
  return e;
}

}  // namespace detail

}  // namespace railsim::perf
