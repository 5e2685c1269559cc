// MemoryKv's hash and sorted-set commands.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "absl/strings/ascii.h"
#include "impl/store/memory_kv.h"
#include "impl/store/memory_kv_errors.h"

namespace ratelab {
namespace {

// Redis's string-to-double: the whole text, no spaces, "inf"/"+inf"/"-inf" allowed, no NaN.
std::optional<double> ParseScore(const std::string& s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isnan(v)) return std::nullopt;
  return v;
}

// A ZRANGEBYSCORE-style bound: "(" makes it exclusive.
struct ScoreBound {
  double value = 0;
  bool exclusive = false;
};
std::optional<ScoreBound> ParseBound(const std::string& s) {
  const bool exclusive = !s.empty() && s[0] == '(';
  const std::optional<double> v = ParseScore(exclusive ? s.substr(1) : s);
  if (!v) return std::nullopt;
  return ScoreBound{*v, exclusive};
}
// The scores between two such bounds, as ZCOUNT and its kin read them from min and max.
struct ScoreRange {
  ScoreBound min, max;
  bool AboveMin(double score) const {
    return min.exclusive ? score > min.value : score >= min.value;
  }
  bool BelowMax(double score) const {
    return max.exclusive ? score < max.value : score <= max.value;
  }
};
std::optional<ScoreRange> ParseRange(const std::string& min, const std::string& max) {
  const std::optional<ScoreBound> lo = ParseBound(min);
  const std::optional<ScoreBound> hi = ParseBound(max);
  if (!lo || !hi) return std::nullopt;
  return ScoreRange{*lo, *hi};
}
KvReply NotARange() { return KvReply::Error("ERR min or max is not a float"); }

// A bound of a range of members, as ZRANGEBYLEX and its kin read it: "-" and "+" (below and above
// every member), "[m" (m included), "(m" (m left out).
struct LexBound {
  enum Kind { kMinus, kPlus, kMember } kind = kMinus;
  std::string member;
  bool exclusive = true;  // "-" and "+" are, as Redis parses them
  // <0, 0, >0 as the bound sorts before, with, or after member `m` of the set.
  int Compare(const std::string& m) const {
    if (kind == kMinus) return -1;
    if (kind == kPlus) return 1;
    return member.compare(m);
  }
  // The bounds compared, as Redis's sdscmplex compares them.
  int Compare(const LexBound& o) const {
    if (kind == o.kind && kind != kMember) return 0;
    if (kind == kMinus || o.kind == kPlus) return -1;
    if (kind == kPlus || o.kind == kMinus) return 1;
    return member.compare(o.member);
  }
};
std::optional<LexBound> ParseLexBound(const std::string& s) {
  if (s == "-") return LexBound{LexBound::kMinus, "", true};
  if (s == "+") return LexBound{LexBound::kPlus, "", true};
  if (s.empty() || (s[0] != '[' && s[0] != '(')) return std::nullopt;
  return LexBound{LexBound::kMember, s.substr(1), s[0] == '('};
}
struct LexRange {
  LexBound min, max;
  bool AboveMin(const std::string& m) const {
    const int c = min.Compare(m);
    return min.exclusive ? c < 0 : c <= 0;
  }
  bool BelowMax(const std::string& m) const {
    const int c = max.Compare(m);
    return max.exclusive ? c > 0 : c >= 0;
  }
  // No member can be in it (Redis tests this before it looks).
  bool Empty() const {
    const int c = min.Compare(max);
    return c > 0 || (c == 0 && (min.exclusive || max.exclusive));
  }
};
std::optional<LexRange> ParseLexRange(const std::string& min, const std::string& max) {
  const std::optional<LexBound> lo = ParseLexBound(min);
  const std::optional<LexBound> hi = ParseLexBound(max);
  if (!lo || !hi) return std::nullopt;
  return LexRange{*lo, *hi};
}
KvReply NotALexRange() { return KvReply::Error("ERR min or max not valid string range item"); }

using ByScore = std::set<std::pair<double, std::string>>;

// Where a range of members starts in `by_score`, as Redis finds it in a set it keeps as a listpack
// (the two encodings agree when every score is the same, the one case the commands are meant
// for): nothing unless the last member is at least the minimum and the first at most the
// maximum; then the first member at least the minimum, if it is at most the maximum. Backwards:
// the last member at most the maximum, if it is at least the minimum.
bool MayHold(const ByScore& by_score, const LexRange& range) {
  return !by_score.empty() && !range.Empty() && range.AboveMin(by_score.rbegin()->second) &&
         range.BelowMax(by_score.begin()->second);
}
ByScore::const_iterator FirstInLexRange(const ByScore& by_score, const LexRange& range) {
  if (!MayHold(by_score, range)) return by_score.end();
  for (auto it = by_score.begin(); it != by_score.end(); ++it) {
    if (range.AboveMin(it->second)) return range.BelowMax(it->second) ? it : by_score.end();
  }
  return by_score.end();
}
ByScore::const_reverse_iterator LastInLexRange(const ByScore& by_score, const LexRange& range) {
  if (!MayHold(by_score, range)) return by_score.rend();
  for (auto it = by_score.rbegin(); it != by_score.rend(); ++it) {
    if (range.BelowMax(it->second)) return range.AboveMin(it->second) ? it : by_score.rend();
  }
  return by_score.rend();
}

}  // namespace

