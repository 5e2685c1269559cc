// Typed reading of a JSON document ratelab wrote (report.json, result.json): every field read
// as what it must be, and the first problem reported with its path, in words:
//
//   limiters[2].metrics.fairness: expected a number or null, found a string
//   limiters[0]: missing field 'name'
//
// never a library's message, never an exception. Reading goes on after a problem (returning
// empty values), so a reader reads straight through and asks once at the end.
#ifndef RATELAB_REPORTS_JSON_READER_H_
#define RATELAB_REPORTS_JSON_READER_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "model/named.h"

namespace ratelab {

class JsonReader {
 public:
  // Reads `root` (which must outlive the reader).
  explicit JsonReader(const nlohmann::json& root);

  // The value at the reader's place: the root, or a field or element of it (Field, At).
  JsonReader Field(const char* name) const;
  // The same, or nothing when the field is missing or null.
  std::optional<JsonReader> OptionalField(const char* name) const;
  // The elements of an array.
  std::vector<JsonReader> Elements() const;
  // The members of an object, by name.
  std::vector<std::pair<std::string, JsonReader>> Members() const;
  bool Has(const char* name) const;
  bool IsNull() const;

  std::string String() const;
  int64_t Int() const;
  uint64_t Unsigned() const;
  double Number() const;
  // A number from `low` to `high` (a finite one: JSON may hold 1e999); `low` when it is not.
  double NumberIn(double low, double high) const;
  // A whole number from 0 to `most`.
  uint64_t UnsignedUpTo(uint64_t most) const;
  bool Bool() const;
  std::optional<double> NumberOrNull() const;
  std::vector<std::string> Strings() const;
  std::vector<int64_t> Ints() const;
  std::vector<double> Numbers() const;
  // The value a string names in `table` (model/named.h): "unknown WHAT 'x' (expected a, b or
  // c)" and the table's first value when it names none.
  template <typename Row>
  IdOf<Row> Named(std::span<const Row> table, std::string_view what) const {
    const std::string name = String();
    if (const std::optional<IdOf<Row>> id = ratelab::Named(table, name)) return *id;
    Report("unknown " + std::string(what) + " '" + name + "' (expected " + NameChoices(table) +
           ")");
    return table.front().id;
  }

  // Records a problem with the value here ("PATH: what"), unless one was recorded before.
  void Report(const std::string& what) const;
  // OK, or InvalidArgument with the first problem met by this reader or any made from it.
  Status status() const;

 private:
  struct Shared {
    std::string first_problem;
  };
  JsonReader(const nlohmann::json* value, std::string path, std::shared_ptr<Shared> shared);
  // Records "PATH: what" unless a problem was already recorded; false.
  bool Problem(const std::string& what) const;
  // Whether the value is of the kind (by `ok`); records "expected EXPECTED, found KIND" if not.
  bool Expect(bool ok, const char* expected) const;

  const nlohmann::json* value_;  // null: missing (already reported)
  std::string path_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace ratelab

#endif  // RATELAB_REPORTS_JSON_READER_H_
