// railsim report: the one-file HTML report of the paper's setting.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "commands.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/threads.hpp"
#include "railsim/html/report.hpp"
#include "railsim/report/file.hpp"
#include "railsim/sweep/study.hpp"
#include "railsim/sweep/values.hpp"

namespace railsim::cli {

namespace {

struct ReportArgs {
  std::string out;
  html::ReportOptions report;
  std::string studies = "all";
  bool no_failures = false;
};

void run(ReportArgs a) {
  if (a.out.empty()) throw InputError("--out", "required: the HTML file to write (FILE.html)");
  if (a.out.size() < 6 || (a.out.substr(a.out.size() - 5) != ".html"))
    throw InputError("--out", fmt::format("'{}' must end in .html", a.out));
  report::check_writable(a.out, "--out");
  if (a.studies == "all")
    a.report.studies = sweep::study_names();
  else if (a.studies != "none")
    a.report.studies = sweep::parse_names("--studies", a.studies);
  a.report.failures = !a.no_failures;
  check_threads("--threads", a.report.threads);
  report::write_file_atomic(a.out, html::build_report(a.report), "--out");
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "report",
      "One self-contained HTML file: the designs of 32,768 GH200 (K=256) and H100 (K=8) with "
      "cost, power, savings and best plans, the bill of materials, traffic heatmaps, the studies' "
      "plots and the goodput under failures");
  cmd->add_option("--out", a->out, "The HTML file to write (required)");
  cmd->add_option("--gpus", a->report.gpus, "GPUs of each of the two clusters")
      ->capture_default_str();
  cmd->add_option("--model", a->report.model, "Model preset or JSON file")->capture_default_str();
  cmd->add_option("--batch", a->report.batch, "Global batch in sequences")->capture_default_str();
  cmd->add_option("--catalog", a->report.catalog,
                  "Price/power catalog (default ib-ndr-thirdparty-2024)");
  cmd->add_option("--routing", a->report.routing,
                  "Routing of every section: auto (the switch's default), ecmp, adaptive, spray")
      ->capture_default_str();
  cmd->add_option("--seed", a->report.seed, "ECMP hash seed, 0 .. 2^62")->capture_default_str();
  cmd->add_option("--studies", a->studies,
                  "Studies to run and plot: all, none, or a list of hb-domain, hb-bandwidth, "
                  "nic-bandwidth, batch, cluster-size, moe-alltoall")
      ->capture_default_str();
  cmd->add_flag("--no-failures", a->no_failures, "Leave out the goodput under failures");
  cmd->add_option("--trials", a->report.failure_trials,
                  "Monte Carlo trials per design of the goodput section")
      ->capture_default_str();
  cmd->add_option("--threads", a->report.threads, "Threads (0: all cores); the output is the same")
      ->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace railsim::cli
