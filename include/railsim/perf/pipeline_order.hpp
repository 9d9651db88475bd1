#pragma once
// Megatron-Core's 1F1B and interleaved 1F1B orders, timed pass by pass, for pipelines whose model
// chunks differ in size. Where p v divides the layers every chunk is alike and the time model's
// closed form, m t_max + (p - 1)/v t_avg (Narayanan et al. SC'21, Sec. 2.2), is the order's span
// exactly (tests check it over p, v, m and forward:backward mixes). Where it does not, chunks of
// one size and the next make stages wait on each other in every round of the steady state, and
// the closed form is short; railsim adds what the order takes beyond it (ours: timed by the
// order's dependencies, as for ZB-V).
//
// The orders follow Megatron-Core's pipeline_parallel/schedules.py: 1F1B
// (forward_backward_pipelining_without_interleaving): stage r runs min(p - 1 - r, m) forwards,
// then alternates a forward and a backward, then the remaining backwards; interleaved
// (forward_backward_pipelining_with_interleaving, microbatch_group_size_per_vp_stage = p): the
// micro-batches in groups of p, every model chunk of a group in turn, stage r warming up with
// 2 (p - 1 - r) + (v - 1) p forward chunks, then alternating, backward chunks in reverse order.
// Model chunk c of stage r is layer block c p + r.
#include <cstdint>

namespace railsim::perf {

// Layers on stage r of p: floor or ceil of layers / p, the layers mod p spare ones on the middle
// stages first, then on the first stage, never on the last (detail::stage_shape's rule; Dubey et
// al. 2024, Sec. 3.3.2).
std::int64_t stage_layers(std::int64_t layers, std::int64_t p, std::int64_t r);

// The transformer layers of stage r of p for a model of `layers` layers and `mtp` multi-token-
// prediction modules (spec::Model::mtp_layers): with more than one stage, stage_layers over
// layers + 2 mtp, the last stage giving two of its share to each module (its layer and its
// output head; ours, reproducing Megatron-Bridge's and MLPerf's DeepSeek-V3 layouts: 13, 5 and
// 1 layers on the last of 4, 8 and 16 stages); its MTP modules on top. Negative where the last
// stage's share is too small to hold the modules (perf::validate refuses such a pp).
std::int64_t model_stage_layers(std::int64_t layers, std::int64_t mtp, std::int64_t p,
                                std::int64_t r);

// Layers of model chunk c (0 .. v - 1) of stage r: floor or ceil of the stage's layers / v, the
// larger chunks first (ours: of the layouts that keep these stage totals, the one whose order
// waits least among those we timed). `embedding_chunk`: the split counts the embedding and the
// loss as a layer each (a stack's embedding_loss_chunks; Megatron-Core's
// account_for_embedding/loss_in_pipeline_split), so the first stage's first chunk is the one
// the embedding takes room in: its chunks run smaller first (Llama 3 405B at v = 8: 0, then 7
// chunks of one layer); the last stage's loss is in its last chunk, the smaller, as without.
std::int64_t chunk_layers(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t r,
                          std::int64_t c, bool embedding_chunk = false);

// The most layer-micro-batches stage r holds at once under Megatron-Core's order (forward chunk
// passes run, their backward not yet): each forward adds its chunk's layers, each backward frees
// its own. Equal chunks: the chunks in flight (1F1B min(p - r, m); interleaved min(2 (p - 1 - r)
// + (v - 1) p + 1, m v)) times layers / v. Uneven chunks hold more, the larger ones running
// first (Llama 3 405B, 126 layers, p 16, v 7, m 32: 157 on the second stage against 8/7 x 125 =
// 142.9). Counted over the stage's own sequence, which timing does not change: the warm-up,
// then one period of p v forward-backward pairs, after which the count repeats; O(p v).
double peak_layers_in_flight(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t m,
                             std::int64_t r, bool embedding_chunk = false);

// The span of Megatron-Core's order of `layers` layers on p stages of v chunks (v = 1: plain
// 1F1B; chunk_layers' layout) for m micro-batches, each layer's forward taking f and its backward
// b: first forward to last backward. With v > 1, m must be a multiple of p (perf::validate's rule).
// Throws std::logic_error if the order does not make progress (it always does for these orders).
// Allocation-free after a thread's first call at a given size.
double megatron_span(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t m, double f,
                     double b, bool embedding_chunk = false);

// The most passes (2 m v p) railsim times per order; longer orders keep the closed form.
inline constexpr std::int64_t kOrderMaxPasses = std::int64_t{1} << 25;

// What Megatron-Core's order takes beyond the closed form m n_max + (p - 1)/v (layers / p), in
// units of one layer's forward and backward (n_max: the fullest stage's layers), each layer's
// forward being `fwd_share` of that unit; 0 where p v divides the layers, for p = 1 and where the
// first timing would pass kOrderMaxPasses. Negative where the closed form is pessimistic.
// - 1F1B (v = 1): timed at min(m, p) micro-batches; from p on it no longer changes.
// - Interleaved: timed up to 8 p micro-batches; beyond, extended by the growth per micro-batch of
//   the last two rounds of p, the rounds timed doubling while that growth is negative (the
//   fullest stage still spending the slack of its warm-up, which cannot last: in the periodic
//   regime every round takes that stage's work at least).
// Tests check both rules against the whole order (ours). fwd_share is taken on a grid of 1/48 and
// interpolated linearly. Timings are cached for the process (thread-safe).
double uneven_chunk_stall(std::int64_t layers, std::int64_t p, std::int64_t v, std::int64_t m,
                          double fwd_share, bool embedding_chunk = false);

}  // namespace railsim::perf
