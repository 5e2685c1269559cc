// MemoryKv's lists, as Redis 7.0 answers: pushes at either end, pops with an optional count,
// reads and trims by index (negative indices count from the tail), an element moved from one
// list's end to another's (LMOVE, RPOPLPUSH). A list that becomes empty is deleted.
#include <algorithm>
#include <deque>
#include <string>

#include "absl/strings/ascii.h"
#include "impl/store/memory_kv.h"
#include "impl/store/memory_kv_errors.h"

namespace ratelab {

namespace {

// [from, to] of a list of `size` from Redis's start and stop (negative: from the tail); empty
// (from > to) when the range holds nothing.
std::pair<int64_t, int64_t> Range(int64_t start, int64_t stop, int64_t size) {
  if (start < 0) start = std::max<int64_t>(0, size + start);
  if (stop < 0) stop = size + stop;
  stop = std::min(stop, size - 1);
  return {start, stop};
}

// Takes the element at `list`'s head, or its tail; the list must not be empty.
std::string TakeEnd(std::deque<std::string>& list, bool head) {
  std::string v = head ? std::move(list.front()) : std::move(list.back());
  if (head) {
    list.pop_front();
  } else {
    list.pop_back();
  }
  return v;
}

}  // namespace

KvReply MemoryKv::Push(Args a, bool head) {
  bool wrong = false;
  FindAs<List>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  List& list = WriteAs<List>(a[1]);
  for (size_t i = 2; i < a.size(); ++i) {
    if (head) {
      list.push_front(a[i]);
    } else {
      list.push_back(a[i]);
    }
  }
  return KvReply::Integer(static_cast<int64_t>(list.size()));
}

KvReply MemoryKv::LPush(Args a) { return Push(a, true); }
KvReply MemoryKv::RPush(Args a) { return Push(a, false); }

KvReply MemoryKv::Pop(Args a, bool head) {
  if (a.size() > 3) return kv_errors::Arity(head ? "lpop" : "rpop");
  std::optional<int64_t> count;
  if (a.size() == 3) {
    count = ParseRedisInteger(a[2]);
    if (!count || *count < 0) return KvReply::Error("ERR value is out of range, must be positive");
  }
  bool wrong = false;
  List* list = FindToChange<List>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (list == nullptr) return KvReply::Nil();
  KvReply out;
  if (!count) {
    out = KvReply::Bulk(TakeEnd(*list, head));
  } else {
    std::vector<KvReply> popped;
    for (int64_t i = 0; i < *count && !list->empty(); ++i) {
      popped.push_back(KvReply::Bulk(TakeEnd(*list, head)));
    }
    out = KvReply::Array(std::move(popped));
  }
  if (list->empty()) Erase(a[1]);
  return out;
}

KvReply MemoryKv::LPop(Args a) { return Pop(a, true); }
KvReply MemoryKv::RPop(Args a) { return Pop(a, false); }

KvReply MemoryKv::LLen(Args a) {
  bool wrong = false;
  const List* list = FindAs<List>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  return KvReply::Integer(list == nullptr ? 0 : static_cast<int64_t>(list->size()));
}

KvReply MemoryKv::LIndex(Args a) {
  bool wrong = false;
  const List* list = FindAs<List>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (list == nullptr) return KvReply::Nil();  // before the index is read, as Redis does
  const std::optional<int64_t> index = ParseRedisInteger(a[2]);
  if (!index) return kv_errors::NotInteger();
  const int64_t size = static_cast<int64_t>(list->size());
  const int64_t at = *index < 0 ? size + *index : *index;
  if (at < 0 || at >= size) return KvReply::Nil();
  return KvReply::Bulk((*list)[static_cast<size_t>(at)]);
}

// LPOS key element [RANK rank] [COUNT count] [MAXLEN len]: the index of the rank-th match (from
// the tail for a negative rank), or with COUNT an array of up to `count` of them (0: all), looking
// at no more than `len` elements (0: all). Options are read before the key.
KvReply MemoryKv::LPos(Args a) {
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t i = 3; i < a.size(); ++i) {
    const std::string option = absl::AsciiStrToUpper(a[i]);
    const bool more = i + 1 < a.size();
    if (option == "RANK" && more) {
      const std::optional<int64_t> r = ParseRedisInteger(a[++i]);
      if (!r) return kv_errors::NotInteger();
      if (*r == 0 || *r == INT64_MIN) {
        return KvReply::Error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
      }
      rank = *r;
    } else if ((option == "COUNT" || option == "MAXLEN") && more) {
      const std::optional<int64_t> n = ParseRedisInteger(a[++i]);
      if (!n) return kv_errors::NotInteger();
      if (*n < 0) return KvReply::Error("ERR " + option + " can't be negative");
      (option == "COUNT" ? count : maxlen) = *n;
    } else {
      return kv_errors::Syntax();
    }
  }
  bool wrong = false;
  const List* list = FindAs<List>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  std::vector<KvReply> found;
  if (list != nullptr) {
    const bool from_tail = rank < 0;
    const int64_t skip = (from_tail ? -rank : rank) - 1;  // matches passed over
    const auto size = static_cast<int64_t>(list->size());
    int64_t matches = 0;
    for (int64_t seen = 0; seen < size && (maxlen == 0 || seen < maxlen); ++seen) {
      const int64_t at = from_tail ? size - 1 - seen : seen;
      if ((*list)[static_cast<size_t>(at)] != a[2] || matches++ < skip) continue;
      found.push_back(KvReply::Integer(at));
      if (count != 0) {
        if (count < 0 || static_cast<int64_t>(found.size()) >= count) break;
      }
    }
  }
  if (count >= 0) return KvReply::Array(std::move(found));
  return found.empty() ? KvReply::Nil() : found.front();
}

