#pragma once
// Skewed all-to-all of a mixture-of-experts layer: token routing with a given expert popularity,
// top-k experts per token and domain-limited routing, turned into the per-pair byte matrix of the
// dispatch (tokens to their experts' GPUs) and the combine (the results back, the transpose), and
// simulated on the fabric like the uniform all-to-all (rail-only forwarding included).
//
// Model (ours, following the routing of DeepSeek-V3, arXiv 2412.19437, section 2.1.2):
// - E experts over the n members of an all-to-all group, in blocks: expert e on member
//   floor(e n / E) (E >= n; each GPU hosts E/n experts, give or take one).
// - Popularity p_e: uniform, Zipf (the expert of popularity rank r gets r^-s; ranks are dealt to
//   experts by a seeded permutation, so hot experts land on arbitrary GPUs), a user's weight per
//   expert, or directly a user's weight per GPU pair (no token routing then).
// - Each GPU dispatches `tokens` tokens. A token takes k distinct experts by sampling without
//   replacement proportionally to p (Plackett-Luce: the token ranks experts by p times an
//   independent random preference, the law of a softmax gate's top-k with Gumbel noise).
// - Domain-limited routing (at most M HB domains per token, DeepSeek-V3's node-limited routing
//   with M = 4): the token's domains are those of its first picks until M distinct domains are
//   used; its remaining picks are sampled among the experts of those M domains only.
// - Each (token, expert) pair sends bytes_per_token once (no de-duplication of a token going to
//   two experts on one GPU): the dispatch matrix sums to n x tokens x k x bytes_per_token; the
//   bytes of a member's own experts stay on the GPU (the diagonal) and are not sent.
// Deterministic: member m's tokens come from a random stream seeded by (seed, GPU id), whatever
// the thread count.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/core/json_fwd.hpp"
#include "railsim/sim/collective.hpp"
#include "railsim/spec/cluster.hpp"

namespace railsim::sim {

enum class Popularity : std::uint8_t { uniform, zipf, expert_weights, pair_weights };

inline constexpr double kMaxZipfExponent = 4.0;
// At most this many token copies (tokens x top-k x GPUs of a group) are routed in one run.
inline constexpr std::int64_t kMaxRoutedTokens = 1'000'000'000;

struct MoeRouting {
  Popularity popularity = Popularity::uniform;
  double zipf_s = 0;             // Zipf exponent, 0..kMaxZipfExponent (0 = uniform)
  std::vector<double> weights;   // expert_weights: E values; pair_weights: n x n, row = source
  std::int64_t weight_rows = 0;  // rows of the file weights came from (0: a flat array)
  std::int64_t tokens = 4096;    // tokens each GPU dispatches
  std::int64_t experts = 256;
  std::int64_t topk = 8;
  std::int64_t max_domains = 0;  // HB domains a token may reach; 0 = no limit
  std::uint64_t seed = 1;
};

// "uniform" or "zipf:S" (S in [0, kMaxZipfExponent]) into r.popularity and r.zipf_s; throws
// InputError(option) otherwise.
void parse_skew(std::string_view text, MoeRouting& r, const std::string& option = "--skew");

// Reads a JSON file of non-negative weights into r.weights and r.weight_rows and sets
// r.popularity to `kind` (expert_weights or pair_weights): a flat array (weights per expert) or an
// array of equally long arrays (a pair matrix, row = source, flattened row by row). Throws
// InputError(option) on a bad file, a non-number or negative entry, ragged rows, or all zeros.
void load_weights(const std::string& path, Popularity kind, MoeRouting& r,
                  const std::string& option);

// Checks r against an all-to-all group; throws InputError naming the CLI option (--tokens,
// --experts, --topk, --max-domains, --skew, --expert-weights, --pair-matrix).
void check_moe(const MoeRouting& r, const Group& group, const spec::Cluster& c);

// The member of an n-member group that hosts expert e of E.
inline std::int64_t expert_host(std::int64_t e, std::int64_t experts, std::int64_t n) {
  return e * n / experts;
}

// p_e, normalised to sum 1 (uniform, Zipf over the seeded rank permutation, or the user's
// weights). Not for pair_weights.
std::vector<double> expert_popularity(const MoeRouting& r);

// The experts of each token dispatched by member `src` of `group`: tokens x topk expert ids,
// token t's at [t topk, (t+1) topk), in the order picked. Checks r (check_moe).
std::vector<std::int32_t> route_tokens(const MoeRouting& r, const Group& group,
                                       const spec::Cluster& c, std::int64_t src);

// Dispatch bytes, n x n row-major (row = source member, column = destination member), diagonal
// included. pair_weights: the weights scaled to the same total, n tokens k bytes_per_token.
std::vector<double> moe_dispatch_bytes(const MoeRouting& r, const Group& group,
                                       const spec::Cluster& c, double bytes_per_token);

// Combine: every expert returns its result to the token's GPU, the transpose of the dispatch.
std::vector<double> transpose_square(const std::vector<double>& m);

enum class MoePhase : std::uint8_t { dispatch, combine, both };
MoePhase parse_moe_phase(std::string_view s, const std::string& option = "--moe-phase");
std::string_view to_string(MoePhase p);

struct MoeRequest {
  MoeRouting routing;
  double bytes_per_token = 0;
  std::vector<Group> groups;  // every group an all-to-all group, all at the same time
  MoePhase phase = MoePhase::both;
};

// Imbalance of the dispatch matrices: the busiest receiver and sender against the mean (of every
// GPU of every group, network bytes only, the diagonal excluded), the share of bytes leaving the
// source's HB domain, and the mean HB domains a token reaches (token routing only, else 0).
struct MoeStats {
  double total_bytes = 0;  // dispatch, diagonal included
  double max_in_over_mean = 0;
  double max_out_over_mean = 0;
  double cross_domain_share = 0;
  double domains_per_token = 0;
};

struct MoeResult {
  CollectiveResult sim;  // phases "dispatch" then "combine" (those asked for)
  MoeStats stats;
};

// Generates each group's dispatch matrix (seeded per GPU) and simulates the dispatch and/or the
// combine as all-to-alls with those bytes per pair, flow by flow (SimConfig's forwarding,
// routing; never aggregated by link class: the load is not symmetric). Throws InputError on bad
// routing parameters or when a phase needs more than cfg.max_flows flows ("--max-flows").
MoeResult simulate_moe(const SimNetwork& net, const MoeRequest& req, const SimConfig& cfg,
                       int busiest = 5);

// "uniform", "Zipf s=1.2", "expert weights from a file", "GPU-pair weights from a file".
std::string describe_popularity(const MoeRouting& r);

// {"skew", "zipf_s", "experts", "topk", "max_domains", "tokens", "bytes_per_token", "phase",
//  "seed", "dispatch_bytes", "max_in_over_mean", "max_out_over_mean", "cross_domain_share",
//  "domains_per_token"}
Json to_json(const MoeRequest& req, const MoeStats& stats);

}  // namespace railsim::sim
