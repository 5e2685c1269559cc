#include "impl/store/kv_reply.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace ratelab {

std::optional<int64_t> KvReply::AsInteger() const {
  if (type == Type::kInteger) return integer;
  if (type == Type::kBulk || type == Type::kStatus) return ParseRedisInteger(text);
  return std::nullopt;
}

std::string ToString(const KvReply& r) {
  switch (r.type) {
    case KvReply::Type::kNil:
      return "(nil)";
    case KvReply::Type::kInteger:
      return "(integer) " + std::to_string(r.integer);
    case KvReply::Type::kStatus:
      return r.text;
    case KvReply::Type::kError:
      return "(error) " + r.text;
    case KvReply::Type::kBulk:
      return "\"" + r.text + "\"";
    case KvReply::Type::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < r.elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += ToString(r.elements[i]);
      }
      return out + "]";
    }
  }
  return "?";
}

std::optional<int64_t> ParseRedisInteger(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  const bool negative = s[0] == '-';
  const std::string_view digits = negative ? s.substr(1) : s;
  if (digits.empty() || digits[0] < '0' || digits[0] > '9') return std::nullopt;
  if (digits[0] == '0' && (digits.size() > 1 || negative)) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

void PrintTo(const KvReply& r, std::ostream* os) { *os << ToString(r); }

std::string FormatRedisScore(double d) {
  // A whole number below 2^53 (a count, an instant) is its digits under %.17g: the common case,
  // without printf.
  if (d == std::trunc(d) && std::fabs(d) < 9007199254740992.0 && !(d == 0 && std::signbit(d))) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, static_cast<int64_t>(d));
    return std::string(digits, end);
  }
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

}  // namespace ratelab
