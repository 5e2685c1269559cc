#include "impl/core/request.h"

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

std::string EscapeKeyPart(std::string_view part) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(part.size());
  for (char c : part) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x21 || u > 0x7e || c == ':' || c == '{' || c == '}' || c == '%') {
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
  return EscapeKeyPart(r.scope_type) + ':' + EscapeKeyPart(r.scope_value) + ':' +
         EscapeKeyPart(r.endpoint);
}

}  // namespace ratelab
