#include "impl/store/memory_docs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include "impl/store/docs_query.h"

namespace ratelab {

using docs_query::ApplyUpdate;
using docs_query::BadValue;
using docs_query::CheckFieldName;
using docs_query::CheckFilter;
using docs_query::DateMs;
using docs_query::Equal;
using docs_query::FailedToParse;
using docs_query::Failure;
using docs_query::FieldOf;
using docs_query::IsDate;
using docs_query::IsOperators;
using docs_query::kCannotCreateIndex;
using docs_query::kCommandNotFound;
using docs_query::kIndexOptionsConflict;
using docs_query::kInvalidNamespace;
using docs_query::LookupKey;
using docs_query::Matches;
using docs_query::Project;
using docs_query::Show;

void MemoryDocs::Collection::Add(Document doc) {
  const uint64_t seq = next_seq++;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (std::optional<std::string> key = LookupKey(it.key(), it.value())) {
      by_value[*key].insert(seq);
    }
  }
  docs.emplace(seq, std::move(doc));
}

void MemoryDocs::Collection::Erase(uint64_t seq) {
  const Document& doc = docs.at(seq);
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::optional<std::string> key = LookupKey(it.key(), it.value());
    if (!key) continue;
    auto posting = by_value.find(*key);
    posting->second.erase(seq);
    if (posting->second.empty()) by_value.erase(posting);
  }
  docs.erase(seq);
}

void MemoryDocs::Collection::Replace(uint64_t seq, Document doc) {
  Erase(seq);
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (std::optional<std::string> key = LookupKey(it.key(), it.value())) {
      by_value[*key].insert(seq);
    }
  }
  docs.emplace(seq, std::move(doc));
}

std::vector<uint64_t> MemoryDocs::Collection::Candidates(const Document& filter) const {
  std::vector<uint64_t> out;
  for (auto it = filter.begin(); it != filter.end(); ++it) {
    if (IsOperators(it.value())) continue;
    const std::optional<std::string> key = LookupKey(it.key(), it.value());
    if (!key) continue;
    auto posting = by_value.find(*key);
    if (posting != by_value.end()) out.assign(posting->second.begin(), posting->second.end());
    return out;
  }
  for (const auto& [seq, doc] : docs) out.push_back(seq);
  return out;
}

MemoryDocs::MemoryDocs(const Clock& clock, Durability durability)
    : clock_(clock), snapshot_(durability) {}

Result<Document> MemoryDocs::Execute(const Document& command) {
  std::lock_guard lock(mu_);
  now_ms_ = FloorDiv(ToUnixNanos(clock_.Now()), 1'000'000);
  RunTtlMonitor();
  return Run(command);
}

namespace {

// The JSON types a command's fields take (a number for an integer may be written 1 or 1.0).
enum class FieldType { kObject, kArray, kBool, kInteger, kString };

struct Field {
  std::string_view name;
  FieldType type;
};

constexpr std::string_view TypeName(FieldType t) {
  constexpr std::string_view kNames[] = {"object", "array", "bool", "int", "string"};
  return kNames[static_cast<int>(t)];
}

bool HasType(const Document& value, FieldType t) {
  switch (t) {
    case FieldType::kObject:
      return value.is_object();
    case FieldType::kArray:
      return value.is_array();
    case FieldType::kBool:
      return value.is_boolean();
    case FieldType::kInteger:  // a whole number, which a double may hold too
      return value.is_number_integer() ||
             (value.is_number_float() && std::fabs(value.get<double>()) < 9e15 &&
              std::trunc(value.get<double>()) == value.get<double>());
    case FieldType::kString:
      return value.is_string();
  }
  return false;
}

// MongoDB's name for the type of `value`, in its TypeMismatch errors.
std::string_view JsonTypeName(const Document& value) {
  if (value.is_object()) return IsDate(value) ? "date" : "object";
  if (value.is_array()) return "array";
  if (value.is_boolean()) return "bool";
  if (value.is_number_integer()) return "long";
  if (value.is_number()) return "double";
  if (value.is_string()) return "string";
  return "null";
}

// The first of `fields` in `doc` that is not of its type: TypeMismatch naming its path as MongoDB
// does ("BSON field 'update.updates.upsert' is the wrong type 'string', expected type 'bool'").
std::optional<Failure> CheckFields(const Document& doc, std::span<const Field> fields,
                                   const std::string& path) {
  for (const Field& f : fields) {
    const auto it = doc.find(f.name);
    if (it == doc.end() || HasType(*it, f.type)) continue;
    return Failure{docs_query::kTypeMismatch, "TypeMismatch",
                   "BSON field '" + path + "." + std::string(f.name) + "' is the wrong type '" +
                       std::string(JsonTypeName(*it)) + "', expected type '" +
                       std::string(TypeName(f.type)) + "'"};
  }
  return std::nullopt;
}

using enum FieldType;
constexpr Field kFindAndModifyFields[] = {{"query", kObject},
                                          {"update", kObject},
                                          {"upsert", kBool},
                                          {"new", kBool},
                                          {"fields", kObject}};
constexpr Field kFindFields[] = {{"filter", kObject}, {"projection", kObject}, {"limit", kInteger}};
constexpr Field kInsertFields[] = {{"documents", kArray}, {"ordered", kBool}};
constexpr Field kUpdateFields[] = {{"updates", kArray}};
constexpr Field kUpdateItemFields[] = {
    {"q", kObject}, {"u", kObject}, {"multi", kBool}, {"upsert", kBool}};
constexpr Field kDeleteFields[] = {{"deletes", kArray}};
constexpr Field kDeleteItemFields[] = {{"q", kObject}, {"limit", kInteger}};
constexpr Field kCreateIndexesFields[] = {{"indexes", kArray}};
constexpr Field kIndexFields[] = {{"key", kObject}, {"unique", kBool}, {"name", kString}};

}  // namespace

