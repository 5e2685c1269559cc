// What `ratelab check` reports: a search's finding (sim/search.h), or that there was none, as a
// CheckReport (report_model.h), printed as JSON or as text for a terminal.
#ifndef RATELAB_REPORTS_CHECK_REPORT_H_
#define RATELAB_REPORTS_CHECK_REPORT_H_

#include <optional>
#include <string>

#include "reports/output_dir.h"
#include "reports/report_model.h"
#include "sim/search.h"

namespace ratelab {

// The report of `result`, a search of `protocol` from `options`; `reproduce` replays its finding
// (or its failure).
CheckReport MakeCheckReport(const std::shared_ptr<const ProtocolInfo>& protocol,
                            const SearchOptions& options, const SearchResult& result,
                            const std::string& reproduce);

// The witness `v` as its report prints it (HistoryOf: instants from `start` to the nanosecond),
// judged again on its own by the check that found it, as `protocol` decides (its clock, its
// resolution, its tie) under `policy`: whether it breaks the same invariant on the same key. None
// for a check that a witness alone cannot be judged by (key expiry needs the store the run left,
// a restart's check the same run without it).
std::optional<bool> BreaksAsPrinted(const std::shared_ptr<const ProtocolInfo>& protocol,
                                    const Policy& policy, const ViolationReport& v, Instant start);

// For a terminal: the violation, the minimal case, the witness as a timeline and the command
// that replays it; or the limiter's failure and the request it failed on; or what was
// searched.
std::string RenderCheckText(const CheckReport& report);

// For CI: a test case per check searched, failed with the minimal witness and the command that
// replays it (an error when the limiter failed); `seconds`, how long the search took, is each
// case's time, the checks being judged together on the same search.
std::string RenderCheckJunit(const CheckReport& report, double seconds);
// For CI, a search stopped (Ctrl-C) after report.seeds_searched of `seeds`: a case per check,
// each skipped with why, none passed.
std::string RenderInterruptedCheckJunit(const CheckReport& report, uint64_t seeds, double seconds);
// For a design review: the verdict, the witness drawn and tabled, what was searched and the
// command that replays it.
std::string RenderCheckHtml(const CheckReport& report);
// Writes into `dir` report.html (RenderCheckHtml), report.md (the text view), report.json and
// junit.xml (each case taking `seconds`): the path of report.html, or why not.
Result<std::string> WriteCheckReport(const CheckReport& report, const OutputDir& dir,
                                     double seconds);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_CHECK_REPORT_H_
