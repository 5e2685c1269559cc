#include "sim/fault_kind.h"

#include <algorithm>

#include "absl/strings/str_split.h"
#include "model/named.h"

namespace ratelab {

const FaultKindInfo& Describe(FaultKind kind) { return RowOf<FaultKindInfo>(kFaultKinds, kind); }

std::string_view FaultKindName(FaultKind kind) { return Describe(kind).name; }

std::string ScenarioFaultChoices() {
  return NameChoices<FaultKindInfo>(kFaultKinds,
                                    [](const FaultKindInfo& row) { return row.in_scenarios; });
}

std::string SearchedFaultChoices() {
  return NameChoices<FaultKindInfo>(kFaultKinds,
                                    [](const FaultKindInfo& row) { return row.searched; });
}

Result<SearchFaults> ParseSearchFaults(std::string_view text) {
  SearchFaults out;
  if (text.empty()) return out;
  for (const std::string& word : std::vector<std::string>(absl::StrSplit(std::string(text), ','))) {
    if (word == "none") continue;
    const std::optional<FaultKind> fault = Named<FaultKindInfo>(kFaultKinds, word);
    if (!fault || !Describe(*fault).searched) {
      return absl::InvalidArgumentError(
          "unknown fault '" + word + "' (expected none, or a comma-separated list of " +
          SearchedFaultChoices() + (fault ? "; a scenario file can give a " + word : "") + ")");
    }
    out.insert(*fault);
  }
  return out;
}

SearchFaults::SearchFaults(std::initializer_list<FaultKind> faults) {
  for (FaultKind f : faults) insert(f);
}

bool SearchFaults::contains(FaultKind f) const {
  return std::find(named_.begin(), named_.end(), f) != named_.end();
}

void SearchFaults::insert(FaultKind f) {
  if (!contains(f)) named_.push_back(f);
}

void SearchFaults::erase(FaultKind f) { std::erase(named_, f); }

bool SearchFaults::operator==(const SearchFaults& other) const {
  return named_.size() == other.named_.size() &&
         std::all_of(named_.begin(), named_.end(), [&](FaultKind f) { return other.contains(f); });
}

std::string SearchFaults::ToString() const {
  std::string out;
  for (FaultKind f : named_) out += (out.empty() ? "" : ",") + std::string(FaultKindName(f));
  return out.empty() ? "none" : out;
}

std::string SearchFaults::Sorted() const {
  SearchFaults sorted;
  for (const FaultKindInfo& row : kFaultKinds) {
    if (contains(row.id)) sorted.insert(row.id);
  }
  return sorted.ToString();
}

}  // namespace ratelab