// Hashes --------------------------------------------------------------------------------------

KvReply MemoryKv::HGet(Args a) {
  bool wrong = false;
  const Hash* h = FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (h == nullptr) return KvReply::Nil();
  for (const auto& [field, value] : *h) {
    if (field == a[2]) return KvReply::Bulk(value);
  }
  return KvReply::Nil();
}

KvReply MemoryKv::HSet(Args a) {
  if (a.size() % 2 != 0) return kv_errors::Arity("hset");
  bool wrong = false;
  FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  Hash& h = WriteAs<Hash>(a[1]);
  int64_t added = 0;
  for (size_t i = 2; i + 1 < a.size(); i += 2) {
    auto it = std::find_if(h.begin(), h.end(), [&](const auto& fv) { return fv.first == a[i]; });
    if (it == h.end()) {
      h.emplace_back(a[i], a[i + 1]);
      ++added;
    } else {
      it->second = a[i + 1];
    }
  }
  return KvReply::Integer(added);
}

KvReply MemoryKv::HSetNx(Args a) {
  bool wrong = false;
  const Hash* h = FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (h != nullptr &&
      std::any_of(h->begin(), h->end(), [&](const auto& fv) { return fv.first == a[2]; })) {
    return KvReply::Integer(0);
  }
  WriteAs<Hash>(a[1]).emplace_back(a[2], a[3]);
  return KvReply::Integer(1);
}

KvReply MemoryKv::HKeys(Args a) { return HalfOfEachPair(a, /*values=*/false); }
KvReply MemoryKv::HVals(Args a) { return HalfOfEachPair(a, /*values=*/true); }

KvReply MemoryKv::HalfOfEachPair(Args a, bool values) {
  bool wrong = false;
  const Hash* h = FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  std::vector<KvReply> out;
  if (h != nullptr) {
    for (const auto& [field, value] : *h) out.push_back(KvReply::Bulk(values ? value : field));
  }
  return KvReply::Array(std::move(out));
}

KvReply MemoryKv::HMSet(Args a) {
  if (a.size() % 2 != 0) return kv_errors::Arity("hmset");
  const KvReply r = HSet(a);
  return r.is_error() ? r : KvReply::Ok();
}

