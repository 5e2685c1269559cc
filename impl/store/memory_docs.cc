#include "impl/store/memory_docs.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace ratelab {

namespace internal {

struct DocsFailure {
  int code;
  std::string code_name;
  std::string message;

  Document Reply() const {
    return Document{{"ok", 0}, {"errmsg", message}, {"code", code}, {"codeName", code_name}};
  }
  Document WriteError(size_t index) const {
    return Document{{"index", index}, {"code", code}, {"errmsg", message}};
  }
};

}  // namespace internal

namespace {

using Failure = internal::DocsFailure;

constexpr int kBadValue = 2;
constexpr int kFailedToParse = 9;
constexpr int kTypeMismatch = 14;
constexpr int kCommandNotFound = 59;
constexpr int kImmutableField = 66;
constexpr int kCannotCreateIndex = 67;
constexpr int kInvalidNamespace = 73;
constexpr int kIndexOptionsConflict = 85;

Failure BadValue(std::string message) { return {kBadValue, "BadValue", std::move(message)}; }
Failure FailedToParse(std::string message) {
  return {kFailedToParse, "FailedToParse", std::move(message)};
}

bool IsWrapped(const Document& v, const char* tag) {
  return v.is_object() && v.size() == 1 && v.begin().key() == tag;
}
bool IsDate(const Document& v) { return IsWrapped(v, "$date") && v["$date"].is_number(); }
int64_t DateMs(const Document& v) { return v["$date"].get<int64_t>(); }
// An object whose fields are query operators ({"$lt": 5}), not a value to compare with.
bool IsOperators(const Document& v) {
  return v.is_object() && !v.empty() && v.begin().key().starts_with('$') && !IsDate(v) &&
         !IsWrapped(v, "$oid");
}

// MongoDB's shell notation for a value in messages: strings quoted, dates as new Date(ms).
std::string Show(const Document& v) {
  if (IsDate(v)) return "new Date(" + std::to_string(DateMs(v)) + ")";
  if (IsWrapped(v, "$oid")) return "ObjectId('" + v["$oid"].get<std::string>() + "')";
  if (!v.is_object()) return v.dump();
  std::string out = "{";
  for (auto it = v.begin(); it != v.end(); ++it) {
    out += (it == v.begin() ? " " : ", ") + it.key() + ": " + Show(it.value());
  }
  return out + (v.empty() ? "}" : " }");
}

// The comparison order of two values in the same type bracket (numbers, strings, dates,
// booleans); nullopt across brackets, where MongoDB's comparison operators never match.
std::optional<int> Compare(const Document& a, const Document& b) {
  const auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  if (a.is_number() && b.is_number()) {
    if (a.is_number_integer() && b.is_number_integer()) {
      return sign(a.get<int64_t>(), b.get<int64_t>());
    }
    return sign(a.get<long double>(), b.get<long double>());
  }
  if (a.is_string() && b.is_string()) {
    return sign(a.get_ref<const std::string&>(), b.get_ref<const std::string&>());
  }
  if (IsDate(a) && IsDate(b)) return sign(DateMs(a), DateMs(b));
  if (a.is_boolean() && b.is_boolean()) return sign(a.get<bool>(), b.get<bool>());
  return std::nullopt;
}

// Equality as a filter means it: null matches a missing field; numbers match across types.
bool Equal(const Document* field, const Document& value) {
  if (value.is_null()) return field == nullptr || field->is_null();
  if (field == nullptr) return false;
  if (std::optional<int> c = Compare(*field, value)) return *c == 0;
  return *field == value;
}

const Document* FieldOf(const Document& doc, const std::string& name) {
  auto it = doc.find(name);
  return it == doc.end() ? nullptr : &*it;
}

std::optional<Failure> CheckFieldName(const std::string& name) {
  if (name.find('.') == std::string::npos) return std::nullopt;
  return BadValue("dotted field paths ('" + name + "') are not supported by MemoryDocs");
}

constexpr std::string_view kQueryOperators[] = {"$eq",  "$ne", "$lt",  "$lte",   "$gt",
                                                "$gte", "$in", "$nin", "$exists"};

// What is wrong with `filter`, checked whole before any document is read.
std::optional<Failure> CheckFilter(const Document& filter) {
  if (!filter.is_object()) return BadValue("the filter must be an object");
  for (auto it = filter.begin(); it != filter.end(); ++it) {
    if (it.key().starts_with('$')) return BadValue("unknown top level operator: " + it.key());
    if (std::optional<Failure> bad = CheckFieldName(it.key())) return bad;
    if (!IsOperators(it.value())) continue;
    for (auto op = it.value().begin(); op != it.value().end(); ++op) {
      if (std::find(std::begin(kQueryOperators), std::end(kQueryOperators), op.key()) ==
          std::end(kQueryOperators)) {
        return BadValue("unknown operator: " + op.key());
      }
      if ((op.key() == "$in" || op.key() == "$nin") && !op.value().is_array()) {
        return BadValue(op.key() + " needs an array");
      }
    }
  }
  return std::nullopt;
}

// Whether `doc` matches `filter`, which passed CheckFilter.
bool Matches(const Document& doc, const Document& filter) {
  for (auto it = filter.begin(); it != filter.end(); ++it) {
    const Document* field = FieldOf(doc, it.key());
    const Document& cond = it.value();
    if (!IsOperators(cond)) {
      if (!Equal(field, cond)) return false;
      continue;
    }
    for (auto op = cond.begin(); op != cond.end(); ++op) {
      const std::string& o = op.key();
      const Document& arg = op.value();
      bool ok;
      if (o == "$eq") {
        ok = Equal(field, arg);
      } else if (o == "$ne") {
        ok = !Equal(field, arg);
      } else if (o == "$in" || o == "$nin") {
        const bool found =
            std::any_of(arg.begin(), arg.end(), [&](const Document& v) { return Equal(field, v); });
        ok = o == "$in" ? found : !found;
      } else if (o == "$exists") {
        ok = (field != nullptr) == (arg.is_boolean() ? arg.get<bool>() : arg != 0);
      } else {  // $lt $lte $gt $gte
        const std::optional<int> c = field ? Compare(*field, arg) : std::nullopt;
        ok = c && (o == "$lt" ? *c < 0 : o == "$lte" ? *c <= 0 : o == "$gt" ? *c > 0 : *c >= 0);
      }
      if (!ok) return false;
    }
  }
  return true;
}

// `doc` through a projection ({f: 1} includes, {f: 0} excludes; _id stays unless excluded).
Document Project(const Document& doc, const Document& projection) {
  if (!projection.is_object() || projection.empty()) return doc;
  const auto on = [](const Document& v) { return v.is_boolean() ? v.get<bool>() : v != 0; };
  bool inclusion = false;
  for (auto it = projection.begin(); it != projection.end(); ++it) {
    inclusion = inclusion || (it.key() != "_id" && on(it.value()));
  }
  Document out = Document::object();
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const auto p = projection.find(it.key());
    const bool listed = p != projection.end();
    const bool keep = it.key() == "_id" ? !listed || on(*p)
                      : inclusion       ? listed && on(*p)
                                        : !listed || on(*p);
    if (keep) out[it.key()] = it.value();
  }
  return out;
}

