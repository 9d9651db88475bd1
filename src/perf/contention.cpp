#include "railsim/perf/contention.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <tuple>

#include "max_load.hpp"
#include "railsim/core/hash.hpp"
#include "railsim/core/units.hpp"
#include "railsim/topo/fabric.hpp"

namespace railsim::perf {

// ---- the census ---------------------------------------------------------------------------------

namespace {
using detail::expected_max_over;
using detail::HashedBundles;
using detail::switch_shape;

// A kind of hashed bundle as the census collects them: flows (or balls), links (or bins), the
// boundary and the shape, ordered by the shape's content (null first), not its address, so that
// the kinds come out in an order that does not vary from run to run.
struct KindKey {
  std::int64_t flows, links, t;
  const std::vector<double>* shape;
  bool operator<(const KindKey& o) const {
    if (std::tie(flows, links, t) != std::tie(o.flows, o.links, o.t))
      return std::tie(flows, links, t) < std::tie(o.flows, o.links, o.t);
    if (!shape || !o.shape) return !shape && o.shape;
    return *shape < *o.shape;
  }
};

// A census's per-link counts, kept per thread between censuses (a census at 32,768 GPUs holds
// megabytes; allocating and zeroing them each time cost more than the counting): only what a
// census touched is zeroed after it.
struct CensusScratch {
  std::vector<double> hb_up, hb_dn, nic_up, nic_dn, b_up, b_dn;
  std::vector<std::int64_t> partner_up, partner_dn;
  std::vector<std::uint64_t>
      port_mask;  // per bundle: the NIC ports (bit j % 64) whose shares it carries
  std::vector<std::uint8_t> gpu_mark, bundle_mark;
  // Per down bundle of a round-robin tier under ecmp (Census::switch_stride_ entries): the flows
  // expected at each top switch of its parent block, by where they come from.
  std::vector<double> switch_dn;
  std::vector<std::int64_t> gpus, bundles;  // touched, in first-touch order
};
}  // namespace

// Flows per link of one phase step, by class: 0 inside an HB domain, 1 through the NIC network
// without forwarding, 2 and 3 the first and second legs of a forwarded transfer. The NIC count is
// per GPU (each transfer puts 1/M of its bytes on each of its M NICs); the bundle count is per
// flow on the bundle (one per NIC share).
class Census {
 public:
  enum : int { kHb = 0, kNet = 1, kLeg1 = 2, kLeg2 = 3, kClasses = 4 };

  explicit Census(const ContentionModel& m)
      : m_(m),
        c_(m.ports_),
        ideal_(m.design_.kind == spec::DesignKind::ideal),
        rail_only_(m.design_.kind == spec::DesignKind::rail_only),
        hb_first_(m.design_.forward_via == spec::ForwardVia::hb_first),
        nics_(c_.nics_per_gpu),
        // Connections hash on their own over the ports and, under ecmp, over the switches'
        // uplinks: on a one-port GPU too, where only the uplinks are left to choose.
        hash_ports_(m.design_.port_balance == spec::PortBalance::hash &&
                    (c_.nics_per_gpu > 1 || m.design_.connections > 1)),
        conns_(static_cast<double>(std::max(m.design_.connections, 1))),
        live_ports_(std::max<std::int64_t>(
            1, std::llround(static_cast<double>(c_.nics_per_gpu) / m.nic_load_))),
        port_Bps_(m.nic_Bps_ * m.nic_load_),
        sc_(scratch()),
        hb_up_(sc_.hb_up),
        hb_dn_(sc_.hb_dn),
        nic_up_(sc_.nic_up),
        nic_dn_(sc_.nic_dn),
        b_up_(sc_.b_up),
        b_dn_(sc_.b_dn),
        partner_up_(sc_.partner_up),
        partner_dn_(sc_.partner_dn) {
    const auto n = static_cast<std::size_t>(c_.gpus);
    const auto b = static_cast<std::size_t>(m.plan_.instances() * m.bundles_per_instance_);
    for (auto* v : {&hb_up_, &hb_dn_, &nic_up_, &nic_dn_})
      if (v->size() < n * kClasses) v->resize(n * kClasses, 0.0);
    for (auto* v : {&b_up_, &b_dn_})
      if (v->size() < b * kClasses) v->resize(b * kClasses, 0.0);
    for (auto* v : {&partner_up_, &partner_dn_})
      if (v->size() < b) v->resize(b, kNoPartner);
    if (sc_.gpu_mark.size() < n) sc_.gpu_mark.resize(n, 0);
    if (sc_.bundle_mark.size() < b) sc_.bundle_mark.resize(b, 0);
    if (sc_.port_mask.size() < b) sc_.port_mask.resize(b, 0);
    if (m.design_.routing == spec::Routing::ecmp)
      for (const topo::ClosTier& hi : m.plan_.plan.tiers)
        if (!hi.even()) switch_stride_ = std::max(switch_stride_, hi.switches_per_block);
    const auto sw = b * static_cast<std::size_t>(switch_stride_);
    if (sc_.switch_dn.size() < sw) sc_.switch_dn.resize(sw, 0.0);
  }
  Census(const Census&) = delete;
  Census& operator=(const Census&) = delete;
  ~Census() {
    for (const std::int64_t g : sc_.gpus) {
      const auto i = static_cast<std::size_t>(g);
      for (auto* v : {&hb_up_, &hb_dn_, &nic_up_, &nic_dn_})
        std::fill_n(v->begin() + static_cast<std::ptrdiff_t>(i * kClasses), kClasses, 0.0);
      sc_.gpu_mark[i] = 0;
    }
    for (const std::int64_t x : sc_.bundles) {
      const auto i = static_cast<std::size_t>(x);
      for (auto* v : {&b_up_, &b_dn_})
        std::fill_n(v->begin() + static_cast<std::ptrdiff_t>(i * kClasses), kClasses, 0.0);
      partner_up_[i] = partner_dn_[i] = kNoPartner;
      if (switch_stride_ > 0)
        std::fill_n(sc_.switch_dn.begin() +
                        static_cast<std::ptrdiff_t>(i * static_cast<std::size_t>(switch_stride_)),
                    switch_stride_, 0.0);
      sc_.bundle_mark[i] = 0;
      sc_.port_mask[i] = 0;
    }
    sc_.gpus.clear();
    sc_.bundles.clear();
  }

  void transfer(std::int64_t s, std::int64_t d) {
    if (s == d) return;
    if (ideal_ || c_.domain_of(s) == c_.domain_of(d)) {
      hb(s, d, kHb, 1.0);
      return;
    }
    if (rail_only_ && topo::needs_forwarding(c_, s, d)) {
      cross_rail_ = true;
      const std::int64_t w = topo::forwarding_peer(c_, m_.design_.forward_via, s, d);
      if (hb_first_) {
        hb(s, w, kLeg1, 1.0);
        net(w, d, kLeg2, 1.0);
      } else {
        net(s, w, kLeg1, 1.0);
        hb(w, d, kLeg2, 1.0);
      }
      forwarded_.push_back({s, w, d});
      return;
    }
    if (c_.rail_of(s) != c_.rail_of(d)) cross_rail_ = true;
    net(s, d, kNet, 1.0);
  }

