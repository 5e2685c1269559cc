// The views of a run, each made from its report (report_model.h) alone:
//   report.html  one self-contained page for a design review (plots inline, no network needed)
//   report.md    a pull-request comment: the recommendation and verdicts, the rest collapsed
//   junit.xml    one test case per (limiter, check), so CI shows broken checks natively
// WriteReport writes them all, with report.json and the plots, into one directory.
#ifndef RATELAB_REPORTS_VIEWS_H_
#define RATELAB_REPORTS_VIEWS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "reports/output_dir.h"
#include "reports/report_model.h"

namespace ratelab {

// `svgs` maps a plot's name to its SVG text; `plot_error` says why there are none, if so.
std::string RenderHtml(const RunReport& report, const std::map<std::string, std::string>& svgs,
                       const std::string& plot_error);
std::string RenderMarkdown(const RunReport& report);
// `seconds`: how long the run took (0 in a report directory, whose bytes a seed fixes).
std::string RenderJunit(const RunReport& report, double seconds = 0);
// A sweep: a failed case per seed that broke a check (or an error per seed whose limiter failed),
// each with the command that reproduces it (`reproduce(seed)`); the seeds that kept every check
// as one case.
std::string RenderSweepJunit(const SweepReport& sweep,
                             const std::function<std::string(uint64_t)>& reproduce, double seconds);
// A sweep's verdict in words: "3 of 20 seeds broke a check", or "every one of the 20 seeds kept
// every check".
std::string SeedsBroken(uint64_t broken, uint64_t seeds);

struct ReportFiles {
  std::string html, markdown, json, junit;
  std::vector<std::string> plots;  // the SVG files
  std::string plot_error;          // why there are no plots ("" when there are)
};

// Writes DIR/report.json, report.html, report.md, junit.xml and plots/*.svg (and the gnuplot
// scripts beside them) into `dir` (made ready by OutputDir::Prepare), and records them in its
// manifest. When gnuplot cannot draw, the other files are still written and plot_error says why.
// Fails when a file cannot be written.
Result<ReportFiles> WriteReport(const RunReport& report, const OutputDir& dir);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_VIEWS_H_
