// One field list per report struct, for writing it as JSON and reading it back: a struct lists
// its fields once, by their JSON names,
//
//   constexpr auto JsonFields(const WitnessStep*) {
//     return std::tuple{JsonField("label", &WitnessStep::label),
//                       JsonField("at_s", &WitnessStep::at_s)};
//   }
//
// (found by argument-dependent lookup), and ToJsonValue / ReadJsonValue walk that list, so a field
// cannot be written and forgotten on read. Values: strings, whole numbers, numbers, bools,
// std::optional (null when empty), std::vector (an array), a map of strings (an object), a struct
// with a field list (an object), and an enum with a ToJsonValue/ReadJsonValue pair of its own (its
// name).
#ifndef RATELAB_REPORTS_FIELDS_H_
#define RATELAB_REPORTS_FIELDS_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "model/invariant.h"
#include "reports/json_reader.h"

namespace ratelab {

// A field: its JSON name, its member, and how to read it when a plain read of its type is not
// enough (a number within bounds): null for the plain read.
template <typename T, typename M>
struct JsonFieldOf {
  const char* name;
  M T::*member;
  void (*read)(const JsonReader& r, M& value) = nullptr;
};
template <typename T, typename M>
constexpr JsonFieldOf<T, M> JsonField(const char* name, M T::*member,
                                      void (*read)(const JsonReader&, M&) = nullptr) {
  return {name, member, read};
}

template <typename T>
concept HasJsonFields = requires {
  JsonFields(static_cast<const T*>(nullptr));
};

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

// Enums by name.
inline nlohmann::json ToJsonValue(Invariant v) { return InvariantName(v); }
inline void ReadJsonValue(const JsonReader& r, Invariant& v) {
  v = r.Named(Invariants(), "invariant");
}

inline nlohmann::json ToJsonValue(const std::string& v) { return v; }
inline void ReadJsonValue(const JsonReader& r, std::string& v) { v = r.String(); }
inline nlohmann::json ToJsonValue(bool v) { return v; }
inline void ReadJsonValue(const JsonReader& r, bool& v) { v = r.Bool(); }
inline nlohmann::json ToJsonValue(double v) { return v; }
inline void ReadJsonValue(const JsonReader& r, double& v) { v = r.Number(); }
inline void ReadJsonValue(const JsonReader& r, std::optional<double>& v) { v = r.NumberOrNull(); }
// An object of strings, by name.
inline nlohmann::json ToJsonValue(const std::map<std::string, std::string>& v) { return v; }
inline void ReadJsonValue(const JsonReader& r, std::map<std::string, std::string>& v) {
  v.clear();
  for (const auto& [name, value] : r.Members()) v[name] = value.String();
}
template <typename I>
requires(std::is_integral_v<I> && !std::is_same_v<I, bool>) nlohmann::json ToJsonValue(I v) {
  return v;
}
template <typename I>
requires(std::is_integral_v<I> && !std::is_same_v<I, bool>) void ReadJsonValue(const JsonReader& r,
                                                                               I& v) {
  v = static_cast<I>(std::is_signed_v<I> ? r.Int() : static_cast<int64_t>(r.Unsigned()));
}

template <typename T>
nlohmann::json ToJsonValue(const std::optional<T>& v);
template <typename T>
nlohmann::json ToJsonValue(const std::vector<T>& v);
template <HasJsonFields T>
nlohmann::json ToJsonValue(const T& v);
template <typename T>
void ReadJsonValue(const JsonReader& r, std::optional<T>& v);
template <typename T>
void ReadJsonValue(const JsonReader& r, std::vector<T>& v);
template <HasJsonFields T>
void ReadJsonValue(const JsonReader& r, T& v);

template <typename T>
nlohmann::json ToJsonValue(const std::optional<T>& v) {
  return v ? ToJsonValue(*v) : nlohmann::json(nullptr);
}
template <typename T>
nlohmann::json ToJsonValue(const std::vector<T>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (const T& e : v) out.push_back(ToJsonValue(e));
  return out;
}
template <HasJsonFields T>
nlohmann::json ToJsonValue(const T& v) {
  nlohmann::json out = nlohmann::json::object();
  std::apply([&](const auto&... f) { ((out[f.name] = ToJsonValue(v.*(f.member))), ...); },
             JsonFields(static_cast<const T*>(nullptr)));
  return out;
}

template <typename T>
void ReadJsonValue(const JsonReader& r, std::optional<T>& v) {
  if (r.IsNull()) {
    v.reset();
    return;
  }
  v.emplace();
  ReadJsonValue(r, *v);
}
template <typename T>
void ReadJsonValue(const JsonReader& r, std::vector<T>& v) {
  v.clear();
  for (const JsonReader& e : r.Elements()) ReadJsonValue(e, v.emplace_back());
}
template <HasJsonFields T>
void ReadJsonValue(const JsonReader& r, T& v) {
  const auto read = [&](const auto& f) {
    auto& member = v.*(f.member);
    if (f.read != nullptr) {
      f.read(r.Field(f.name), member);
    } else if constexpr (IsOptional<std::remove_cvref_t<decltype(member)>>::value) {
      // An optional field may be null or missing.
      if (const std::optional<JsonReader> at = r.OptionalField(f.name)) {
        ReadJsonValue(*at, member);
      } else {
        member.reset();
      }
    } else {
      ReadJsonValue(r.Field(f.name), member);
    }
  };
  std::apply([&](const auto&... f) { (read(f), ...); }, JsonFields(static_cast<const T*>(nullptr)));
}

// A whole document of `T` read from `j`, or InvalidArgument with the path of the first problem.
template <HasJsonFields T>
Result<T> FromJsonFields(const nlohmann::json& j) {
  const JsonReader r(j);
  T out;
  ReadJsonValue(r, out);
  if (Status s = r.status(); !s.ok()) return s;
  return out;
}

}  // namespace ratelab

#endif  // RATELAB_REPORTS_FIELDS_H_