  // Every ordered pair of `g`'s members at once, counted per link from the members' domains,
  // rails and blocks instead of pair by pair (the same counts: ContentionModel::census checks).
  void all_to_all(std::span<const std::int64_t> g) {
    const auto n = static_cast<double>(g.size());
    if (g.size() < 2) return;
    if (ideal_) {
      for (auto s : g) {
        gpu_add(hb_up_, s, kHb, n - 1);
        gpu_add(hb_dn_, s, kHb, n - 1);
      }
      return;
    }
    per_domain_.clear();
    per_rail_.clear();
    for (auto s : g) {
      per_domain_[c_.domain_of(s)] += 1;
      per_rail_[c_.rail_of(s)] += 1;
    }
    for (auto s : g) {
      const double p = per_domain_[c_.domain_of(s)], q = per_rail_[c_.rail_of(s)];
      gpu_add(hb_up_, s, kHb, p - 1);
      gpu_add(hb_dn_, s, kHb, p - 1);
      const double fwd = n - q - p + 1;  // members on other rails and domains
      if (fwd > 0) cross_rail_ = true;
      if (!rail_only_) {
        gpu_add(nic_up_, s, kNet, n - p);
        gpu_add(nic_dn_, s, kNet, n - p);
        continue;
      }
      gpu_add(nic_up_, s, kNet, q - 1);
      gpu_add(nic_dn_, s, kNet, q - 1);
      add_legs(s, fwd, true);
    }
    if (!rail_only_) {
      clos_pairs_rail_optimized(g);
      return;
    }
    members_.assign(g.begin(), g.end());
    std::sort(members_.begin(), members_.end());
    for (const auto& [rail, q] : per_rail_) rail_only_instance(rail, q, n);
    // The peers: GPU (domain, rail) forwards (p - e)(q - e) transfers, e = 1 when it is a member.
    for (const auto& [dom, p] : per_domain_)
      for (const auto& [rail, q] : per_rail_) {
        const std::int64_t w = c_.gpu_at(dom, rail);
        const double e = std::binary_search(members_.begin(), members_.end(), w) ? 1.0 : 0.0;
        const double v = (p - e) * (q - e);
        if (v > 0) add_legs(w, v, false);
      }
  }

  // The busiest link's time per byte counting the flows of the classes in `mask` only.
  double busiest(unsigned mask) const {
    auto sum = [mask](const std::vector<double>& v, std::size_t i) {
      double x = 0;
      for (int k = 0; k < kClasses; ++k)
        if (mask & (1u << k)) x += v[i * kClasses + static_cast<std::size_t>(k)];
      return x;
    };
    double hb = 0, nic = 0;
    for (const std::int64_t gi : sc_.gpus) {
      const auto g = static_cast<std::size_t>(gi);
      hb = std::max({hb, sum(hb_up_, g), sum(hb_dn_, g)});
      nic = std::max({nic, sum(nic_up_, g), sum(nic_dn_, g)});
    }
    const double M = static_cast<double>(nics_);
    // A NIC share and a bundle flow carry 1/M of a transfer.
    double d = hb / m_.hb_Bps_;
    std::vector<HashedBundles> kinds;
    if (!hash_ports_) {
      d = std::max(d, nic > 0 ? nic / (M * m_.nic_Bps_) : 0.0);
    } else {
      // Per-connection hashing over the ports: a GPU's f transfers are f C connections thrown
      // onto its M ports, each 1/C of a transfer; every GPU's up and down ports drawn on their
      // own (the rails a census stands for, copies_ times).
      std::map<std::int64_t, double> balls;
      for (const std::int64_t gi : sc_.gpus)
        for (const auto* v : {&nic_up_, &nic_dn_}) {
          const double f = sum(*v, static_cast<std::size_t>(gi));
          if (f > 0) balls[std::llround(f * conns_)] += static_cast<double>(copies_);
        }
      for (const auto& [f, count] : balls)
        kinds.push_back({f, live_ports_, count, 1.0 / (conns_ * port_Bps_)});
    }
    const bool spread = m_.design_.routing != spec::Routing::ecmp;
    std::set<std::vector<double>> shapes;  // the round-robin down bundles' (down_shape)
    if (hash_ports_ && m_.port_Bps_ > 0) hashed_port_bundles(sum, spread, kinds, shapes);
    if (hash_ports_ || m_.port_Bps_ <= 0) return kinds.empty() ? d : expected_max_over(d, kinds);
    const double unit = 1.0 / (M * m_.port_Bps_);  // one flow on one switch-switch link
    std::map<KindKey, double> hashed;
    const std::int64_t per = m_.bundles_per_instance_;
    for (const std::int64_t b : sc_.bundles) {
      const std::int64_t t = boundary_of(b % per);
      const std::int64_t u = m_.bundle_links_[static_cast<std::size_t>(t)];
      const double link = unit / m_.bundle_scale_[static_cast<std::size_t>(t)];
      const auto ub = static_cast<std::size_t>(b);
      for (const bool down : {false, true}) {
        const double f = sum(down ? b_dn_ : b_up_, ub);
        if (f <= 0) continue;
        if (spread || u <= 1) {
          d = std::max(d, f * link / static_cast<double>(u));
          continue;
        }
        if (down && same_draw_as_partner(b, f, sum)) continue;
        hashed[{std::llround(f), u, t, down ? down_shape(b, t, shapes) : nullptr}] +=
            static_cast<double>(copies_);
      }
    }
    if (hashed.empty() && kinds.empty()) return d;
    for (const auto& [key, count] : hashed)
      kinds.push_back({key.flows, key.links, count,
                       unit / m_.bundle_scale_[static_cast<std::size_t>(key.t)], key.shape, 1});
    return expected_max_over(d, kinds);
  }

  // A down bundle that carries exactly the f flows of one up bundle through top switches joined
  // to each block by one link is the same draw as that up bundle: counted once. Under port
  // hashing only where both are one throw over their own links (every port of the GPU feeding
  // them: the partner's ports checked here, the down bundle's by the caller).
  template <class Sum>
  bool same_draw_as_partner(std::int64_t b, double f, const Sum& sum) const {
    const std::int64_t pu = partner_dn_[static_cast<std::size_t>(b)];
    if (pu < 0) return false;
    const auto up = static_cast<std::size_t>(pu);
    if (partner_up_[up] != b || sum(b_up_, up) != f) return false;
    if (!hash_ports_) return true;
    const std::int64_t k = std::clamp<std::int64_t>(std::popcount(sc_.port_mask[up]), 1, nics_);
    return live_ports_ / k <= 1;
  }

