// The faults, one vocabulary: the kinds a scenario file names by `type`, `check --faults` and
// `worst --faults` draw, and a run's faults are (FaultSpec), each by one name in one table.
#ifndef RATELAB_SIM_FAULT_KIND_H_
#define RATELAB_SIM_FAULT_KIND_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"

namespace ratelab {

enum class FaultKind {
  kClockJump,      // a node's clock jumps by `amount`
  kClockSkew,      // a node's clock is off by a constant (a node's clock_offset, not a FaultSpec)
  kCrash,          // a node crashes, down for `amount`, and comes back
  kLatencySpike,   // `extra` added to each leg of each step, for `amount`
  kListenDown,     // the node's connection that hears of rule changes is down for `amount`
  kStoreFailover,  // the store's master is lost and its replica, `extra` behind, promoted
  kStoreOutage,    // the store is unreachable for `amount`
  kStoreRestart,   // the store restarts, keeping what its durability keeps, down for `amount`
  kStoreStall,     // the store answers nothing for `amount`, then runs what it took in
};

struct FaultKindInfo {
  FaultKind id;
  std::string_view name;
  // A scenario file names it by `type` (a failover and a skew are drawn by a search alone; a
  // scenario sets a node's `clock_offset` instead).
  bool in_scenarios;
  // `check --faults` and `worst --faults` draw it (a search draws no jump, spike or listen-down).
  bool searched;
  // In a scenario file: it takes `node`, the node it strikes; the key of its duration
  // (FaultSpec::amount), and whether that is required; whether it takes `extra`.
  bool on_node = false;
  std::string_view amount = {};
  bool amount_required = false;
  bool extra = false;
};
// Every kind, in name order (the order a search's kinds are listed in).
inline constexpr FaultKindInfo kFaultKinds[] = {
    {FaultKind::kClockJump, "clock-jump", true, false, true, "by", true, false},
    {FaultKind::kClockSkew, "clock-skew", false, true},
    {FaultKind::kCrash, "crash", true, true, true, "down_for", false, false},
    {FaultKind::kLatencySpike, "latency-spike", true, false, false, "for", true, true},
    {FaultKind::kListenDown, "listen-down", true, false, true, "for", true, false},
    {FaultKind::kStoreFailover, "store-failover", false, true},
    {FaultKind::kStoreOutage, "store-outage", true, true, false, "for", true, false},
    {FaultKind::kStoreRestart, "store-restart", true, true, false, "down_for", false, false},
    {FaultKind::kStoreStall, "store-stall", true, true, false, "for", true, false},
};
std::string_view FaultKindName(FaultKind kind);
const FaultKindInfo& Describe(FaultKind kind);
// The kinds a scenario file names, or a search draws, for an error: "a, b or c".
std::string ScenarioFaultChoices();
std::string SearchedFaultChoices();

// A set of the kinds a search draws that remembers the order they were named in (for the command
// that replays a search, as the user wrote it).
class SearchFaults {
 public:
  SearchFaults() = default;
  SearchFaults(std::initializer_list<FaultKind> faults);
  bool contains(FaultKind f) const;
  void insert(FaultKind f);  // at the end, unless already in
  void erase(FaultKind f);
  // The same faults, whatever the order.
  bool operator==(const SearchFaults& other) const;
  // "crash,store-restart" as named, or "none".
  std::string ToString() const;
  // "crash,store-restart" in name order, or "none".
  std::string Sorted() const;

 private:
  std::vector<FaultKind> named_;
};
// "crash,store-restart" (each once; repeats are ignored) or "none"; InvalidArgument naming an
// unknown word, or a kind a search does not draw.
Result<SearchFaults> ParseSearchFaults(std::string_view text);

}  // namespace ratelab

#endif  // RATELAB_SIM_FAULT_KIND_H_
