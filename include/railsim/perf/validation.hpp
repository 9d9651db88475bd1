#pragma once
// The iteration-time model against measured training runs (docs/validation.md): each table's
// points, its errors and its documented tolerance, computed from the runs shipped in
// data/validation/ (embedded, like the presets); and the error band that `estimate` and `plan`
// attach to a predicted time from the residuals of the closest validated regime.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/core/json_fwd.hpp"
#include "railsim/perf/model.hpp"
#include "railsim/perf/strategy.hpp"
#include "railsim/spec/cluster.hpp"
#include "railsim/spec/gpu.hpp"

namespace railsim::perf {

// One measured run against railsim, in its table's unit.
struct ValidationPoint {
  std::string label;  // "175B selective + SP", "16,384 GPUs"
  double measured = 0;
  double railsim = 0;  // 0 when railsim finds no plan for the run (none fits, or none is valid)
  std::string gpu;     // the run's regime: its GPU preset and software stack (the table's unless
  std::string stack;   // its row names its own)
  // The switch its fabric is built of: the table's, or one whose ports match faster NICs.
  std::string switch_name;
  bool fit = false;  // its measurement set a constant (the frozen fit set); else a hold-out
  bool moe = false;  // a mixture-of-experts model (its own error bands)
  bool low_precision = false;  // GEMMs in FP8, MXFP8 or NVFP4 (their own error bands too)
  std::string note;            // why railsim has no figure for it (railsim == 0)
  // The strategy railsim timed, every knob named (perf::describe): the row's published knobs and
  // the planner's choice of those it leaves open (recompute, SP, ...); empty without a figure.
  std::string plan;
  // Peak memory per GPU: railsim's for the plan it timed (0 where not computed or without a
  // figure), and the run's as its source measured it (a row's "memory_gib"; 0 when unpublished).
  double memory_gib = 0;
  double measured_memory_gib = 0;
  // What the measured memory is (a row's "memory_measure"): the peak of the tensors allocated
  // (PyTorch's max_memory_allocated, what railsim counts) or of the caching allocator's reserved
  // memory, which adds its free blocks and fragmentation and so bounds railsim's count from above.
  bool memory_reserved = false;
  double error() const { return measured != 0 ? railsim / measured - 1.0 : 0.0; }
  // railsim's memory against the measured one, where both exist (else 0).
  double memory_error() const {
    return measured_memory_gib > 0 && memory_gib > 0 ? memory_gib / measured_memory_gib - 1.0 : 0.0;
  }
};

// One table of docs/validation.md.
struct ValidationTable {
  std::string id;      // "korthikanti-2022-time"
  std::string title;   // "Korthikanti et al. 2022, Table 5: iteration time"
  std::string source;  // the data file under data/validation/
  std::string gpu;     // the regime: GPU preset and software stack of the runs
  std::string stack;
  // The network the runs are modelled on: its switch (each switch the runs' fabrics use, in
  // the order of their first run, joined by " and ") and routing.
  std::string switch_name, routing;
  std::string quantity;   // "iteration time (s)", "MFU", "TFLOP/s per GPU"
  bool held_out = false;  // no constant was set on these runs
  // A broken tolerance fails `railsim validate` (exit 1). Tables of runs written as data carry
  // the project's bar but are not enforced: hold-outs are reported as they fall, and
  // docs/validation.md explains each miss.
  bool enforced = true;
  double max_tolerance = 0;   // every |error| must be below it (docs/validation.md)
  double mean_tolerance = 0;  // the mean |error| must be below it; 0 = no bound
  std::vector<ValidationPoint> points;