  // Per-connection hashing over the ports (hash_ports_). A bundle fed by k of a GPU's M ports
  // (port_mask: one where each port has its own leaf or plane, more where the ports' paths meet)
  // carries f shares (a share: one port's part of one transfer), f / k transfers, whose C
  // connections each come through it with probability k / M: one bin of f C / k balls thrown
  // into M / k (spread above the leaf: the bundle's u links as one bin) or into M u / k (ecmp:
  // the port, then the link). Each bundle is drawn as k / M of such a throw, its companions the
  // bundles of the other ports (ours: drawn as independent; a down bundle carrying the flows of
  // one up bundle is counted once with it where both are one throw, k = M, as without port
  // hashing). k = M is the spray's deterministic share.
  template <class Sum>
  void hashed_port_bundles(const Sum& sum, bool spread, std::vector<HashedBundles>& kinds,
                           std::set<std::vector<double>>& shapes) const {
    const std::int64_t per = m_.bundles_per_instance_;
    std::map<KindKey, double> drawn;
    for (const std::int64_t b : sc_.bundles) {
      const auto ub = static_cast<std::size_t>(b);
      const std::int64_t k = std::clamp<std::int64_t>(std::popcount(sc_.port_mask[ub]), 1, nics_);
      const std::int64_t t = boundary_of(b % per);
      const std::int64_t u = m_.bundle_links_[static_cast<std::size_t>(t)];
      const std::int64_t ports = std::max<std::int64_t>(1, live_ports_ / k);
      const std::int64_t bins = spread || u <= 1 ? ports : ports * u;
      for (const bool down : {false, true}) {
        const double f = sum(down ? b_dn_ : b_up_, ub);
        if (f <= 0) continue;
        if (down && !spread && u > 1 && ports == 1 && same_draw_as_partner(b, f, sum)) continue;
        drawn[{std::llround(f * conns_ / static_cast<double>(k)), bins, t,
               down && !spread && u > 1 ? down_shape(b, t, shapes) : nullptr}] +=
            static_cast<double>(copies_) / static_cast<double>(ports);
      }
    }
    for (const auto& [key, count] : drawn) {
      const auto [balls, bins, t, shape] = key;
      const std::int64_t u = m_.bundle_links_[static_cast<std::size_t>(t)];
      // A degraded model's uplink scale stands for the planes lost, which the fewer bins
      // already carry: their live links keep their speed (ours; up to the healthy speed).
      const double link =
          m_.port_Bps_ *
          std::min(1.0, m_.bundle_scale_[static_cast<std::size_t>(t)] * m_.nic_load_);
      const bool whole = spread || u <= 1;  // the bundle's links as one bin
      kinds.push_back({balls, bins, count,
                       1.0 / (conns_ * (whole ? link * static_cast<double>(u) : link)), shape,
                       shape ? bins / u : 1});
    }
  }

  // The census counts one rail of `copies` identical ones (ContentionModel::census).
  void set_copies(std::int64_t copies) { copies_ = copies; }

  StepLoad result(Algorithm algorithm) const {
    StepLoad r;
    r.cross_rail = cross_rail_;
    constexpr unsigned all = 0xF, leg1 = 1u << kLeg1, leg2 = 1u << kLeg2;
    const double t_all = busiest(all);
    const unsigned hb_legs = hb_first_ ? leg1 : leg2;
    const bool forwarded = rail_only_ && cross_rail_;
    if (!forwarded) {
      r.s_per_byte = t_all;
      return r;
    }
    const spec::ForwardingMode mode = m_.design_.forwarding;
    double t;
    // A hierarchical all-to-all forwards nothing (its phases stay on a rail or in a domain): one
    // that reaches here is a group that exchanges directly, as sim runs it.
    if (mode == spec::ForwardingMode::two_phase &&
        (algorithm == Algorithm::direct || algorithm == Algorithm::rail_then_domain)) {
      // sim's barrier: hb_first runs the HB shuffle first; rail_first the rail legs and the
      // same-rail transfers.
      const unsigned first = hb_first_ ? leg1 : (leg1 | (1u << kNet));
      t = busiest(first) + busiest(all & ~first);
      r.latency_steps = 2;
    } else {
      // A forwarded transfer's first leg shares its links with the direct transfers on them
      // (HB links for hb_first, the network for rail_first) and is delivered by t1, the busiest
      // of its links; its second leg starts then and needs t2, its busiest link counting the
      // second legs alone (store), or the two overlap chunk by chunk (pipelined). Per transfer
      // where the census has them, else from the busiest links of each kind (all-to-all).
      const unsigned first_side = hb_first_ ? (leg1 | (1u << kHb)) : (leg1 | (1u << kNet));
      const double chunks = static_cast<double>(m_.design_.forwarding_chunks);
      auto chain = [&](double t1, double t2) {
        return mode == spec::ForwardingMode::pipelined && chunks > 1
                   ? std::max(t1, t2) + std::min(t1, t2) / chunks
                   : t1 + t2;
      };
      t = t_all;
      if (forwarded_.empty()) {
        t = std::max(t, chain(busiest(first_side), busiest(leg2)));
      } else {
        // link_time reads a leg's switch uplinks as sprayed. Under ecmp a network leg waits for
        // its busiest link as hashed (ours): a second leg on the network (hb_first) for the
        // busiest link of the second legs, E2; a first leg (rail_first) delays its transfer's
        // second leg instead, which then crosses NVLink after the others, alone: E1 for the first
        // legs, then one transfer's bytes on one HB link.
        const bool hashed = m_.design_.routing == spec::Routing::ecmp;
        if (hashed && !hb_first_) t = std::max(t, chain(busiest(first_side), 1.0 / m_.hb_Bps_));
        const double e2 = hashed && hb_first_ ? busiest(leg2) : 0.0;
        for (const auto& [src, peer, dst] : forwarded_) {
          const double hb1 = hb_first_ ? link_time(src, peer, first_side, true) : 0;
          const double net1 = hb_first_ ? 0 : link_time(src, peer, first_side, false);
          const double t2 = hb_first_ ? std::max(e2, link_time(peer, dst, leg2, false))
                                      : link_time(peer, dst, leg2, true);
          t = std::max(t, chain(std::max(hb1, net1), t2));
        }
      }
    }
    r.s_per_byte = t;
    r.forwarding_s_per_byte = std::max(0.0, t - busiest(all & ~hb_legs));
    return r;
  }

