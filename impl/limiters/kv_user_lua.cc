#include "impl/limiters/kv_user_lua.h"

#include <array>
#include <cmath>

#include "absl/strings/str_split.h"
#include "impl/limiters/kv_redis_recipes.h"
#include "impl/limiters/window_offset.h"

namespace ratelab {

namespace {

// The longest time a reply may give (95 years in nanoseconds), so that now plus it is an instant.
constexpr double kLongestTime = 3e18;

constexpr std::array<std::string_view, 11> kFields = {
    "allowed",       "limited",  "remaining", "retry_after_ms",
    "retry_after_s", "reset_ms", "reset_s",   "wait_ms",
    "wait_us",       "wait_s",   "_"};

// The items of a comma-separated list; none in an empty one.
std::vector<std::string> Split(std::string_view list) {
  if (list.empty()) return {};
  return absl::StrSplit(absl::string_view(list.data(), list.size()), ',');
}

// The items of a comma-separated list of templates: a comma inside a placeholder
// ({min(limit,5)}) belongs to it. With `words`, the items are separated by spaces instead, and
// there is none between two spaces.
std::vector<std::string> SplitTemplates(std::string_view list, bool words = false) {
  std::vector<std::string> out;
  if (list.empty()) return out;
  std::string item;
  bool inside = false;
  for (size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    const bool doubled = i + 1 < list.size() && list[i + 1] == c;
    if (!inside && (c == '{' || c == '}') && doubled) {
      item += {c, c};  // a literal brace, kept for the template to read
      ++i;
      continue;
    }
    if (c == '{') inside = true;
    if (c == '}') inside = false;
    if (!inside && (words ? c == ' ' : c == ',')) {
      if (!words || !item.empty()) out.push_back(std::exchange(item, ""));
      continue;
    }
    item += c;
  }
  if (!words || !item.empty()) out.push_back(item);
  return out;
}

}  // namespace

Result<std::shared_ptr<const UserLuaScript>> ParseUserLua(std::string name, std::string body,
                                                          std::string_view keys,
                                                          std::string_view args,
                                                          std::string_view reply,
                                                          std::string_view decide) {
  auto user = std::make_shared<UserLuaScript>(
      UserLuaScript{KvScript(std::move(name), std::move(body)), {}, {}, Split(reply), {}});
  for (const auto& [list, text, what] :
       {std::tuple{&user->keys, keys, "--keys"}, std::tuple{&user->args, args, "--args"}}) {
    for (const std::string& item : SplitTemplates(text)) {
      Result<ScriptTemplate> t = ScriptTemplate::Parse(item);
      if (!t.ok())
        return absl::InvalidArgumentError(std::string(what) + ": " +
                                          std::string(t.status().message()));
      list->push_back(*std::move(t));
    }
  }
  if (user->keys.empty()) return absl::InvalidArgumentError("--keys: name at least one key");
  bool decides = false;
  for (const std::string& f : user->reply) {
    const bool known = std::find(kFields.begin(), kFields.end(), f) != kFields.end();
    if (!known && (decide.empty() || !ScriptTemplate::IsName(f))) {
      return absl::InvalidArgumentError(
          "--reply: unknown field '" + f +
          "' (expected allowed, limited, remaining, retry_after_ms, retry_after_s, reset_ms, "
          "reset_s, wait_ms, wait_us, wait_s or _; with --decide, any name)");
    }
    decides = decides || f == "allowed" || f == "limited";
  }
  if (!decide.empty()) {
    // Names: the reply's fields, then the templates' numbers.
    const auto& fields = user->reply;
    Result<Expression> e = Expression::Parse(decide, [&](std::string_view n) {
      const auto names = ScriptTemplate::Names();
      return (n != "_" && std::find(fields.begin(), fields.end(), n) != fields.end()) ||
             (n != "key" && std::find(names.begin(), names.end(), n) != names.end());
    });
    if (!e.ok()) {
      return absl::InvalidArgumentError("--decide: " + std::string(e.status().message()) + " in '" +
                                        std::string(decide) +
                                        "' (names: the --reply fields, and the templates' "
                                        "numbers such as limit)");
    }
    user->decide = *std::move(e);
  } else if (!decides) {
    return absl::InvalidArgumentError(
        "--reply: name the field that says allowed or limited, or give --decide");
  }
  return std::shared_ptr<const UserLuaScript>(std::move(user));
}

Result<std::vector<std::vector<ScriptTemplate>>> ParseSetup(std::span<const std::string> commands) {
  std::vector<std::vector<ScriptTemplate>> out;
  for (const std::string& command : commands) {
    std::vector<ScriptTemplate> words;
    for (const std::string& word : SplitTemplates(command, /*words=*/true)) {
      Result<ScriptTemplate> t = ScriptTemplate::Parse(word);
      if (!t.ok()) {
        return absl::InvalidArgumentError("--setup '" + command +
                                          "': " + std::string(t.status().message()));
      }
      words.push_back(*std::move(t));
    }
    if (words.empty()) return absl::InvalidArgumentError("--setup: a command is empty");
    out.push_back(std::move(words));
  }
  return out;
}

std::string_view ScriptErrorPolicyName(ScriptErrorPolicy policy) {
  return NameOf<NameRow<ScriptErrorPolicy>>(kScriptErrorPolicies, policy);
}

Result<ScriptErrorPolicy> ParseScriptErrorPolicy(std::string_view name) {
  using Row = NameRow<ScriptErrorPolicy>;
  if (const std::optional<ScriptErrorPolicy> p = Named<Row>(kScriptErrorPolicies, name)) return *p;
  return absl::InvalidArgumentError("'" + std::string(name) +
                                    "' is not an answer to a script error (expected " +
                                    NameChoices<Row>(kScriptErrorPolicies) + ")");
}

ScriptTemplate::Value UserScriptValue(std::string_view p, const Policy& policy,
                                      const Request& request, int64_t request_id) {
  const int64_t ns = ToUnixNanos(request.now);
  const double window = static_cast<double>(policy.window.count());
  const auto whole = [](int64_t v) { return static_cast<double>(v); };
  if (p == "key") return LimiterKey(request);
  if (p == "key_crc32") return whole(KeyCrc32(LimiterKey(request)));
  if (p == "limit" || p == "burst") return whole(policy.limit);
  if (p == "window_ms") return window / 1e6;
  if (p == "window_s" || p == "period_s") return window / 1e9;
  if (p == "rate_per_s") return 1e9 / window;
  if (p == "cost") return whole(request.cost);
  if (p == "request_id") return whole(request_id);
  if (p == "now_ms") return whole(FloorDiv(ns, 1'000'000));
  if (p == "now_us") return whole(FloorDiv(ns, 1000));
  if (p == "now_s") return whole(FloorDiv(ns, 1'000'000'000));
  if (p == "now_s_float") return static_cast<double>(ns) / 1e9;
  // The key's aligned window, which its window offset shifts.
  const int64_t offset = policy.OffsetOf(LimiterKey(request)).count();
  const int64_t index = FloorDiv(ns - offset, policy.window.count());
  if (p == "window_index") return whole(index);
  const int64_t start = index * policy.window.count() + offset;
  if (p == "window_start_ms") return whole(start) / 1e6;
  return whole(start) / 1e9;  // window_start_s
}

Result<Decision> ReadUserReply(const UserLuaScript& user, const KvReply& reply,
                               const Policy& policy, const Request& request, int64_t request_id) {
  const std::string& name = user.script.name;
  if (reply.is_error()) {
    if (user.on_error == ScriptErrorPolicy::kFail) {
      return absl::InvalidArgumentError(name + ": the script failed: " + reply.text);
    }
    Decision fallback;
    fallback.allowed = user.on_error == ScriptErrorPolicy::kAdmit;
    fallback.limit = policy.limit;
    fallback.fallback = true;
    return fallback;
  }
  const std::vector<KvReply> elements =
      reply.type == KvReply::Type::kArray ? reply.elements : std::vector<KvReply>{reply};
  Decision d;
  d.limit = policy.limit;
  std::vector<std::pair<std::string_view, double>> fields;  // for --decide
  for (size_t i = 0; i < user.reply.size(); ++i) {
    const std::string& field = user.reply[i];
    if (field == "_") continue;
    // The element as a number: an integer, or a string holding a decimal.
    std::optional<double> x;
    if (i < elements.size()) {
      if (std::optional<int64_t> n = elements[i].AsInteger()) {
        x = static_cast<double>(*n);
      } else if (elements[i].type == KvReply::Type::kBulk) {
        char* end = nullptr;
        const double parsed = std::strtod(elements[i].text.c_str(), &end);
        if (end != elements[i].text.c_str() && *end == '\0' && std::isfinite(parsed)) {
          x = parsed;
        }
      } else if (elements[i].type == KvReply::Type::kNil &&
                 (field == "allowed" || field == "limited")) {
        x = 0;  // Lua's false comes back as nil: for the fields that say yes or no, it says no
      }
    }
    // Beyond what a count or a time in nanoseconds can hold is not a number for it either.
    if (x && !(std::fabs(*x) < 9e15)) x.reset();
    if (!x) {
      return absl::InvalidArgumentError(name + ": reply " + ToString(reply) +
                                        " has no number for '" + field + "' at position " +
                                        std::to_string(i + 1));
    }
    fields.emplace_back(field, *x);
    // Counts are whole, as Redis truncates a Lua number; times may be fractions.
    const int64_t v = static_cast<int64_t>(*x);
    const bool is_time = field.starts_with("retry_after_") || field.starts_with("reset_") ||
                         field.starts_with("wait_");
    const double nanos = *x * (field.ends_with("_s") ? 1e9 : field.ends_with("_us") ? 1e3 : 1e6);
    if (is_time && !(std::fabs(nanos) < kLongestTime)) {
      return absl::InvalidArgumentError(name + ": reply " + ToString(reply) + ": '" + field +
                                        "' at position " + std::to_string(i + 1) +
                                        " is more than 95 years");
    }
    const Duration time(is_time ? std::llround(nanos) : 0);
    if (field == "allowed") d.allowed = v != 0;
    if (field == "limited") d.allowed = v == 0;
    if (field == "remaining") d.remaining = std::max<int64_t>(0, v);
    if (field == "retry_after_ms") d.retry_after = time;
    if (field == "retry_after_s") d.retry_after = time;
    if (field == "reset_ms") d.reset = request.now + time;
    if (field == "reset_s") d.reset = request.now + time;
    if (field.starts_with("wait_")) d.wait = std::max(Duration(0), time);
  }
  if (user.decide) {
    const Result<double> yes =
        user.decide->Evaluate([&](std::string_view n) -> std::optional<double> {
          for (const auto& [field, value] : fields) {
            if (field == n) return value;
          }
          const ScriptTemplate::Value v = UserScriptValue(n, policy, request, request_id);
          if (const double* x = std::get_if<double>(&v)) return *x;
          return std::nullopt;
        });
    if (!yes.ok())
      return absl::InvalidArgumentError(name +
                                        ": --decide: " + std::string(yes.status().message()));
    d.allowed = *yes != 0;
  }
  if (d.allowed) d.retry_after = Duration(0);
  if (!d.allowed) d.wait = Duration(0);
  return d;
}

Task<Result<Decision>> KvUserLua::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const ScriptTemplate::Lookup lookup = [&](std::string_view name) {
    return UserScriptValue(name, policy_, request, ctx.request());
  };
  // A key's setup, before its first request here (the library's limiter object made); every
  // request of the key runs it until one has (a concurrent one must not find it undone).
  std::string key = user_->setup.empty() ? std::string() : LimiterKey(request);
  if (!user_->setup.empty() && !set_up_.contains(key)) {
    for (const std::vector<ScriptTemplate>& command : user_->setup) {
      std::vector<std::string> argv;
      for (const ScriptTemplate& word : command) argv.push_back(word.Expand(lookup));
      const Result<KvReply> done = co_await KvCommand(ctx, kv_, std::move(argv));
      if (!done.ok()) co_return done.status();
      if (done->is_error()) {
        co_return absl::InvalidArgumentError(user_->script.name +
                                             ": a --setup command failed: " + done->text);
      }
    }
    set_up_.insert(std::move(key));
  }
  std::vector<std::string> argv = EvalArgv(user_->script, user_->keys.size(), user_->args.size());
  for (const ScriptTemplate& k : user_->keys) argv.push_back(k.Expand(lookup));
  for (const ScriptTemplate& a : user_->args) argv.push_back(a.Expand(lookup));
  const Result<KvReply> reply = co_await KvEval(ctx, kv_, user_->script, std::move(argv));
  if (!reply.ok()) co_return reply.status();
  co_return ReadUserReply(*user_, *reply, policy_, request, ctx.request());
}

}  // namespace ratelab
