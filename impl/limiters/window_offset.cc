#include "impl/limiters/window_offset.h"

#include <algorithm>
#include <array>
#include <boost/crc.hpp>
#include <memory>
#include <string>

#include "impl/limiters/script_template.h"

namespace ratelab {

namespace {

// The names an offset may use: the key's and the policy's, nothing of a request.
constexpr std::array<std::string_view, 7> kOffsetNames = {
    "key_crc32", "limit", "burst", "window_ms", "window_s", "rate_per_s", "period_s"};

std::string OffsetNames() {
  std::string out;
  for (std::string_view n : kOffsetNames) out += (out.empty() ? "{" : ", {") + std::string(n) + "}";
  return out;
}

ScriptTemplate::Value OffsetValue(std::string_view name, const Policy& policy,
                                  std::string_view key) {
  const double window = static_cast<double>(policy.window.count());
  if (name == "key_crc32") return static_cast<double>(KeyCrc32(key));
  if (name == "limit" || name == "burst") return static_cast<double>(policy.limit);
  if (name == "window_ms") return window / 1e6;
  if (name == "window_s" || name == "period_s") return window / 1e9;
  return 1e9 / window;  // rate_per_s
}

// What `t` gives for `key`, taken modulo the window; nullopt when that is no duration.
std::optional<Duration> OffsetFor(const ScriptTemplate& t, const Policy& policy,
                                  std::string_view key) {
  const std::optional<Duration> d = ParseDuration(
      t.Expand([&](std::string_view name) { return OffsetValue(name, policy, key); }));
  if (!d) return std::nullopt;
  const int64_t w = policy.window.count();
  return Duration(((d->count() % w) + w) % w);
}

}  // namespace

uint32_t KeyCrc32(std::string_view key) {
  boost::crc_32_type crc;
  crc.process_bytes(key.data(), key.size());
  return crc.checksum();
}

Result<WindowOffset> ParseWindowOffset(std::string_view text, const Policy& policy) {
  const std::string quoted = "'" + std::string(text) + "'";
  if (!policy.Aligned()) {
    return absl::InvalidArgumentError(
        "a window offset shifts aligned windows: fixed-window's and sliding-counter's, not " +
        std::string(AlgorithmName(policy.algorithm)) + "'s");
  }
  Result<ScriptTemplate> parsed = ScriptTemplate::Parse(text, kOffsetNames);
  if (!parsed.ok()) {
    // A script's template, but one of a request (its time, its cost): say why that is no offset.
    const Result<ScriptTemplate> of_a_script = ScriptTemplate::Parse(text);
    if (!of_a_script.ok()) return parsed.status();
    for (const std::string& name : of_a_script->names()) {
      if (std::find(kOffsetNames.begin(), kOffsetNames.end(), name) == kOffsetNames.end()) {
        return absl::InvalidArgumentError(quoted + " uses {" + name +
                                          "}: an offset is the key's and the policy's, the same "
                                          "for each of the key's requests (it may use " +
                                          OffsetNames() + ")");
      }
    }
    return parsed.status();
  }
  auto t = std::make_shared<const ScriptTemplate>(*std::move(parsed));
  // Every key gives text of the same shape; one stands for all.
  const std::string_view sample = "user:u1:%2Fapi";
  if (!OffsetFor(*t, policy, sample)) {
    const std::string got =
        t->Expand([&](std::string_view name) { return OffsetValue(name, policy, sample); });
    return absl::InvalidArgumentError(quoted + " gives '" + got + "' for the key " +
                                      std::string(sample) +
                                      ", not a duration: give its unit, as in "
                                      "'{key_crc32 % window_ms}ms' or '250ms'");
  }
  const Policy at = policy;
  return WindowOffset{.text = std::string(text), .of = [t, at](std::string_view key) {
                        return OffsetFor(*t, at, key).value_or(Duration(0));
                      }};
}

Result<Policy> WithWindowOffset(Policy policy, std::string_view text) {
  if (text.empty()) return policy;
  Result<WindowOffset> offset = ParseWindowOffset(text, policy);
  if (!offset.ok()) return offset.status();
  policy.offset = *std::move(offset);
  return policy;
}

}  // namespace ratelab