KvReply MemoryKv::HMGet(Args a) {
  bool wrong = false;
  const Hash* h = FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  std::vector<KvReply> out;
  for (size_t i = 2; i < a.size(); ++i) {
    KvReply r = KvReply::Nil();
    if (h != nullptr) {
      for (const auto& [field, value] : *h) {
        if (field == a[i]) r = KvReply::Bulk(value);
      }
    }
    out.push_back(std::move(r));
  }
  return KvReply::Array(std::move(out));
}

KvReply MemoryKv::HGetAll(Args a) {
  bool wrong = false;
  const Hash* h = FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  std::vector<KvReply> out;
  if (h != nullptr) {
    for (const auto& [field, value] : *h) {
      out.push_back(KvReply::Bulk(field));
      out.push_back(KvReply::Bulk(value));
    }
  }
  return KvReply::Array(std::move(out));
}

KvReply MemoryKv::HIncrBy(Args a) {
  const std::optional<int64_t> by = ParseRedisInteger(a[3]);
  if (!by) return kv_errors::NotInteger();
  bool wrong = false;
  const Hash* h = FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  int64_t current = 0;
  if (h != nullptr) {
    for (const auto& [field, value] : *h) {
      if (field != a[2]) continue;
      const std::optional<int64_t> v = ParseRedisInteger(value);
      if (!v) return KvReply::Error("ERR hash value is not an integer");
      current = *v;
    }
  }
  int64_t next = 0;
  if (__builtin_add_overflow(current, *by, &next)) return kv_errors::Overflow();
  const std::string text = std::to_string(next);
  const std::string argv[] = {"hset", a[1], a[2], text};
  HSet(argv);
  return KvReply::Integer(next);
}

KvReply MemoryKv::HDel(Args a) {
  bool wrong = false;
  Hash* h = FindToChange<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (h == nullptr) return KvReply::Integer(0);
  int64_t removed = 0;
  for (size_t i = 2; i < a.size(); ++i) {
    auto it = std::find_if(h->begin(), h->end(), [&](const auto& fv) { return fv.first == a[i]; });
    if (it != h->end()) {
      h->erase(it);
      ++removed;
    }
  }
  if (h->empty()) Erase(a[1]);
  return KvReply::Integer(removed);
}

KvReply MemoryKv::HExists(Args a) {
  KvReply r = HGet(a);
  if (r.is_error()) return r;
  return KvReply::Integer(r.is_nil() ? 0 : 1);
}

KvReply MemoryKv::HStrLen(Args a) {
  bool wrong = false;
  const Hash* h = FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (h != nullptr) {
    for (const auto& [field, value] : *h) {
      if (field == a[2]) return KvReply::Integer(static_cast<int64_t>(value.size()));
    }
  }
  return KvReply::Integer(0);
}

KvReply MemoryKv::HLen(Args a) {
  bool wrong = false;
  const Hash* h = FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  return KvReply::Integer(h == nullptr ? 0 : static_cast<int64_t>(h->size()));
}

// Sorted sets ---------------------------------------------------------------------------------

// Redis 7.0's zset-max-listpack-entries and zset-max-listpack-value.
constexpr size_t kListpackMaxEntries = 128;
constexpr size_t kListpackMaxValue = 64;

void MemoryKv::ZSet::Fit(const std::string& member) {
  if (listpack && (member.size() > kListpackMaxValue ||
                   (!scores.contains(member) && scores.size() + 1 > kListpackMaxEntries))) {
    listpack = false;
  }
}

