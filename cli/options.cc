#include "cli/options.h"

#include "absl/strings/str_split.h"

namespace ratelab {

Result<Duration> ParsePositiveDuration(std::string_view text) {
  const std::optional<Duration> d = ParseDuration(text);
  if (!d || d->count() <= 0) {
    return absl::InvalidArgumentError("'" + std::string(text) +
                                      "' is not a positive duration (e.g. 10s, 1m, 500ms)");
  }
  return *d;
}

Result<Instant> ParseStart(std::string_view text) {
  const std::optional<Instant> at = ParseInstant(text);
  if (!at) {
    return absl::InvalidArgumentError("'" + std::string(text) +
                                      "' is not a UTC instant (e.g. 2026-01-01T00:00:00Z)");
  }
  return *at;
}

Result<std::vector<CheckId>> ParseCheckList(std::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError("name at least one check (see ratelab list checks)");
  }
  std::vector<CheckId> out;
  for (const std::string& name : std::vector<std::string>(absl::StrSplit(std::string(text), ','))) {
    Result<CheckId> check = CheckFromName(name);
    if (!check.ok()) return check.status();
    out.push_back(*check);
  }
  return out;
}

std::string FormatCheckList(const std::vector<CheckId>& checks) {
  std::string out;
  for (CheckId c : checks) out += (out.empty() ? "" : ",") + std::string(CheckOf(c).name);
  return out;
}

}  // namespace ratelab