// Applies `update` (operators, or a replacement) to `doc`; `inserting` for an upsert's insert
// ($setOnInsert applies).
std::optional<Failure> ApplyUpdate(Document& doc, const Document& update, bool inserting) {
  if (!update.is_object()) return FailedToParse("the update must be an object");
  const bool operators = !update.empty() && update.begin().key().starts_with('$');
  for (auto it = update.begin(); it != update.end(); ++it) {
    if (it.key().starts_with('$') != operators) {
      return FailedToParse("an update mixes operators and fields ('" + it.key() + "')");
    }
  }
  if (!operators) {  // a replacement keeps the _id
    if (update.contains("_id") && doc.contains("_id") && update["_id"] != doc["_id"]) {
      return Failure{kImmutableField, "ImmutableField",
                     "the (immutable) field '_id' was found to have been altered"};
    }
    Document replaced = Document::object();
    if (doc.contains("_id")) replaced["_id"] = doc["_id"];
    for (auto it = update.begin(); it != update.end(); ++it) replaced[it.key()] = it.value();
    doc = std::move(replaced);
    return std::nullopt;
  }
  for (auto op = update.begin(); op != update.end(); ++op) {
    const std::string& o = op.key();
    if (!op.value().is_object()) return FailedToParse("modifier " + o + " needs an object");
    for (auto f = op.value().begin(); f != op.value().end(); ++f) {
      const std::string& name = f.key();
      if (std::optional<Failure> bad = CheckFieldName(name)) return bad;
      if (name == "_id" && o != "$setOnInsert" && doc.contains("_id") && doc["_id"] != f.value()) {
        return Failure{kImmutableField, "ImmutableField",
                       "Performing an update on the path '_id' would modify the immutable field "
                       "'_id'"};
      }
      if (o == "$set" || (o == "$setOnInsert" && inserting)) {
        doc[name] = f.value();
      } else if (o == "$setOnInsert") {
        continue;
      } else if (o == "$unset") {
        doc.erase(name);
      } else if (o == "$inc") {
        const Document& by = f.value();
        if (!by.is_number()) {
          return Failure{
              kTypeMismatch, "TypeMismatch",
              "Cannot increment with non-numeric argument: {" + name + ": " + Show(by) + "}"};
        }
        const Document* current = FieldOf(doc, name);
        if (current == nullptr) {
          doc[name] = by;
        } else if (!current->is_number()) {
          return Failure{kTypeMismatch, "TypeMismatch",
                         "Cannot apply $inc to a value of non-numeric type. {_id: " +
                             Show(doc.value("_id", Document())) + "} has the field '" + name +
                             "' of non-numeric type " + std::string(current->type_name())};
        } else if (current->is_number_integer() && by.is_number_integer()) {
          doc[name] = current->get<int64_t>() + by.get<int64_t>();
        } else {
          doc[name] = current->get<double>() + by.get<double>();
        }
      } else {
        return FailedToParse("Unknown modifier: " + o +
                             ". Expected a valid update modifier or pipeline-style update "
                             "specified as an array");
      }
    }
  }
  return std::nullopt;
}

}  // namespace