void MemoryKv::ZSet::Set(const std::string& member, double stored) {
  const auto [it, added] = scores.try_emplace(member, stored);
  if (!added) {
    by_score.erase({it->second, member});
    it->second = stored;
  }
  by_score.emplace(stored, member);
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]: with INCR, one pair, and
// the member's new score (nil when a condition left it as it was), as ZINCRBY answers.
KvReply MemoryKv::ZAdd(Args a) {
  std::array<bool, 6> flags{};
  const size_t pairs_at = ReadKvOptions<6>(a, 2, {"NX", "XX", "GT", "LT", "CH", "INCR"}, flags);
  const auto [nx, xx, gt, lt, ch, incr] = flags;
  if (pairs_at == a.size() || (a.size() - pairs_at) % 2 != 0) return kv_errors::Syntax();
  if (nx && xx) return KvReply::Error("ERR XX and NX options at the same time are not compatible");
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    return KvReply::Error("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (incr && a.size() - pairs_at > 2) {
    return KvReply::Error("ERR INCR option supports a single increment-element pair");
  }
  std::vector<double> scores;
  for (size_t j = pairs_at; j < a.size(); j += 2) {
    const std::optional<double> s = ParseScore(a[j]);
    if (!s) return kv_errors::NotFloat();
    scores.push_back(*s);
  }
  bool wrong = false;
  FindAs<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (xx && Find(a[1]) == nullptr) return incr ? KvReply::Nil() : KvReply::Integer(0);
  ZSet& z = WriteAs<ZSet>(a[1]);
  int64_t added = 0, changed = 0;
  std::optional<double> incremented;  // INCR's new score, when it was set
  for (size_t j = pairs_at, k = 0; j < a.size(); j += 2, ++k) {
    const std::string& member = a[j + 1];
    z.Fit(member);
    const auto it = z.scores.find(member);
    if (it == z.scores.end()) {
      if (xx) continue;
      z.Set(member, z.Stored(scores[k]));
      incremented = scores[k];
      ++added;
      continue;
    }
    if (nx) continue;
    const double wanted = incr ? it->second + scores[k] : scores[k];
    if (std::isnan(wanted)) return KvReply::Error("ERR resulting score is not a number (NaN)");
    if ((gt && wanted <= it->second) || (lt && wanted >= it->second)) continue;
    incremented = wanted;
    const double score = z.Stored(wanted);
    if (score == it->second) continue;
    z.Set(member, score);
    ++changed;
  }
  if (z.scores.empty()) Erase(a[1]);
  if (incr) return incremented ? KvReply::Bulk(FormatRedisScore(*incremented)) : KvReply::Nil();
  return KvReply::Integer(ch ? added + changed : added);
}

KvReply MemoryKv::ZRem(Args a) {
  bool wrong = false;
  ZSet* z = FindToChange<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (z == nullptr) return KvReply::Integer(0);
  int64_t removed = 0;
  for (size_t i = 2; i < a.size(); ++i) {
    auto it = z->scores.find(a[i]);
    if (it == z->scores.end()) continue;
    z->by_score.erase({it->second, a[i]});
    z->scores.erase(it);
    ++removed;
  }
  if (z->scores.empty()) Erase(a[1]);
  return KvReply::Integer(removed);
}

