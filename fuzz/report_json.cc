// Every report's JSON (reports/any_report.h): a run's, a sweep's, a check's, a stress run's, a
// probe's and a worst-case search's. Any bytes are read as each kind of report or refused with
// the path of what is wrong; a report read is written back to the same JSON, and every view of it
// (text, HTML, Markdown, JUnit, the gnuplot scripts) can be made, with no text of the report
// outside a gnuplot string (GnuplotScriptProblem). ReadAnyReport reads it or refuses it.
#include <cstddef>
#include <cstdint>

#include "nlohmann/json.hpp"
#include "reports/any_report.h"
#include "reports/check_report.h"
#include "reports/plots.h"
#include "reports/probe_report.h"
#include "reports/report_model.h"
#include "reports/stress_report.h"
#include "reports/views.h"
#include "reports/worst_report.h"

namespace {

// A report of its kind read from `j` is written back to the same JSON, and its views made.
template <typename Report, typename Read, typename... Views>
void ReadBackAndView(const nlohmann::json& j, Read read, Views... views) {
  const ratelab::Result<Report> report = read(j);
  if (!report.ok()) {
    if (report.status().message().empty()) __builtin_trap();
    return;
  }
  const ratelab::Result<Report> again = read(ratelab::ToJson(*report));
  if (!again.ok() || ratelab::ToJson(*again) != ratelab::ToJson(*report)) __builtin_trap();
  ((void)views(*report), ...);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  ReadBackAndView<ratelab::ProbeReport>(j, ratelab::ProbeReportFromJson, ratelab::RenderProbeText,
                                        ratelab::RenderProbeJunit, ratelab::RenderProbeMarkdown,
                                        ratelab::RenderProbeHtml);
  ReadBackAndView<ratelab::WorstReport>(j, ratelab::WorstReportFromJson, ratelab::RenderWorstText,
                                        ratelab::RenderWorstJunit, ratelab::RenderWorstMarkdown,
                                        ratelab::RenderWorstHtml);
  ReadBackAndView<ratelab::CheckReport>(
      j, ratelab::CheckReportFromJson, ratelab::RenderCheckText,
      [](const ratelab::CheckReport& r) { return ratelab::RenderCheckJunit(r, 0); },
      ratelab::RenderCheckHtml);
  ReadBackAndView<ratelab::StressReport>(j, ratelab::StressReportFromJson,
                                         ratelab::RenderStressText, ratelab::RenderStressJunit,
                                         ratelab::RenderStressHtml);
  if (const ratelab::Result<ratelab::AnyReport> any = ratelab::ReadAnyReport(j);
      !any.ok() && any.status().message().empty()) {
    __builtin_trap();
  }
  if (ratelab::Result<ratelab::SweepReport> sweep = ratelab::SweepReportFromJson(j); sweep.ok()) {
    const ratelab::Result<ratelab::SweepReport> again =
        ratelab::SweepReportFromJson(ratelab::ToJson(*sweep));
    if (!again.ok() || ratelab::ToJson(*again) != ratelab::ToJson(*sweep)) __builtin_trap();
  }
  ratelab::Result<ratelab::RunReport> run = ratelab::RunReportFromJson(j);
  if (!run.ok()) {
    if (run.status().message().empty()) __builtin_trap();
    return 0;
  }
  const ratelab::Result<ratelab::RunReport> again =
      ratelab::RunReportFromJson(ratelab::ToJson(*run));
  if (!again.ok() || ratelab::ToJson(*again) != ratelab::ToJson(*run)) __builtin_trap();
  (void)ratelab::RenderHtml(*run, {}, "not drawn");
  (void)ratelab::RenderMarkdown(*run);
  (void)ratelab::RenderJunit(*run);
  // No text from the report reaches gnuplot as code.
  for (const ratelab::Plot& p : ratelab::PlotScripts(*run)) {
    if (!ratelab::GnuplotScriptProblem(p.script).empty()) __builtin_trap();
  }
  return 0;
}
