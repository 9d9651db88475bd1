#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "failure_checks.hpp"
#include "railsim/core/error.hpp"
#include "railsim/topo/failures.hpp"
#include "route_hash.hpp"
#include "tier_word.hpp"

namespace railsim::topo {

namespace {

using detail::mix;
using detail::tier_word;

std::int64_t switches_at(const Fabric& f, int tier) {
  if (tier < 1 || tier > f.tiers) return 0;
  return f.layout.instances * f.plan.tiers[static_cast<std::size_t>(tier - 1)].switches();
}

std::int64_t uplinks_at(const Fabric& f, int boundary) {
  if (boundary < 1 || boundary >= f.tiers) return 0;
  return f.layout.instances * f.plan.tiers[static_cast<std::size_t>(boundary - 1)].uplinks();
}

}  // namespace

std::string link_tier_name(LinkKind kind, int tier) {
  if (kind == LinkKind::hb) return "HB";
  if (kind == LinkKind::nic) return "GPU-leaf";
  switch (tier) {
    case 1:
      return "leaf-spine";
    case 2:
      return "spine-core";
    default:
      return fmt::format("tier-{}", tier);
  }
}

std::string to_string(const Failure& f) {
  switch (f.kind) {
    case FailureKind::gpu:
      return fmt::format("gpu:{}", f.index);
    case FailureKind::nic:
      return f.nic == 0 ? fmt::format("nic:{}", f.index) : fmt::format("nic:{}.{}", f.index, f.nic);
    case FailureKind::link:
      return f.nic == 0 ? fmt::format("link:{}", f.index)
                        : fmt::format("link:{}.{}", f.index, f.nic);
    case FailureKind::switch_:
      if (const char* w = tier_word(f.tier)) return fmt::format("{}:{}", w, f.index);
      return fmt::format("switch:{}:{}", f.tier, f.index);
    case FailureKind::uplink:
      return fmt::format("uplink:{}:{}", f.tier, f.index);
    case FailureKind::domain:
      return fmt::format("domain:{}", f.index);
    case FailureKind::hb_plane:
      return f.nic == 0 ? fmt::format("nvswitch:{}", f.index)
                        : fmt::format("nvswitch:{}.{}", f.index, f.nic);
    case FailureKind::plane:
      return fmt::format("plane:{}", f.index);
  }
  return "?";
}

namespace {

std::int64_t parse_index(std::string_view s, std::string_view spec, const std::string& option,
                         std::int64_t count, const std::string& what) {
  std::int64_t v = -1;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // Digits only: "-0" and "+3" are not indices.
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])) || ec != std::errc() ||
      p != s.data() + s.size() || v < 0)
    throw InputError(option, fmt::format("'{}': {} index '{}' is not a non-negative integer", spec,
                                         what, printable(s)));
  if (count <= 0) throw InputError(option, fmt::format("'{}': this network has no {}", spec, what));
  if (v >= count)
    throw InputError(option, fmt::format("'{}': {} index {} is out of range (0 to {})", spec, what,
                                         v, count - 1));
  return v;
}

}  // namespace

namespace detail {

void check_failure(const Failure& x, const Fabric& f, const std::string& option) {
  const std::string spec = to_string(x);
  auto range = [&](std::int64_t count, const std::string& what) {
    if (count <= 0)
      throw InputError(option, fmt::format("'{}': this network has no {}", spec, what));
    if (x.index < 0 || x.index >= count)
      throw InputError(option, fmt::format("'{}': {} index {} is out of range (0 to {})", spec,
                                           what, x.index, count - 1));
  };
  switch (x.kind) {
    case FailureKind::gpu:
      range(f.cluster.gpus, "GPU");
      return;
    case FailureKind::nic:
    case FailureKind::link:
      if (f.layout.instances == 0) range(0, "NICs (ideal has no scale-out network)");
      range(f.cluster.gpus, "GPU");
      if (x.nic < 0 || x.nic >= f.nics_per_gpu())
        throw InputError(option, fmt::format("'{}': NIC {} is out of range (0 to {})", spec, x.nic,
                                             f.nics_per_gpu() - 1));
      return;
    case FailureKind::switch_:
      if (x.tier < 1 || x.tier > f.tiers)
        throw InputError(option, f.tiers == 0
                                     ? fmt::format("'{}': this network has no switches", spec)
                                     : fmt::format("'{}': tier {} is out of range (1 to {})", spec,
                                                   x.tier, f.tiers));
      range(switches_at(f, x.tier), fmt::format("tier-{} switch", x.tier));
      return;
    case FailureKind::uplink:
      if (x.tier < 1 || x.tier >= f.tiers)
        throw InputError(option,
                         f.tiers <= 1
                             ? fmt::format("'{}': this network has no switch-switch links", spec)
                             : fmt::format("'{}': tier boundary {} is out of range (1 to {})", spec,
                                           x.tier, f.tiers - 1));
      range(uplinks_at(f, x.tier), "switch-switch link");
      return;
    case FailureKind::domain:
      range(f.cluster.domains(), "HB domain");
      return;
    case FailureKind::hb_plane:
      if (f.cluster.gpu.hb_planes <= 0)
        throw InputError(option, fmt::format("'{}': the GPU preset {} does not give hb_planes (the "
                                             "switch planes of its HB domain)",
                                             spec, f.cluster.gpu.name));
      range(f.cluster.domains(), "HB domain");
      if (x.nic < 0 || x.nic >= f.cluster.gpu.hb_planes)
        throw InputError(option, fmt::format("'{}': plane {} is out of range (0 to {})", spec,
                                             x.nic, f.cluster.gpu.hb_planes - 1));
      return;
    case FailureKind::plane:
      range(f.layout.instances > 0 ? f.layout.planes : 0, "network plane");
      return;
  }
}

}  // namespace detail

