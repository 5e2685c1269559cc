#include "model/check_id.h"

#include "model/named.h"

namespace ratelab {

std::optional<CheckId> CheckNamed(std::string_view name) { return Named(CheckIds(), name); }

std::optional<CheckId> CheckNamed(std::string_view name, std::span<const CheckId> among) {
  for (const CheckId check : among) {
    if (CheckName(check) == name) return check;
  }
  return std::nullopt;
}

std::string CheckChoices(std::span<const CheckId> checks) {
  std::vector<std::string_view> names;
  for (const CheckId check : checks) names.push_back(CheckName(check));
  return ListChoices(names);
}

}  // namespace ratelab
