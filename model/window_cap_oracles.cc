// The aligned-window and any-window cap oracles.
#include <algorithm>

#include "model/oracles.h"
#include "model/oracles_internal.h"

namespace ratelab {

namespace {
auto Admitted() {
  return [](const HistoryEvent& e) { return e.admitted(); };
}
std::string Span(Instant from, Instant to, const char* close) {
  return "[" + FormatInstant(from) + ", " + FormatInstant(to) + close;
}
}  // namespace

std::vector<Violation> CheckAlignedWindowCap(const History& h, int64_t limit, Duration window) {
  std::vector<Violation> out;
  for (const auto& [key, events] : internal::GroupByKey(h, Admitted())) {
    size_t first = 0;  // first event of the current window
    int64_t used = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      const int64_t index = AlignedWindowIndex(events[i]->invoke, window);
      if (AlignedWindowIndex(events[first]->invoke, window) != index) {
        first = i;
        used = 0;
      }
      used += events[i]->cost;
      if (used > limit) {
        const Instant start = AlignedWindowStart(index, window);
        out.push_back({"aligned-window-cap", std::string(key),
                       std::to_string(used) + " admitted in window " +
                           Span(start, start + window, ")") + ", limit " + std::to_string(limit) +
                           " per " + FormatDuration(window),
                       internal::Copy(events, first, i + 1)});
        break;
      }
    }
  }
  return out;
}

std::vector<Violation> CheckAnchoredWindowCap(const History& h, int64_t limit, Duration window) {
  std::vector<Violation> out;
  for (const auto& [key, events] : internal::GroupByKey(h, Admitted())) {
    size_t first = 0;  // the event that opened the current window
    int64_t used = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i]->invoke > events[first]->invoke + window) {
        first = i;
        used = 0;
      }
      used += events[i]->cost;
      if (used > limit) {
        const Instant start = events[first]->invoke;
        out.push_back({"anchored-window-cap", std::string(key),
                       std::to_string(used) + " admitted in the window opened at " +
                           Span(start, start + window, "]") + ", limit " + std::to_string(limit) +
                           " per " + FormatDuration(window),
                       internal::Copy(events, first, i + 1)});
        break;
      }
    }
  }
  return out;
}

AnyWindowReport CheckAnyWindowCap(const History& h, int64_t limit, Duration window) {
  AnyWindowReport report;
  for (const auto& [key, events] : internal::GroupByKey(h, Admitted())) {
    size_t left = 0;
    int64_t used = 0;
    bool reported = false;
    for (size_t i = 0; i < events.size(); ++i) {
      used += events[i]->cost;
      while (events[i]->invoke - events[left]->invoke >= window) used -= events[left++]->cost;
      report.max_in_any_window = std::max(report.max_in_any_window, used);
      if (used > limit && !reported) {
        // Drop leading events while the rest still breaks the cap: the minimal witness.
        size_t from = left;
        int64_t in_witness = used;
        while (in_witness - events[from]->cost > limit) in_witness -= events[from++]->cost;
        report.violations.push_back({"any-window-cap", std::string(key),
                                     std::to_string(in_witness) + " admitted in " +
                                         Span(events[from]->invoke, events[i]->invoke, "]") +
                                         " (span " +
                                         FormatDuration(events[i]->invoke - events[from]->invoke) +
                                         " < " + FormatDuration(window) + "), limit " +
                                         std::to_string(limit) + " per " + FormatDuration(window),
                                     internal::Copy(events, from, i + 1)});
        reported = true;
      }
    }
  }
  return report;
}

}  // namespace ratelab
