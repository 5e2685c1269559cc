// MemoryKv's sets, as Redis 7.0 answers: SADD, SREM, SCARD, SISMEMBER, SMISMEMBER and SMEMBERS. A
// set of integers only (at most 512 of them) is Redis's intset, which lists its members in numeric
// order; any other is a hash table, whose order is its own and differs from run to run (MemoryKv
// lists such a set sorted: a script that needs an order sorts what it reads). A set that becomes
// empty is deleted.
#include <algorithm>

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

KvReply MemoryKv::SMembers(Args a) {
  bool wrong = false;
  const StringSet* set = FindAs<StringSet>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (set == nullptr) return KvReply::Array({});
  std::vector<std::string> members(set->members.begin(), set->members.end());
  if (set->intset) {
    std::sort(members.begin(), members.end(), [](const std::string& x, const std::string& y) {
      return *ParseRedisInteger(x) < *ParseRedisInteger(y);
    });
  }
  std::vector<KvReply> out;
  for (std::string& m : members) out.push_back(KvReply::Bulk(std::move(m)));
  return KvReply::Array(std::move(out));
}

}  // namespace ratelab
