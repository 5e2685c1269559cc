// Plain-text views of a comparison for a terminal: the verdict table and the witnesses.
#ifndef RATELAB_REPORTS_VERDICT_TABLE_H_
#define RATELAB_REPORTS_VERDICT_TABLE_H_

#include <string>

#include "reports/report_model.h"
#include "sim/scenario_run.h"

namespace ratelab {

// One row per limiter: protocol, policy, offered, admitted, denied (and unanswered when any
// request went unanswered), the most admitted in any window of the claim against its limit, and
// one column per check: "kept" or how many keys broke it.
std::string RenderVerdictTable(const RunResult& c);

// The first witness of each violation, limiter by limiter (empty when there is none).
std::string RenderWitnesses(const RunResult& c);

// A comparison over seeds (report.across_seeds) as a table: each limiter's broken checks and its
// numbers over the seeds, median and worst, after a sentence saying so.
std::string RenderSpreadTable(const RunReport& r);

// The run in words: seed, faults, verdict table, notes, first witnesses, and `reproduce`.
std::string RenderRunText(const RunResult& c, const std::string& reproduce);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_VERDICT_TABLE_H_
