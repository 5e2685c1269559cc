#include "impl/store/docs_query.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>
#include <utility>

namespace ratelab::docs_query {

Document Failure::Reply() const {
  return Document{{"ok", 0}, {"errmsg", message}, {"code", code}, {"codeName", code_name}};
}

Document Failure::WriteError(size_t index) const {
  return Document{{"index", index}, {"code", code}, {"errmsg", message}};
}

Failure BadValue(std::string message) { return {kBadValue, "BadValue", std::move(message)}; }
Failure FailedToParse(std::string message) {
  return {kFailedToParse, "FailedToParse", std::move(message)};
}

bool IsWrapped(const Document& v, const char* tag) {
  return v.is_object() && v.size() == 1 && v.begin().key() == tag;
}
// A date is milliseconds within what a double holds exactly (2^53, some 285 000 years), as
// every real date is; a number past that is no date, so nothing overflows reading it.
bool IsDate(const Document& v) {
  if (!IsWrapped(v, "$date") || !v["$date"].is_number()) return false;
  constexpr double kLargest = 9007199254740992.0;  // 2^53
  const Document& ms = v["$date"];
  if (ms.is_number_unsigned()) return ms.get<uint64_t>() < static_cast<uint64_t>(kLargest);
  return std::fabs(ms.get<double>()) < kLargest;
}
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

namespace {

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

}  // namespace

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

namespace {
constexpr std::string_view kQueryOperators[] = {"$eq",  "$ne", "$lt",  "$lte",   "$gt",
                                                "$gte", "$in", "$nin", "$exists"};
}  // namespace

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

}  // namespace ratelab::docs_query
