// The aligned-window and any-window cap oracles.
#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "judge/oracles.h"
#include "judge/oracles_internal.h"

namespace ratelab {

namespace {
std::string Span(Instant from, Instant to, const char* close, int digits = 3) {
  return "[" + FormatInstantTo(from, digits) + ", " + FormatInstantTo(to, digits) + close;
}
// The fewest digits of a second (3, 6 or 9) that write `a` and `b` apart: a witness whose edge
// and request print as the same millisecond explains nothing.
int DigitsApart(Instant a, Instant b) {
  for (int digits : {3, 6}) {
    if (FormatInstantTo(a, digits) != FormatInstantTo(b, digits)) return digits;
  }
  return 9;
}
}  // namespace

std::vector<Violation> CheckAlignedWindowCap(const History& h, int64_t limit, Duration window,
                                             const WindowOffset& offset) {
  std::vector<Violation> out;
  for (const auto& [key, events] : internal::GroupByKey(h, internal::Admitted)) {
    const Duration shift = offset ? offset.of(key) : Duration(0);
    const auto index_of = [&](Instant t) { return AlignedWindowIndex(t - shift, window); };
    size_t first = 0;  // first event of the current window
    int64_t used = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      const int64_t index = index_of(events[i]->invoke);
      if (index_of(events[first]->invoke) != index) {
        first = i;
        used = 0;
      }
      used += events[i]->cost;
      if (used > limit) {
        const Instant start = AlignedWindowStart(index, window) + shift;
        out.push_back(
            {CheckId::kAlignedWindowCap, std::string(key),
             std::to_string(used) + " admitted in window " + Span(start, start + window, ")") +
                 ", limit " + std::to_string(limit) + " per " + FormatDuration(window),
             internal::Copy(events, first, i + 1), Violation::Window{start, start + window}});
        break;
      }
    }
  }
  return out;
}

