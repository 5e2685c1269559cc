// A broken promise, with the smallest set of events that shows it, written for a reviewer.
#ifndef RATELAB_MODEL_VIOLATION_H_
#define RATELAB_MODEL_VIOLATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/check_id.h"
#include "model/history.h"
#include "model/policy.h"

namespace ratelab {

struct Violation {
  CheckId invariant = CheckId::kAnyWindowCap;  // what it breaks
  std::string key;
  // One sentence: "6 admitted in [00:00:59.400, 00:01:00.300), limit 5 per 1m".
  std::string summary;
  // The events that show it, in time order (copies: a violation outlives its history).
  std::vector<HistoryEvent> witness;
  // For a promise that counts admissions in a window: the one the witness's admissions fell in,
  // [from, to) or, where `closed`, [from, to]; for a promise over any span of a length (or judged
  // over intervals), the span they fell in; none for other promises.
  struct Window {
    Instant from{}, to{};
    bool closed = false;
    bool span = false;  // the span the admissions covered, not a window of the limiter's
  };
  std::optional<Window> window = std::nullopt;
  // For a bucket's promise: the bucket the witness overdrew (`burst` tokens, one back every
  // `interval`), whose level a view can draw behind the witness; none for other promises.
  struct Bucket {
    int64_t burst = 0;
    Duration interval{};
  };
  std::optional<Bucket> bucket = std::nullopt;
  // Where the limiter's own aligned windows begin (a fixed window's, a sliding counter's), for a
  // view to draw behind the witness: at `origin` + k * `period`; none for other limiters.
  struct Grid {
    Instant origin{};
    Duration period{};
  };
  std::optional<Grid> grid = std::nullopt;

  // The summary followed by one line per witness event:
  //   "  00:00:59.400  #17 key=u1 node=0 cost=1 admitted".
  std::string ToString() const;
};

// `v`'s window judged on instants cut to `resolution` (a limiter that sees whole milliseconds), as
// instants before the cut, where a witness printed uncut falls: a closed [a, b] of cut instants
// holds those of [a, b + resolution); a half-open one, its edges on ticks, the same instants.
void UncutWindow(Violation& v, Duration resolution);

// Sets `v.grid` to the aligned windows of `policy` for `v`'s key (its offset taken), where
// `policy`'s windows are aligned; leaves it unset otherwise.
void SetGrid(Violation& v, const Policy& policy);

// What came of a request: "admitted", "denied, retry after 2s", "no answer", "failed: ...", or
// "admitted by the client: the limiter failed" (a client's fallback).
std::string DescribeOutcome(const HistoryEvent& e);
// One line for a history event as a witness shows it.
std::string DescribeEvent(const HistoryEvent& e);

}  // namespace ratelab

#endif  // RATELAB_MODEL_VIOLATION_H_
