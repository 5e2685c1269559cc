#include "reports/witness_page.h"

#include <algorithm>

#include "reports/timeline.h"
#include "reports/witness_picture.h"

namespace ratelab {

using view_parts::Escape;
using view_parts::Offset;

std::string HtmlWitnessTable(const ViolationReport& v, const std::vector<FaultReport>& faults,
                             const std::function<std::string(double)>& clock,
                             const std::string& clock_header) {
  const std::vector<RequestRow> rows = WitnessRequests(v.witness, faults);
  if (rows.empty()) return "";
  const bool steps = std::any_of(rows.begin(), rows.end(),
                                 [](const RequestRow& row) { return !row.steps.empty(); });
  std::string s = "<table class=\"timeline\">\n<tr><th>request</th>" +
                  (clock ? "<th>sent (" + Escape(clock_header) + ")</th>" : std::string()) +
                  "<th>+</th><th>from</th>" + (steps ? "<th>store steps (+ since sent)</th>" : "") +
                  "<th>outcome</th></tr>\n";
  for (const RequestRow& row : rows) {
    const bool admitted = row.outcome.rfind("admitted", 0) == 0;
    const bool denied = row.outcome.rfind("denied", 0) == 0;
    s += std::string("<tr") +
         (admitted ? " class=\"good\""
          : denied ? " class=\"bad\""
                   : "") +
         "><td>" + (row.id < 0 ? std::string() : "#" + std::to_string(row.id)) + "</td>" +
         (clock ? "<td>" + Escape(clock(row.sent_s)) + "</td>" : std::string()) + "<td>+" +
         Offset(row.sent_s - rows.front().sent_s) + "</td><td>" + Escape(row.node) + "</td>";
    if (steps) {
      s += "<td>";
      for (size_t i = 0; i < row.steps.size(); ++i) {
        s += (i == 0 ? "" : "<br>") + std::string("+") + Offset(row.steps[i].at_s - row.sent_s) +
             " " + Escape(row.steps[i].label);
      }
      s += "</td>";
    }
    std::string outcome = row.outcome;
    if (row.id >= 0 && row.key != v.key) outcome += " (key " + row.key + ")";
    if (row.id >= 0 && row.cost != 1) outcome += " (cost " + std::to_string(row.cost) + ")";
    s += "<td>" + Escape(outcome) + "</td></tr>\n";
  }
  return s + "</table>\n";
}

namespace {

std::string Command(const std::string& command) {
  return "<pre><code>" + Escape(command) + "</code></pre>\n";
}

}  // namespace

std::vector<std::string> TransitSearched(const std::string& max_transit) {
  return {"transit", "a request held up to " + max_transit +
                         " between its client reading the clock and its call reaching the store"};
}

std::string RenderWitnessPage(const WitnessPage& page) {
  std::string s = view_parts::HtmlPageStart(page.title) + "<h1>" + Escape(page.title) + "</h1>\n" +
                  "<p class=\"verdict " + (page.bad ? "bad" : "good") + "\"><b>" +
                  Escape(page.verdict) + "</b></p>\n" + view_parts::Paragraphs(page.sentences);
  for (const WitnessPage::Shown& shown : page.shown) {
    s += "<h2>" + Escape(shown.heading) + "</h2>\n" + view_parts::Paragraphs(shown.sentences);
    if (const ViolationReport* v = shown.violation) {
      s += "<p class=\"summary\"><b>" + Escape(std::string(CheckName(v->invariant))) +
           "</b> on key <code>" + Escape(v->key) + "</code>: " + Escape(v->summary) + "</p>\n";
      s += "<figure>" + WitnessSvg(PictureOf(*v, shown.faults, shown.lane_word, shown.start)) +
           "</figure>\n";
      std::function<std::string(double)> clock;
      if (shown.start) {
        const Instant start = *shown.start;
        clock = [start](double at_s) {
          // Past what the clock holds (AfterStart): the offset from the start instead.
          const std::optional<Instant> at = view_parts::AfterStart(start, at_s);
          return at ? FormatInstantTo(*at, 6) : "+" + Offset(at_s) + " from the start";
        };
      }
      s += HtmlWitnessTable(*v, shown.faults, clock, "UTC");
    }
    if (!shown.reproduce.empty()) s += "<p>Reproduce:</p>\n" + Command(shown.reproduce);
  }
  if (page.searched.size() > 1) {
    s += "<h2>What was searched</h2>\n" + view_parts::HtmlTable(page.searched);
  }
  if (!page.reproduce.empty()) s += "<h2>Reproduce</h2>\n" + Command(page.reproduce);
  s += "<details><summary><h3>As the terminal shows it</h3></summary>\n<pre>" + Escape(page.text) +
       "</pre>\n</details>\n</body>\n</html>\n";
  return s;
}

}  // namespace ratelab