namespace {

// A key's windows that move with its traffic: `start` is where the current one opened (none
// yet, or none open), `used` what it holds.
struct MovingWindow {
  std::optional<Instant> start;
  int64_t used = 0;
  bool operator<(const MovingWindow& o) const {
    return std::tie(start, used) < std::tie(o.start, o.used);
  }
};
// How a convention moves a window when a request arrives at `t`.
using Advance = MovingWindow (*)(MovingWindow, Instant t, Duration window);

// Anchored window: closed, [start, start + W]; the next opens at the first admission after it.
MovingWindow AdvanceAnchored(MovingWindow w, Instant t, Duration window) {
  return w.start && t > *w.start + window ? MovingWindow{} : w;
}
// The same, half-open: [start, start + W).
MovingWindow AdvanceAnchoredHalfOpen(MovingWindow w, Instant t, Duration window) {
  return w.start && t >= *w.start + window ? MovingWindow{} : w;
}
// Anchored grid: windows of W follow on from each other, [start, start + W); past a whole empty
// window the next admission starts them afresh.
MovingWindow AdvanceGrid(MovingWindow w, Instant t, Duration window) {
  if (!w.start) return w;
  const Duration since = t - *w.start;  // below zero for a late request: still this window
  if (since < window) return w;
  if (since / window == 1) return MovingWindow{*w.start + window, 0};
  return MovingWindow{};
}

MovingWindow AdmitInto(MovingWindow w, const HistoryEvent& e) {
  return w.start ? MovingWindow{w.start, w.used + e.cost} : MovingWindow{e.invoke, e.cost};
}

// Whether some choice of which of `events` that may have been admitted were, and opened or
// filled windows, keeps every window at `limit` or under: then the history may be innocent. The
// admissions known for sure alone may break the cap where a lost one (admitted by the store, its
// answer lost in a crash) opened a window earlier, as a window kept in a key's time to live
// opens at the first request that reaches the store. Each state is a possible window; only
// starts still open at the event in hand are distinct. Past kMostStates the search stops and
// the history is given the benefit of the doubt.
constexpr size_t kMostStates = 4096;
bool SomeChoiceKeepsTheCap(std::span<const HistoryEvent* const> events, int64_t limit,
                           Duration window, Advance advance) {
  std::set<MovingWindow> states = {MovingWindow{}};
  for (const HistoryEvent* e : events) {
    std::set<MovingWindow> next;
    for (MovingWindow s : states) {
      s = advance(s, e->invoke, window);
      if (e->maybe_admitted()) next.insert(s);  // it was not admitted
      const MovingWindow admitted = AdmitInto(s, *e);
      if (admitted.used <= limit) next.insert(admitted);
    }
    if (next.empty()) return false;
    if (next.size() > kMostStates) return true;
    states = std::move(next);
  }
  return true;
}

// At most `limit` units admitted per key in each window `advance` moves through.
std::vector<Violation> CheckMovingWindowCap(const History& h, int64_t limit, Duration window,
                                            Advance advance, CheckId invariant, const char* opened,
                                            const char* close) {
  std::vector<Violation> out;
  const auto counts = [](const HistoryEvent& e) { return e.admitted() || e.maybe_admitted(); };
  for (const auto& [key, all] : internal::GroupByKey(h, counts)) {
    // The admissions known for sure, as the windows they open: a breach there is one for every
    // choice only when no lost request could have opened a window elsewhere.
    std::vector<const HistoryEvent*> events;
    for (const HistoryEvent* e : all) {
      if (e->admitted()) events.push_back(e);
    }
    size_t first = 0;  // the first event in the current window
    MovingWindow w;
    for (size_t i = 0; i < events.size(); ++i) {
      const MovingWindow moved = advance(w, events[i]->invoke, window);
      if (moved.start != w.start) first = i;
      w = AdmitInto(moved, *events[i]);
      if (w.used > limit) {
        if (events.size() != all.size() && SomeChoiceKeepsTheCap(all, limit, window, advance)) {
          break;
        }
        const int digits = DigitsApart(*w.start + window, events[i]->invoke);
        out.push_back({invariant, std::string(key),
                       std::to_string(w.used) + " admitted in the window " + opened + " " +
                           Span(*w.start, *w.start + window, close, digits) + ", limit " +
                           std::to_string(limit) + " per " + FormatDuration(window),
                       internal::Copy(events, first, i + 1),
                       Violation::Window{*w.start, *w.start + window, *close == ']'}});
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<Violation> CheckAnchoredWindowCap(const History& h, int64_t limit, Duration window,
                                              WindowEdge edge) {
  const bool closed = edge == WindowEdge::kClosed;
  return CheckMovingWindowCap(h, limit, window, closed ? AdvanceAnchored : AdvanceAnchoredHalfOpen,
                              CheckId::kAnchoredWindowCap, "opened at", closed ? "]" : ")");
}

std::vector<Violation> CheckAnchoredGridCap(const History& h, int64_t limit, Duration window) {
  return CheckMovingWindowCap(h, limit, window, AdvanceGrid, CheckId::kAnchoredGridCap,
                              "of the key's own grid,", ")");
}

AnyWindowReport CheckAnyWindowCap(const History& h, int64_t limit, Duration window,
                                  WindowEdge edge) {
  const bool closed = edge == WindowEdge::kClosed;
  // A closed span of W holds the instants of a half-open one of W and a tick.
  const Duration reach = closed ? window + Duration(1) : window;
  AnyWindowReport report;
  for (const auto& [key, events] : internal::GroupByKey(h, internal::Admitted)) {
    size_t left = 0;
    int64_t used = 0;
    bool reported = false;
    for (size_t i = 0; i < events.size(); ++i) {
      used += events[i]->cost;
      while (events[i]->invoke - events[left]->invoke >= reach) used -= events[left++]->cost;
      report.max_in_any_window = std::max(report.max_in_any_window, used);
      if (used > limit && !reported) {
        // Drop leading events while the rest still breaks the cap: the minimal witness.
        size_t from = left;
        int64_t in_witness = used;
        while (in_witness - events[from]->cost > limit) in_witness -= events[from++]->cost;
        report.violations.push_back(
            {CheckId::kAnyWindowCap, std::string(key),
             std::to_string(in_witness) + " admitted in " +
                 Span(events[from]->invoke, events[i]->invoke, "]") + " (span " +
                 FormatDurationTo(events[i]->invoke - events[from]->invoke, 3) +
                 (closed ? " <= " : " < ") + FormatDuration(window) + "), limit " +
                 std::to_string(limit) + " per " + FormatDuration(window),
             internal::Copy(events, from, i + 1),
             Violation::Window{events[from]->invoke, events[i]->invoke, true, true}});
        reported = true;
      }
    }
  }
  return report;
}

}  // namespace ratelab