 private:
  // The busiest link of one leg from a to b, counting the classes of `mask`: their HB links, or
  // their NICs and the bundles of the Clos walk between them (spread over the bundle's links).
  double link_time(std::int64_t a, std::int64_t b, unsigned mask, bool on_hb) const {
    auto sum = [mask](const std::vector<double>& v, std::size_t i) {
      double x = 0;
      for (int k = 0; k < kClasses; ++k)
        if (mask & (1u << k)) x += v[i * kClasses + static_cast<std::size_t>(k)];
      return x;
    };
    const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    if (on_hb) return std::max(sum(hb_up_, ua), sum(hb_dn_, ub)) / m_.hb_Bps_;
    const double M = static_cast<double>(nics_);
    // Each end's NIC ports: the spray's share, or under port hashing the busiest port in
    // expectation over the connections' hashes (busiest()); the bundles below take the spray's
    // shares either way (ours).
    auto ports = [&](double f) {
      return hash_ports_
                 ? expected_max_load(std::llround(f * conns_), live_ports_) / (conns_ * port_Bps_)
                 : f / (M * m_.nic_Bps_);
    };
    double t = std::max(ports(sum(nic_up_, ua)), ports(sum(nic_dn_, ub)));
    std::int64_t bs[topo::kMaxClosTiers + 1], bd[topo::kMaxClosTiers + 1];
    for (int j = 0; j < nics_; ++j) {
      const std::int64_t inst = m_.instance_of(a, j);
      const int top = m_.walk(a, b, j, bs, bd);
      for (int u = 1; u < top; ++u) {
        const double links = M * m_.port_Bps_ * m_.bundle_scale_[static_cast<std::size_t>(u)] *
                             static_cast<double>(m_.bundle_links_[static_cast<std::size_t>(u)]);
        t = std::max({t, sum(b_up_, bundle(inst, u, bs[u], 0) / kClasses) / links,
                      sum(b_dn_, bundle(inst, u, bd[u], 0) / kClasses) / links});
      }
    }
    return t;
  }

  // Round-robin tier t under ecmp: the w flows into block y reach its parent's top switch j as
  // their source sibling x's uplinks reach it, c(x, j) / P of them (`turn`: they turn at the
  // tier above); flows coming down from higher up, evenly (ours).
  void add_switch_shares(std::int64_t inst, int t, std::int64_t x, std::int64_t y, bool turn,
                         double w) {
    const topo::ClosTier& hi = m_.plan_.plan.tiers[static_cast<std::size_t>(t)];
    if (hi.even()) return;
    const std::size_t slot = bundle(inst, t, y, 0) / kClasses;
    double* sw = sc_.switch_dn.data() + slot * static_cast<std::size_t>(switch_stride_);
    const auto X = static_cast<std::size_t>(hi.switches_per_block);
    const double P = static_cast<double>(hi.sub_ports);
    const double* c = switch_links(t, x);
    for (std::size_t j = 0; j < X; ++j) sw[j] += turn ? w * c[j] / P : w / static_cast<double>(X);
  }

  // c(x, j) for j = 0 .. X - 1: level-t block x's links to each top switch of its parent, from
  // ContentionModel::switch_links_ (round-robin tiers only).
  const double* switch_links(int t, std::int64_t x) const {
    const topo::ClosTier& hi = m_.plan_.plan.tiers[static_cast<std::size_t>(t)];
    return m_.switch_links_[static_cast<std::size_t>(t)].data() +
           static_cast<std::size_t>(x % hi.group) * static_cast<std::size_t>(hi.switches_per_block);
  }

  // The down bundle `b` (index in the census) of boundary t as a shape for HashedBundles, or
  // nullptr when its links are equally likely: the switch shares its flows were recorded with
  // (add_switch_shares, transfer by transfer or block_switch_shares by block). Interned in
  // `shapes`.
  const std::vector<double>* down_shape(std::int64_t b, std::int64_t t,
                                        std::set<std::vector<double>>& shapes) const {
    const topo::ClosTier& hi = m_.plan_.plan.tiers[static_cast<std::size_t>(t)];
    if (switch_stride_ == 0 || hi.even()) return nullptr;
    const double* sw = sc_.switch_dn.data() +
                       static_cast<std::size_t>(b) * static_cast<std::size_t>(switch_stride_);
    const auto X = static_cast<std::size_t>(hi.switches_per_block);
    double total = 0;
    for (std::size_t j = 0; j < X; ++j) total += sw[j];
    if (total <= 0) return nullptr;
    // Rounded to 2^-30, so that bundles of the same mix group as one kind.
    std::vector<double> share(X);
    for (std::size_t j = 0; j < X; ++j)
      share[j] = std::ldexp(std::round(std::ldexp(sw[j] / total, 30)), -30);
    const std::int64_t block =
        b % m_.bundles_per_instance_ - m_.bundle_base_[static_cast<std::size_t>(t)];
    std::vector<double> sh = switch_shape(hi, block % hi.group, share);
    return sh.empty() ? nullptr : &*shapes.insert(std::move(sh)).first;
  }

  static CensusScratch& scratch() {
    thread_local CensusScratch s;
    return s;
  }
  // `v` transfers forwarded through GPU g's HB and NIC links on rail-only: the first leg on HB
  // (hb_first_) or on the NIC, the second on the other. A member sends them: its first leg goes up
  // and its second comes down; a peer forwards them: the first comes down to it, the second leaves.
  void add_legs(std::int64_t g, double v, bool member) {
    const bool hb_up = hb_first_ == member;
    gpu_add(hb_up ? hb_up_ : hb_dn_, g, hb_first_ ? kLeg1 : kLeg2, v);
    gpu_add(hb_up ? nic_dn_ : nic_up_, g, hb_first_ ? kLeg2 : kLeg1, v);
  }

  void gpu_add(std::vector<double>& v, std::int64_t g, int cls, double w) {
    const auto i = static_cast<std::size_t>(g);
    if (!sc_.gpu_mark[i]) {
      sc_.gpu_mark[i] = 1;
      sc_.gpus.push_back(g);
    }
    v[i * kClasses + static_cast<std::size_t>(cls)] += w;
  }
  // `slot` = bundle(...): bundle index x kClasses + class.
  void bundle_add(std::vector<double>& v, std::size_t slot, double w) {
    const std::size_t i = slot / kClasses;
    if (!sc_.bundle_mark[i]) {
      sc_.bundle_mark[i] = 1;
      sc_.bundles.push_back(static_cast<std::int64_t>(i));
    }
    v[slot] += w;
    if (w > 0) sc_.port_mask[i] |= std::uint64_t{1} << (port_ & 63);
  }

  std::size_t at(std::int64_t gpu, int cls) const {
    return static_cast<std::size_t>(gpu) * kClasses + static_cast<std::size_t>(cls);
  }
  std::size_t bundle(std::int64_t inst, int t, std::int64_t block, int cls) const {
    return static_cast<std::size_t>(inst * m_.bundles_per_instance_ +
                                    m_.bundle_base_[static_cast<std::size_t>(t)] + block) *
               kClasses +
           static_cast<std::size_t>(cls);
  }
  std::int64_t boundary_of(std::int64_t b) const {
    const auto& base = m_.bundle_base_;
    return static_cast<std::int64_t>(std::upper_bound(base.begin() + 1, base.end(), b) -
                                     base.begin()) -
           1;
  }

  void hb(std::int64_t a, std::int64_t b, int cls, double w) {
    gpu_add(hb_up_, a, cls, w);
    gpu_add(hb_dn_, b, cls, w);
  }