KvReply MemoryKv::LRange(Args a) {
  const std::optional<int64_t> start = ParseRedisInteger(a[2]), stop = ParseRedisInteger(a[3]);
  if (!start || !stop) return kv_errors::NotInteger();
  bool wrong = false;
  const List* list = FindAs<List>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  std::vector<KvReply> out;
  if (list == nullptr) return KvReply::Array(std::move(out));
  const auto [from, to] = Range(*start, *stop, static_cast<int64_t>(list->size()));
  for (int64_t i = from; i <= to; ++i)
    out.push_back(KvReply::Bulk((*list)[static_cast<size_t>(i)]));
  return KvReply::Array(std::move(out));
}

KvReply MemoryKv::LTrim(Args a) {
  const std::optional<int64_t> start = ParseRedisInteger(a[2]), stop = ParseRedisInteger(a[3]);
  if (!start || !stop) return kv_errors::NotInteger();
  bool wrong = false;
  List* list = FindToChange<List>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (list == nullptr) return KvReply::Status("OK");
  const auto [from, to] = Range(*start, *stop, static_cast<int64_t>(list->size()));
  if (from > to) {
    Erase(a[1]);
    return KvReply::Status("OK");
  }
  list->erase(list->begin() + static_cast<std::ptrdiff_t>(to) + 1, list->end());
  list->erase(list->begin(), list->begin() + static_cast<std::ptrdiff_t>(from));
  return KvReply::Status("OK");
}

// LSET key index element: "no such key" for a missing list (before the index is read),
// "index out of range" past its ends.
KvReply MemoryKv::LSet(Args a) {
  bool wrong = false;
  List* list = FindAs<List>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (list == nullptr) return KvReply::Error("ERR no such key");
  const std::optional<int64_t> index = ParseRedisInteger(a[2]);
  if (!index) return kv_errors::NotInteger();
  const int64_t size = static_cast<int64_t>(list->size());
  const int64_t at = *index < 0 ? size + *index : *index;
  if (at < 0 || at >= size) return KvReply::Error("ERR index out of range");
  MarkDirty(a[1]);
  (*list)[static_cast<size_t>(at)] = a[3];
  return KvReply::Ok();
}

