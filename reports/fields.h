// One field list per report struct, for writing it as JSON and reading it back: a struct lists
// its fields once, by their JSON names,
//
//   constexpr auto JsonFields(const WitnessStep*) {
//     return std::tuple{JsonField("label", &WitnessStep::label),
//                       JsonField("at_s", &WitnessStep::at_s)};
//   }
//
// (found by argument-dependent lookup), and ToJsonValue / ReadJsonValue walk that list, so a field
// cannot be written and forgotten on read. Every field is always written (an empty optional as
// null), so a report's layout does not depend on what it found. Values: strings, whole numbers,
// numbers, bools, instants (FormatUtc), std::optional (null when empty), std::vector (an array), a
// map of strings (an object), a struct with a field list (an object), and an enum with a
// ToJsonValue/ReadJsonValue pair of its own (its name). A field whose value needs more than its
// type says (a number within bounds, a duration written as an offset from UTC) names its own
// reader and writer; one added after reports were first written may be missing (`OrDefault`).
// A struct whose fields must agree with one another reads its fields (ReadJsonFields) and then
// checks them, in a ReadJsonValue of its own.
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

#include "judge/linearizability.h"
#include "model/check_id.h"
#include "model/time.h"
#include "reports/json_reader.h"

namespace ratelab {

// A field: its JSON name, its member, and how to read it when the plain read of its type is not
// enough (null for the plain one). A field with a writer of its own (kOwnWrite) has a reader of its
// own too, and its type needs no plain read or write.
template <typename T, typename M, bool kOwnWrite = false>
struct JsonFieldOf {
  static constexpr bool own_write = kOwnWrite;
  const char* name;
  M T::*member;
  void (*read)(const JsonReader& r, M& value) = nullptr;
  nlohmann::json (*write)(const M& value) = nullptr;
  // Whether a report may lack it (one written before it was): then it reads as M{}.
  bool may_be_missing = false;

  constexpr JsonFieldOf OrDefault() const {
    JsonFieldOf out = *this;
    out.may_be_missing = true;
    return out;
  }
};
template <typename T, typename M>
constexpr JsonFieldOf<T, M> JsonField(const char* name, M T::*member,
                                      void (*read)(const JsonReader&, M&) = nullptr) {
  return {name, member, read};
}
template <typename T, typename M>
constexpr JsonFieldOf<T, M, true> JsonField(const char* name, M T::*member,
                                            void (*read)(const JsonReader&, M&),
                                            nlohmann::json (*write)(const M&)) {
  return {name, member, read, write};
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
inline nlohmann::json ToJsonValue(CheckId v) { return CheckName(v); }
inline void ReadJsonValue(const JsonReader& r, CheckId& v) { v = r.Named(CheckIds(), "check"); }

// An instant as FormatUtc writes it.
inline nlohmann::json ToJsonValue(Instant v) { return FormatUtc(v); }
inline void ReadJsonValue(const JsonReader& r, Instant& v) {
  const std::optional<Instant> at = ParseInstant(r.String());
  if (!at) r.Report("expected a UTC time such as 2026-01-01T00:00:00Z");
  v = at.value_or(Instant{});
}

inline nlohmann::json ToJsonValue(LinearVerdict v) { return LinearVerdictName(v); }
inline void ReadJsonValue(const JsonReader& r, LinearVerdict& v) {
  v = r.Named<LinearVerdictInfo>(kLinearVerdicts, "verdict");
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
// The object of `v`'s fields.
template <HasJsonFields T>
nlohmann::json WriteJsonFields(const T& v) {
  nlohmann::json out = nlohmann::json::object();
  const auto write = [&](const auto& f) {
    const auto& member = v.*(f.member);
    if constexpr (std::remove_cvref_t<decltype(f)>::own_write) {
      out[f.name] = f.write(member);
    } else {
      out[f.name] = ToJsonValue(member);
    }
  };
  std::apply([&](const auto&... f) { (write(f), ...); },
             JsonFields(static_cast<const T*>(nullptr)));
  return out;
}
template <HasJsonFields T>
nlohmann::json ToJsonValue(const T& v) {
  return WriteJsonFields(v);
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
// `v`'s fields, from the object `r` is placed on.
template <HasJsonFields T>
void ReadJsonFields(const JsonReader& r, T& v) {
  const auto read = [&](const auto& f) {
    using M = std::remove_cvref_t<decltype(v.*(f.member))>;
    M& member = v.*(f.member);
    // An optional field may be null or missing; one a report may lack may be missing.
    std::optional<JsonReader> at;
    if constexpr (IsOptional<M>::value) {
      at = r.OptionalField(f.name);
    } else if (f.may_be_missing && !r.Has(f.name)) {
      at.reset();
    } else {
      at = r.Field(f.name);
    }
    if (!at) {
      member = M{};
    } else if constexpr (std::remove_cvref_t<decltype(f)>::own_write) {
      f.read(*at, member);
    } else if (f.read != nullptr) {
      f.read(*at, member);
    } else {
      ReadJsonValue(*at, member);
    }
  };
  std::apply([&](const auto&... f) { (read(f), ...); }, JsonFields(static_cast<const T*>(nullptr)));
}
template <HasJsonFields T>
void ReadJsonValue(const JsonReader& r, T& v) {
  ReadJsonFields(r, v);
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