  // Through the NIC network: every NIC share climbs from its leaf to the lowest common block.
  void net(std::int64_t a, std::int64_t b, int cls, double w) {
    gpu_add(nic_up_, a, cls, w);
    gpu_add(nic_dn_, b, cls, w);
    std::int64_t bs[topo::kMaxClosTiers + 1], bd[topo::kMaxClosTiers + 1];
    for (int j = 0; j < nics_; ++j) {
      port_ = j;
      const std::int64_t inst = m_.instance_of(a, j);
      const int top = m_.walk(a, b, j, bs, bd);
      for (int t = 1; t < top; ++t) {
        bundle_add(b_up_, bundle(inst, t, bs[t], cls), w);
        bundle_add(b_dn_, bundle(inst, t, bd[t], cls), w);
        pair(inst, t, bs[t], bd[t], t == top - 1);
        if (switch_stride_ > 0) add_switch_shares(inst, t, bs[t], bd[t], t == top - 1, w);
      }
    }
  }

  // Records which bundles carry the same flows: the up bundle of block x and the down bundle of
  // block y at boundary t, for flows that turn at tier t + 1 (`turn`) where each switch of that
  // tier has one link to each block, so that a flow's uplink fixes its downlink. Bundles that
  // also carry other flows, or flows that climb on, are marked as drawn on their own.
  void pair(std::int64_t inst, int t, std::int64_t x, std::int64_t y, bool turn) {
    const auto bx = static_cast<std::int64_t>(bundle(inst, t, x, 0) / kClasses);
    const auto by = static_cast<std::int64_t>(bundle(inst, t, y, 0) / kClasses);
    const topo::ClosTier& hi = m_.plan_.plan.tiers[static_cast<std::size_t>(t)];
    const bool one_link = turn && hi.sub_ports == hi.switches_per_block;
    auto note = [](std::int64_t& slot, std::int64_t other, bool ok) {
      slot = ok && (slot == kNoPartner || slot == other) ? other : kMixed;
    };
    bundle_add(b_up_, static_cast<std::size_t>(bx) * kClasses, 0.0);  // reset after the census
    bundle_add(b_dn_, static_cast<std::size_t>(by) * kClasses, 0.0);
    note(partner_up_[static_cast<std::size_t>(bx)], by, one_link);
    note(partner_dn_[static_cast<std::size_t>(by)], bx, one_link);
  }

  // The level-t block (t = 1 .. tiers - 1) of the leaf of NIC j of `gpu`, in its instance.
  void blocks_of(std::int64_t gpu, int j, std::int64_t* out) const {
    const std::int64_t leaf = m_.leaf_[static_cast<std::size_t>(gpu * nics_ + j)];
    for (int t = 1; t < m_.plan_.plan.tier_count(); ++t)
      out[t] = m_.ancestor_[static_cast<std::size_t>(t)][static_cast<std::size_t>(leaf)];
  }

  // rail_optimized: the pairs of different domains that climb out of each block X, c_X (n - c_X)
  // minus the same-domain pairs split by X (those stay on NVLink), up and down alike.
  void clos_pairs_rail_optimized(std::span<const std::int64_t> g) {
    const int L = m_.plan_.plan.tier_count();
    const auto n = static_cast<double>(g.size());
    std::int64_t blk[topo::kMaxClosTiers + 1];
    for (int j = 0; j < nics_; ++j)
      for (int t = 1; t < L; ++t) {
        port_ = j;
        const std::int64_t inst = g.empty() ? 0 : m_.instance_of(g[0], j);  // port j's plane
        touched_.clear();
        keyed_.clear();
        for (auto s : g) {
          blocks_of(s, j, blk);
          keyed_.push_back({blk[t], c_.domain_of(s)});
        }
        std::sort(keyed_.begin(), keyed_.end());
        shares_.clear();
        doms_.clear();
        for (std::size_t i = 0; i < keyed_.size();) {
          std::size_t k = i;
          double split_same_domain = 0;
          const std::size_t d0 = doms_.size();
          while (k < keyed_.size() && keyed_[k].first == keyed_[i].first) {
            std::size_t e = k;
            while (e < keyed_.size() && keyed_[e] == keyed_[k]) ++e;
            const double in = static_cast<double>(e - k);
            split_same_domain += in * (per_domain_[keyed_[k].second] - in);
            doms_.push_back({keyed_[k].second, in});
            k = e;
          }
          const double cx = static_cast<double>(k - i);
          const double f = cx * (n - cx) - split_same_domain;
          if (f > 0) {
            bundle_add(b_up_, bundle(inst, t, keyed_[i].first, kNet), f);
            bundle_add(b_dn_, bundle(inst, t, keyed_[i].first, kNet), f);
            touched_.push_back(keyed_[i].first);
            shares_.push_back({keyed_[i].first, f, cx, cx, d0, doms_.size()});
          }
          i = k;
        }
        block_switch_shares(inst, t);
        pair_blocks(inst, t);
      }
  }

  // A block an all-to-all counted by block loads at boundary t: the flows into it, and what its
  // flows to a sibling y number: src x dst(y), less (rail-optimized) the pairs of one HB domain,
  // doms_[dom_begin, dom_end) its (domain, members).
  struct BlockFlows {
    std::int64_t block;
    double in, src, dst;
    std::size_t dom_begin = 0, dom_end = 0;
  };

  // A round-robin tier t under ecmp (switch_stride_): each block's incoming flows recorded at the
  // top switches as the pair-by-pair census records them (add_switch_shares): those from each
  // sibling x at c(x, j) / P of them, turning above, the rest from higher up at 1 / X. The pairs'
  // sums are taken per parent over the siblings at once (O(blocks x switches)). (Read as coming
  // from every sibling alike, the down bundles of a group whose members sit under a few siblings
  // came out up to 15% light.)
  void block_switch_shares(std::int64_t inst, int t) {
    if (switch_stride_ == 0) return;
    const topo::ClosTier& hi = m_.plan_.plan.tiers[static_cast<std::size_t>(t)];
    if (hi.even()) return;
    const auto X = static_cast<std::size_t>(hi.switches_per_block);
    const double P = static_cast<double>(hi.sub_ports);
    // shares_ is in block order: the siblings of one parent are a run.
    for (std::size_t p0 = 0, p1 = 0; p0 < shares_.size(); p0 = p1) {
      const std::int64_t parent = shares_[p0].block / hi.group;
      while (p1 < shares_.size() && shares_[p1].block / hi.group == parent) ++p1;
      // U_j = sum_x src_x c(x, j); per domain D_j = sum_x members_x c(x, j).
      sw_src_.assign(X, 0.0);
      double src_sum = 0;
      dom_at_.clear();
      for (std::size_t ix = p0; ix < p1; ++ix) {
        const BlockFlows& x = shares_[ix];
        src_sum += x.src;
        const double* c = switch_links(t, x.block);
        for (std::size_t j = 0; j < X; ++j) sw_src_[j] += x.src * c[j];
        for (std::size_t e = x.dom_begin; e < x.dom_end; ++e)
          dom_at_.push_back({doms_[e].first, ix, doms_[e].second});
      }
      std::sort(dom_at_.begin(), dom_at_.end());
      dom_keys_.clear();
      sw_dom_.clear();
      for (const auto& [dom, ix, in] : dom_at_) {
        if (dom_keys_.empty() || dom_keys_.back().first != dom) {
          dom_keys_.push_back({dom, 0.0});
          sw_dom_.resize(sw_dom_.size() + X, 0.0);
        }
        dom_keys_.back().second += in;
        double* d = sw_dom_.data() + sw_dom_.size() - X;
        const double* c = switch_links(t, shares_[ix].block);
        for (std::size_t j = 0; j < X; ++j) d[j] += in * c[j];
      }
      for (std::size_t iy = p0; iy < p1; ++iy) {
        const BlockFlows& y = shares_[iy];
        double* sw = sc_.switch_dn.data() + (bundle(inst, t, y.block, 0) / kClasses) *
                                                static_cast<std::size_t>(switch_stride_);
        const double* cy = switch_links(t, y.block);
        double turning = y.dst * (src_sum - y.src);
        for (std::size_t j = 0; j < X; ++j) sw[j] += y.dst * (sw_src_[j] - y.src * cy[j]) / P;
        for (std::size_t e = y.dom_begin; e < y.dom_end; ++e) {
          const auto [dom, in] = doms_[e];
          const auto k = static_cast<std::size_t>(
              std::lower_bound(dom_keys_.begin(), dom_keys_.end(),
                               std::pair<std::int64_t, double>{dom, -1.0}) -
              dom_keys_.begin());
          turning -= in * (dom_keys_[k].second - in);
          const double* d = sw_dom_.data() + k * X;
          for (std::size_t j = 0; j < X; ++j) sw[j] -= in * (d[j] - in * cy[j]) / P;
        }
        if (y.in > turning) add_switch_shares(inst, t, y.block, y.block, false, y.in - turning);
      }
    }
  }

