// The HTML of a witness, and the page of a report that searches for one (check, stress, worst):
// the verdict first, each witness drawn (witness_picture.h) and tabled a request a row, what was
// searched, how to reproduce it, and the terminal's text, collapsed, for the rest. Internal to
// reports/.
#ifndef RATELAB_REPORTS_WITNESS_PAGE_H_
#define RATELAB_REPORTS_WITNESS_PAGE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reports/report_model.h"
#include "reports/view_parts.h"

namespace ratelab {

// A witness as a table, a row per request (WitnessRequests): when it was sent, on `clock` (the
// time of day at that many seconds from the start, headed `clock_header`; no such column when
// `clock` is empty) and since the first, the lane it came from, its store steps when it took
// several, and what it got; admitted rows good, denied bad.
std::string HtmlWitnessTable(const ViolationReport& v, const std::vector<FaultReport>& faults,
                             const std::function<std::string(double)>& clock,
                             const std::string& clock_header);

struct WitnessPage {
  std::string title;
  std::string verdict;                 // "VIOLATION of any-window-cap", "nothing found", "FAILED"
  bool bad = false;                    // the verdict is a finding
  std::vector<std::string> sentences;  // under the verdict: what broke, what it needed, a hint
  struct Shown {
    std::string heading;  // "Witness", "Concurrency 4, no faults"
    std::vector<std::string> sentences;
    const ViolationReport* violation = nullptr;  // none: the sentences alone
    std::vector<FaultReport> faults;
    std::string lane_word = "node";  // "node", "thread"
    std::optional<Instant> start;    // the run's start: the clock of the table, the ticks
    std::string reproduce;           // the command that makes this one again
  };
  std::vector<Shown> shown;
  view_parts::Rows searched;  // what was searched, a row per fact: {what, value}
  std::string reproduce;      // the command that makes the page's finding again
  std::string text;           // the terminal's text of the whole report
};
std::string RenderWitnessPage(const WitnessPage& page);

// The row of "What was searched" that says how late a request may reach the store
// (`max_transit`, --max-transit: "500ms").
std::vector<std::string> TransitSearched(const std::string& max_transit);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_WITNESS_PAGE_H_
