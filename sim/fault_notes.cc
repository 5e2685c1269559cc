#include "sim/fault_notes.h"

#include "absl/strings/str_join.h"
#include "impl/limiters/failure_policy.h"

namespace ratelab {

std::vector<std::string> FaultNotes(const Scenario& scenario, const std::vector<FaultSpec>& faults,
                                    const StoreSource& kv_source) {
  std::vector<std::string> notes;
  for (const FaultSpec& f : faults) {
    const std::string what = f.Describe(scenario.start);
    std::vector<std::string> parts;  // one a limiter, said in one note for the fault
    for (const LimiterSpec& spec : scenario.limiters) {
      const ProtocolInfo* info = spec.Info();
      const bool in_process = info == nullptr || info->store == StoreKind::kMemory;
      std::string note;
      switch (f.kind) {
        case FaultKind::kCrash:
          note = in_process ? "keeps its counts in process memory, so the restart forgot them"
                            : "keeps its counts in the store, so the restart kept them";
          break;
        case FaultKind::kStoreRestart:
          if (in_process) break;
          switch (spec.durability) {
            case Durability::kNone:
              note = "runs on a store without persistence (durability none): every count was lost";
              break;
            case Durability::kEverySec:
              note = kv_source.memory() || info->store != StoreKind::kKv
                         ? "runs on a store fsyncing every second: the last second's counts were "
                           "lost"
                         : "runs on a redis-server fsyncing every second: the kill -9 kept what "
                           "Redis had written to its file, but not writes it held back while an "
                           "fsync ran, so what was lost depends on the machine's timing and is not "
                           "reproducible from the seed";
              break;
            case Durability::kAlways:
              note = "runs on a store fsyncing every write (durability always): no count was lost";
              break;
          }
          break;
        case FaultKind::kStoreOutage:
          if (in_process) break;
          note = std::string(
                     "cannot reach its store, so it does what it does on a store "
                     "error: ") +
                 std::string(FailurePolicyName(spec.on_store_error.kind));
          break;
        case FaultKind::kStoreFailover:
          if (in_process) break;
          note =
              "keeps its counts in the store: the writes its replica had not received were "
              "lost";
          break;
        case FaultKind::kStoreStall:
          if (in_process) break;
          note = std::string("got no answer in time, so it did what it does on a store error (") +
                 std::string(FailurePolicyName(spec.on_store_error.kind)) +
                 "), and what it sent meanwhile still counted once the store resumed";
          break;
        case FaultKind::kClockJump:
        case FaultKind::kLatencySpike:
        case FaultKind::kListenDown:  // the rules' notes say what it did
        case FaultKind::kClockSkew:   // no FaultSpec: a node's clock_offset
          break;
      }
      if (!note.empty()) parts.push_back(spec.DisplayName() + " " + note);
    }
    if (!parts.empty()) notes.push_back(what + ": " + absl::StrJoin(parts, "; "));
  }
  return notes;
}

}  // namespace ratelab