  // The blocks an all-to-all loads at boundary t (touched_): with exactly two under one parent,
  // each one's up bundle carries the other's down bundle's flows (pair()); otherwise all mixed.
  void pair_blocks(std::int64_t inst, int t) {
    const topo::ClosTier& hi = m_.plan_.plan.tiers[static_cast<std::size_t>(t)];
    const bool two = touched_.size() == 2 && touched_[0] / hi.group == touched_[1] / hi.group;
    for (std::size_t i = 0; i < touched_.size(); ++i)
      pair(inst, t, touched_[i], two ? touched_[1 - i] : touched_[i], two);
  }

  // rail_only, the Clos of rail r: same-rail pairs (class 1) and the forwarded legs through the
  // GPUs of rail r. Per block X: a_X = transfers forwarded from the domains under X (p - e of each
  // domain whose rail-r GPU sits under X), b_X = the group's members on rail r under X.
  void rail_only_instance(std::int64_t rail, double q, double n) {
    const int L = m_.plan_.plan.tier_count();
    const double A = n - q;  // transfers forwarded into rail r from each of its members' view
    const int fwd_cls = hb_first_ ? kLeg2 : kLeg1;
    std::int64_t blk[topo::kMaxClosTiers + 1];
    for (int j = 0; j < nics_; ++j)
      for (int t = 1; t < L; ++t) {
        port_ = j;
        const std::int64_t inst = m_.instance_of(c_.gpu_at(0, rail), j);  // rail r, port j's plane
        counts_.clear();                                                  // block -> (a, b)
        for (const auto& [dom, p] : per_domain_) {
          const std::int64_t w = c_.gpu_at(dom, rail);
          const bool member = std::binary_search(members_.begin(), members_.end(), w);
          blocks_of(w, j, blk);
          auto& ab = counts_[blk[t]];
          ab.first += p - (member ? 1.0 : 0.0);
          if (member) ab.second += 1;
        }
        touched_.clear();
        shares_.clear();
        for (const auto& [x, ab] : counts_) {
          const double a = ab.first, b = ab.second;
          if (b > 0 || a > 0) touched_.push_back(x);
          const double same = b * (q - b);
          if (same > 0) {
            bundle_add(b_up_, bundle(inst, t, x, kNet), same);
            bundle_add(b_dn_, bundle(inst, t, x, kNet), same);
          }
          const double out = hb_first_ ? a * (q - b) : b * (A - a);
          const double in = hb_first_ ? b * (A - a) : a * (q - b);
          if (out > 0) bundle_add(b_up_, bundle(inst, t, x, fwd_cls), out);
          if (in > 0) bundle_add(b_dn_, bundle(inst, t, x, fwd_cls), in);
          // From sibling x into y: the same-rail pairs b_x b_y and the forwarded legs between
          // peers and members, a_x b_y (hb_first) or b_x a_y (rail_first).
          if (b > 0 || a > 0)
            shares_.push_back(
                {x, same + std::max(in, 0.0), hb_first_ ? a + b : b, hb_first_ ? b : a + b});
        }
        block_switch_shares(inst, t);
        pair_blocks(inst, t);
      }
  }