// A command: its name, the types of its fields, and, for a batch, the field holding its items
// (each an object, with fields of their own types).
struct MemoryDocs::Verb {
  std::string_view name;
  Document (MemoryDocs::*run)(const std::string& collection, const Document& command);
  std::span<const Field> fields;
  std::string_view items = {};
  std::span<const Field> item_fields = {};
};

Document MemoryDocs::Run(const Document& command) {
  static constexpr Verb kVerbs[] = {
      {"findAndModify", &MemoryDocs::FindAndModify, kFindAndModifyFields},
      {"find", &MemoryDocs::Find, kFindFields},
      {"insert", &MemoryDocs::Insert, kInsertFields, "documents"},
      {"update", &MemoryDocs::Update, kUpdateFields, "updates", kUpdateItemFields},
      {"delete", &MemoryDocs::Delete, kDeleteFields, "deletes", kDeleteItemFields},
      {"createIndexes", &MemoryDocs::CreateIndexes, kCreateIndexesFields, "indexes", kIndexFields},
  };
  if (!command.is_object() || command.empty()) {
    return FailedToParse("a command must be a non-empty object").Reply();
  }
  const std::string& verb = command.begin().key();
  const Document& target = command.begin().value();
  if (!target.is_string() || target.get_ref<const std::string&>().empty()) {
    return Failure{kInvalidNamespace, "InvalidNamespace",
                   "collection name for '" + verb + "' must be a non-empty string"}
        .Reply();
  }
  const std::string& name = target.get_ref<const std::string&>();
  const auto it = std::find_if(std::begin(kVerbs), std::end(kVerbs),
                               [&](const Verb& v) { return v.name == verb; });
  if (it == std::end(kVerbs)) {
    return Failure{kCommandNotFound, "CommandNotFound", "no such command: '" + verb + "'"}.Reply();
  }
  if (std::optional<Failure> bad = CheckFields(command, it->fields, verb)) return bad->Reply();
  if (!it->items.empty() && command.contains(it->items)) {
    const std::string path = verb + "." + std::string(it->items);
    for (const Document& item : command[it->items]) {
      if (!item.is_object()) {
        return Failure{docs_query::kTypeMismatch, "TypeMismatch",
                       "BSON field '" + path + "' holds a '" + std::string(JsonTypeName(item)) +
                           "', expected type 'object'"}
            .Reply();
      }
      if (std::optional<Failure> bad = CheckFields(item, it->item_fields, path)) {
        return bad->Reply();
      }
    }
  }
  return (this->*it->run)(name, command);
}

MemoryDocs::Collection& MemoryDocs::Write(const std::string& name) {
  snapshot_.WillChange(data_, name, now_ms_);
  auto [it, created] = data_.try_emplace(name);
  if (created) {
    it->second.name = name;
    it->second.indexes.push_back({"_id_", Document{{"_id", 1}}, true, std::nullopt});
  }
  return it->second;
}

Document MemoryDocs::NewObjectId() {
  char hex[25];
  std::snprintf(hex, sizeof(hex), "%08llx%016llx",
                static_cast<unsigned long long>(now_ms_ / 1000) & 0xffffffffULL,
                static_cast<unsigned long long>(next_id_++));
  return Document{{"$oid", hex}};
}

std::optional<Failure> MemoryDocs::UniqueConflict(const Collection& c, const Document& doc,
                                                  std::optional<uint64_t> self) const {
  for (const Index& index : c.indexes) {
    if (!index.unique) continue;
    // Documents with the same key have an equal first field.
    const std::string& first = index.key.begin().key();
    const Document* value = FieldOf(doc, first);
    Document probe = Document::object();
    if (value != nullptr) probe[first] = *value;
    for (uint64_t j : c.Candidates(probe)) {
      if (self && *self == j) continue;
      bool same = true;
      for (auto f = index.key.begin(); f != index.key.end() && same; ++f) {
        const Document* mine = FieldOf(doc, f.key());
        same = Equal(FieldOf(c.docs.at(j), f.key()), mine ? *mine : Document());
      }
      if (!same) continue;
      Document key = Document::object();
      for (auto f = index.key.begin(); f != index.key.end(); ++f) {
        key[f.key()] = doc.value(f.key(), Document());
      }
      return Failure{kDuplicateKey, "DuplicateKey",
                     "E11000 duplicate key error collection: ratelab." + c.name +
                         " index: " + index.name + " dup key: " + Show(key)};
    }
  }
  return std::nullopt;
}

