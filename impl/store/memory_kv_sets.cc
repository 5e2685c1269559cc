// MemoryKv's sets, as Redis 7.0 answers: SADD, SREM, SCARD, SISMEMBER, SMISMEMBER, SMEMBERS,
// SINTER, SUNION and SDIFF. A
// set of integers only (at most 512 of them) is Redis's intset, which lists its members in numeric
// order; any other is a hash table, whose order is its own and differs from run to run (MemoryKv
// lists such a set sorted: a script that needs an order sorts what it reads). A set that becomes
// empty is deleted.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "impl/store/memory_kv.h"
#include "impl/store/memory_kv_errors.h"

namespace ratelab {

namespace {

// Redis keeps a set of integers as an intset up to this many members (set-max-intset-entries).
constexpr size_t kIntsetMostEntries = 512;

}  // namespace

KvReply MemoryKv::SAdd(Args a) {
  bool wrong = false;
  FindAs<StringSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  StringSet& set = WriteAs<StringSet>(a[1]);
  int64_t added = 0;
  for (size_t i = 2; i < a.size(); ++i) {
    if (!set.members.insert(a[i]).second) continue;
    ++added;
    // Once a hash table, always one (a removal does not make it an intset again).
    if (!ParseRedisInteger(a[i]) || set.members.size() > kIntsetMostEntries) set.intset = false;
  }
  return KvReply::Integer(added);
}

KvReply MemoryKv::SRem(Args a) {
  bool wrong = false;
  StringSet* set = FindToChange<StringSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (set == nullptr) return KvReply::Integer(0);
  int64_t removed = 0;
  for (size_t i = 2; i < a.size(); ++i) removed += static_cast<int64_t>(set->members.erase(a[i]));
  if (set->members.empty()) Erase(a[1]);
  return KvReply::Integer(removed);
}

KvReply MemoryKv::SCard(Args a) {
  bool wrong = false;
  const StringSet* set = FindAs<StringSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  return KvReply::Integer(set == nullptr ? 0 : static_cast<int64_t>(set->members.size()));
}

KvReply MemoryKv::SIsMember(Args a) {
  bool wrong = false;
  const StringSet* set = FindAs<StringSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  return KvReply::Integer(set != nullptr && set->members.contains(a[2]) ? 1 : 0);
}

KvReply MemoryKv::SMIsMember(Args a) {
  bool wrong = false;
  const StringSet* set = FindAs<StringSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  std::vector<KvReply> out;
  for (size_t i = 2; i < a.size(); ++i) {
    out.push_back(KvReply::Integer(set != nullptr && set->members.contains(a[i]) ? 1 : 0));
  }
  return KvReply::Array(std::move(out));
}

namespace {

// Members listed as Redis lists a set's: in numeric order for an intset, sorted for a hash table
// (whose order is its own).
KvReply Listed(std::vector<std::string> members, bool intset) {
  if (intset) {
    std::sort(members.begin(), members.end(), [](const std::string& x, const std::string& y) {
      return *ParseRedisInteger(x) < *ParseRedisInteger(y);
    });
  } else {
    std::sort(members.begin(), members.end());
  }
  std::vector<KvReply> out;
  for (std::string& m : members) out.push_back(KvReply::Bulk(std::move(m)));
  return KvReply::Array(std::move(out));
}

// Whether Redis keeps `members`, a new set made of them, as an intset.
bool AnIntset(const std::vector<std::string>& members) {
  return members.size() <= kIntsetMostEntries &&
         std::all_of(members.begin(), members.end(),
                     [](const std::string& m) { return ParseRedisInteger(m).has_value(); });
}

}  // namespace

KvReply MemoryKv::SMembers(Args a) {
  bool wrong = false;
  const StringSet* set = FindAs<StringSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (set == nullptr) return KvReply::Array({});
  return Listed({set->members.begin(), set->members.end()}, set->intset);
}

std::variant<std::vector<const MemoryKv::StringSet*>, KvReply> MemoryKv::SetsOf(Args a) {
  std::vector<const StringSet*> sets;
  for (size_t i = 1; i < a.size(); ++i) {
    bool wrong = false;
    sets.push_back(FindAs<StringSet>(a[i], &wrong));
    if (wrong) return kv_errors::WrongType();  // after a missing key too
  }
  return sets;
}

// The members of the smallest set (the first of the smallest) in all the others, in its order.
KvReply MemoryKv::SInter(Args a) {
  auto sets = SetsOf(a);
  if (auto* error = std::get_if<KvReply>(&sets)) return *error;
  const auto& all = std::get<std::vector<const StringSet*>>(sets);
  if (std::find(all.begin(), all.end(), nullptr) != all.end()) return KvReply::Array({});
  const StringSet* smallest = *std::min_element(
      all.begin(), all.end(),
      [](const StringSet* x, const StringSet* y) { return x->members.size() < y->members.size(); });
  std::vector<std::string> in_all;
  for (const std::string& m : smallest->members) {
    if (std::all_of(all.begin(), all.end(),
                    [&](const StringSet* s) { return s->members.contains(m); })) {
      in_all.push_back(m);
    }
  }
  return Listed(std::move(in_all), smallest->intset);
}

// A new set of the members of any: an intset while it can be one.
KvReply MemoryKv::SUnion(Args a) {
  auto sets = SetsOf(a);
  if (auto* error = std::get_if<KvReply>(&sets)) return *error;
  std::set<std::string> any;
  for (const StringSet* s : std::get<std::vector<const StringSet*>>(sets)) {
    if (s != nullptr) any.insert(s->members.begin(), s->members.end());
  }
  std::vector<std::string> members(any.begin(), any.end());
  const bool intset = AnIntset(members);
  return Listed(std::move(members), intset);
}

// A new set of the first's members in none of the others.
KvReply MemoryKv::SDiff(Args a) {
  auto sets = SetsOf(a);
  if (auto* error = std::get_if<KvReply>(&sets)) return *error;
  const auto& all = std::get<std::vector<const StringSet*>>(sets);
  std::vector<std::string> members;
  if (all[0] != nullptr) {
    for (const std::string& m : all[0]->members) {
      if (std::none_of(all.begin() + 1, all.end(), [&](const StringSet* s) {
            return s != nullptr && s->members.contains(m);
          })) {
        members.push_back(m);
      }
    }
  }
  const bool intset = AnIntset(members);
  return Listed(std::move(members), intset);
}

namespace {

// A count of SRANDMEMBER or HRANDFIELD below -LONG_MAX, as Redis 7.0 refuses it.
KvReply CountOutOfRange() {
  return KvReply::Error(
      "ERR value is out of range, value must between -9223372036854775807 and "
      "9223372036854775807");
}

// The most elements a draw with repetition answers: what a script's reply may hold. Redis would
// stream any count to its client (found by fuzz/lua_script.cc: SRANDMEMBER s -2^62 drew until
// malloc failed).
constexpr int64_t kMostDrawn = 1'000'000;

KvReply TooManyDrawn() {
  return KvReply::Error("ERR ratelab's in-process Redis draws at most " +
                        std::to_string(kMostDrawn) + " elements at once");
}

}  // namespace

std::vector<size_t> MemoryKv::Draw(size_t size, size_t count, bool repeat) {
  std::vector<size_t> out;
  std::vector<bool> taken(repeat ? 0 : size, false);
  if (!random_) random_.emplace(0);
  while (out.size() < count) {
    const size_t at = static_cast<size_t>((*random_)() % size);
    if (!repeat && taken[at]) continue;
    if (!repeat) taken[at] = true;
    out.push_back(at);
  }
  return out;
}

// SRANDMEMBER key [count]: a member drawn at random (nil: no set); with a count, that many
// distinct ones, or all of them (as SUNION lists a set) when it is at least the set's size; a
// negative count draws |count| with repetition. The count is read before the key.
KvReply MemoryKv::SRandMember(Args a) {
  if (a.size() > 3) return kv_errors::Syntax();
  std::optional<int64_t> count;
  if (a.size() == 3) {
    count = ParseRedisInteger(a[2]);
    if (!count) return kv_errors::NotInteger();
    if (*count == INT64_MIN) return CountOutOfRange();
  }
  bool wrong = false;
  const StringSet* set = FindAs<StringSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (set == nullptr) return count ? KvReply::Array({}) : KvReply::Nil();
  const std::vector<std::string> members(set->members.begin(), set->members.end());
  if (!count) return KvReply::Bulk(members[Draw(members.size(), 1, false)[0]]);
  if (*count >= static_cast<int64_t>(members.size())) return SUnion(a.subspan(0, 2));
  if (*count < -kMostDrawn) return TooManyDrawn();
  std::vector<KvReply> out;
  const bool repeat = *count < 0;
  for (size_t at : Draw(members.size(), static_cast<size_t>(repeat ? -*count : *count), repeat)) {
    out.push_back(KvReply::Bulk(members[at]));
  }
  return KvReply::Array(std::move(out));
}

// SPOP key [count]: SRANDMEMBER's draw without repetition, the members drawn removed (a set left
// empty deleted). The count must be at least 0, and is read before the key.
KvReply MemoryKv::SPop(Args a) {
  if (a.size() > 3) return kv_errors::Syntax();
  std::optional<int64_t> count;
  if (a.size() == 3) {
    count = ParseRedisInteger(a[2]);
    if (!count || *count < 0) return KvReply::Error("ERR value is out of range, must be positive");
  }
  bool wrong = false;
  StringSet* set = FindToChange<StringSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (set == nullptr) return count ? KvReply::Array({}) : KvReply::Nil();
  if (count && *count == 0) return KvReply::Array({});
  if (count && *count >= static_cast<int64_t>(set->members.size())) {
    KvReply all = SUnion(a.subspan(0, 2));
    Erase(a[1]);
    return all;
  }
  const std::vector<std::string> members(set->members.begin(), set->members.end());
  std::vector<KvReply> out;
  for (size_t at : Draw(members.size(), count ? static_cast<size_t>(*count) : 1, false)) {
    set->members.erase(members[at]);
    out.push_back(KvReply::Bulk(members[at]));
  }
  if (set->members.empty()) Erase(a[1]);
  return count ? KvReply::Array(std::move(out)) : out.front();
}

// HRANDFIELD key [count [WITHVALUES]]: a field drawn at random (nil: no hash); with a count, as
// SRANDMEMBER draws, all of them in the hash's order when it is at least its size, each with its
// value after it when asked.
KvReply MemoryKv::HRandField(Args a) {
  std::optional<int64_t> count;
  bool with_values = false;
  if (a.size() >= 3) {
    count = ParseRedisInteger(a[2]);
    if (!count) return kv_errors::NotInteger();
    if (*count == INT64_MIN) return CountOutOfRange();
    if (a.size() > 4 || (a.size() == 4 && absl::AsciiStrToLower(a[3]) != "withvalues")) {
      return kv_errors::Syntax();
    }
    with_values = a.size() == 4;
    if (with_values && (*count < -(INT64_MAX / 2) || *count > INT64_MAX / 2)) {
      return KvReply::Error("ERR value is out of range");
    }
  }
  bool wrong = false;
  const Hash* hash = FindAs<Hash>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (hash == nullptr) return count ? KvReply::Array({}) : KvReply::Nil();
  if (!count) return KvReply::Bulk((*hash)[Draw(hash->size(), 1, false)[0]].first);
  std::vector<size_t> picked;
  if (*count >= static_cast<int64_t>(hash->size())) {
    for (size_t i = 0; i < hash->size(); ++i) picked.push_back(i);
  } else {
    const bool repeat = *count < 0;
    if (*count < -kMostDrawn) return TooManyDrawn();
    picked = Draw(hash->size(), static_cast<size_t>(repeat ? -*count : *count), repeat);
  }
  std::vector<KvReply> out;
  for (size_t at : picked) {
    out.push_back(KvReply::Bulk((*hash)[at].first));
    if (with_values) out.push_back(KvReply::Bulk((*hash)[at].second));
  }
  return KvReply::Array(std::move(out));
}

}  // namespace ratelab
