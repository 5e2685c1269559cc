#include "impl/limiters/script_template.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "impl/limiters/expression.h"
#include "impl/limiters/kv_redis_recipes.h"

namespace ratelab {

namespace {

constexpr std::array<std::string_view, 17> kNames = {
    "key",         "key_crc32",    "limit",           "burst",
    "window_ms",   "window_s",     "rate_per_s",      "period_s",
    "cost",        "now_ms",       "now_us",          "now_s",
    "now_s_float", "window_index", "window_start_ms", "window_start_s",
    "request_id"};

std::string AllNames(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "{" : " {") + std::string(n) + "}";
  return out;
}

bool NameLike(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  }) && !std::isdigit(static_cast<unsigned char>(s[0]));
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::string Write(const ScriptTemplate::Value& v) {
  if (const std::string* s = std::get_if<std::string>(&v)) return *s;
  return JsNumber(std::get<double>(v));
}

}  // namespace

std::span<const std::string_view> ScriptTemplate::Names() { return kNames; }

bool ScriptTemplate::IsName(std::string_view text) { return NameLike(text); }

Result<ScriptTemplate> ScriptTemplate::Parse(std::string_view text) { return Parse(text, kNames); }

Result<ScriptTemplate> ScriptTemplate::Parse(std::string_view text,
                                             std::span<const std::string_view> names) {
  const auto known = [&](std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  ScriptTemplate t;
  std::string literal;
  const auto where = [&] { return " in '" + std::string(text) + "'"; };
  for (size_t at = 0; at < text.size();) {
    const char c = text[at];
    if ((c == '{' || c == '}') && at + 1 < text.size() && text[at + 1] == c) {
      literal += c;  // {{ or }}
      at += 2;
      continue;
    }
    if (c == '}') return absl::InvalidArgumentError("unmatched '}'" + where());
    if (c != '{') {
      literal += c;
      ++at;
      continue;
    }
    const size_t close = text.find('}', at);
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError("unmatched '{'" + where());
    }
    const std::string_view inside = Trim(text.substr(at + 1, close - at - 1));
    if (inside.empty()) return absl::InvalidArgumentError("an empty {}" + where());
    std::optional<Expression> expression;
    if (NameLike(inside)) {
      if (!known(inside)) {
        return absl::InvalidArgumentError("unknown placeholder '{" + std::string(inside) + "}'" +
                                          where() + " (expected " + AllNames(names) + ")");
      }
      t.names_.emplace_back(inside);
    } else {
      const auto bad = [&](std::string_view why) {
        return absl::InvalidArgumentError("bad expression '{" + std::string(inside) + "}'" +
                                          where() + ": " + std::string(why));
      };
      Result<Expression> e = Expression::Parse(inside, known);
      if (!e.ok()) return bad(std::string(e.status().message()));
      if (std::find(e->names().begin(), e->names().end(), "key") != e->names().end()) {
        return bad("'key' is text, not a number");
      }
      t.names_.insert(t.names_.end(), e->names().begin(), e->names().end());
      expression = *std::move(e);
    }
    if (!literal.empty()) t.pieces_.push_back({std::exchange(literal, ""), false, std::nullopt});
    t.pieces_.push_back({std::string(inside), true, std::move(expression)});
    at = close + 1;
  }
  if (!literal.empty()) t.pieces_.push_back({literal, false, std::nullopt});
  return t;
}

std::string ScriptTemplate::Expand(const Lookup& lookup) const {
  std::string out;
  for (const Piece& p : pieces_) {
    if (!p.placeholder) {
      out += p.text;
    } else if (!p.expression) {
      out += Write(lookup(p.text));
    } else {
      // Checked when parsed: every name is a number.
      const Expression::Lookup numbers = [&](std::string_view name) -> std::optional<double> {
        const Value v = lookup(name);
        if (const double* x = std::get_if<double>(&v)) return *x;
        return std::nullopt;
      };
      out += JsNumber(
          *(*Expression::Parse(p.text, [](std::string_view) { return true; })).Evaluate(numbers));
    }
  }
  return out;
}

}  // namespace ratelab