KvReply MemoryKv::ZRemRangeByScore(Args a) {
  const std::optional<ScoreRange> range = ParseRange(a[2], a[3]);
  if (!range) return NotARange();
  bool wrong = false;
  ZSet* z = FindToChange<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (z == nullptr) return KvReply::Integer(0);
  int64_t removed = 0;
  for (auto it = z->by_score.begin(); it != z->by_score.end();) {
    if (!range->BelowMax(it->first)) break;
    if (range->AboveMin(it->first)) {
      z->scores.erase(it->second);
      it = z->by_score.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  if (z->scores.empty()) Erase(a[1]);
  return KvReply::Integer(removed);
}

KvReply MemoryKv::ZCard(Args a) {
  bool wrong = false;
  const ZSet* z = FindAs<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  return KvReply::Integer(z == nullptr ? 0 : static_cast<int64_t>(z->scores.size()));
}

KvReply MemoryKv::ZCount(Args a) {
  const std::optional<ScoreRange> range = ParseRange(a[2], a[3]);
  if (!range) return NotARange();
  bool wrong = false;
  const ZSet* z = FindAs<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  int64_t n = 0;
  if (z != nullptr) {
    for (const auto& [score, member] : z->by_score) {
      n += range->AboveMin(score) && range->BelowMax(score) ? 1 : 0;
    }
  }
  return KvReply::Integer(n);
}

KvReply MemoryKv::ZScore(Args a) {
  bool wrong = false;
  const ZSet* z = FindAs<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (z == nullptr) return KvReply::Nil();
  auto it = z->scores.find(a[2]);
  return it == z->scores.end() ? KvReply::Nil() : KvReply::Bulk(FormatRedisScore(it->second));
}

KvReply MemoryKv::ZRange(Args a) { return RangeOf(a, std::nullopt, std::nullopt); }
KvReply MemoryKv::ZRevRange(Args a) { return RangeOf(a, RangeBy::kRank, true); }
KvReply MemoryKv::ZRangeByScore(Args a) { return RangeOf(a, RangeBy::kScore, false); }
KvReply MemoryKv::ZRevRangeByScore(Args a) { return RangeOf(a, RangeBy::kScore, true); }
KvReply MemoryKv::ZRangeByLex(Args a) { return RangeOf(a, RangeBy::kLex, false); }
KvReply MemoryKv::ZRevRangeByLex(Args a) { return RangeOf(a, RangeBy::kLex, true); }

// ZLEXCOUNT key min max: from the first member in the range, those that follow while they are
// at most the maximum.
KvReply MemoryKv::ZLexCount(Args a) {
  const std::optional<LexRange> range = ParseLexRange(a[2], a[3]);
  if (!range) return NotALexRange();
  bool wrong = false;
  const ZSet* z = FindAs<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  int64_t n = 0;
  if (z != nullptr) {
    for (auto it = FirstInLexRange(z->by_score, *range);
         it != z->by_score.end() && range->BelowMax(it->second); ++it) {
      ++n;
    }
  }
  return KvReply::Integer(n);
}

// ZREMRANGEBYLEX key min max: removes what ZLEXCOUNT counts.
KvReply MemoryKv::ZRemRangeByLex(Args a) {
  const std::optional<LexRange> range = ParseLexRange(a[2], a[3]);
  if (!range) return NotALexRange();
  bool wrong = false;
  ZSet* z = FindToChange<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (z == nullptr) return KvReply::Integer(0);
  int64_t removed = 0;
  for (auto it = FirstInLexRange(z->by_score, *range);
       it != z->by_score.end() && range->BelowMax(it->second);) {
    z->scores.erase(it->second);
    it = z->by_score.erase(it);
    ++removed;
  }
  if (z->scores.empty()) Erase(a[1]);
  return KvReply::Integer(removed);
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES], and the older
// forms (ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX) whose name fixes
// what ZRANGE's options say, as Redis 7.0 reads them: the options first, then the range (with
// REV and BYSCORE or BYLEX, max before min), then the key.
KvReply MemoryKv::RangeOf(Args a, std::optional<RangeBy> by, std::optional<bool> reverse) {
  bool with_scores = false;
  int64_t offset = 0, limit = -1;
  for (size_t i = 4; i < a.size(); ++i) {
    const std::string word = absl::AsciiStrToUpper(a[i]);
    if (word == "WITHSCORES") {
      with_scores = true;
    } else if (word == "LIMIT" && i + 2 < a.size()) {
      const std::optional<int64_t> o = ParseRedisInteger(a[i + 1]);
      const std::optional<int64_t> c = ParseRedisInteger(a[i + 2]);
      if (!o || !c) return kv_errors::NotInteger();
      offset = *o;
      limit = *c;
      i += 2;
    } else if (word == "REV" && !reverse) {
      reverse = true;
    } else if ((word == "BYSCORE" || word == "BYLEX") && !by) {
      by = word == "BYSCORE" ? RangeBy::kScore : RangeBy::kLex;
    } else {
      return kv_errors::Syntax();
    }
  }
  const bool scores = by == RangeBy::kScore, lex = by == RangeBy::kLex;
  const bool backwards = reverse.value_or(false);
  if (limit != -1 && !scores && !lex) {
    return KvReply::Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (with_scores && lex) {
    return KvReply::Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  if (lex) return LexRangeOf(a, backwards, offset, limit);
  std::optional<ScoreRange> range;
  std::optional<int64_t> start, stop;
  if (scores) {
    range = backwards ? ParseRange(a[3], a[2]) : ParseRange(a[2], a[3]);
    if (!range) return NotARange();
  } else {
    start = ParseRedisInteger(a[2]);
    stop = ParseRedisInteger(a[3]);
    if (!start || !stop) return kv_errors::NotInteger();
  }
  bool wrong = false;
  const ZSet* z = FindAs<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  std::vector<KvReply> out;
  if (z == nullptr) return KvReply::Array({});
  const auto emit = [&](const std::pair<double, std::string>& entry) {
    out.push_back(KvReply::Bulk(entry.second));
    if (with_scores) out.push_back(KvReply::Bulk(FormatRedisScore(entry.first)));
  };
  const auto each = [&](const auto& visit) {  // in the direction asked; `visit` false: stop
    if (backwards) {
      for (auto it = z->by_score.rbegin(); it != z->by_score.rend(); ++it) {
        if (!visit(*it)) return;
      }
    } else {
      for (const auto& entry : z->by_score) {
        if (!visit(entry)) return;
      }
    }
  };
  if (!scores) {
    const int64_t n = static_cast<int64_t>(z->by_score.size());
    const int64_t from = *start < 0 ? std::max<int64_t>(0, n + *start) : *start;
    const int64_t to = *stop < 0 ? n + *stop : std::min(*stop, n - 1);
    int64_t index = 0;
    each([&](const auto& entry) {
      if (index >= from && index <= to) emit(entry);
      return ++index <= to;
    });
    return KvReply::Array(std::move(out));
  }
  if (offset < 0) return KvReply::Array({});
  each([&](const auto& entry) {
    const double score = entry.first;
    if (backwards ? !range->AboveMin(score) : !range->BelowMax(score)) return false;
    if (backwards ? !range->BelowMax(score) : !range->AboveMin(score)) return true;
    if (offset > 0) {
      --offset;
      return true;
    }
    if (limit == 0) return false;
    emit(entry);
    if (limit > 0) --limit;
    return true;
  });
  return KvReply::Array(std::move(out));
}

// ZRANGE ... BYLEX and its older forms, once their options are read: from the first member in
// the range (the last, backwards), `offset` skipped whatever they are, then up to `limit` (-1:
// all) while they stay in the range.
KvReply MemoryKv::LexRangeOf(Args a, bool backwards, int64_t offset, int64_t limit) {
  const std::optional<LexRange> range =
      backwards ? ParseLexRange(a[3], a[2]) : ParseLexRange(a[2], a[3]);
  if (!range) return NotALexRange();
  bool wrong = false;
  const ZSet* z = FindAs<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  std::vector<KvReply> out;
  if (z == nullptr || offset < 0) return KvReply::Array({});
  const auto walk = [&](auto it, auto end, auto in_range) {
    for (; it != end && offset > 0; ++it) --offset;
    for (; it != end && limit != 0 && in_range(it->second); ++it, --limit) {
      out.push_back(KvReply::Bulk(it->second));
    }
  };
  if (backwards) {
    walk(LastInLexRange(z->by_score, *range), z->by_score.rend(),
         [&](const std::string& m) { return range->AboveMin(m); });
  } else {
    walk(FirstInLexRange(z->by_score, *range), z->by_score.end(),
         [&](const std::string& m) { return range->BelowMax(m); });
  }
  return KvReply::Array(std::move(out));
}

// ZRANK, ZREVRANK: the member's place counted from the lowest score (the highest).
KvReply MemoryKv::Rank(Args a, bool reverse) {
  bool wrong = false;
  const ZSet* z = FindAs<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (z == nullptr) return KvReply::Nil();
  const auto it = z->scores.find(a[2]);
  if (it == z->scores.end()) return KvReply::Nil();
  const int64_t rank = std::distance(z->by_score.begin(), z->by_score.find({it->second, a[2]}));
  return KvReply::Integer(reverse ? static_cast<int64_t>(z->by_score.size()) - 1 - rank : rank);
}
KvReply MemoryKv::ZRank(Args a) { return Rank(a, false); }
KvReply MemoryKv::ZRevRank(Args a) { return Rank(a, true); }

KvReply MemoryKv::ZRemRangeByRank(Args a) {
  std::optional<int64_t> start = ParseRedisInteger(a[2]);
  std::optional<int64_t> stop = ParseRedisInteger(a[3]);
  if (!start || !stop) return kv_errors::NotInteger();
  bool wrong = false;
  ZSet* z = FindToChange<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (z == nullptr) return KvReply::Integer(0);
  const int64_t n = static_cast<int64_t>(z->by_score.size());
  int64_t from = *start < 0 ? *start + n : *start;
  int64_t to = *stop < 0 ? *stop + n : *stop;
  from = std::max<int64_t>(0, from);
  if (from > to || from >= n) return KvReply::Integer(0);
  to = std::min(to, n - 1);
  auto it = std::next(z->by_score.begin(), from);
  int64_t removed = 0;
  for (int64_t i = from; i <= to; ++i, ++removed) {
    z->scores.erase(it->second);
    it = z->by_score.erase(it);
  }
  if (z->scores.empty()) Erase(a[1]);
  return KvReply::Integer(removed);
}

// ZPOPMIN / ZPOPMAX key [count]: the lowest (highest) members with their scores, removed.
KvReply MemoryKv::ZPop(Args a, bool max) {
  if (a.size() > 3) return kv_errors::Arity(max ? "zpopmax" : "zpopmin");
  int64_t count = 1;
  if (a.size() == 3) {
    // Not a number is "out of range" too, as Redis says it.
    const std::optional<int64_t> given = ParseRedisInteger(a[2]);
    if (!given || *given < 0) return KvReply::Error("ERR value is out of range, must be positive");
    count = *given;
  }
  bool wrong = false;
  ZSet* z = FindToChange<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  std::vector<KvReply> out;
  if (z == nullptr) return KvReply::Array(std::move(out));
  for (int64_t i = 0; i < count && !z->by_score.empty(); ++i) {
    const auto it = max ? std::prev(z->by_score.end()) : z->by_score.begin();
    out.push_back(KvReply::Bulk(it->second));
    out.push_back(KvReply::Bulk(FormatRedisScore(it->first)));
    z->scores.erase(it->second);
    z->by_score.erase(it);
  }
  if (z->scores.empty()) Erase(a[1]);
  return KvReply::Array(std::move(out));
}

KvReply MemoryKv::ZPopMin(Args a) { return ZPop(a, false); }
KvReply MemoryKv::ZPopMax(Args a) { return ZPop(a, true); }

KvReply MemoryKv::ZIncrBy(Args a) {
  const std::optional<double> by = ParseScore(a[2]);
  if (!by) return kv_errors::NotFloat();
  bool wrong = false;
  FindAs<ZSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  ZSet& z = WriteAs<ZSet>(a[1]);
  const std::string& member = a[3];
  const auto it = z.scores.find(member);
  // A new member's score is the increment itself (-0 stays -0), as Redis adds it.
  const double score = it == z.scores.end() ? *by : it->second + *by;
  if (std::isnan(score)) {
    if (z.scores.empty()) Erase(a[1]);
    return KvReply::Error("ERR resulting score is not a number (NaN)");
  }
  z.Fit(member);
  z.Set(member, z.Stored(score));
  return KvReply::Bulk(FormatRedisScore(score));  // the score computed, before a listpack keeps it
}

}  // namespace ratelab
