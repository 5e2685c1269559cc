#include "impl/service/json_body.h"

#include <simdjson.h>

#include <nlohmann/json.hpp>

#include "impl/service/http.h"

namespace ratelab {

static_assert(kHttpBodyPadding >= simdjson::SIMDJSON_PADDING);

namespace {

using Type = TopLevelMembers::Type;

Status NotJson(std::string_view shape) {
  return absl::InvalidArgumentError("the body is not JSON; expected " + std::string(shape));
}

Status NotAnObject(Type type, std::string_view shape) {
  return absl::InvalidArgumentError("the body is " + std::string(Name(type)) + "; expected " +
                                    std::string(shape));
}

// nlohmann's parse events (json::sax_parse), kept for the top level.
class NlohmannEvents {
 public:
  explicit NlohmannEvents(TopLevelMembers& members) : members_(members) {}

  std::optional<Type> root() const { return root_; }

  bool null() { return Value(Type::kNull); }
  bool boolean(bool) { return Value(Type::kBoolean); }
  bool number_integer(nlohmann::json::number_integer_t) { return Value(Type::kNumber); }
  bool number_unsigned(nlohmann::json::number_unsigned_t) { return Value(Type::kNumber); }
  bool number_float(nlohmann::json::number_float_t, const std::string&) {
    return Value(Type::kNumber);
  }
  bool string(std::string& text) { return Value(Type::kString, text); }
  bool binary(nlohmann::json::binary_t&) { return false; }  // not in JSON text
  bool start_object(std::size_t) { return Open(Type::kObject); }
  bool key(std::string& name) {
    if (depth_ == 1) key_ = std::move(name);
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) { return Open(Type::kArray); }
  bool end_array() {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  // A value of `type` where the parse is now.
  bool Value(Type type, std::string_view text = {}) {
    if (depth_ == 0) root_ = type;
    if (depth_ == 1) members_.Add(key_, type, text);
    return true;
  }
  bool Open(Type type) {
    Value(type);
    ++depth_;
    return true;
  }

  TopLevelMembers& members_;
  std::optional<Type> root_;
  size_t depth_ = 0;
  std::string key_;  // of the top-level member whose value comes next
};

Type TypeOf(simdjson::dom::element_type type) {
  switch (type) {
    case simdjson::dom::element_type::STRING:
      return Type::kString;
    case simdjson::dom::element_type::BOOL:
      return Type::kBoolean;
    case simdjson::dom::element_type::NULL_VALUE:
      return Type::kNull;
    case simdjson::dom::element_type::OBJECT:
      return Type::kObject;
    case simdjson::dom::element_type::ARRAY:
      return Type::kArray;
    default:
      return Type::kNumber;
  }
}

}  // namespace

std::string_view Name(Type type) {
  switch (type) {
    case Type::kString:
      return "a string";
    case Type::kNumber:
      return "a number";
    case Type::kBoolean:
      return "a boolean";
    case Type::kNull:
      return "null";
    case Type::kObject:
      return "an object";
    case Type::kArray:
      return "an array";
  }
  return "a value";
}

void TopLevelMembers::Add(std::string_view name, Type type, std::string_view value) {
  members_.push_back(Member{std::string(name), type, std::string(value)});
}

Result<std::string> TopLevelMembers::String(std::string_view name,
                                            std::optional<std::string_view> fallback) const {
  // From the last: of two members with one name, the later counts.
  for (auto it = members_.rbegin(); it != members_.rend(); ++it) {
    const Member& m = *it;
    if (m.name != name) continue;
    if (m.type != Type::kString) {
      return absl::InvalidArgumentError(std::string(name) + ": expected a string, found " +
                                        std::string(Name(m.type)));
    }
    if (m.value.empty()) return absl::InvalidArgumentError(std::string(name) + ": empty");
    return m.value;
  }
  if (fallback) return std::string(*fallback);
  return absl::InvalidArgumentError(std::string(name) + ": missing");
}

struct JsonBodyReader::Parser {
  simdjson::dom::parser dom;
};

JsonBodyReader::JsonBodyReader() = default;

JsonBodyReader::~JsonBodyReader() = default;

JsonBodyReader::JsonBodyReader(JsonBodyReader&&) noexcept = default;

JsonBodyReader& JsonBodyReader::operator=(JsonBodyReader&&) noexcept = default;

Result<TopLevelMembers> JsonBodyReader::Read(const std::string& body, std::string_view shape) {
  if (parser_ == nullptr) parser_ = std::make_unique<Parser>();
  const bool padded = body.capacity() - body.size() >= simdjson::SIMDJSON_PADDING;
  simdjson::dom::element root;
  if (parser_->dom.parse(body.data(), body.size(), !padded).get(root) != simdjson::SUCCESS) {
    return ReadByNlohmann(body, shape);
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return NotAnObject(TypeOf(root.type()), shape);
  }
  TopLevelMembers members;
  for (const simdjson::dom::key_value_pair field : object) {
    const Type type = TypeOf(field.value.type());
    std::string_view text;
    if (type == Type::kString) text = field.value.get_string().value_unsafe();
    members.Add(field.key, type, text);
  }
  return members;
}

Result<TopLevelMembers> JsonBodyReader::ReadByNlohmann(std::string_view body,
                                                       std::string_view shape) {
  TopLevelMembers members;
  NlohmannEvents events(members);
  if (!nlohmann::json::sax_parse(body, &events)) return NotJson(shape);
  if (events.root() != Type::kObject) return NotAnObject(*events.root(), shape);
  return members;
}

}  // namespace ratelab
