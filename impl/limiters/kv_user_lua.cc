#include "impl/limiters/kv_user_lua.h"

#include <array>
#include <cmath>

#include "absl/strings/str_split.h"
#include "impl/limiters/kv_seed002.h"

namespace ratelab {

namespace {

constexpr std::array<std::string_view, 11> kPlaceholders = {
    "key",      "limit", "burst",  "window_ms", "window_s", "rate_per_s",
    "period_s", "cost",  "now_ms", "now_us",    "now_s"};
constexpr std::array<std::string_view, 8> kFields = {
    "allowed",       "limited",  "remaining", "retry_after_ms",
    "retry_after_s", "reset_ms", "reset_s",   "_"};

// The items of a comma-separated list; none in an empty one.
std::vector<std::string> Split(std::string_view list) {
  if (list.empty()) return {};
  return absl::StrSplit(absl::string_view(list.data(), list.size()), ',');
}

// Calls `each(name)` for every {placeholder} of `item`; false when a brace is unmatched.
template <typename Each>
bool ForEachPlaceholder(const std::string& item, Each each) {
  for (size_t at = 0; at < item.size();) {
    const size_t open = item.find('{', at);
    if (open == std::string::npos) return item.find('}', at) == std::string::npos;
    const size_t close = item.find('}', open);
    if (close == std::string::npos) return false;
    each(item.substr(open + 1, close - open - 1), open, close);
    at = close + 1;
  }
  return true;
}

std::string Seconds(Duration d) { return JsNumber(static_cast<double>(d.count()) / 1e9); }

}  // namespace

Result<std::shared_ptr<const UserLuaScript>> ParseUserLua(std::string name, std::string body,
                                                          std::string_view keys,
                                                          std::string_view args,
                                                          std::string_view reply) {
  auto user = std::make_shared<UserLuaScript>(UserLuaScript{
      KvScript(std::move(name), std::move(body)), Split(keys), Split(args), Split(reply)});
  for (const auto& [list, what] : {std::pair{&user->keys, "--keys"}, {&user->args, "--args"}}) {
    for (const std::string& item : *list) {
      std::string bad;
      const bool balanced = ForEachPlaceholder(item, [&](const std::string& p, size_t, size_t) {
        if (p.empty() ||
            std::find(kPlaceholders.begin(), kPlaceholders.end(), p) == kPlaceholders.end()) {
          bad = p;
        }
      });
      if (!balanced) {
        return absl::InvalidArgumentError(std::string(what) + ": unmatched brace in '" + item +
                                          "'");
      }
      if (!bad.empty() || item.find("{}") != std::string::npos) {  // {} names nothing
        return absl::InvalidArgumentError(
            std::string(what) + ": unknown placeholder '{" + bad + "}' in '" + item +
            "' (expected {key} {limit} {burst} {window_ms} {window_s} {rate_per_s} {period_s} "
            "{cost} {now_ms} {now_us} {now_s})");
      }
    }
  }
  if (user->keys.empty()) return absl::InvalidArgumentError("--keys: name at least one key");
  bool decides = false;
  for (const std::string& f : user->reply) {
    if (std::find(kFields.begin(), kFields.end(), f) == kFields.end()) {
      return absl::InvalidArgumentError(
          "--reply: unknown field '" + f +
          "' (expected allowed, limited, remaining, retry_after_ms, retry_after_s, reset_ms, "
          "reset_s or _)");
    }
    decides = decides || f == "allowed" || f == "limited";
  }
  if (!decides) {
    return absl::InvalidArgumentError("--reply: name the field that says allowed or limited");
  }
  return std::shared_ptr<const UserLuaScript>(std::move(user));
}

std::string KvUserLua::Expand(const std::string& item, const Request& request) const {
  const int64_t ns = ToUnixNanos(request.now);
  const auto value = [&](const std::string& p) -> std::string {
    if (p == "key") return LimiterKey(request);
    if (p == "limit" || p == "burst") return std::to_string(policy_.limit);
    if (p == "window_ms") return JsNumber(static_cast<double>(policy_.window.count()) / 1e6);
    if (p == "window_s" || p == "period_s") return Seconds(policy_.window);
    if (p == "rate_per_s") return JsNumber(1e9 / static_cast<double>(policy_.window.count()));
    if (p == "cost") return std::to_string(request.cost);
    if (p == "now_ms") return std::to_string(FloorDiv(ns, 1'000'000));
    if (p == "now_us") return std::to_string(FloorDiv(ns, 1000));
    return std::to_string(FloorDiv(ns, 1'000'000'000));  // now_s
  };
  std::string out;
  size_t copied = 0;
  ForEachPlaceholder(item, [&](const std::string& p, size_t open, size_t close) {
    out += item.substr(copied, open - copied) + value(p);
    copied = close + 1;
  });
  return out + item.substr(copied);
}

Task<Result<Decision>> KvUserLua::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  std::vector<std::string> keys, args;
  for (const std::string& k : user_->keys) keys.push_back(Expand(k, request));
  for (const std::string& a : user_->args) args.push_back(Expand(a, request));
  const Result<KvReply> reply =
      co_await KvEval(ctx, kv_, user_->script, std::move(keys), std::move(args));
  if (!reply.ok()) co_return reply.status();
  const std::string& name = user_->script.name;
  if (reply->is_error()) {
    co_return absl::InvalidArgumentError(name + ": the script failed: " + reply->text);
  }
  const std::vector<KvReply> elements =
      reply->type == KvReply::Type::kArray ? reply->elements : std::vector<KvReply>{*reply};
  Decision d;
  d.limit = policy_.limit;
  for (size_t i = 0; i < user_->reply.size(); ++i) {
    const std::string& field = user_->reply[i];
    if (field == "_") continue;
    std::optional<int64_t> v = i < elements.size() ? elements[i].AsInteger() : std::nullopt;
    // Lua's false comes back as nil: for the fields that say yes or no, it says no.
    if (!v && i < elements.size() && elements[i].type == KvReply::Type::kNil &&
        (field == "allowed" || field == "limited")) {
      v = 0;
    }
    if (!v && i < elements.size() && elements[i].type == KvReply::Type::kBulk) {
      // A decimal in a string: truncated, as Redis truncates a Lua number.
      char* end = nullptr;
      const double x = std::strtod(elements[i].text.c_str(), &end);
      if (end != elements[i].text.c_str() && *end == '\0' && std::isfinite(x)) {
        v = static_cast<int64_t>(x);
      }
    }
    if (!v) {
      co_return absl::InvalidArgumentError(name + ": reply " + ToString(*reply) +
                                           " has no number for '" + field + "' at position " +
                                           std::to_string(i + 1));
    }
    if (field == "allowed") d.allowed = *v != 0;
    if (field == "limited") d.allowed = *v == 0;
    if (field == "remaining") d.remaining = std::max<int64_t>(0, *v);
    if (field == "retry_after_ms") d.retry_after = std::chrono::milliseconds(*v);
    if (field == "retry_after_s") d.retry_after = std::chrono::seconds(*v);
    if (field == "reset_ms") d.reset = request.now + std::chrono::milliseconds(*v);
    if (field == "reset_s") d.reset = request.now + std::chrono::seconds(*v);
  }
  if (d.allowed) d.retry_after = Duration(0);
  co_return d;
}

}  // namespace ratelab
