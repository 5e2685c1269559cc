// What `ratelab worst` reports: one worst-case search (sim/worst.h) per concurrency, as text for
// a terminal or as JSON, with how far each pushed the claim past its bound and the witness. No
// wall-clock time in either: the same options print the same bytes.
#ifndef RATELAB_REPORTS_WORST_REPORT_H_
#define RATELAB_REPORTS_WORST_REPORT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reports/fields.h"
#include "reports/output_dir.h"
#include "reports/report_model.h"
#include "sim/worst.h"

namespace ratelab {

struct WorstReport {
  std::string protocol;
  std::string policy;
  CheckId claim = CheckId::kMostInWindow;
  std::string bound;  // what the claim's bound is: "at most 5 in any 10s"
  // The longest a request was held on its way to the store ("500ms"; --max-transit).
  std::string max_transit;
  struct Search {
    int concurrency = 1;
    std::string faults;  // "none"
    int64_t value = 0;   // the measure
    // How far past the bound, as a factor: the most in a window over N; over a bucket, what
    // was admitted in the span over what it allows there; 0 for a streak of false denials.
    double amplification = 0;
    int64_t runs = 0, found_at_run = 0;
    bool stopped = false;  // by --time (or Ctrl-C) before its runs were done
    int64_t requests = 0;  // in the best case, shrunk
    std::string reproduce;
    std::optional<ViolationReport> shown;
    // The limiter answered with its own error: not judged.
    std::optional<std::string> failure;
  };
  std::vector<Search> searches;  // by concurrency, as asked
  // The searches' start, from which each witness's `_s` fields count ("start": FormatUtc); none
  // in a report written before it was kept.
  std::optional<Instant> start = std::nullopt;
};
constexpr auto JsonFields(const WorstReport::Search*) {
  using S = WorstReport::Search;
  return std::tuple{JsonField("concurrency", &S::concurrency),
                    JsonField("faults", &S::faults),
                    JsonField("value", &S::value),
                    JsonField("amplification", &S::amplification),
                    JsonField("runs", &S::runs),
                    JsonField("found_at_run", &S::found_at_run),
                    JsonField("stopped", &S::stopped),
                    JsonField("requests", &S::requests),
                    JsonField("reproduce", &S::reproduce),
                    JsonField("witness", &S::shown),
                    JsonField("failure", &S::failure)};
}
// A measure of the search's (kWorstMeasures) by its name; any other check is refused.
void ReadWorstClaim(const JsonReader& r, CheckId& claim);
constexpr auto JsonFields(const WorstReport*) {
  using R = WorstReport;
  return std::tuple{JsonField("protocol", &R::protocol),
                    JsonField("policy", &R::policy),
                    JsonField("claim", &R::claim, ReadWorstClaim),
                    JsonField("bound", &R::bound),
                    JsonField("max_transit", &R::max_transit).OrDefault(),
                    JsonField("searches", &R::searches),
                    JsonField("start", &R::start).OrDefault()};
}

// One search's part of the report.
WorstReport::Search MakeWorstSearch(const WorstOptions& options, const WorstResult& result,
                                    std::string reproduce);
// "at most 5 in any 10s", "at most 2 + floor(span / 100ms)", "no denial the model had room for".
std::string WorstBound(const Policy& policy, CheckId claim);

// The value in words, then per search its figures and witness; a table of the amplification
// when there are several.
std::string RenderWorstText(const WorstReport& report);
// For CI: a test case per search, an error when the limiter failed (as `worst` exits then);
// how far a search pushed the claim is a measure, not a verdict, so it fails no case.
std::string RenderWorstJunit(const WorstReport& report);
// For a pull request and a review: the text view under a title.
std::string RenderWorstMarkdown(const WorstReport& report);
std::string RenderWorstHtml(const WorstReport& report);
// Writes report.html, report.md, report.json and junit.xml into `dir` (made ready by
// OutputDir::Prepare), recorded in its manifest: the HTML's path.
Result<std::string> WriteWorstReport(const WorstReport& report, const OutputDir& dir);
nlohmann::json ToJson(const WorstReport& report);
// The report `ratelab worst --json` wrote, or InvalidArgument with the path of the first problem.
Result<WorstReport> WorstReportFromJson(const nlohmann::json& j);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_WORST_REPORT_H_
