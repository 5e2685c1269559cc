// Tables of named values: each enum that users see by name (in flags, files, JSON, reports) has
// one table of rows, each with its `id` and `name` (and whatever else the enum's users need).
// These are the one way between an id and its name: RowOf (the id's row), Named (the id a name
// names) and NameChoices ("a, b or c", for errors). Strings are for the edges only.
#ifndef RATELAB_MODEL_NAMED_H_
#define RATELAB_MODEL_NAMED_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ratelab {

template <typename Row>
using IdOf = std::remove_cvref_t<decltype(std::declval<Row>().id)>;

// The row of an enum that has a name and nothing else.
template <typename Id>
struct NameRow {
  Id id;
  std::string_view name;
};

// The row of `id`; every id has one (a table lists all of its enum's values).
template <typename Row>
constexpr const Row& RowOf(std::span<const Row> table, IdOf<Row> id) {
  for (const Row& row : table) {
    if (row.id == id) return row;
  }
  return table.front();  // unreachable for a table that lists every value
}

// The name of `id`.
template <typename Row>
constexpr std::string_view NameOf(std::span<const Row> table, IdOf<Row> id) {
  return RowOf(table, id).name;
}

// The id `name` names, or nullopt.
template <typename Row>
constexpr std::optional<IdOf<Row>> Named(std::span<const Row> table, std::string_view name) {
  for (const Row& row : table) {
    if (row.name == name) return row.id;
  }
  return std::nullopt;
}

// Names, for an error: "a, b or c".
inline std::string ListChoices(std::span<const std::string_view> names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  }
  return out;
}

// The name of every row that `keep` keeps (all of them unless given), for an error: "a, b or c".
template <typename Row, typename Keep>
std::string NameChoices(std::span<const Row> table, Keep keep) {
  std::vector<std::string_view> names;
  for (const Row& row : table) {
    if (keep(row)) names.push_back(row.name);
  }
  return ListChoices(names);
}
template <typename Row>
std::string NameChoices(std::span<const Row> table) {
  return NameChoices(table, [](const Row&) { return true; });
}

}  // namespace ratelab

#endif  // RATELAB_MODEL_NAMED_H_
