// MemoryDocs' commands on a collection: findAndModify, find, insert, update, delete and
// createIndexes, each answered as MongoDB answers it (memory_docs.h).
#include <algorithm>
#include <string_view>
#include <utility>

#include "impl/store/docs_query.h"
#include "impl/store/memory_docs.h"
#include "impl/store/memory_docs_internal.h"

namespace ratelab {

Document MemoryDocs::FindAndModify(const std::string& name, const Document& cmd) {
  if (!cmd.contains("update")) {
    return FailedToParse("findAndModify needs an update (remove is not supported)").Reply();
  }
  const Document query = cmd.value("query", Document::object());
  const Document& update = cmd["update"];
  const bool upsert = cmd.value("upsert", false);
  const bool want_new = cmd.value("new", false);
  const Document fields = cmd.value("fields", Document::object());
  std::optional<Failure> failure = CheckFilter(query);
  if (failure) return failure->Reply();
  Collection& c = Write(name);
  for (uint64_t seq : c.Candidates(query)) {
    if (!Matches(c.docs.at(seq), query)) continue;
    Document before = c.docs.at(seq);
    Document updated = before;
    if ((failure = ApplyUpdate(updated, update, false))) return failure->Reply();
    if ((failure = ReplaceChecked(c, seq, updated))) return failure->Reply();
    return Document{{"lastErrorObject", {{"n", 1}, {"updatedExisting", true}}},
                    {"value", Project(want_new ? updated : before, fields)},
                    {"ok", 1}};
  }
  if (!upsert) {
    return Document{
        {"lastErrorObject", {{"n", 0}, {"updatedExisting", false}}}, {"value", nullptr}, {"ok", 1}};
  }
  Document doc = UpsertDocument(query, update, failure);
  if (failure) return failure->Reply();
  if ((failure = InsertChecked(c, doc))) return failure->Reply();
  return Document{
      {"lastErrorObject", {{"n", 1}, {"updatedExisting", false}, {"upserted", doc["_id"]}}},
      {"value", want_new ? Project(doc, fields) : Document()},
      {"ok", 1}};
}

Document MemoryDocs::Find(const std::string& name, const Document& cmd) {
  const Document filter = cmd.value("filter", Document::object());
  const Document projection = cmd.value("projection", Document::object());
  int64_t limit = cmd.value("limit", int64_t{0});
  if (limit < 0) limit = limit == std::numeric_limits<int64_t>::min() ? 0 : -limit;
  if (std::optional<Failure> failure = CheckFilter(filter)) return failure->Reply();
  Document batch = Document::array();
  if (auto it = data_.find(name); it != data_.end()) {
    for (uint64_t seq : it->second.Candidates(filter)) {
      const Document& doc = it->second.docs.at(seq);
      if (!Matches(doc, filter)) continue;
      batch.push_back(Project(doc, projection));
      if (limit > 0 && static_cast<int64_t>(batch.size()) >= limit) break;
    }
  }
  return Document{{"cursor", {{"firstBatch", batch}, {"id", 0}, {"ns", "ratelab." + name}}},
                  {"ok", 1}};
}

Document MemoryDocs::Insert(const std::string& name, const Document& cmd) {
  const Document docs = cmd.value("documents", Document());
  if (!docs.is_array() || docs.empty()) {
    return FailedToParse("insert needs a non-empty 'documents' array").Reply();
  }
  const bool ordered = cmd.value("ordered", true);
  Collection& c = Write(name);
  Document errors = Document::array();
  int64_t n = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (std::optional<Failure> f = InsertChecked(c, docs[i])) {
      errors.push_back(f->WriteError(i));
      if (ordered) break;
      continue;
    }
    ++n;
  }
  Document reply{{"n", n}};
  if (!errors.empty()) reply["writeErrors"] = errors;
  reply["ok"] = 1;
  return reply;
}

Document MemoryDocs::Update(const std::string& name, const Document& cmd) {
  const Document updates = cmd.value("updates", Document());
  if (!updates.is_array() || updates.empty()) {
    return FailedToParse("update needs a non-empty 'updates' array").Reply();
  }
  Collection& c = Write(name);
  Document errors = Document::array();
  Document upserted = Document::array();
  int64_t n = 0, modified = 0;
  for (size_t k = 0; k < updates.size(); ++k) {
    const Document& u = updates[k];
    const Document q = u.value("q", Document::object());
    const Document change = u.value("u", Document());
    const bool multi = u.value("multi", false);
    std::optional<Failure> failure = CheckFilter(q);
    bool matched_any = false;
    const std::vector<uint64_t> candidates = failure ? std::vector<uint64_t>{} : c.Candidates(q);
    for (uint64_t seq : candidates) {
      if (!Matches(c.docs.at(seq), q)) continue;
      matched_any = true;
      ++n;
      Document updated = c.docs.at(seq);
      if ((failure = ApplyUpdate(updated, change, false))) break;
      if (updated != c.docs.at(seq)) {
        if ((failure = ReplaceChecked(c, seq, std::move(updated)))) break;
        ++modified;
      }
      if (!multi) break;
    }
    if (!failure && !matched_any && u.value("upsert", false)) {
      Document doc = UpsertDocument(q, change, failure);
      if (!failure && !(failure = InsertChecked(c, doc))) {
        ++n;
        upserted.push_back(Document{{"index", k}, {"_id", doc["_id"]}});
      }
    }
    if (failure) {
      errors.push_back(failure->WriteError(k));
      break;  // ordered
    }
  }
  Document reply{{"n", n}, {"nModified", modified}};
  if (!upserted.empty()) reply["upserted"] = upserted;
  if (!errors.empty()) reply["writeErrors"] = errors;
  reply["ok"] = 1;
  return reply;
}

