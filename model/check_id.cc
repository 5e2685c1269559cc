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
  std::string out;
  for (size_t i = 0; i < checks.size(); ++i) {
    out += (i == 0                   ? ""
            : i + 1 == checks.size() ? " or "
                                     : ", ") +
           std::string(CheckName(checks[i]));
  }
  return out;
}

}  // namespace ratelab
