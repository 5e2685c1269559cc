#include "model/history.h"

#include <algorithm>
#include <string_view>

namespace ratelab {

namespace {

class Fnv1a {
 public:
  void Bytes(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    for (char c : s) Byte(static_cast<uint8_t>(c));
  }
  void Int(int64_t v) {
    for (int i = 0; i < 8; ++i) Byte(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
  }
  void Time(Instant t) { Int(ToUnixNanos(t)); }
  uint64_t value() const { return h_; }

 private:
  void Byte(uint8_t b) {
    h_ ^= b;
    h_ *= 0x100000001b3ULL;
  }
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace

uint64_t TrafficHash(const History& h) {
  Fnv1a f;
  for (const HistoryEvent& e : h) {
    f.Bytes(e.key);
    f.Int(e.cost);
    f.Time(e.invoke);
  }
  return f.value();
}

uint64_t HistoryHash(const History& h) {
  Fnv1a f;
  for (const HistoryEvent& e : h) {
    f.Int(e.id);
    f.Bytes(e.key);
    f.Int(e.node);
    f.Int(e.cost);
    f.Time(e.invoke);
    f.Time(e.apply);
    f.Time(e.complete);
    f.Time(e.node_now);
    f.Int(e.decision.has_value());
    if (e.decision) {
      f.Int(e.decision->allowed);
      f.Int(e.decision->limit);
      f.Int(e.decision->remaining);
      f.Time(e.decision->reset);
      f.Int(e.decision->retry_after.count());
      if (e.decision->fallback) f.Int(1);
      if (e.decision->wait > Duration(0)) f.Int(e.decision->wait.count());
    }
    f.Int(static_cast<int64_t>(e.steps.size()));
    for (const StepRecord& s : e.steps) {
      f.Bytes(s.label);
      f.Time(s.at);
    }
    if (e.failed()) f.Bytes(e.failure);  // only then, so histories without failures hash as before
  }
  return f.value();
}

namespace {
void FloorTimes(History& h, Duration resolution) {
  const auto floor = [resolution](Instant t) {
    return FromUnixNanos(FloorDiv(ToUnixNanos(t), resolution.count()) * resolution.count());
  };
  for (HistoryEvent& e : h) {
    e.invoke = floor(e.invoke);
    e.apply = floor(e.apply);
    e.complete = floor(e.complete);
  }
}
}  // namespace

History AtResolution(const History& h, Duration resolution) {
  History out = h;
  if (resolution > Duration(1)) FloorTimes(out, resolution);
  return out;
}

bool DelaysAdmissions(const History& h) {
  return std::any_of(h.begin(), h.end(), [](const HistoryEvent& e) {
    return e.admitted() && e.decision->wait > Duration(0);
  });
}

History AsDecided(const History& h, DecisionClock clock, Duration resolution) {
  History out = h;
  if (clock == DecisionClock::kStore) {
    for (HistoryEvent& e : out) {
      if (!e.steps.empty()) e.invoke = e.apply = e.steps.back().at;
    }
  }
  for (HistoryEvent& e : out) {
    if (e.admitted() && e.decision->wait > Duration(0)) {
      e.invoke += e.decision->wait;
      e.complete = std::max(e.complete, e.invoke);
    }
  }
  if (resolution > Duration(1)) FloorTimes(out, resolution);
  return out;
}

}  // namespace ratelab