Document MemoryDocs::Delete(const std::string& name, const Document& cmd) {
  const Document deletes = cmd.value("deletes", Document());
  if (!deletes.is_array() || deletes.empty()) {
    return FailedToParse("delete needs a non-empty 'deletes' array").Reply();
  }
  int64_t n = 0;
  for (const Document& d : deletes) {
    const Document q = d.value("q", Document::object());
    const int64_t limit = d.value("limit", int64_t{0});
    if (std::optional<Failure> failure = CheckFilter(q)) return failure->Reply();
    if (!data_.contains(name)) continue;
    Collection& c = Write(name);
    for (uint64_t seq : c.Candidates(q)) {
      if (!Matches(c.docs.at(seq), q)) continue;
      c.Erase(seq);
      ++n;
      if (limit == 1) break;
    }
  }
  return Document{{"n", n}, {"ok", 1}};
}

Document MemoryDocs::CreateIndexes(const std::string& name, const Document& cmd) {
  const Document specs = cmd.value("indexes", Document());
  if (!specs.is_array() || specs.empty()) {
    return FailedToParse("createIndexes needs a non-empty 'indexes' array").Reply();
  }
  const bool existed = data_.contains(name);
  Collection& c = Write(name);
  const size_t before = c.indexes.size();
  for (const Document& spec : specs) {
    const Document key = spec.value("key", Document());
    if (!key.is_object() || key.empty()) {
      return FailedToParse("an index needs a non-empty 'key' object").Reply();
    }
    Index index{"", key, spec.value("unique", false), std::nullopt};
    for (auto f = key.begin(); f != key.end(); ++f) {
      if (std::optional<Failure> bad = CheckFieldName(f.key())) return bad->Reply();
      if (!index.name.empty()) index.name += "_";
      index.name += f.key() + "_" + f.value().dump();
    }
    index.name = spec.value("name", index.name);
    if (spec.contains("expireAfterSeconds")) {
      const Document& s = spec["expireAfterSeconds"];
      // MongoDB's bound, so that a date plus it never overflows.
      constexpr int64_t kLongestTtl = 2'147'483'647;
      const bool in_range =
          s.is_number_unsigned()
              ? s.get<uint64_t>() <= kLongestTtl
              : s.is_number_integer() && s.get<int64_t>() >= 0 && s.get<int64_t>() <= kLongestTtl;
      if (!in_range) {
        return Failure{kCannotCreateIndex, "CannotCreateIndex",
                       "TTL index 'expireAfterSeconds' option must be a whole number from 0 to "
                       "2147483647"}
            .Reply();
      }
      if (key.size() != 1) {
        return Failure{kCannotCreateIndex, "CannotCreateIndex",
                       "TTL indexes are single-field indexes, compound indexes do not support TTL"}
            .Reply();
      }
      index.expire_after_s = s.get<int64_t>();
    }
    const auto same = std::find_if(c.indexes.begin(), c.indexes.end(), [&](const Index& i) {
      return i.name == index.name || i.key == index.key;
    });
    if (same != c.indexes.end()) {
      if (same->name == index.name && same->key == index.key && same->unique == index.unique &&
          same->expire_after_s == index.expire_after_s) {
        continue;  // already there: creating it again changes nothing
      }
      return Failure{
          kIndexOptionsConflict, "IndexOptionsConflict",
          "An existing index has the same name or key as the requested index: " + same->name}
          .Reply();
    }
    if (index.unique) {
      Collection probe;
      probe.name = c.name;
      probe.indexes = {index};
      for (const auto& [seq, doc] : c.docs) {
        if (std::optional<Failure> f = UniqueConflict(probe, doc, std::nullopt)) {
          return f->Reply();
        }
        probe.Add(doc);
      }
    }
    c.indexes.push_back(std::move(index));
  }
  return Document{{"numIndexesBefore", before},
                  {"numIndexesAfter", c.indexes.size()},
                  {"createdCollectionAutomatically", !existed},
                  {"ok", 1}};
}

}  // namespace ratelab
