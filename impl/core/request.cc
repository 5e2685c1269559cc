#include "impl/core/request.h"

#include <algorithm>

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
bool NeedsEscape(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x21 || u > 0x7e || c == ':' || c == '{' || c == '}' || c == '%';
}
}  // namespace

std::string EscapeKeyPart(std::string_view part) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  if (std::none_of(part.begin(), part.end(), NeedsEscape)) return std::string(part);
  std::string out;
  out.reserve(part.size() + 8);
  for (char c : part) {
    const auto u = static_cast<unsigned char>(c);
    if (NeedsEscape(c)) {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string LimiterKey(const Request& r) {
  std::string key = EscapeKeyPart(r.scope_type);
  key += ':';
  key += EscapeKeyPart(r.scope_value);
  key += ':';
  key += EscapeKeyPart(r.endpoint);
  return key;
}

}  // namespace ratelab
