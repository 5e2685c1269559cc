// MongoDB's query language, as MemoryDocs speaks it (memory_docs.h): filters, projections and
// updates on one document, each failure the error MongoDB answers with (code, codeName,
// errmsg). Pure functions of their arguments; no store, no clock.
//
//   filters      equality on top-level fields (null matches a missing field; numbers match
//                across types), and $eq $ne $lt $lte $gt $gte $in $nin $exists; comparisons
//                only match within one type bracket (numbers, strings, dates, booleans);
//   projections  {f: 1} includes, {f: 0} excludes; _id stays unless excluded;
//   updates      $set $unset $inc $setOnInsert, or a replacement document (which keeps _id).
//
// Dotted field paths are refused (BadValue), not silently misread.
#ifndef RATELAB_IMPL_STORE_DOCS_QUERY_H_
#define RATELAB_IMPL_STORE_DOCS_QUERY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "impl/store/docs.h"

namespace ratelab::docs_query {

// A command's error, as MongoDB reports it.
struct Failure {
  int code;
  std::string code_name;
  std::string message;

  // The reply of a command that failed: {"ok": 0, "errmsg", "code", "codeName"}.
  Document Reply() const;
  // The write error of the `index`-th write of a batch.
  Document WriteError(size_t index) const;
};

// MongoDB's error codes (besides kDuplicateKey, in docs.h).
constexpr int kBadValue = 2;
constexpr int kFailedToParse = 9;
constexpr int kTypeMismatch = 14;
constexpr int kCommandNotFound = 59;
constexpr int kImmutableField = 66;
constexpr int kCannotCreateIndex = 67;
constexpr int kInvalidNamespace = 73;
constexpr int kIndexOptionsConflict = 85;

Failure BadValue(std::string message);
Failure FailedToParse(std::string message);

// Extended JSON: {"$date": unix ms}, {"$oid": "hex"}.
bool IsWrapped(const Document& v, const char* tag);
bool IsDate(const Document& v);
int64_t DateMs(const Document& v);
// An object whose fields are query operators ({"$lt": 5}), not a value to compare with.
bool IsOperators(const Document& v);
// MongoDB's shell notation for a value in messages: strings quoted, dates as new Date(ms).
std::string Show(const Document& v);

// Equality as a filter means it: null matches a missing field (`field` null); numbers match
// across types.
bool Equal(const Document* field, const Document& value);
// The top-level field `name` of `doc`, or null.
const Document* FieldOf(const Document& doc, const std::string& name);
// BadValue for a dotted path.
std::optional<Failure> CheckFieldName(const std::string& name);

// What is wrong with `filter`, checked whole before any document is read.
std::optional<Failure> CheckFilter(const Document& filter);
// Whether `doc` matches `filter`, which passed CheckFilter.
bool Matches(const Document& doc, const Document& filter);
// `doc` through a projection.
Document Project(const Document& doc, const Document& projection);
// Applies `update` (operators, or a replacement) to `doc`; `inserting` for an upsert's insert
// ($setOnInsert applies).
std::optional<Failure> ApplyUpdate(Document& doc, const Document& update, bool inserting);

// The key under which `field: value` is looked up in an index of values: two values that a
// filter's equality calls equal get the same key (numbers by their double value, whatever their
// type). Null (which also matches a missing field), objects and arrays get none.
std::optional<std::string> LookupKey(const std::string& field, const Document& value);

}  // namespace ratelab::docs_query

#endif  // RATELAB_IMPL_STORE_DOCS_QUERY_H_
