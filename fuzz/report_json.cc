// report.json and a sweep's result.json (reports/report_model.h): any bytes are read as a report
// or refused with the path of what is wrong; a report read is written back to the same JSON, and
// every view of it (HTML, Markdown, JUnit, the gnuplot scripts) can be made, with no text of the
// report outside a gnuplot string (GnuplotScriptProblem).
#include <cstddef>
#include <cstdint>

#include "nlohmann/json.hpp"
#include "reports/plots.h"
#include "reports/report_model.h"
#include "reports/views.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
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