namespace {

// The key under which `field: value` is looked up: two values that a filter's equality calls
// equal get the same key (numbers by their double value, whatever their type). Null (which also
// matches a missing field), objects and arrays get none.
std::optional<std::string> LookupKey(const std::string& field, const Document& value) {
  std::string tagged;
  if (value.is_string()) {
    tagged = "s" + value.get<std::string>();
  } else if (value.is_number()) {
    tagged = "n" + Document(value.get<double>()).dump();
  } else if (value.is_boolean()) {
    tagged = value.get<bool>() ? "t" : "f";
  } else if (IsDate(value)) {
    tagged = "d" + std::to_string(DateMs(value));
  } else if (IsWrapped(value, "$oid") && value["$oid"].is_string()) {
    tagged = "o" + value["$oid"].get<std::string>();
  } else {
    return std::nullopt;
  }
  return field + '\0' + tagged;
}

}  // namespace

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
    : clock_(clock), durability_(durability) {}

Result<Document> MemoryDocs::Execute(const Document& command) {
  std::lock_guard lock(mu_);
  now_ms_ = FloorDiv(ToUnixNanos(clock_.Now()), 1'000'000);
  SyncFinishedSeconds();
  RunTtlMonitor();
  return Run(command);
}

Document MemoryDocs::Run(const Document& command) {
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
  if (verb == "findAndModify") return FindAndModify(name, command);
  if (verb == "find") return Find(name, command);
  if (verb == "insert") return Insert(name, command);
  if (verb == "update") return Update(name, command);
  if (verb == "delete") return Delete(name, command);
  if (verb == "createIndexes") return CreateIndexes(name, command);
  return Failure{kCommandNotFound, "CommandNotFound", "no such command: '" + verb + "'"}.Reply();
}

MemoryDocs::Collection& MemoryDocs::Write(const std::string& name) {
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
  if (limit < 0) limit = -limit;
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
      if (!s.is_number_integer() || s.get<int64_t>() < 0) {
        return Failure{kCannotCreateIndex, "CannotCreateIndex",
                       "TTL index 'expireAfterSeconds' option must be a non-negative integer"}
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
      for (uint64_t seq : expired) c.Erase(seq);
    }
  }
}

void MemoryDocs::SyncFinishedSeconds() {
  if (durability_ != Durability::kEverySec) return;
  const int64_t second = FloorDiv(now_ms_, 1000);
  if (second <= synced_second_) return;
  durable_ = data_;
  synced_second_ = second;
}

void MemoryDocs::Restart() {
  std::lock_guard lock(mu_);
  now_ms_ = FloorDiv(ToUnixNanos(clock_.Now()), 1'000'000);
  switch (durability_) {
    case Durability::kNone:
      data_.clear();
      break;
    case Durability::kEverySec:
      SyncFinishedSeconds();
      data_ = durable_;
      break;
    case Durability::kAlways:
      break;
  }
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

std::vector<MemoryDocs::Immortal> MemoryDocs::DocumentsWithoutExpiry() const {
  std::lock_guard lock(mu_);
  std::vector<Immortal> out;
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
      Immortal m{name + " " + Show(shown), why, {}};
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
