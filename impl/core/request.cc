#include "impl/core/request.h"

#include <array>
#include <cassert>

namespace ratelab {

Status Validate(const Request& r) {
  if (r.scope_type.empty()) return absl::InvalidArgumentError("request: scope_type is empty");
  if (r.scope_value.empty()) return absl::InvalidArgumentError("request: scope_value is empty");
  if (r.cost < 1) {
    return absl::InvalidArgumentError("request: cost must be at least 1 (got " +
                                      std::to_string(r.cost) + ")");
  }
  return absl::OkStatus();
}

namespace {

constexpr std::array<bool, 256> kNeedsEscape = [] {
  std::array<bool, 256> t{};
  for (int u = 0; u < 256; ++u) {
    t[u] = u < 0x21 || u > 0x7e || u == ':' || u == '{' || u == '}' || u == '%';
  }
  return t;
}();

bool NeedsEscape(char c) { return kNeedsEscape[static_cast<unsigned char>(c)]; }

// Appends `part` escaped to `out` (a string, or an InPlaceText), copying runs of safe
// characters at once.
template <typename Out>
void AppendEscaped(Out& out, std::string_view part) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  size_t run = 0;
  for (size_t i = 0; i < part.size(); ++i) {
    if (!NeedsEscape(part[i])) continue;
    out.append(part.data() + run, i - run);
    const auto u = static_cast<unsigned char>(part[i]);
    const char escaped[3] = {'%', kHex[u >> 4], kHex[u & 0xf]};
    out.append(escaped, 3);
    run = i + 1;
  }
  out.append(part.data() + run, part.size() - run);
}

// The key of the three parts, appended to `out`.
template <typename Out>
void AppendLimiterKey(Out& out, std::string_view scope_type, std::string_view scope_value,
                      std::string_view endpoint) {
  AppendEscaped(out, scope_type);
  out.push_back(':');
  AppendEscaped(out, scope_value);
  out.push_back(':');
  AppendEscaped(out, endpoint);
}

}  // namespace

std::string EscapeKeyPart(std::string_view part) {
  std::string out;
  out.reserve(part.size());
  AppendEscaped(out, part);
  return out;
}

std::string LimiterKey(std::string_view scope_type, std::string_view scope_value,
                       std::string_view endpoint) {
  std::string key;
  key.reserve(scope_type.size() + scope_value.size() + endpoint.size() + 2);
  AppendLimiterKey(key, scope_type, scope_value, endpoint);
  return key;
}

std::string LimiterKey(const Request& r) {
  return LimiterKey(r.scope_type, r.scope_value, r.endpoint);
}

InPlaceLimiterKey::InPlaceLimiterKey(const Request& r) : given_(r.limiter_key) {
  if (given_.empty()) {
    AppendLimiterKey(text_, r.scope_type, r.scope_value, r.endpoint);
  } else {
    assert(given_ == LimiterKey(r));
  }
}

}  // namespace ratelab
