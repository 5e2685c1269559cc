// MemoryKv's KEYS and the SCAN family (SCAN, SSCAN, HSCAN, ZSCAN), as Redis 7.0 answers, with its
// glob patterns. MemoryKv's collections are small (a listpack or an intset, to Redis), which Redis
// scans whole in one call: every SCAN here returns all it matches, with the cursor 0, so a script
// that loops until the cursor is 0 loops once. The order of keys and of a hash table's members is
// Redis's own and not reproduced (they come sorted); a listpack's and an intset's are.
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "impl/store/memory_kv.h"
#include "impl/store/memory_kv_errors.h"

namespace ratelab {

namespace {

// Redis's stringmatchlen (util.c): `*`, `?`, `[...]` (with `^`, ranges either way round and `\`
// escapes) and `\` escapes. Reading one past the end of `p` gives its terminating NUL, as Redis's
// reads of an sds do. `skip_longer`: the rest of the pattern matched nowhere, so no earlier `*`
// needs to try a longer match.
bool GlobFrom(const char* p, size_t plen, const char* s, size_t slen, bool& skip_longer) {
  while (plen > 0 && slen > 0) {
    switch (p[0]) {
      case '*':
        while (plen > 1 && p[1] == '*') {
          ++p;
          --plen;
        }
        if (plen == 1) return true;
        while (slen > 0) {
          if (GlobFrom(p + 1, plen - 1, s, slen, skip_longer)) return true;
          if (skip_longer) return false;
          ++s;
          --slen;
        }
        skip_longer = true;
        return false;
      case '?':
        ++s;
        --slen;
        break;
      case '[': {
        ++p;
        --plen;
        const bool negate = plen > 0 && p[0] == '^';
        if (negate) {
          ++p;
          --plen;
        }
        bool match = false;
        while (true) {
          if (p[0] == '\\' && plen >= 2) {
            ++p;
            --plen;
            if (p[0] == s[0]) match = true;
          } else if (plen > 0 && p[0] == ']') {
            break;
          } else if (plen == 0) {
            --p;
            ++plen;
            break;
          } else if (plen >= 3 && p[1] == '-') {
            int lo = static_cast<signed char>(p[0]), hi = static_cast<signed char>(p[2]);
            if (lo > hi) std::swap(lo, hi);
            const int c = static_cast<signed char>(s[0]);
            p += 2;
            plen -= 2;
            if (c >= lo && c <= hi) match = true;
          } else if (p[0] == s[0]) {
            match = true;
          }
          ++p;
          --plen;
        }
        if (negate) match = !match;
        if (!match) return false;
        ++s;
        --slen;
        break;
      }
      case '\\':
        if (plen >= 2) {
          ++p;
          --plen;
        }
        [[fallthrough]];
      default:
        if (p[0] != s[0]) return false;
        ++s;
        --slen;
        break;
    }
    ++p;
    --plen;
    if (slen == 0) {
      while (plen > 0 && p[0] == '*') {
        ++p;
        --plen;
      }
      break;
    }
  }
  return plen == 0 && slen == 0;
}

bool GlobMatch(const std::string& pattern, const std::string& s) {
  bool skip_longer = false;
  return GlobFrom(pattern.c_str(), pattern.size(), s.c_str(), s.size(), skip_longer);
}

// A cursor as Redis reads one (strtoul): a sign and digits, nothing after them, no space before;
// "" reads as 0.
std::optional<uint64_t> ParseCursor(const std::string& text) {
  if (!text.empty() && std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const uint64_t cursor = std::strtoul(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return cursor;
}

KvReply InvalidCursor() { return KvReply::Error("ERR invalid cursor"); }

// What a SCAN's options ask (from a[from] on): MATCH, COUNT and (for SCAN) TYPE.
struct ScanOptions {
  std::optional<std::string> match;
  std::optional<std::string> type;
  bool Matches(const std::string& s) const {
    return !match || *match == "*" || GlobMatch(*match, s);
  }
};
std::variant<ScanOptions, KvReply> ReadScanOptions(std::span<const std::string> a, size_t from,
                                                   bool with_type) {
  ScanOptions o;
  for (size_t i = from; i < a.size(); i += 2) {
    const std::string word = absl::AsciiStrToLower(a[i]);
    if (i + 1 >= a.size()) return kv_errors::Syntax();
    if (word == "count") {
      const std::optional<int64_t> count = ParseRedisInteger(a[i + 1]);
      if (!count) return kv_errors::NotInteger();
      if (*count < 1) return kv_errors::Syntax();
    } else if (word == "match") {
      o.match = a[i + 1];
    } else if (word == "type" && with_type) {
      o.type = absl::AsciiStrToLower(a[i + 1]);
    } else {
      return kv_errors::Syntax();
    }
  }
  return o;
}

KvReply ScanReply(std::vector<KvReply> elements) {
  return KvReply::Array({KvReply::Bulk("0"), KvReply::Array(std::move(elements))});
}

constexpr std::array<std::string_view, 5> kTypeNames = {"string", "hash", "zset", "list", "set"};

}  // namespace

KvReply MemoryKv::Keys(Args a) {
  std::vector<std::string> keys;
  for (const auto& [key, entry] : data_) {
    const bool expired = entry.expire_ms >= 0 && now_ms_ > entry.expire_ms;
    if (!expired && GlobMatch(a[1], key)) keys.push_back(key);  // not reclaimed, as KEYS does
  }
  std::sort(keys.begin(), keys.end());
  std::vector<KvReply> out;
  for (std::string& k : keys) out.push_back(KvReply::Bulk(std::move(k)));
  return KvReply::Array(std::move(out));
}

KvReply MemoryKv::Scan(Args a) {
  const std::optional<uint64_t> cursor = ParseCursor(a[1]);
  if (!cursor) return InvalidCursor();
  auto options = ReadScanOptions(a, 2, /*with_type=*/true);
  if (auto* error = std::get_if<KvReply>(&options)) return *error;
  const ScanOptions& o = std::get<ScanOptions>(options);
  std::vector<std::string> keys;
  if (*cursor == 0) {  // any other cursor is past the end of the one pass MemoryKv makes
    for (const auto& [key, entry] : data_) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  std::vector<KvReply> out;
  for (std::string& key : keys) {
    if (!o.Matches(key)) continue;
    const Entry* e = Find(key);  // an expired key is reclaimed, as SCAN does
    if (e == nullptr || (o.type && kTypeNames[e->value.index()] != *o.type)) continue;
    out.push_back(KvReply::Bulk(std::move(key)));
  }
  return ScanReply(std::move(out));
}

// SSCAN, HSCAN, ZSCAN: the cursor, then the key (missing: nothing to scan) and its type, then
// the options; `each(value, emit)` calls emit(name, value) for each member (value: none for a
// set's), in the order the scan lists them.
template <typename T, typename Each>
KvReply MemoryKv::ScanCollection(Args a, Each each) {
  if (!ParseCursor(a[2])) return InvalidCursor();
  bool wrong = false;
  const T* value = FindAs<T>(a[1], &wrong);
  if (value == nullptr && !wrong) return ScanReply({});
  if (wrong) return kv_errors::WrongType();
  auto options = ReadScanOptions(a, 3, /*with_type=*/false);
  if (auto* error = std::get_if<KvReply>(&options)) return *error;
  std::vector<KvReply> out;
  each(*value, [&](const std::string& name, const std::optional<std::string>& of_it) {
    if (!std::get<ScanOptions>(options).Matches(name)) return;
    out.push_back(KvReply::Bulk(name));
    if (of_it) out.push_back(KvReply::Bulk(*of_it));
  });
  return ScanReply(std::move(out));
}

KvReply MemoryKv::SScan(Args a) {
  return ScanCollection<StringSet>(a, [&](const StringSet&, const auto& emit) {
    for (const KvReply& m : SMembers(a.subspan(0, 2)).elements) emit(m.text, std::nullopt);
  });
}

KvReply MemoryKv::HScan(Args a) {
  return ScanCollection<Hash>(a, [](const Hash& hash, const auto& emit) {
    for (const auto& [field, value] : hash) emit(field, value);
  });
}

KvReply MemoryKv::ZScan(Args a) {
  return ScanCollection<ZSet>(a, [](const ZSet& z, const auto& emit) {
    for (const auto& [score, member] : z.by_score) emit(member, FormatRedisScore(score));
  });
}

}  // namespace ratelab
