// railsim report: the one-file HTML report of the paper's setting.
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
  r.gpus = a.integer("gpus");
  r.model = a.text("model");
  r.batch = a.integer("batch");
  r.catalog = a.text("catalog");
  r.routing = a.text("routing");
  r.seed = a.integer("seed");
  const std::string studies = a.text("studies");
  if (studies == "all")
    r.studies = sweep::study_names();
  else if (studies != "none")
    r.studies = sweep::parse_names("--studies", studies);
  r.failures = !a.flag("no_failures");
  r.failure_trials = a.integer("trials");
  r.threads = check_threads("--threads", a.integer("threads"));
  report::write_file_atomic(file, html::build_report(r), "--out");
  (void)out;  // the page goes to the file; nothing is printed
}
}  // namespace

Command report_command() {
  const html::ReportOptions d;
  Command c;
  c.path = "report";
  c.summary =
      "One self-contained HTML file: the designs of 32,768 GH200 (K=256) and H100 (K=8) with "
      "cost, power, savings and best plans, the bill of materials, traffic heatmaps, the studies' "
      "plots and the goodput under failures";
  c.fields = {
      text_field("out", "--out", "The HTML file to write (required)"),
      integer_field("gpus", "--gpus", "GPUs of each of the two clusters", 0, 0,
                    std::to_string(d.gpus)),
      text_field("model", "--model", "Model preset or JSON file", d.model),
      integer_field("batch", "--batch", "Global batch in sequences", 0, 0, std::to_string(d.batch)),
      text_field("catalog", "--catalog", "Price/power catalog (default ib-ndr-thirdparty-2024)"),
      text_field("routing", "--routing",
                 "Routing of every section: auto (the switch's default), ecmp, adaptive, spray",
                 d.routing),
      integer_field("seed", "--seed", "ECMP hash seed, 0 .. 2^62", 0, 0, std::to_string(d.seed)),
      text_field("studies", "--studies",
                 "Studies to run and plot: all, none, or a list of hb-domain, hb-bandwidth, "
                 "nic-bandwidth, batch, cluster-size, moe-alltoall",
                 "all"),
      flag_field("no_failures", "--no-failures", "Leave out the goodput under failures"),
      integer_field("trials", "--trials", "Monte Carlo trials per design of the goodput section", 0,
                    0, std::to_string(d.failure_trials)),
      integer_field("threads", "--threads", "Threads (0: all cores); the output is the same", 0, 0,
                    std::to_string(d.threads))};
  c.run = run_report;
  c.python_name = "report";
  c.python_sets = "";
  return c;
}

}  // namespace railsim::command
