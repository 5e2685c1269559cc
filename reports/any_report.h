// Any report ratelab writes, read back from its JSON: a run's (compare, demo, run --out), a
// sweep's (run --seeds), a check's, a stress run's, a probe's or a worst-case search's. Each is
// known by the fields only it has, then read by its own field list (reports/fields.h), so
// `ratelab report` rebuilds any command's views from the JSON alone.
#ifndef RATELAB_REPORTS_ANY_REPORT_H_
#define RATELAB_REPORTS_ANY_REPORT_H_

#include <nlohmann/json.hpp>
#include <variant>

#include "impl/core/status.h"
#include "reports/probe_report.h"
#include "reports/report_model.h"
#include "reports/worst_report.h"

namespace ratelab {

using AnyReport =
    std::variant<RunReport, SweepReport, CheckReport, StressReport, ProbeReport, WorstReport>;

// The report `j` holds, or InvalidArgument: "not a ratelab report (expected ...)" with the path
// of the first problem met reading it as the kind it looks most like.
Result<AnyReport> ReadAnyReport(const nlohmann::json& j);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_ANY_REPORT_H_
