// How much of a store's state survives a restart of its server, as Redis configures it:
//   none      no persistence (`--save "" --appendonly no`): a restart loses everything;
//   everysec  append-only file fsynced once a second: a restart loses the writes of the last
//             (unfinished) second;
//   always    append-only file fsynced on every write: a restart loses nothing.
#ifndef RATELAB_IMPL_STORE_DURABILITY_H_
#define RATELAB_IMPL_STORE_DURABILITY_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "impl/core/status.h"
#include "model/named.h"

namespace ratelab {

enum class Durability { kNone, kEverySec, kAlways };

inline constexpr std::array<Durability, 3> kDurabilities = {
    Durability::kNone, Durability::kEverySec, Durability::kAlways};

using DurabilityInfo = NameRow<Durability>;
inline constexpr DurabilityInfo kDurabilityNames[] = {
    {Durability::kNone, "none"},
    {Durability::kEverySec, "everysec"},
    {Durability::kAlways, "always"},
};

constexpr std::string_view DurabilityName(Durability d) {
  return NameOf<DurabilityInfo>(kDurabilityNames, d);
}

constexpr std::optional<Durability> DurabilityNamed(std::string_view name) {
  return Named<DurabilityInfo>(kDurabilityNames, name);
}

// DurabilityNamed, or InvalidArgument naming the durabilities there are.
inline Result<Durability> ParseDurability(std::string_view name) {
  if (std::optional<Durability> d = DurabilityNamed(name)) return *d;
  return absl::InvalidArgumentError("unknown durability '" + std::string(name) + "' (expected " +
                                    NameChoices<DurabilityInfo>(kDurabilityNames) + ")");
}

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_DURABILITY_H_
