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
#include "impl/store/memory_docs_internal.h"

namespace ratelab {

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
