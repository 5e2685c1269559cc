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

#include "reports/report_model.h"
#include "sim/worst.h"

namespace ratelab {

struct WorstReport {
  std::string protocol;
  std::string policy;
  WorstClaim claim = WorstClaim::kMostInAnyWindow;
  std::string bound;  // what the claim's bound is: "at most 5 in any 10s"
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
    std::string failure;  // the limiter answered with its own error: not judged
  };
  std::vector<Search> searches;  // by concurrency, as asked
};

// One search's part of the report.
WorstReport::Search MakeWorstSearch(const WorstOptions& options, const WorstResult& result,
                                    std::string reproduce);
// "at most 5 in any 10s", "at most 2 + floor(span / 100ms)", "no denial the model had room for".
std::string WorstBound(const Policy& policy, WorstClaim claim);

// The value in words, then per search its figures and witness; a table of the amplification
// when there are several.
std::string RenderWorstText(const WorstReport& report);
nlohmann::json ToJson(const WorstReport& report);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_WORST_REPORT_H_
