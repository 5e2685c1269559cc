// What a report says first, and what its numbers mean. For this run's traffic and claim: which
// limiter keeps the claim, at what cost (state per key, store steps, latency where the run had
// any), what each denied that the claim had room for, and which to pick for which goal; beside
// each table, what its columns mean, with this run's numbers. Every sentence is computed from the
// report, so it says only what this run showed. Internal to reports/ (html.cc, markdown.cc).
#ifndef RATELAB_REPORTS_ADVICE_H_
#define RATELAB_REPORTS_ADVICE_H_

#include <string>
#include <vector>

#include "reports/report_model.h"

namespace ratelab {

// One goal a reader may have, and the limiter of the run that serves it best.
struct Pick {
  std::string goal;     // a verb phrase: "keep the claim exactly", "admit the most"
  std::string limiter;  // its name
  std::string because;  // the number that makes it the pick: "8 bytes of state per key"
  std::string but;      // what it gives up, or keeps: "over-admits 43, up to 9 in one 1m window"
};

struct Advice {
  // For a comparison over seeds (RunReport::across_seeds), what every seed showed, and which seed
  // the rest of the report (and `summary`) is of; empty otherwise.
  std::vector<std::string> across_seeds;
  // Plain sentences, the verdict first: who kept the claim, at what cost, what was denied that
  // the claim had room for, what broke, failed or went unanswered.
  std::vector<std::string> summary;
  // One per goal on which the limiters differ; none with fewer than two limiters that answered.
  // Where the best is less than 5% ahead of the next, or (over seeds) was not the best in every
  // seed, the pick's limiter is "no meaningful difference" and `because` says why.
  std::vector<Pick> picks;
  // How the picks were decided: over every seed of a comparison, or on one run's traffic; empty
  // with fewer than two limiters that answered.
  std::string how_picked;
  // The recommendation in one sentence a reviewer can quote: "Pick X because Y, unless Z.";
  // empty with fewer than two limiters that answered.
  std::string quote;
};

Advice Advise(const RunReport& r);

// What the verdict table's columns mean, and why limiters that keep their own promise can still
// over-admit against the claim (burst plus refill, two windows across a boundary).
std::vector<std::string> ExplainVerdicts(const RunReport& r);
// What the cost table's columns mean: fairness and the number in brackets after it, state,
// store steps, latency.
std::vector<std::string> ExplainCosts(const RunReport& r);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_ADVICE_H_