// LREM key count element: removes up to count of element from the head (from the tail when count
// is negative; every one when 0), and says how many.
KvReply MemoryKv::LRem(Args a) {
  const std::optional<int64_t> count = ParseRedisInteger(a[2]);
  if (!count) return kv_errors::NotInteger();
  bool wrong = false;
  List* list = FindToChange<List>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (list == nullptr) return KvReply::Integer(0);
  const uint64_t most = *count == 0  ? UINT64_MAX
                        : *count < 0 ? static_cast<uint64_t>(-(*count + 1)) + 1
                                     : static_cast<uint64_t>(*count);
  uint64_t removed = 0;
  List kept;
  if (*count >= 0) {
    for (std::string& element : *list) {
      if (removed < most && element == a[3]) {
        ++removed;
      } else {
        kept.push_back(std::move(element));
      }
    }
  } else {
    for (auto it = list->rbegin(); it != list->rend(); ++it) {
      if (removed < most && *it == a[3]) {
        ++removed;
      } else {
        kept.push_front(std::move(*it));
      }
    }
  }
  *list = std::move(kept);
  if (list->empty()) Erase(a[1]);
  return KvReply::Integer(static_cast<int64_t>(removed));
}

// LINSERT key BEFORE|AFTER pivot element: the list's new length, -1 without the pivot, 0 without
// the list.
KvReply MemoryKv::LInsert(Args a) {
  const std::string where = absl::AsciiStrToUpper(a[2]);
  if (where != "BEFORE" && where != "AFTER") return kv_errors::Syntax();
  bool wrong = false;
  List* list = FindAs<List>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (list == nullptr) return KvReply::Integer(0);
  const auto pivot = std::find(list->begin(), list->end(), a[3]);
  if (pivot == list->end()) return KvReply::Integer(-1);
  const size_t at = static_cast<size_t>(pivot - list->begin()) + (where == "AFTER" ? 1 : 0);
  MarkDirty(a[1]);
  list->insert(list->begin() + static_cast<std::ptrdiff_t>(at), a[4]);
  return KvReply::Integer(static_cast<int64_t>(list->size()));
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT: the element moved, or nil without the source.
// As Redis: the directions are read first, then the source's type, then the destination's,
// before anything moves; a list moved onto itself turns round.
KvReply MemoryKv::LMove(Args a) {
  const std::string from = absl::AsciiStrToUpper(a[3]), to = absl::AsciiStrToUpper(a[4]);
  for (const std::string& end : {from, to}) {
    if (end != "LEFT" && end != "RIGHT") return kv_errors::Syntax();
  }
  return Move(a[1], a[2], from == "LEFT", to == "LEFT");
}

// RPOPLPUSH source destination: LMOVE source destination RIGHT LEFT.
KvReply MemoryKv::RPopLPush(Args a) { return Move(a[1], a[2], false, true); }

KvReply MemoryKv::Move(const std::string& source, const std::string& destination, bool from_head,
                       bool to_head) {
  bool wrong = false;
  if (FindAs<List>(source, &wrong) == nullptr) {
    return wrong ? kv_errors::WrongType() : KvReply::Nil();
  }
  FindAs<List>(destination, &wrong);
  if (wrong) return kv_errors::WrongType();
  List& from = *FindToChange<List>(source, &wrong);
  std::string value = TakeEnd(from, from_head);
  // Emptied, it goes; but not when it is the destination too, which takes the element back.
  if (from.empty() && source != destination) Erase(source);
  List& into = WriteAs<List>(destination);
  if (to_head) {
    into.push_front(value);
  } else {
    into.push_back(value);
  }
  return KvReply::Bulk(std::move(value));
}

}  // namespace ratelab
