#include "property-tests/traffic_gen.h"

#include <algorithm>

namespace ratelab::proptest {

namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// How time moves before a call.
enum class MoveKind { kGap, kToEdge, kBack };
struct Move {
  MoveKind kind;
  int64_t amount;  // kGap: ns forward; kToEdge: -1, 0 or +1 around the next edge; kBack: ns
};

rc::Gen<Move> GenMove(int64_t w, TimeOrder order) {
  using Weighted = std::pair<std::size_t, rc::Gen<Move>>;
  const Weighted edge_gap = {
      3, rc::gen::construct<Move>(rc::gen::just(MoveKind::kGap),
                                  rc::gen::element<int64_t>(0, 1, w - 1, w, w + 1))};
  const Weighted any_gap = {3, rc::gen::construct<Move>(rc::gen::just(MoveKind::kGap),
                                                        rc::gen::inRange<int64_t>(0, 2 * w + 1))};
  const Weighted to_edge = {2, rc::gen::construct<Move>(rc::gen::just(MoveKind::kToEdge),
                                                        rc::gen::inRange<int64_t>(-1, 2))};
  if (order == TimeOrder::kNonDecreasing) {
    return rc::gen::weightedOneOf<Move>({edge_gap, any_gap, to_edge});
  }
  const Weighted back = {1, rc::gen::construct<Move>(rc::gen::just(MoveKind::kBack),
                                                     rc::gen::inRange<int64_t>(1, 2 * w + 1))};
  return rc::gen::weightedOneOf<Move>({edge_gap, any_gap, to_edge, back});
}

}  // namespace

rc::Gen<Algorithm> GenAlgorithm() {
  std::vector<Algorithm> all;
  for (const AlgorithmInfo& a : Algorithms()) all.push_back(a.id);
  return rc::gen::elementOf(all);
}

rc::Gen<Policy> GenPolicy(Algorithm a) {
  return rc::gen::map(rc::gen::pair(rc::gen::inRange<int64_t>(1, 7),
                                    rc::gen::element<Duration>(
                                        Duration(1), Duration(2), Duration(3), Duration(10),
                                        Duration(1000), milliseconds(250), seconds(1), minutes(1))),
                      [a](const std::pair<int64_t, Duration>& lw) {
                        return Policy{a, lw.first, lw.second};
                      });
}

rc::Gen<std::vector<Call>> GenCalls(const Policy& p, TimeOrder order) {
  const int64_t w = p.window.count();
  struct Raw {
    Move move;
    int key;
    int64_t cost;
  };
  auto raw = rc::gen::construct<Raw>(
      GenMove(w, order), rc::gen::inRange(0, 3),
      rc::gen::weightedOneOf<int64_t>(
          {{4, rc::gen::just<int64_t>(1)}, {1, rc::gen::inRange<int64_t>(1, p.limit + 2)}}));
  auto start = rc::gen::oneOf(
      rc::gen::inRange<int64_t>(-1000, 1000),
      rc::gen::inRange<int64_t>(1'700'000'000'000'000'000, 1'700'000'001'000'000'000));
  return rc::gen::map(rc::gen::pair(start, rc::gen::container<std::vector<Raw>>(raw)),
                      [w](const std::pair<int64_t, std::vector<Raw>>& in) {
                        std::vector<Call> calls;
                        int64_t t = in.first;
                        for (const Raw& r : in.second) {
                          switch (r.move.kind) {
                            case MoveKind::kGap:
                              t += r.move.amount;
                              break;
                            case MoveKind::kToEdge:
                              t = (FloorDiv(t, w) + 1) * w + r.move.amount;
                              break;
                            case MoveKind::kBack:
                              t -= r.move.amount;
                              break;
                          }
                          calls.push_back({std::string(1, static_cast<char>('a' + r.key)),
                                           FromUnixNanos(t), r.cost});
                        }
                        return calls;
                      });
}

rc::Gen<Traffic> GenTraffic(Algorithm a, TimeOrder order) {
  return rc::gen::mapcat(GenPolicy(a), [order](const Policy& p) {
    return rc::gen::map(GenCalls(p, order), [p](std::vector<Call> calls) {
      return Traffic{p, std::move(calls)};
    });
  });
}

History RunSequentially(Subject& subject, const std::vector<Call>& calls) {
  History h;
  for (const Call& c : calls) {
    HistoryEvent e;
    e.id = static_cast<int64_t>(h.size());
    e.key = c.key;
    e.cost = c.cost;
    e.invoke = e.apply = e.complete = c.now;
    e.decision = subject.Decide(c.key, c.now, c.cost);
    h.push_back(std::move(e));
  }
  return h;
}

void showValue(const Call& c, std::ostream& os) {
  os << c.key << "@" << ToUnixNanos(c.now) << "ns cost " << c.cost;
}

void showValue(const Traffic& t, std::ostream& os) {
  os << t.policy.ToString() << ", " << t.calls.size() << " calls:";
  for (const Call& c : t.calls) {
    os << "\n    ";
    showValue(c, os);
  }
}

}  // namespace ratelab::proptest

namespace ratelab {
void showValue(const Decision& d, std::ostream& os) { os << ToString(d); }
void showValue(const Policy& p, std::ostream& os) { os << p.ToString(); }
void showValue(Algorithm a, std::ostream& os) { os << AlgorithmName(a); }
}  // namespace ratelab
