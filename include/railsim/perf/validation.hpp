#pragma once
// The iteration-time model against measured training runs (docs/validation.md): each table's
// points, its errors and its documented tolerance, computed from the runs shipped in
// data/validation/ (embedded, like the presets); and the error band that `estimate` and `plan`
// attach to a predicted time from the residuals of the closest validated regime.
#include <string>
#include <vector>

#include "railsim/core/json.hpp"
#include "railsim/spec/gpu.hpp"

namespace railsim::perf {

// One measured run against railsim, in its table's unit.
struct ValidationPoint {
  std::string label;  // "175B selective + SP", "16,384 GPUs"
  double measured = 0;
  double railsim = 0;
  double error() const { return measured != 0 ? railsim / measured - 1.0 : 0.0; }
};

// One table of docs/validation.md.
struct ValidationTable {
  std::string id;      // "korthikanti-2022-time"
  std::string title;   // "Korthikanti et al. 2022, Table 5: iteration time"
  std::string source;  // the data file under data/validation/
  std::string gpu;     // the regime: GPU preset and software stack of the runs
  std::string stack;
  std::string switch_name, routing;  // the network the runs are modelled on
  std::string quantity;              // "iteration time (s)", "MFU", "TFLOP/s per GPU"
  bool held_out = false;             // no constant was set on these runs
  double max_tolerance = 0;          // every |error| must be below it (docs/validation.md)
  double mean_tolerance = 0;         // the mean |error| must be below it; 0 = no bound
  std::vector<ValidationPoint> points;

  double max_abs_error() const;
  double mean_abs_error() const;
  bool within_tolerance() const;
};

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

// The uncertainty of a predicted iteration time (docs/model.md section 10): the largest |error|
// of the validated runs on the same GPU preset and software stack; with none, twice the largest
// |error| of every validated run, flagged as not validated (ours).
struct ErrorBand {
  double fraction = 0;     // +- this fraction of the predicted time
  bool validated = false;  // runs of the same GPU and stack exist
  std::string basis;       // one line: which runs, or why not validated
};
ErrorBand error_band(const std::string& gpu, const std::string& stack);
ErrorBand error_band(const std::vector<ValidationTable>& tables, const std::string& gpu,
                     const std::string& stack);
Json to_json(const ErrorBand& b, double time_s);

}  // namespace railsim::perf
