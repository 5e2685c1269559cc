// MemoryDocs: an in-process simulation of a MongoDB server, for what limiters use (see docs.h for
// the commands). Single-document semantics as MongoDB documents them:
//   - filters: equality on top-level fields (null matches a missing field), and the operators
//     $eq $ne $lt $lte $gt $gte $in $nin $exists; comparisons only match within one type
//     bracket (numbers with numbers, strings with strings, dates with dates);
//   - updates: $set $unset $inc $setOnInsert, or a replacement document; $inc on a missing
//     field sets it, on a non-number fails (code 14);
//   - upsert: a filter that matches nothing inserts a document built from the filter's
//     equality fields, then updated; with no unique index, a filter that misses because of a
//     non-equality condition (count < 5) inserts a second document for the same key;
//   - unique indexes refuse a duplicate with E11000 (code 11000); `_id` is always unique;
//   - TTL indexes: a background monitor runs every 60 s (on whole minutes of the clock) and
//     deletes documents whose indexed field is a date older than expireAfterSeconds. A field
//     that holds a number, not a date, never expires, as in MongoDB.
//
// Time is the injected Clock's, in milliseconds. Restart() is a server restart under the
// configured Durability (none: everything is lost, indexes included; everysec: the writes of
// the unfinished second are lost; always: nothing is). ObjectIds are made from the clock and a
// counter, so runs are deterministic. Thread-safe: each Execute holds a lock.
#ifndef RATELAB_IMPL_STORE_MEMORY_DOCS_H_
#define RATELAB_IMPL_STORE_MEMORY_DOCS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "impl/core/clock.h"
#include "impl/core/state_size.h"
#include "impl/store/docs.h"
#include "impl/store/durability.h"
#include "impl/store/durable_snapshot.h"
#include "model/never_freed.h"

namespace ratelab {

namespace docs_query {
struct Failure;  // a command's error: code, codeName, errmsg (docs_query.h)
}  // namespace docs_query

class MemoryDocs final : public Docs {
 public:
  explicit MemoryDocs(const Clock& clock, Durability durability = Durability::kAlways);
  MemoryDocs(const MemoryDocs&) = delete;
  MemoryDocs& operator=(const MemoryDocs&) = delete;

  Result<Document> Execute(const Document& command) override;

  void Restart();
  Durability durability() const { return snapshot_.durability(); }
  // Documents live now, and the bytes of their JSON.
  StateSize Usage() const;

  // The documents that nothing will ever delete: their collection has no TTL index, or its field
  // is not a date. Each `name` says which ("rate_limits {userId: "u1", minute: 5}"); `fields` are
  // its string fields as they appear in a command's JSON ("\"userId\":\"u1\""), to find the
  // requests that wrote it.
  std::vector<NeverFreed> DocumentsWithoutExpiry() const;

 private:
  struct Index {
    std::string name;
    Document key;  // {field: 1, ...}
    bool unique = false;
    std::optional<int64_t> expire_after_s;
  };
  struct Collection {
    std::string name;
    std::map<uint64_t, Document> docs;  // by insertion sequence: natural order
    uint64_t next_seq = 0;
    // Every document's top-level scalar fields (LookupKey: field and value) to the documents
    // holding them: a filter with an equality reads only those, not the whole collection.
    std::unordered_map<std::string, std::set<uint64_t>> by_value;
    std::vector<Index> indexes;  // "_id_" first

    void Add(Document doc);
    void Replace(uint64_t seq, Document doc);
    void Erase(uint64_t seq);
    // The documents a filter can match, in natural order: those holding its first scalar
    // equality, or all.
    std::vector<uint64_t> Candidates(const Document& filter) const;
  };
  using Data = std::map<std::string, Collection, std::less<>>;
  using Failure = docs_query::Failure;

  struct Verb;  // a command's name, its fields' types, and what runs it (memory_docs.cc)

  Document Run(const Document& command);
  Document FindAndModify(const std::string& name, const Document& cmd);
  Document Find(const std::string& name, const Document& cmd);
  Document Insert(const std::string& name, const Document& cmd);
  Document Update(const std::string& name, const Document& cmd);
  Document Delete(const std::string& name, const Document& cmd);
  Document CreateIndexes(const std::string& name, const Document& cmd);

  Collection& Write(const std::string& name);
  // Inserts `doc` (giving it an _id), or names the unique index it would break.
  std::optional<Failure> InsertChecked(Collection& c, Document doc);
  // Replaces document `seq` with `doc` unless a unique index forbids it.
  std::optional<Failure> ReplaceChecked(Collection& c, uint64_t seq, Document doc);
  std::optional<Failure> UniqueConflict(const Collection& c, const Document& doc,
                                        std::optional<uint64_t> self) const;
  // The upsert: `filter`'s equality fields, updated by `update` as an insert.
  Document UpsertDocument(const Document& filter, const Document& update,
                          std::optional<Failure>& failure);
  Document NewObjectId();
  void RunTtlMonitor();

  const Clock& clock_;
  mutable std::mutex mu_;
  int64_t now_ms_ = 0;
  int64_t ttl_pass_minute_ = 0;  // the last whole minute the TTL monitor ran at
  uint64_t next_id_ = 1;
  Data data_;
  DurableSnapshot<Data> snapshot_;  // what a restart keeps, by collection
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_MEMORY_DOCS_H_
