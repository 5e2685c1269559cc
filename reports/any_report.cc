#include "reports/any_report.h"

#include <string>

namespace ratelab {

namespace {

// Whether `j` is an object with every one of `fields`.
bool HasAll(const nlohmann::json& j, std::initializer_list<const char*> fields) {
  if (!j.is_object()) return false;
  for (const char* f : fields) {
    if (!j.contains(f)) return false;
  }
  return true;
}

// `read(j)` as an AnyReport.
template <typename T>
Result<AnyReport> As(Result<T> read) {
  if (!read.ok()) {
    return absl::InvalidArgumentError(
        "not a ratelab report (expected the JSON of ratelab compare, demo, run, check, stress, "
        "probe or worst): " +
        std::string(read.status().message()));
  }
  return AnyReport(std::move(*read));
}

}  // namespace

Result<AnyReport> ReadAnyReport(const nlohmann::json& j) {
  if (HasAll(j, {"url", "findings"})) return As(ProbeReportFromJson(j));
  if (HasAll(j, {"searches", "claim"})) return As(WorstReportFromJson(j));
  if (HasAll(j, {"seeds", "first_failing"})) return As(SweepReportFromJson(j));
  if (HasAll(j, {"seeds_searched", "verdict"})) return As(CheckReportFromJson(j));
  if (HasAll(j, {"threads", "per_second"})) return As(StressReportFromJson(j));
  return As(RunReportFromJson(j));
}

}  // namespace ratelab
