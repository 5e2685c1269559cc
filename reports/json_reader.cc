#include "reports/json_reader.h"

#include <limits>
#include <sstream>

namespace ratelab {

namespace {

using json = nlohmann::json;

std::string Kind(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    default:
      return "something else";
  }
}

}  // namespace

JsonReader::JsonReader(const json& root) : JsonReader(&root, "", std::make_shared<Shared>()) {}

JsonReader::JsonReader(const json* value, std::string path, std::shared_ptr<Shared> shared)
    : value_(value), path_(std::move(path)), shared_(std::move(shared)) {}

bool JsonReader::Problem(const std::string& what) const {
  if (shared_->first_problem.empty()) {
    shared_->first_problem = (path_.empty() ? "the document" : path_) + ": " + what;
  }
  return false;
}

bool JsonReader::Expect(bool ok, const char* expected) const {
  if (value_ == nullptr) return false;
  if (ok) return true;
  return Problem(std::string("expected ") + expected + ", found " + Kind(*value_));
}

void JsonReader::Report(const std::string& what) const {
  if (value_ != nullptr) Problem(what);
}

Status JsonReader::status() const {
  if (shared_->first_problem.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(shared_->first_problem);
}

JsonReader JsonReader::Field(const char* name) const {
  const std::string path = path_.empty() ? name : path_ + "." + name;
  if (!Expect(value_ != nullptr && value_->is_object(), "an object")) {
    return JsonReader(nullptr, path, shared_);
  }
  const auto it = value_->find(name);
  if (it == value_->end()) {
    Problem(std::string("missing field '") + name + "'");
    return JsonReader(nullptr, path, shared_);
  }
  return JsonReader(&*it, path, shared_);
}

std::optional<JsonReader> JsonReader::OptionalField(const char* name) const {
  if (!Has(name) || (*value_)[name].is_null()) return std::nullopt;
  return Field(name);
}

bool JsonReader::Has(const char* name) const {
  return value_ != nullptr && value_->is_object() && value_->contains(name);
}

bool JsonReader::IsNull() const { return value_ != nullptr && value_->is_null(); }

std::vector<JsonReader> JsonReader::Elements() const {
  std::vector<JsonReader> out;
  if (!Expect(value_ != nullptr && value_->is_array(), "an array")) return out;
  for (size_t i = 0; i < value_->size(); ++i) {
    out.push_back(JsonReader(&(*value_)[i], path_ + "[" + std::to_string(i) + "]", shared_));
  }
  return out;
}

std::vector<std::pair<std::string, JsonReader>> JsonReader::Members() const {
  std::vector<std::pair<std::string, JsonReader>> out;
  if (!Expect(value_ != nullptr && value_->is_object(), "an object")) return out;
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    out.emplace_back(it.key(), JsonReader(&it.value(), path_ + "." + it.key(), shared_));
  }
  return out;
}

std::string JsonReader::String() const {
  if (!Expect(value_ != nullptr && value_->is_string(), "a string")) return "";
  return value_->get<std::string>();
}

int64_t JsonReader::Int() const {
  const bool fits =
      value_ != nullptr &&
      (value_->is_number_integer() ||
       (value_->is_number_unsigned() &&
        value_->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
  if (!Expect(fits, "a whole number")) return 0;
  return value_->get<int64_t>();
}

uint64_t JsonReader::Unsigned() const {
  const bool fits =
      value_ != nullptr && (value_->is_number_unsigned() ||
                            (value_->is_number_integer() && value_->get<int64_t>() >= 0));
  if (!Expect(fits, "a whole number of 0 or more")) return 0;
  return value_->get<uint64_t>();
}

double JsonReader::Number() const {
  if (!Expect(value_ != nullptr && value_->is_number(), "a number")) return 0;
  return value_->get<double>();
}

double JsonReader::NumberIn(double low, double high) const {
  const double v = Number();
  if (!(v >= low && v <= high)) {
    std::ostringstream range;
    range << "expected a number from " << low << " to " << high;
    Report(range.str());
    return low;
  }
  return v;
}

uint64_t JsonReader::UnsignedUpTo(uint64_t most) const {
  const uint64_t v = Unsigned();
  if (v > most) {
    Report("expected a whole number from 0 to " + std::to_string(most));
    return 0;
  }
  return v;
}

bool JsonReader::Bool() const {
  if (!Expect(value_ != nullptr && value_->is_boolean(), "true or false")) return false;
  return value_->get<bool>();
}

std::optional<double> JsonReader::NumberOrNull() const {
  if (IsNull()) return std::nullopt;
  if (!Expect(value_ != nullptr && value_->is_number(), "a number or null")) return std::nullopt;
  return value_->get<double>();
}

std::vector<std::string> JsonReader::Strings() const {
  std::vector<std::string> out;
  for (const JsonReader& e : Elements()) out.push_back(e.String());
  return out;
}

std::vector<int64_t> JsonReader::Ints() const {
  std::vector<int64_t> out;
  for (const JsonReader& e : Elements()) out.push_back(e.Int());
  return out;
}

std::vector<double> JsonReader::Numbers() const {
  std::vector<double> out;
  for (const JsonReader& e : Elements()) out.push_back(e.Number());
  return out;
}

}  // namespace ratelab