using detail::check_failure;

Failure parse_failure(std::string_view spec, const Fabric& f, const std::string& option) {
  // The spec and its kind are the user's text: escaped and cut wherever they are echoed.
  const std::string shown = printable(spec);
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos)
    throw InputError(option, fmt::format("'{}': expected KIND:INDEX with KIND one of gpu, nic, "
                                         "link, leaf, spine, core, switch, uplink, domain, "
                                         "nvswitch, plane",
                                         shown));
  const std::string_view kind = spec.substr(0, colon);
  std::string_view rest = spec.substr(colon + 1);
  Failure x;
  auto tier_and_index = [&](FailureKind k, const std::string& what, std::int64_t tiers) {
    x.kind = k;
    const auto c2 = rest.find(':');
    if (c2 == std::string_view::npos)
      throw InputError(option, fmt::format("'{}': expected {}:TIER:INDEX", shown, printable(kind)));
    x.tier = static_cast<int>(parse_index(rest.substr(0, c2), shown, option, tiers + 1, what));
    rest = rest.substr(c2 + 1);
  };
  if (kind == "gpu") {
    x.kind = FailureKind::gpu;
  } else if (kind == "nic" || kind == "link" || kind == "nvswitch") {
    x.kind = kind == "nic"    ? FailureKind::nic
             : kind == "link" ? FailureKind::link
                              : FailureKind::hb_plane;
    const auto dot = rest.find('.');
    if (dot != std::string_view::npos) {
      const bool plane = x.kind == FailureKind::hb_plane;
      x.nic = static_cast<int>(
          parse_index(rest.substr(dot + 1), shown, option,
                      plane ? (f.cluster.gpu.hb_planes > 0 ? f.cluster.gpu.hb_planes : 1 << 30)
                            : f.nics_per_gpu(),
                      plane ? "plane" : "NIC"));
      rest = rest.substr(0, dot);
    }
  } else if (kind == "leaf" || kind == "spine" || kind == "core") {
    x.kind = FailureKind::switch_;
    x.tier = kind == "leaf" ? 1 : kind == "spine" ? 2 : 3;
  } else if (kind == "switch") {
    tier_and_index(FailureKind::switch_, "tier", f.tiers);
  } else if (kind == "uplink") {
    tier_and_index(FailureKind::uplink, "tier boundary", f.tiers);
  } else if (kind == "domain") {
    x.kind = FailureKind::domain;
  } else if (kind == "plane") {
    x.kind = FailureKind::plane;
  } else {
    throw InputError(option,
                     fmt::format("'{}': unknown component '{}'; valid: gpu, nic, link, "
                                 "leaf, spine, core, switch, uplink, domain, nvswitch, plane",
                                 shown, printable(kind)));
  }
  x.index = parse_index(rest, shown, option, std::numeric_limits<std::int64_t>::max(), "component");
  check_failure(x, f, option);
  return x;
}

FailureSet random_failures(const Fabric& f, std::int64_t count, std::uint64_t seed,
                           const std::string& option) {
  const std::int64_t N = f.cluster.gpus, M = f.layout.instances > 0 ? f.nics_per_gpu() : 0;
  std::int64_t sw = 0, up = 0;
  for (int t = 1; t <= f.tiers; ++t) sw += switches_at(f, t);
  for (int t = 1; t < f.tiers; ++t) up += uplinks_at(f, t);
  const std::int64_t planes = f.cluster.domains() * std::max(0, f.cluster.gpu.hb_planes);
  const std::int64_t pool[6] = {N, N * M, N * M, sw, up, planes};
  std::int64_t total = 0;
  for (auto p : pool) total += p;
  if (count < 0 || count > total)
    throw InputError(option,
                     fmt::format("{} failures asked of a network of {} components", count, total));
  std::set<std::tuple<int, std::int64_t, int, int>> seen;
  FailureSet out;
  SplitMix64 stream(mix(seed ^ 0x5eedf00dULL));
  auto next = [&stream](std::uint64_t n) { return stream.next() % n; };
  while (static_cast<std::int64_t>(out.size()) < count) {
    auto r = static_cast<std::int64_t>(next(static_cast<std::uint64_t>(total)));
    int k = 0;
    while (r >= pool[k]) r -= pool[k++];
    Failure x;
    switch (k) {
      case 0:
        x = {FailureKind::gpu, r, 0, 0};
        break;
      case 1:
      case 2:
        x = {k == 1 ? FailureKind::nic : FailureKind::link, r / M, static_cast<int>(r % M), 0};
        break;
      case 3: {
        int t = 1;
        while (r >= switches_at(f, t)) r -= switches_at(f, t++);
        x = {FailureKind::switch_, r, 0, t};
        break;
      }
      case 4: {
        int t = 1;
        while (r >= uplinks_at(f, t)) r -= uplinks_at(f, t++);
        x = {FailureKind::uplink, r, 0, t};
        break;
      }
      default:
        x = {FailureKind::hb_plane, r / f.cluster.gpu.hb_planes,
             static_cast<int>(r % f.cluster.gpu.hb_planes), 0};
        break;
    }
    if (seen.insert({static_cast<int>(x.kind), x.index, x.nic, x.tier}).second) out.push_back(x);
  }
  return out;
}

}  // namespace railsim::topo
