// railsim report: the one-file HTML report of a cluster (or the paper's two) for one or more
// models: the recommendation first, then the detail.
#include "railsim/html/report.hpp"

#include <fmt/format.h>

#include "railsim/command/inputs.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/report/file.hpp"
#include "railsim/sweep/study.hpp"
#include "railsim/sweep/values.hpp"
#include "registry.hpp"

namespace railsim::command {

namespace {

void run_report(const Args& a, Output& out) {
  const std::string file = a.text("out");
  if (file.empty()) throw InputError("--out", "required: the HTML file to write (FILE.html)");
  if (file.size() < 6 || (file.substr(file.size() - 5) != ".html"))
    throw InputError("--out", fmt::format("'{}' must end in .html", file));
  report::check_writable(file, "--out");
  html::ReportOptions r;
  if (cluster_given(a)) r.cluster = cluster_options(a);  // none: the paper's two
  r.network = network_options(a);
  (void)resolve_network(a);  // every network option checked before any work
  const ResolvedCost cost = resolve_cost(a);
  r.catalog = a.text("catalog");
  r.counting = cost.counting;
  if (a.given("model")) r.models = a.values("model");
  r.batch = a.integer("batch");
  r.seq = a.integer_if("seq");
  const Software sw = resolve_software(a);
  r.stack = sw.stack;
  r.dtype = sw.dtype;
  r.flash_attention = sw.flash_attention;
  r.train_tokens = a.number_if("train_tokens");
  const std::string studies = a.text("studies");
  if (studies == "all")
    r.studies = sweep::study_names();
  else if (studies != "none")
    r.studies = sweep::parse_names("--studies", studies);
  r.failures = !a.flag("no_failures");
  r.failure_trials = a.integer("trials");
  r.threads = check_threads("--threads", a.integer("threads"));
  r.inputs = given_options(a);
  report::write_file_atomic(file, html::build_report(r), "--out");
  out.print("report written to {}\n", file);
}

}  // namespace

Command report_command() {
  const html::ReportOptions d;
  Command c;
  c.path = "report";
  c.summary =
      "One self-contained HTML file to send: which network to buy for your cluster and models and "
      "why (cost, power, speed, time to train, every assumption), the bill of materials, traffic "
      "heatmaps, the paper's studies on your cluster and the goodput under failures. With no "
      "cluster option: 32,768 GH200 (K=256) and 32,768 H100 (K=8)";
  Field models = text_field("model", "--model",
                            "Model preset or JSON file; repeat for several (default GPT-1T)");
  models.kind = Kind::texts;
  std::vector<Field> training = {
      models,
      integer_field("batch", "--batch", "Global batch in sequences", 1, std::int64_t{1} << 40,
                    std::to_string(d.batch)),
      integer_field("seq", "--seq", "Sequence length (default: each model's)", 1, 1 << 24)};
  for (Field& s : software_fields()) training.push_back(std::move(s));
  training.push_back(train_tokens_field());
  c.fields = join(
      {cluster_fields(), network_fields(/*with_design=*/false), routing_fields(), cost_fields(),
       training},
      {text_field("out", "--out", "The HTML file to write (required)"),
       text_field("studies", "--studies",
                  "Studies to run and plot on the cluster: all, none, or a list of hb-domain, "
                  "hb-bandwidth, nic-bandwidth, batch, cluster-size, moe-alltoall",
                  "all"),
       flag_field("no_failures", "--no-failures", "Leave out the goodput under failures"),
       integer_field("trials", "--trials", "Monte Carlo trials per design of the goodput section",
                     1, 10'000'000, std::to_string(d.failure_trials)),
       integer_field("threads", "--threads", "Threads (0: all cores); the output is the same", 0, 0,
                     std::to_string(d.threads))});
  c.run = run_report;
  c.python_name = "report";
  c.python_sets = "";
  return c;
}

}  // namespace railsim::command