  const ContentionModel& m_;
  const spec::Cluster& c_;
  bool ideal_, rail_only_, hb_first_;
  int nics_;
  bool hash_ports_;  // PortBalance::hash over more than one port
  double conns_;     // connections per transfer when hash_ports_
  // hash_ports_: the ports a GPU's connections rehash over (fewer on a degraded model, each at
  // the healthy per-port speed port_Bps_)
  std::int64_t live_ports_;
  double port_Bps_;
  int port_ = 0;  // the NIC port whose shares the census is counting (bundle_add's port_mask)
  // Top switches per block of the widest round-robin tier under ecmp (0: none, or not ecmp):
  // the entries of CensusScratch::switch_dn per bundle.
  std::int64_t switch_stride_ = 0;
  bool cross_rail_ = false;
  std::int64_t copies_ = 1;
  CensusScratch& sc_;
  std::vector<double>&hb_up_, &hb_dn_, &nic_up_, &nic_dn_, &b_up_, &b_dn_;
  // Per bundle: the bundle carrying the same flows the other way (pair()), kNoPartner before any
  // flow, kMixed when drawn on its own.
  static constexpr std::int64_t kNoPartner = -1, kMixed = -2;
  std::vector<std::int64_t>&partner_up_, &partner_dn_;
  std::vector<std::int64_t> touched_;
  std::vector<BlockFlows> shares_;                     // block_switch_shares' blocks
  std::vector<std::pair<std::int64_t, double>> doms_;  // (domain, members) per block, in order
  // block_switch_shares' sums per parent: over the siblings, and per domain
  std::vector<double> sw_src_, sw_dom_;
  std::vector<std::tuple<std::int64_t, std::size_t, double>> dom_at_;
  std::vector<std::pair<std::int64_t, double>> dom_keys_;
  // Forwarded transfers (source, peer, destination) of a transfer-by-transfer census.
  std::vector<std::array<std::int64_t, 3>> forwarded_;
  std::map<std::int64_t, double> per_domain_, per_rail_;
  std::vector<std::int64_t> members_;
  std::vector<std::pair<std::int64_t, std::int64_t>> keyed_;
  std::map<std::int64_t, std::pair<double, double>> counts_;
};

// ---- the model ----------------------------------------------------------------------------------

namespace {
std::atomic<std::uint64_t> g_next_model_id{1};
}  // namespace

ContentionModel::ContentionModel(const spec::Cluster& cluster, const spec::NetworkDesign& design)
    : cluster_(cluster),
      ports_(cluster),
      design_(spec::fit_to_cluster(cluster, design)),
      id_(g_next_model_id++) {
  const spec::GpuEfficiency& e = cluster.gpu.eff;
  hb_Bps_ = cluster.hb_bw_Bps * e.hb;
  if (design_.kind == spec::DesignKind::ideal) return;
  ports_ = spec::port_view(cluster, design_);
  plan_ = topo::plan_network(cluster, design_);
  const double port = units::gbps_to_Bps(design_.sw.port_gbps);
  nic_Bps_ = std::min(ports_.nic_bw_Bps, port) * e.nic;
  port_Bps_ = port * e.nic;
  const int L = plan_.plan.tier_count();
  bundle_base_.assign(static_cast<std::size_t>(std::max(L, 1)), 0);
  bundle_links_.assign(static_cast<std::size_t>(std::max(L, 1)), 0);
  bundle_scale_.assign(static_cast<std::size_t>(std::max(L, 1)), 1.0);
  std::int64_t base = 0;
  for (int t = 1; t < L; ++t) {
    const topo::ClosTier& lo = plan_.plan.tiers[static_cast<std::size_t>(t - 1)];
    bundle_base_[static_cast<std::size_t>(t)] = base;
    bundle_links_[static_cast<std::size_t>(t)] = lo.up_ports_per_block();
    base += lo.blocks;
  }
  bundles_per_instance_ = base;
  // Every rail's NICs sit in the same places of like blocks (rail_only: one instance per rail;
  // rail_optimized: each rail its own leaves, and every block below the top inside one rail),
  // so that a rail's traffic loads its blocks as any other rail's loads its own.
  {
    const topo::ClosPlan& p = plan_.plan;
    const topo::PlaneLayout& lay = plan_.layout;
    rails_alike_ = lay.per_rail;
    if (!lay.per_rail && p.rails_per_leaf == 1) {
      rails_alike_ = true;
      std::int64_t span = 1;
      for (int t = 2; t < L; ++t) {
        span *= p.tiers[static_cast<std::size_t>(t - 1)].group;
        rails_alike_ = rails_alike_ && p.leaves_per_group % span == 0;
      }
    }
  }
  // The leaf of every NIC and the block of every leaf at each tier (ClosPlan::common_blocks's
  // climb, tabulated): the census walks each transfer by lookups.
  const std::int64_t M = ports_.nics_per_gpu;
  leaf_.resize(static_cast<std::size_t>(cluster.gpus * M));
  instance_.resize(static_cast<std::size_t>(cluster.gpus * M));
  for (std::int64_t g = 0; g < cluster.gpus; ++g)
    for (int j = 0; j < M; ++j) {
      const auto i = static_cast<std::size_t>(g * M + j);
      leaf_[i] = static_cast<std::int32_t>(plan_.layout.leaf(plan_.plan, ports_, g, j));
      instance_[i] = static_cast<std::int32_t>(plan_.layout.instance(ports_, g, j));
    }
  // c(i, j) of each round-robin tier (switch_links_), for the census's switch shares.
  switch_links_.assign(static_cast<std::size_t>(std::max(L, 1)), {});
  for (int t = 1; t < L; ++t) {
    const topo::ClosTier& hi = plan_.plan.tiers[static_cast<std::size_t>(t)];
    if (hi.even()) continue;
    auto& links = switch_links_[static_cast<std::size_t>(t)];
    for (std::int64_t i = 0; i < hi.group; ++i)
      for (std::int64_t j = 0; j < hi.switches_per_block; ++j)
        links.push_back(static_cast<double>(hi.links_between(i, j)));
  }
  ancestor_.assign(static_cast<std::size_t>(L + 1), {});
  const std::int64_t leaves = plan_.plan.tiers[0].blocks;
  ancestor_[1].resize(static_cast<std::size_t>(leaves));
  for (std::int64_t l = 0; l < leaves; ++l)
    ancestor_[1][static_cast<std::size_t>(l)] = static_cast<std::int32_t>(l);
  for (int t = 2; t <= L; ++t) {
    ancestor_[static_cast<std::size_t>(t)].resize(static_cast<std::size_t>(leaves));
    for (std::int64_t l = 0; l < leaves; ++l)
      ancestor_[static_cast<std::size_t>(t)][static_cast<std::size_t>(l)] =
          static_cast<std::int32_t>(
              ancestor_[static_cast<std::size_t>(t - 1)][static_cast<std::size_t>(l)] /
              plan_.plan.tiers[static_cast<std::size_t>(t - 1)].group);
  }
}

int ContentionModel::walk(std::int64_t a, std::int64_t b, int nic, std::int64_t* bs,
                          std::int64_t* bd) const {
  const std::int64_t M = ports_.nics_per_gpu;
  const std::int32_t la = leaf_[static_cast<std::size_t>(a * M + nic)];
  const std::int32_t lb = leaf_[static_cast<std::size_t>(b * M + nic)];
  bs[1] = la;
  bd[1] = lb;
  if (la == lb) return 1;
  const int L = plan_.plan.tier_count();
  for (int t = 2; t <= L; ++t) {
    const auto& anc = ancestor_[static_cast<std::size_t>(t)];
    bs[t] = anc[static_cast<std::size_t>(la)];
    bd[t] = anc[static_cast<std::size_t>(lb)];
    if (bs[t] == bd[t]) return t;
  }
  return L;
}

std::shared_ptr<const ContentionModel> ContentionModel::scaled(
    double nic_load, double hb, const std::vector<double>& uplink) const {
  auto m = std::make_shared<ContentionModel>(cluster_, design_);
  m->nic_Bps_ = nic_Bps_ / std::max(nic_load, 1e-300);
  m->nic_load_ = std::max(nic_load, 1.0);
  m->hb_Bps_ = hb_Bps_ * hb;
  for (std::size_t t = 1; t < uplink.size() && t < m->bundle_scale_.size(); ++t)
    m->bundle_scale_[t] = uplink[t];
  return m;
}

std::size_t ContentionModel::KeyHash::operator()(const Key& k) const {
  std::uint64_t h = kSplitMix64Gamma;
  auto mix = [&h](std::uint64_t v) { h = hash_combine(h, v); };
  mix(static_cast<std::uint64_t>(k.tp));
  mix(static_cast<std::uint64_t>(k.pp));
  mix(static_cast<std::uint64_t>(k.dp));
  mix(static_cast<std::uint64_t>(k.ep));
  mix(k.seed);
  mix((static_cast<std::uint64_t>(k.kind) << 24) | (static_cast<std::uint64_t>(k.axis) << 16) |
      (static_cast<std::uint64_t>(k.algorithm) << 8) | k.scope |
      (static_cast<std::uint64_t>(k.reverse) << 32));
  return static_cast<std::size_t>(h);
}

StepLoad ContentionModel::census(const Placement& pl, Axis axis, Algorithm algorithm, Scope scope,
                                 bool reverse, bool aggregate_all_to_all,
                                 bool rail_symmetry) const {
  // A job on part of the network (spec::job_cluster) sits on its first GPUs; a placement of more
  // GPUs than the network has is another cluster's.
  if (pl.gpus() > cluster_.gpus)
    throw std::logic_error("ContentionModel: placement of another cluster");
  Census cs(*this);
  // Groups each on one rail whose rails are alike: count rail 0's, the others are copies.
  const bool by_rail = rail_symmetry && rails_alike_ && pl.kind() == PlacementKind::rail_aligned &&
                       pl.axis_stride(axis) % cluster_.hb_domain == 0;
  if (by_rail) cs.set_copies(cluster_.hb_domain);
  CommOp op;
  op.axis = axis;
  op.algorithm = algorithm;
  op.bytes = 1;
  op.op = algorithm == Algorithm::p2p ? CollectiveOp::send_recv
          : algorithm == Algorithm::direct || algorithm == Algorithm::rail_then_domain
              ? CollectiveOp::all_to_all
              : CollectiveOp::all_reduce;
  GroupExpansion ex;
  std::vector<std::int64_t> scratch;
  bool any = false;
  for (std::int64_t g = 0; g < pl.group_count(axis); ++g) {
    if (by_rail && cluster_.rail_of(pl.gpu_of(pl.rank_in_group(axis, g, 0))) != 0) continue;
    expand_group(op, pl, g, ex, scratch);
    int i = 0;
    while (i < ex.plan.size && ex.plan.phases[static_cast<std::size_t>(i)].scope != scope) ++i;
    if (i == ex.plan.size) continue;  // a group without this phase (a flat ring of another shape)
    const CollectivePhase& ph = ex.plan.phases[static_cast<std::size_t>(i)];
    for (std::int64_t r = 0; r < ex.rings[static_cast<std::size_t>(i)]; ++r) {
      const auto m = ex.ring(i, r);
      const std::size_t n = m.size();
      if (n < 2) continue;
      any = true;
      switch (ph.algorithm) {
        case Algorithm::ring:
        case Algorithm::hierarchical:
          for (std::size_t k = 0; k < n; ++k) cs.transfer(m[k], m[(k + 1) % n]);
          break;
        case Algorithm::p2p:
          for (std::size_t k = 0; k + 1 < n; ++k)
            reverse ? cs.transfer(m[k + 1], m[k]) : cs.transfer(m[k], m[k + 1]);
          break;
        case Algorithm::rail_then_domain:  // never a phase's own algorithm
        case Algorithm::direct:
          if (aggregate_all_to_all) {
            cs.all_to_all(m);
          } else {
            for (std::size_t a = 0; a < n; ++a)
              for (std::size_t b = 0; b < n; ++b) cs.transfer(m[a], m[b]);
          }
          break;
      }
    }
  }
  // A phase the op's expansion never runs is a caller's bug (perf::collective_time asks for the
  // phases of phase_plan), not a free phase.
  if (!any && pl.axis_size(axis) > 1)
    throw std::logic_error("ContentionModel: no group of this axis runs the phase asked for");
  return cs.result(algorithm);
}

StepLoad ContentionModel::step_load(const Placement& pl, Axis axis, Algorithm algorithm,
                                    Scope scope, bool reverse) const {
  // The search's case, rail-aligned groups: the signature in one word, a per-thread
  // direct-mapped cache of them read without a lock (the search asks for the same few
  // signatures millions of times).
  const std::int64_t stride = pl.axis_stride(axis), size = pl.axis_size(axis);
  constexpr std::int64_t kField = std::int64_t{1} << 28;
  const bool packed = pl.kind() == PlacementKind::rail_aligned && stride < kField && size < kField;
  std::uint64_t word = 0;
  struct Fast {
    std::uint64_t model = 0, word = 0;
    StepLoad load;
  };
  thread_local std::array<Fast, 256> fast;
  Fast* slot = nullptr;
  if (packed) {
    word = static_cast<std::uint64_t>(stride) | static_cast<std::uint64_t>(size) << 28 |
           static_cast<std::uint64_t>(algorithm) << 56 | static_cast<std::uint64_t>(scope) << 59 |
           static_cast<std::uint64_t>(reverse && algorithm == Algorithm::p2p) << 62;
    slot = &fast[(word * 0x9E3779B97F4A7C15ull) >> 56];
    if (slot->model == id_ && slot->word == word) return slot->load;
  }
  const StepLoad r = lookup(pl, axis, algorithm, scope, reverse);
  if (slot) *slot = {id_, word, r};
  return r;
}

StepLoad ContentionModel::lookup(const Placement& pl, Axis axis, Algorithm algorithm, Scope scope,
                                 bool reverse) const {
  // The groups of an axis are {base + i x stride} over ranks: under the rail-aligned placement
  // (GPU = rank) they depend on the axis's stride and size alone, under tp_across_domains on the
  // TP degree too, shuffled on every degree and the seed. Keyed so, the search meets each group
  // set once, whatever the other degrees.
  const Degrees& d = pl.degrees();
  const std::int64_t stride = pl.axis_stride(axis), size = pl.axis_size(axis);
  Key key{d.tp,
          d.pp,
          d.dp | (d.cp << 32),  // both at most 2^24
          d.ep,
          pl.seed(),
          static_cast<std::uint8_t>(pl.kind()),
          static_cast<std::uint8_t>(axis),
          static_cast<std::uint8_t>(algorithm),
          static_cast<std::uint8_t>(scope),
          static_cast<std::uint8_t>(reverse && algorithm == Algorithm::p2p)};
  if (pl.kind() != PlacementKind::shuffled) {
    key.tp = pl.kind() == PlacementKind::tp_across_domains ? d.tp : 0;
    key.pp = stride;
    key.dp = size;
    key.ep = 0;
    key.axis = 0;
  }
  // A small direct-mapped cache per thread in front of the shared one: the search asks for the
  // same few signatures millions of times, and a lock per ask cost more than the rest of it.
  struct Recent {
    std::uint64_t model = 0;  // id_ of the model (0: empty)
    Key key{};
    StepLoad load;
  };
  thread_local std::array<Recent, 256> recent;
  const std::size_t h = KeyHash{}(key);
  Recent& slot = recent[h & (recent.size() - 1)];
  if (slot.model == id_ && slot.key == key) return slot.load;
  StepLoad r;
  bool found = false;
  {
    const std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      r = it->second;
      found = true;
    }
  }
  if (!found) {
    r = census(pl, axis, algorithm, scope, reverse);
    const std::unique_lock<std::shared_mutex> lock(mu_);
    r = cache_.emplace(key, r).first->second;
  }
  slot = {id_, key, r};
  return r;
}

}  // namespace railsim::perf
