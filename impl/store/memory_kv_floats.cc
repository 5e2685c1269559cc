// MemoryKv's INCRBYFLOAT and HINCRBYFLOAT: Redis's long double arithmetic, its parsing and its
// "human" formatting (17 decimals, trailing zeros dropped), so the replies are the same bytes.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "impl/store/memory_kv.h"
#include "impl/store/memory_kv_errors.h"

namespace ratelab {
namespace {

// Redis's string2ld: the whole text, not starting with a space, no NaN, no overflow or
// underflow to zero.
std::optional<long double> ParseLongDouble(const std::string& s) {
  if (s.empty() || s.size() >= 5 * 1024 || std::isspace(static_cast<unsigned char>(s[0]))) {
    return std::nullopt;
  }
  errno = 0;
  char* end = nullptr;
  const long double v = std::strtold(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isnan(v)) return std::nullopt;
  if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)) return std::nullopt;
  return v;
}

// Redis's ld2string in its human mode.
std::string FormatLongDouble(long double v) {
  char buf[5 * 1024];
  int n = std::snprintf(buf, sizeof buf, "%.17Lf", v);
  std::string out(buf, static_cast<size_t>(n));
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

// `current` (absent: 0) plus `increment` (empty: it was not a float), as a reply's text, or the
// error Redis gives, the current value's first.
std::variant<std::string, KvReply> AddFloat(const std::string* current,
                                            std::optional<long double> increment,
                                            const KvReply& current_not_float) {
  long double value = 0;
  if (current != nullptr) {
    const std::optional<long double> v = ParseLongDouble(*current);
    if (!v) return current_not_float;
    value = *v;
  }
  if (!increment) return kv_errors::NotFloat();
  value += *increment;
  if (std::isnan(value) || std::isinf(value)) {
    return KvReply::Error("ERR increment would produce NaN or Infinity");
  }
  return FormatLongDouble(value);
}

}  // namespace

KvReply MemoryKv::IncrByFloat(Args a) {
  bool wrong = false;
  const std::string* v = FindAs<std::string>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  std::variant<std::string, KvReply> sum =
      AddFloat(v, ParseLongDouble(a[2]), kv_errors::NotFloat());
  if (auto* error = std::get_if<KvReply>(&sum)) return *error;
  Entry& w = Write(a[1]);  // keeps its TTL
  w.value = std::get<std::string>(sum);
  return KvReply::Bulk(std::get<std::string>(sum));
}

KvReply MemoryKv::HIncrByFloat(Args a) {
  // Redis reads the increment before the key.
  const std::optional<long double> increment = ParseLongDouble(a[3]);
  if (!increment) return kv_errors::NotFloat();
  if (std::isinf(*increment)) return KvReply::Error("ERR value is NaN or Infinity");
  bool wrong = false;
  const Hash* h = FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  const std::string* current = nullptr;
  if (h != nullptr) {
    for (const auto& [field, value] : *h) {
      if (field == a[2]) current = &value;
    }
  }
  std::variant<std::string, KvReply> sum =
      AddFloat(current, increment, KvReply::Error("ERR hash value is not a float"));
  if (auto* error = std::get_if<KvReply>(&sum)) return *error;
  const std::string set[] = {"HSET", a[1], a[2], std::get<std::string>(sum)};
  if (KvReply r = HSet(set); r.is_error()) return r;
  return KvReply::Bulk(std::get<std::string>(sum));
}

}  // namespace ratelab