std::optional<Failure> MemoryDocs::InsertChecked(Collection& c, Document doc) {
  if (!doc.is_object()) return BadValue("a document must be an object");
  if (!doc.contains("_id")) {
    Document with_id = Document{{"_id", NewObjectId()}};
    for (auto it = doc.begin(); it != doc.end(); ++it) with_id[it.key()] = it.value();
    doc = std::move(with_id);
  }
  if (std::optional<Failure> f = UniqueConflict(c, doc, std::nullopt)) return f;
  c.Add(std::move(doc));
  return std::nullopt;
}

std::optional<Failure> MemoryDocs::ReplaceChecked(Collection& c, uint64_t seq, Document doc) {
  if (std::optional<Failure> f = UniqueConflict(c, doc, seq)) return f;
  c.Replace(seq, std::move(doc));
  return std::nullopt;
}

Document MemoryDocs::UpsertDocument(const Document& filter, const Document& update,
                                    std::optional<Failure>& failure) {
  Document doc = Document::object();
  for (auto it = filter.begin(); it != filter.end(); ++it) {
    if (!IsOperators(it.value())) {
      doc[it.key()] = it.value();
    } else if (it.value().contains("$eq")) {
      doc[it.key()] = it.value()["$eq"];
    }
  }
  if (!doc.contains("_id")) {
    Document with_id = Document{{"_id", NewObjectId()}};
    for (auto it = doc.begin(); it != doc.end(); ++it) with_id[it.key()] = it.value();
    doc = std::move(with_id);
  }
  failure = ApplyUpdate(doc, update, /*inserting=*/true);
  return doc;
}

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

void MemoryDocs::RunTtlMonitor() {
  const int64_t minute = FloorDiv(now_ms_, 60'000);
  if (minute <= ttl_pass_minute_) return;
  ttl_pass_minute_ = minute;
  const int64_t pass_ms = minute * 60'000;
  for (auto& [name, c] : data_) {
    for (const Index& index : c.indexes) {
      if (!index.expire_after_s) continue;
      const std::string& field = index.key.begin().key();
      std::vector<uint64_t> expired;
      for (const auto& [seq, doc] : c.docs) {
        const Document* v = FieldOf(doc, field);
        if (v != nullptr && IsDate(*v) && DateMs(*v) + *index.expire_after_s * 1000 < pass_ms) {
          expired.push_back(seq);
        }
      }
      if (!expired.empty()) snapshot_.WillChange(data_, name, now_ms_);
      for (uint64_t seq : expired) c.Erase(seq);
    }
  }
}

void MemoryDocs::Restart() {
  std::lock_guard lock(mu_);
  now_ms_ = FloorDiv(ToUnixNanos(clock_.Now()), 1'000'000);
  snapshot_.Restart(data_, now_ms_);
}

StateSize MemoryDocs::Usage() const {
  std::lock_guard lock(mu_);
  StateSize s;
  for (const auto& [name, c] : data_) {
    for (const auto& [seq, doc] : c.docs) {
      ++s.keys;
      s.bytes += static_cast<int64_t>(doc.dump().size());
    }
  }
  return s;
}

std::vector<NeverFreed> MemoryDocs::DocumentsWithoutExpiry() const {
  std::lock_guard lock(mu_);
  std::vector<NeverFreed> out;
  for (const auto& [name, c] : data_) {
    for (const auto& [seq, doc] : c.docs) {
      std::string why = "its collection has no TTL index";
      bool expires = false;
      for (const Index& i : c.indexes) {
        if (!i.expire_after_s) continue;
        const std::string& field = i.key.begin().key();
        const Document* v = FieldOf(doc, field);
        expires = expires || (v != nullptr && IsDate(*v));
        why = v == nullptr ? "it has no '" + field + "' field for the TTL index"
                           : "the TTL index is on '" + field + "', which holds a " +
                                 std::string(v->type_name()) + ", not a date";
      }
      if (expires) continue;
      Document shown = doc;
      shown.erase("_id");
      NeverFreed m{name + " " + Show(shown), why, {}};
      for (auto it = shown.begin(); it != shown.end(); ++it) {
        if (!it.value().is_string()) continue;
        std::string field = Document{{it.key(), it.value()}}.dump();
        m.fields.push_back(field.substr(1, field.size() - 2));
      }
      out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace ratelab