  double max_abs_error() const;
  double mean_abs_error() const;
  // The mean signed error of the points with a figure: the table's systematic lean, which the
  // mean |error| hides (0 without any).
  double bias() const;
  // Whether the quantity is a time (a negative error: railsim faster than measured) rather than a
  // rate (a positive one).
  bool time_metric() const;
  // Whether railsim's figures are faster than the measured runs on average (bias() read by
  // time_metric()).
  bool faster_on_average() const;
  bool within_tolerance() const;
};

// The hold-outs taken together: every point outside the frozen fit set, of the tables given.
struct HoldOutSummary {
  int runs = 0;            // hold-outs with railsim's figure
  int without_figure = 0;  // hold-outs railsim cannot plan (each breaks its table's bar)
  double mean_abs_error = 0;
  double median_abs_error = 0;  // the mean of the middle two for an even count
  double within_5 = 0;          // the share of runs with |error| <= 5%
  double within_10 = 0;         // ... <= 10%
};
// Of dense models only (moe false), of mixture-of-experts models only (true) or of all.
HoldOutSummary summarize_hold_outs(const std::vector<ValidationTable>& tables,
                                   std::optional<bool> moe = std::nullopt);
// railsim's peak memory against the runs that publish theirs (every run, fit or not: no memory
// constant is fitted).
struct MemorySummary {
  int runs = 0;               // runs with both figures
  double mean_abs_error = 0;  // of railsim / measured - 1
  double bias = 0;            // the mean signed error
  int below = 0;              // runs where railsim's peak is below the measured one
};
// Over the runs whose measured memory is of one kind: allocated (like for like) or reserved.
MemorySummary summarize_memory(const std::vector<ValidationTable>& tables, bool reserved);

// Every validation table, in the order of docs/validation.md. Deterministic.
std::vector<ValidationTable> validation_tables();
// The same with GPU presets replaced by these (matched by name): how the presets' efficiency
// constants were fitted (docs/validation.md).
std::vector<ValidationTable> validation_tables(const std::vector<spec::GpuSpec>& gpus);
// The tables that break their tolerance (empty when all hold).
std::vector<const ValidationTable*> broken(const std::vector<ValidationTable>& tables);

// Human text: one block per table (points with their error, then mean / max against the
// tolerance) and a closing summary line.
std::string to_text(const std::vector<ValidationTable>& tables);
Json to_json(const std::vector<ValidationTable>& tables);

// One's own measured runs: a table written as data (docs/validation.md, "Adding runs") in the
// JSON file at `path`, checked field by field (an error names `option`, then the field:
// "rows[2].tp: got 0, ...", and an unknown field is refused) and timed as the shipped tables are.
// Every row is a hold-out: "fit" is refused, the fit set being frozen.
ValidationTable own_table(const std::string& path, const std::string& option = "--table");
// The shipped tables (as above), then one's own table: each run with the band estimate and plan
// print for its GPU, stack and model kind (judged by the shipped tables) and whether its error
// falls inside it, and the runs taken together. One's own runs change no band. JSON: the document
// above with "own": {"table" (its points with "band", "evidence", "inside_band"), "hold_outs",
// "inside_band"}.
std::string to_text(const std::vector<ValidationTable>& tables, const ValidationTable& own);
Json to_json(const std::vector<ValidationTable>& tables, const ValidationTable& own);

// How much measured evidence stands behind a GPU and stack (docs/model.md section 10).
enum class Evidence : std::uint8_t {
  gpu_and_stack,  // measured runs of this GPU on this software stack exist
  gpu_only,       // this GPU was measured, but only on other stacks
  none,           // this GPU was never measured
};
std::string_view to_string(Evidence e);
// The evidence level for `gpu` and `stack` in `tables`, leaving out the table at index `skip`
// (a hold-out is judged by the evidence the other tables give).
Evidence evidence(const std::vector<ValidationTable>& tables, const std::string& gpu,
                  const std::string& stack, std::size_t skip = SIZE_MAX);

// The uncertainty of a predicted iteration time (docs/model.md section 10, ours): every
// hold-out run (a point not in the fit set) gets the evidence level the other tables give its
// GPU and stack; the band of a level is the smallest |error| that covers kBandCoverage of the
// hold-outs at that level or weaker (nearest rank), so that a prediction at a level is as
// uncertain as the runs that were predicted from as little. Fewer than kMinBandRuns such runs:
// twice the worst |error| of every hold-out, flagged. Each class of prediction has bands of its
// own, from the hold-outs of its class: dense or mixture-of-experts models, BF16 or FP8-and-
// narrower GEMMs (FP8, MXFP8, NVFP4); the model errs differently on them.
inline constexpr double kBandCoverage = 0.80;
inline constexpr int kMinBandRuns = 5;
struct BandClass {
  bool moe = false;            // mixture-of-experts models, else dense ones
  bool low_precision = false;  // GEMMs in FP8, MXFP8 or NVFP4 (spec::low_precision), else BF16
};
struct ErrorBand {
  double fraction = 0;     // +- this fraction of the predicted time
  bool validated = false;  // runs of the same GPU and stack exist (level gpu_and_stack)
  Evidence level = Evidence::none;
  int runs = 0;         // hold-outs the band comes from
  double coverage = 0;  // the share of those hold-outs inside the band
  // Their mean signed error, read as railsim's speed over the measured one less 1: above 0,
  // railsim's times were short of the measured ones on average (it was fast); below, long.
  double bias = 0;
  std::string basis;           // one line: the level and the runs
  bool moe = false;            // the band of mixture-of-experts models (else dense ones)
  bool low_precision = false;  // the band of FP8-and-narrower runs (else BF16 ones)
  // The range of a predicted time `t`: a run's measured time is railsim's times (1 + error), and
  // no error is below -100%, so a band above 100% has no lower bound but 0.
  double low(double t) const { return t * (fraction < 1 ? 1 - fraction : 0.0); }
  double high(double t) const { return t * (1 + fraction); }
};
std::string_view models_name(bool moe);               // "dense models", "mixture-of-experts models"
std::string_view models_key(bool moe);                // JSON "models": "dense", "moe"
std::string_view precision_name(bool low_precision);  // "BF16", "FP8, MXFP8 or NVFP4"
std::string_view precision_key(bool low_precision);   // JSON "precision": "bf16", "fp8"
ErrorBand error_band(const std::string& gpu, const std::string& stack, BandClass cls = {});
ErrorBand error_band(const std::vector<ValidationTable>& tables, const std::string& gpu,
                     const std::string& stack, BandClass cls = {});
// The band of a time of `m` trained as `tr` on `gpu`: its stack, the model's kind and the GEMMs'
// precision (what every command that prints a time uses).
ErrorBand error_band(const std::string& gpu, const Model& m, const Training& tr);
// {fraction, validated, evidence, hold_out_runs, coverage, bias, models, precision, basis}; with a
// predicted time, also its range low_s and high_s.
Json to_json(const ErrorBand& b);
Json to_json(const ErrorBand& b, double time_s);
// The band of each evidence level for one class of prediction, in the order of Evidence.
std::vector<ErrorBand> error_bands(const std::vector<ValidationTable>& tables, BandClass cls = {});
// Every class, dense before mixture-of-experts, BF16 before FP8: the order validate prints them.
inline constexpr BandClass kBandClasses[] = {
    {false, false}, {false, true}, {true, false}, {true, true}};

// How the bands hold on runs they did not come from (docs/model.md section 10, ours): each table
// left out in turn, the bands recomputed from the other tables, and each hold-out of the table
// left out judged by the band of its class at the evidence the other tables give its GPU and
// stack, as a new user's run is judged. Where most of a class's hold-outs sit in one table, that
// table's runs are judged by a band from fewer than kMinBandRuns runs of their class, or, with
// none left, from every class's (`thin`).
struct BandCheck {
  BandClass cls;
  // The hold-outs judged, and of them those inside the band the other tables give them, by the
  // evidence the other tables give them (index: Evidence), the level whose band judged them.
  std::array<int, 3> level_runs{}, level_inside{};
  int thin = 0;              // of them, judged by a band from fewer than kMinBandRuns of its class
  double mean_fraction = 0;  // the mean band they were judged by
  // Each GPU left out in turn (its runs taken out of every table): its hold-outs, judged by the
  // band the other GPUs' runs give a GPU never measured, and of them those inside. The check of
  // that level's band on GPUs it has not seen, which a table left out cannot give once every
  // GPU is measured by more than one table.
  int new_gpu_runs = 0, new_gpu_inside = 0;
  double new_gpu_share() const {
    return new_gpu_runs > 0 ? static_cast<double>(new_gpu_inside) / new_gpu_runs : 0.0;
  }
  int runs() const { return level_runs[0] + level_runs[1] + level_runs[2]; }
  int inside() const { return level_inside[0] + level_inside[1] + level_inside[2]; }
  double share_inside() const { return runs() > 0 ? static_cast<double>(inside()) / runs() : 0.0; }
};
// One per class, in kBandClasses order.
std::vector<BandCheck> check_bands(const std::vector<ValidationTable>& tables);

// Megatron's GPT of a row of a validation data file (multi-head attention, a 4h FFN): its name,
// layers, hidden size and heads from the row, the vocabulary and sequence length from the file's
// "common".
Model gpt_model(const Json& common, const Json& row);
// The FLOPs of one iteration of `global_batch` sequences as Narayanan et al. (SC'21) count them:
// 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
double narayanan_flops(const Model& m, std::int64_t global_batch);

// A measured run of Korthikanti et al. 2022 (data/validation/megatron-korthikanti-2022.json):
// the row's model, its global batch under megatron-lm-2022, its GPUs with one 200 Gb/s NIC each,
// and its strategy (the row's TP, PP and micro-batch, DP 1, the model's interleaving), with
// selective recompute and SP or with full recompute. Validated.
struct KorthikantiRun {
  Model model;
  Training tr;
  spec::Cluster cluster;
  Strategy s;
};
KorthikantiRun korthikanti_run(const Json& common, const Json& row, bool selective_sp);
// The virtual pipeline stages of a Korthikanti et al. model ("22B", "175B", "530B", "1T"). The data
// file does not list them; Figure 1's activation memory does: the first stage holds
// L (1 + (p-1)/(p v)) layers' worth (Korthikanti et al. Sec. 4.2.3).
std::int64_t korthikanti_interleave(const std::string& model);

}  // namespace railsim::perf
