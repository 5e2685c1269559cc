// A witness drawn, for the HTML page of every command that finds one (compare and run, check,
// stress, probe, worst): SVG in the page, no script and no network. A lane per node or
// user; each request a bar from sent to answered, admitted and denied apart, with a tick at the
// instant its decision took effect where that is known (else the bar is the interval in which
// it may have); the window the broken promise counts in marked behind them, the faults too; the
// requests of the broken promise outlined. Each bar's tooltip says it in words. Readable at ten
// requests and at a few hundred: bars that would overlap in a lane stack in rows of their own.
#ifndef RATELAB_REPORTS_WITNESS_PICTURE_H_
#define RATELAB_REPORTS_WITNESS_PICTURE_H_

#include <optional>
#include <string>
#include <vector>

#include "reports/report_model.h"

namespace ratelab {

struct PictureRequest {
  enum class Outcome { kAdmitted, kDenied, kOther };
  std::string lane;   // "node 1", "thread 3", "user u1"
  std::string label;  // "#17"; for a non-linearizable key, "2: #17" (its place in the order)
  double sent_s = 0;  // seconds since the run's start
  std::optional<double> answered_s;  // none: never answered
  std::optional<double> effect_s;    // none: somewhere in [sent, answered]
  Outcome outcome = Outcome::kOther;
  bool marked = false;  // one of the requests that break the promise
  std::string words;    // its tooltip: "#17, node 1, sent +12ms, answered +13ms: admitted"
  int64_t cost = 1;
};

struct WitnessPicture {
  std::string caption;  // what it shows, in a sentence (the SVG's accessible name)
  std::vector<PictureRequest> requests;
  std::optional<WindowReport> window;  // the window the marked requests fell in
  std::string window_words;            // the legend's words for it: "the window they fell in"
  std::vector<FaultReport> faults;     // those that overlap the requests
  std::string marked;                  // the legend's words for the marked requests
  // The bucket the witness overdrew: its level drawn behind the requests, as the admitted ones
  // alone leave it (full at the first, each taking its cost where it took effect), where each
  // took effect at a known instant.
  std::optional<BucketReport> bucket;
  // The limiter's own aligned windows, whose edges are drawn (dashed) where they fall in the
  // picture's span, up to kMostGridEdges of them.
  std::optional<GridReport> grid;
};

// The most edges of the limiter's own windows a picture draws; a span that holds more draws none.
inline constexpr size_t kMostGridEdges = 60;

// The picture as an <svg> element, with its legend; empty when it has no requests.
std::string WitnessSvg(const WitnessPicture& picture);

// Marks `picture`'s requests (their outcomes set, in the witness's order) as a witness of
// `invariant` shows them: the denials no order explains for false-denials; the call no order
// places for a non-linearizable key (the last), the others numbered in the order that came
// closest; else the admissions. Sets the legend's words to match.
void MarkFor(CheckId invariant, WitnessPicture& picture);

// "+250ms", "-1s", "0": an offset as the picture's axis and tooltips write it.
std::string SignedOffset(double seconds);

// The picture of a violation whose requests were sent by `lane_word`s ("node", "thread"):
// `start` turns each request's `at` into the instant its decision took effect (none: the
// interval alone, as stress judges); marked by MarkFor.
WitnessPicture PictureOf(const ViolationReport& v, const std::vector<FaultReport>& faults,
                         const std::string& lane_word, std::optional<Instant> start);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_WITNESS_PICTURE_H_
