// junit.xml: one test case per (limiter, check), so CI shows broken checks natively, each
// failure carrying its first witness as a timeline.
#include "reports/timeline.h"
#include "reports/view_parts.h"
#include "reports/views.h"

namespace ratelab {

std::string RenderJunit(const RunReport& r) {
  using view_parts::Escape;
  int64_t tests = 0;
  std::string cases;
  const int64_t failures = view_parts::ForEachCheck(r, [&](const LimiterReport& l,
                                                           const CheckCount& check) {
    ++tests;
    cases += "    <testcase classname=\"" + Escape(r.scenario + "." + l.name) + "\" name=\"" +
             Escape(check.name) + "\" time=\"0\"";
    if (check.violations == 0) {
      cases += "/>\n";
      return;
    }
    const std::vector<const ViolationReport*> first = view_parts::ViolationsOf(l, check.name, 1);
    std::string message = view_parts::Verdict(check.violations), body;
    if (!first.empty()) {
      const ViolationReport& v = *first[0];
      message += ": " + v.summary;
      body = v.invariant + " on key " + v.key + "\n";
      for (const TimelineRow& row : WitnessTimeline(v.witness, r.faults)) {
        body +=
            view_parts::Fixed(row.at_s, 6) + "s  " +
            (row.id < 0 ? std::string() : "#" + std::to_string(row.id) + "  " + row.node + "  ") +
            row.what + "\n";
      }
    }
    cases += ">\n      <failure type=\"" + Escape(check.name) + "\" message=\"" + Escape(message) +
             "\">" + Escape(body) + "</failure>\n    </testcase>\n";
  });
  // A limiter that answered with its own error: the run of it is an error, not a verdict.
  int64_t errors = 0;
  for (const LimiterReport& l : r.limiters) {
    if (l.failed == 0) continue;
    ++tests;
    ++errors;
    cases += "    <testcase classname=\"" + Escape(r.scenario + "." + l.name) +
             "\" name=\"decides without failing\" time=\"0\">\n      <error type=\"failure\" "
             "message=\"" +
             Escape(std::to_string(l.failed) + " request(s) failed: " + l.failure) +
             "\"/>\n    </testcase>\n";
  }
  const std::string counts = " tests=\"" + std::to_string(tests) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
                             "\"";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ratelab\"" + counts +
         ">\n  <testsuite name=\"" + Escape("ratelab." + r.scenario) + "\"" + counts +
         " skipped=\"0\" time=\"0\">\n" + cases + "  </testsuite>\n</testsuites>\n";
}

}  // namespace ratelab
