#include "impl/service/service.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "impl/core/text.h"
#include "impl/limiters/in_process_protocol.h"
#include "impl/rules/rules_json.h"
#include "impl/service/headers.h"

namespace ratelab {

namespace {

using Json = nlohmann::ordered_json;

const HttpHeader kJson{"Content-Type", "application/json"};

// An answer of JSON text `body`.
HttpResponse JsonTextAnswer(int status, std::string body, std::vector<HttpHeader> headers = {}) {
  headers.push_back(kJson);
  return HttpResponse{status, std::move(headers), std::move(body)};
}

// Bytes that are not UTF-8 (which only a caller's echoed text can hold) are written as U+FFFD,
// never thrown about.
HttpResponse JsonAnswer(int status, const Json& body, std::vector<HttpHeader> headers = {}) {
  return JsonTextAnswer(status, body.dump(-1, ' ', false, Json::error_handler_t::replace),
                        std::move(headers));
}

HttpResponse ErrorAnswer(int status, const std::string& error,
                         std::vector<HttpHeader> headers = {}) {
  return JsonAnswer(status, Json{{"error", error}}, std::move(headers));
}

// A request's own fault: a 400 saying what is wrong with it.
HttpResponse BadRequest(const Status& s) { return ErrorAnswer(400, std::string(s.message())); }

// What a caller is told of a store that failed: only the class of failure (the store's address
// and message go to the operator's log).
std::string StoreFailureClass(std::string_view store, const Status& s) {
  return std::string(store) + (absl::IsDeadlineExceeded(s) ? " did not answer in time" : " failed");
}

// A limiter's error: the request's own fault (400), or its store's (503; the operator's log has
// the store's own message).
HttpResponse Failed(const Status& s) {
  if (absl::IsInvalidArgument(s)) return BadRequest(s);
  return ErrorAnswer(503, StoreFailureClass("the store", s));
}

// The JSON object a body holds (a rule); InvalidArgument saying what it must be otherwise.
Result<nlohmann::json> BodyObject(const std::string& body, std::string_view shape) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError("the body is not JSON; expected " + std::string(shape));
  }
  if (!j.is_object()) {
    return absl::InvalidArgumentError("the body is " + std::string(JsonTypeName(j)) +
                                      "; expected " + std::string(shape));
  }
  return j;
}

HttpResponse NoSuchRule(std::string_view id) {
  return ErrorAnswer(404, "no rule has the id '" + std::string(id) + "'");
}

// A 409 when `rule`'s target is another rule's (or, when `new_id`, its id is taken at all).
std::optional<HttpResponse> Taken(const RuleSet& rules, const Rule& rule, bool new_id) {
  for (const Rule& r : rules.rules()) {
    if (new_id && r.rule_id == rule.rule_id) {
      return ErrorAnswer(409, "rule_id: '" + rule.rule_id + "' is taken (PUT replaces a rule)");
    }
    if (r.rule_id != rule.rule_id && r.scope_type == rule.scope_type &&
        r.scope_value == rule.scope_value && r.endpoint == rule.endpoint) {
      return ErrorAnswer(409, "the rule '" + r.rule_id + "' has the same target (" +
                                  std::string(Name(r.scope_type)) + " " + r.scope_value + " " +
                                  r.endpoint + ")");
    }
  }
  return std::nullopt;
}

// Equal secrets, compared in time that does not depend on where they differ.
bool SameSecret(std::string_view given, std::string_view secret) {
  unsigned char diff = given.size() != secret.size() ? 1 : 0;
  for (size_t i = 0; i < secret.size(); ++i) {
    diff |= static_cast<unsigned char>(secret[i] ^ (i < given.size() ? given[i] : 0));
  }
  return diff == 0;
}

// The rate-limit headers of the rule that answered, if one did; a denial without one (the store
// failed, fail-closed) still says when to come back.
std::vector<HttpHeader> HeadersOf(const RulesLimiter::Answer& a, Instant now) {
  if (!a.rule) {
    if (a.decision.allowed || a.decision.retry_after == kNever) return {};
    return {{"Retry-After", std::to_string(RetryAfterSeconds(a.decision.retry_after))}};
  }
  return RateLimitHeaders(a.decision, a.rule->ToPolicy(), a.rule->rule_id, now);
}

// "2026-01-01T00:01:00.000Z": the minute `now` is in, as JavaScript's toISOString writes it.
std::string Minute(Instant now) {
  const Duration minute = std::chrono::minutes(1);
  std::string text = FormatUtc(AlignedWindowStart(AlignedWindowIndex(now, minute), minute));
  if (text.find('.') == std::string::npos && !text.empty() && text.back() == 'Z') {
    text.insert(text.size() - 1, ".000");
  }
  return text;
}

}  // namespace

RuleSet SeedServiceRules() {
  const auto rule = [](std::string endpoint, Algorithm algorithm, int64_t max,
                       std::optional<int64_t> burst) {
    Rule r;
    r.scope_type = ScopeType::kUser;
    r.endpoint = std::move(endpoint);
    r.algorithm = algorithm;
    r.max_requests = max;
    r.window_seconds = 60;
    r.burst_size = burst;
    r.rule_id = DerivedRuleId(r.scope_type, r.scope_value, r.endpoint);
    return r;
  };
  return *RuleSet::Make({rule("/api/hit", Algorithm::kFixedWindow, 5, std::nullopt),
                         rule("*", Algorithm::kTokenBucket, 100, 100)});
}

namespace {

// The protocol of each algorithm on each store that a served rule may use.
struct StoreProtocol {
  std::string_view store;  // ProtocolInfo::store: "kv" or "sql"
  Algorithm algorithm;
  std::string_view protocol;
};
constexpr StoreProtocol kStoreProtocols[] = {
    {"kv", Algorithm::kFixedWindow, "kv-fixed-window-lua"},
    {"kv", Algorithm::kSlidingLog, "kv-sliding-log-lua"},
    {"kv", Algorithm::kTokenBucket, "kv-token-bucket-lua"},
    {"kv", Algorithm::kGcra, "kv-gcra-lua"},
    {"sql", Algorithm::kFixedWindow, "sql-fixed-window-upsert"},
    {"sql", Algorithm::kTokenBucket, "sql-token-bucket"},
};

std::string_view StoreOf(const Stores& stores) { return stores.sql != nullptr ? "sql" : "kv"; }

Result<std::string_view> StoreProtocolFor(std::string_view store, const Rule& rule,
                                          const ProtocolChoices& chosen) {
  for (const std::string& name : chosen) {
    const ProtocolInfo* info = FindProtocol(name);
    if (info != nullptr && info->store == store &&
        AlgorithmFromName(info->algorithm) == rule.algorithm) {
      return info->name;
    }
  }
  std::string enforced;
  for (const StoreProtocol& p : kStoreProtocols) {
    if (p.store != store) continue;
    if (p.algorithm == rule.algorithm) return p.protocol;
    enforced += (enforced.empty() ? "" : ", ") + std::string(Describe(p.algorithm).name);
  }
  return absl::InvalidArgumentError(
      "the rule '" + rule.ToString() + "' is " + std::string(Describe(rule.algorithm).name) +
      ", which no protocol enforces on " + (store == "sql" ? "PostgreSQL" : "Redis") + " (" +
      enforced + " do)");
}

}  // namespace

Status CheckProtocolChoices(const ProtocolChoices& chosen, bool store_is_sql) {
  const std::string_view store = store_is_sql ? "sql" : "kv";
  for (size_t i = 0; i < chosen.size(); ++i) {
    const ProtocolInfo* info = FindProtocol(chosen[i]);
    if (info == nullptr || (info->store != "kv" && info->store != "sql")) {
      return absl::InvalidArgumentError("'" + chosen[i] +
                                        "' is not a protocol on Redis or PostgreSQL (ratelab "
                                        "list protocols)");
    }
    if (info->store != store) {
      return absl::InvalidArgumentError(
          "'" + chosen[i] + "' runs on " + (info->store == "sql" ? "PostgreSQL" : "Redis") +
          ", and the counters are " + (store_is_sql ? "in PostgreSQL" : "not") +
          " (--store says where)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (FindProtocol(chosen[j])->algorithm == info->algorithm) {
        return absl::InvalidArgumentError("'" + chosen[j] + "' and '" + chosen[i] + "' are both " +
                                          std::string(info->algorithm) + ": choose one");
      }
    }
  }
  return absl::OkStatus();
}

RulesLimiter::ProtocolMaker StoreProtocols(const Stores& stores, ProtocolChoices chosen) {
  return
      [stores, chosen = std::move(chosen)](const Rule& rule) -> Result<std::unique_ptr<Protocol>> {
        Result<std::string_view> name = StoreProtocolFor(StoreOf(stores), rule, chosen);
        if (!name.ok()) return name.status();
        return MakeProtocol(*name, rule.ToPolicy(), stores);
      };
}

Status CheckStoreProtocol(const Stores& stores, const Rule& rule, const ProtocolChoices& chosen) {
  Result<std::string_view> name = StoreProtocolFor(StoreOf(stores), rule, chosen);
  if (!name.ok()) return name.status();
  return CheckProtocol(*name, rule.ToPolicy());
}

Status CheckStoreProtocols(const Stores& stores, const RuleSet& rules,
                           const ProtocolChoices& chosen) {
  for (const Rule& r : rules.rules()) {
    if (Status s = CheckStoreProtocol(stores, r, chosen); !s.ok()) return s;
  }
  return absl::OkStatus();
}

RulesLimiter::ProtocolMaker InProcessProtocols() {
  return [](const Rule& rule) {
    const Policy policy = rule.ToPolicy();
    return MakeProtocol("memory-" + std::string(Describe(policy.algorithm).name), policy, Stores{});
  };
}

RulesLimiter::ProtocolMaker SharedInProcessLimiters::Maker() {
  return [this](const Rule& rule) -> Result<std::unique_ptr<Protocol>> {
    const Policy policy = rule.ToPolicy();
    if (const std::optional<std::string> problem = policy.Problem()) {
      return absl::InvalidArgumentError("the rule '" + rule.ToString() + "': " + *problem);
    }
    std::lock_guard lock(mutex_);
    for (const Entry& e : limiters_) {
      if (e.rule_id == rule.rule_id && e.policy == policy) {
        return std::make_unique<InProcessProtocol>(e.limiter);
      }
    }
    limiters_.push_back(
        Entry{rule.rule_id, policy, MakeInProcessLimiter(policy, max_keys_per_rule_)});
    return std::make_unique<InProcessProtocol>(limiters_.back().limiter);
  };
}

int64_t SharedInProcessLimiters::DropIdle(Instant now) {
  std::vector<std::shared_ptr<InProcessLimiter>> limiters;
  {
    std::lock_guard lock(mutex_);
    for (const Entry& e : limiters_) limiters.push_back(e.limiter);
  }
  int64_t dropped = 0;
  for (const std::shared_ptr<InProcessLimiter>& l : limiters) dropped += l->DropIdle(now);
  return dropped;
}

ServiceMetrics::Keys SharedInProcessLimiters::keys() {
  std::lock_guard lock(mutex_);
  ServiceMetrics::Keys keys;
  for (const Entry& e : limiters_) {
    keys.held += e.limiter->KeyCount();
    const InProcessLimiter::Evictions dropped = e.limiter->evictions();
    keys.dropped_idle += dropped.idle;
    keys.evicted_in_use += dropped.in_use;
  }
  return keys;
}

void ServiceState::LogFailure(std::string_view what, const Status& status, Instant now) {
  if (!log_) return;
  std::string line;
  {
    std::lock_guard lock(log_mutex_);
    if (last_logged_ && now - *last_logged_ < std::chrono::seconds(1) && now >= *last_logged_) {
      ++left_out_;
      return;
    }
    line = std::string(what) + " failed: " + std::string(status.message());
    if (left_out_ > 0) {
      line += " (and " + std::to_string(left_out_) + " more failures in the last " +
              FormatDuration(now - *last_logged_) + ")";
    }
    last_logged_ = now;
    left_out_ = 0;
  }
  log_(line);
}

const std::array<RateLimitService::Route, 11> RateLimitService::kRoutes = {{
    {"GET", "/metrics", false, false, &RateLimitService::Metrics},
    {"POST", "/ratelimit/check", false, false, &RateLimitService::Check},
    {"*", "/ratelimit/auth", false, false, &RateLimitService::Auth},
    {"POST", "/api/hit", false, false, &RateLimitService::Hit},
    {"GET", "/api/usage/", true, false, &RateLimitService::Usage},
    {"GET", "/healthz", false, false, &RateLimitService::Health},
    {"GET", "/ratelimit/rules", false, true, &RateLimitService::ListRules},
    {"POST", "/ratelimit/rules", false, true, &RateLimitService::CreateRule},
    {"GET", "/ratelimit/rules/", true, true, &RateLimitService::GetRule},
    {"PUT", "/ratelimit/rules/", true, true, &RateLimitService::ReplaceRule},
    {"DELETE", "/ratelimit/rules/", true, true, &RateLimitService::DeleteRule},
}};

HttpResponse RateLimitService::RulesStoreFailed(const Status& s, Instant now) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
      return BadRequest(s);
    case absl::StatusCode::kNotFound:
      return ErrorAnswer(404, std::string(s.message()));
    case absl::StatusCode::kFailedPrecondition:
      return ErrorAnswer(405, std::string(s.message()), {{"Allow", "GET"}});
    default:
      shared_->LogFailure("the rules store", s, now);
      return ErrorAnswer(503, StoreFailureClass("the rules store", s));
  }
}

Result<std::string> RateLimitService::Identity(std::string_view field, std::string value) const {
  // A header's bytes are checked by nobody before; a body's are JSON's, so UTF-8 already.
  if (!IsUtf8(value)) return absl::InvalidArgumentError(std::string(field) + ": not UTF-8");
  const size_t most = shared_->options().max_key_bytes;
  if (value.size() > most) {
    return absl::InvalidArgumentError(std::string(field) + ": " + std::to_string(value.size()) +
                                      " bytes, more than the " + std::to_string(most) +
                                      " an identity may have");
  }
  return value;
}

Result<std::string> RateLimitService::Endpoint(std::string_view field,
                                               std::string_view value) const {
  Result<std::string> path = NormalizePath(value, shared_->options().paths, field);
  if (!path.ok()) return path.status();
  return Identity(field, *std::move(path));
}

Task<HttpResponse> RateLimitService::Handle(Context& ctx, const HttpRequest& request, Instant now) {
  // Echoed in a 404 or 405 and matched below: it must be text.
  if (!IsUtf8(request.path)) co_return ErrorAnswer(400, "the path is not UTF-8");
  std::string allow;
  for (const Route& route : kRoutes) {
    std::string_view id;
    if (route.id) {
      const std::string_view path = request.path;
      if (!path.starts_with(route.path)) continue;
      id = path.substr(route.path.size());
      if (id.empty() || id.find('/') != std::string_view::npos) continue;
    } else if (route.path != request.path) {
      continue;
    }
    if (route.method != "*" && route.method != request.method) {
      allow += (allow.empty() ? "" : ", ") + std::string(route.method);
      continue;
    }
    if (route.admin) {
      if (std::optional<HttpResponse> refused = Refusal(request)) co_return *std::move(refused);
    }
    HttpResponse r = co_await (this->*route.handle)(ctx, request, now, id);
    co_return r;
  }
  if (!allow.empty()) {
    co_return ErrorAnswer(405, request.method + " " + request.path + " is not served; use " + allow,
                          {{"Allow", allow}});
  }
  co_return ErrorAnswer(404, "no such endpoint: " + request.method + " " + request.path);
}

Task<HttpResponse> RateLimitService::Check(Context& ctx, const HttpRequest& request, Instant now,
                                           std::string_view) {
  Result<TopLevelMembers> body =
      bodies_.Read(request.body, R"({"user_id": ..., "endpoint": ..., "scope": ...})");
  if (!body.ok()) co_return BadRequest(body.status());
  Result<std::string> user = body->String("user_id");
  if (user.ok()) user = Identity("user_id", *std::move(user));
  if (!user.ok()) co_return BadRequest(user.status());
  Result<std::string> endpoint = body->String("endpoint");
  if (endpoint.ok()) endpoint = Endpoint("endpoint", *endpoint);
  if (!endpoint.ok()) co_return BadRequest(endpoint.status());
  Result<std::string> scope = body->String("scope", "user");
  if (!scope.ok()) co_return BadRequest(scope.status());
  const Request decided{*std::move(scope), *std::move(user), *std::move(endpoint), 1, now};
  Result<RulesLimiter::Answer> a = co_await Decide(ctx, decided);
  if (!a.ok()) co_return Failed(a.status());
  const Decision& d = a->decision;
  // Written as Json{...}.dump() would write it, without building the document.
  std::string out;
  if (d.allowed) {
    out = absl::StrCat(R"({"allowed":true,"remaining":)", d.remaining, R"(,"limit":)", d.limit,
                       R"(,"reset":)", ResetUnixSeconds(d, now), "}");
  } else {
    out = absl::StrCat(R"({"allowed":false,"remaining":0,"limit":)", d.limit);
    if (d.retry_after != kNever) {
      absl::StrAppend(&out, R"(,"retry_after":)", RetryAfterSeconds(d.retry_after));
    }
    out += '}';
  }
  co_return JsonTextAnswer(d.allowed ? 200 : 429, std::move(out), HeadersOf(*a, now));
}

Task<HttpResponse> RateLimitService::Auth(Context& ctx, const HttpRequest& request, Instant now,
                                          std::string_view) {
  // Who: the first identity header there is.
  constexpr std::pair<std::string_view, std::string_view> kIdentities[] = {
      {"X-User-Id", "user"}, {"X-Api-Key", "apiKey"}, {"X-Real-IP", "ip"}};
  std::optional<Request> decided;
  for (const auto& [header, scope] : kIdentities) {
    if (const std::optional<std::string_view> value = request.Header(header);
        value && !value->empty()) {
      Result<std::string> who = Identity(header, std::string(*value));
      if (!who.ok()) co_return BadRequest(who.status());
      decided = Request{std::string(scope), *std::move(who), "", 1, now};
      break;
    }
  }
  if (!decided) {
    co_return ErrorAnswer(400, "no identity: send X-User-Id, X-Api-Key or X-Real-IP");
  }
  // Where: the original request's path, without its query.
  std::string_view uri_header = "X-Original-URI";
  std::optional<std::string_view> uri = request.Header(uri_header);
  if (!uri) uri = request.Header(uri_header = "X-Envoy-Original-Path");
  if (!uri || uri->empty()) {
    co_return ErrorAnswer(400, "no endpoint: send X-Original-URI (or X-Envoy-Original-Path)");
  }
  Result<std::string> endpoint = Endpoint(uri_header, uri->substr(0, uri->find('?')));
  if (!endpoint.ok()) co_return BadRequest(endpoint.status());
  decided->endpoint = *std::move(endpoint);
  // A proxy that takes only 2xx, 401 and 403 from its check (nginx) asks for another status.
  int deny = 429;
  Result<std::vector<QueryParam>> params = ParseQuery(request.query);
  if (!params.ok()) co_return BadRequest(params.status());
  for (const QueryParam& p : *params) {
    if (p.name != "deny") continue;
    if (p.value != "403" && p.value != "429") {
      co_return ErrorAnswer(400, "deny: '" + p.value + "' is not 403 or 429");
    }
    deny = p.value == "403" ? 403 : 429;
  }
  Result<RulesLimiter::Answer> a = co_await Decide(ctx, *decided);
  if (!a.ok()) co_return Failed(a.status());
  co_return HttpResponse{a->decision.allowed ? 200 : deny, HeadersOf(*a, now), ""};
}

Task<HttpResponse> RateLimitService::Hit(Context& ctx, const HttpRequest& request, Instant now,
                                         std::string_view) {
  Result<TopLevelMembers> body = bodies_.Read(request.body, R"({"userId": ...})");
  if (!body.ok()) co_return BadRequest(body.status());
  Result<std::string> user = body->String("userId");
  if (user.ok()) user = Identity("userId", *std::move(user));
  if (!user.ok()) co_return BadRequest(user.status());
  const Request decided{"user", *user, "/api/hit", 1, now};
  Result<RulesLimiter::Answer> a = co_await Decide(ctx, decided);
  if (!a.ok()) co_return Failed(a.status());
  const Decision& d = a->decision;
  if (!d.allowed) {
    co_return JsonAnswer(429, Json{{"error", "Rate limit exceeded"}, {"limit", d.limit}},
                         HeadersOf(*a, now));
  }
  co_return JsonAnswer(200,
                       Json{{"userId", *user},
                            {"minute", Minute(now)},
                            {"count", d.limit - d.remaining},
                            {"limit", d.limit},
                            {"status", "ok"}},
                       HeadersOf(*a, now));
}

Task<HttpResponse> RateLimitService::Usage(Context& ctx, const HttpRequest&, Instant now,
                                           std::string_view id) {
  Result<std::string> user = PercentDecode(id, "the path", false);
  if (user.ok()) user = Identity("the user id in the path", *std::move(user));
  if (!user.ok()) co_return BadRequest(user.status());
  const Request read{"user", *user, "/api/hit", 1, now};
  Result<RulesLimiter::Answer> a = co_await limiter_.PeekByRules(ctx, read);
  if (!a.ok() && !absl::IsInvalidArgument(a.status()) && !absl::IsUnimplemented(a.status())) {
    shared_->LogFailure("the store", a.status(), now);
  }
  if (absl::IsUnimplemented(a.status())) {
    co_return ErrorAnswer(501, "the usage of " + *user + " cannot be read without spending: " +
                                   std::string(a.status().message()));
  }
  if (!a.ok()) co_return Failed(a.status());
  std::vector<HttpHeader> headers = HeadersOf(*a, now);
  std::erase_if(headers, [](const HttpHeader& h) { return h.name == "Retry-After"; });
  co_return JsonAnswer(200,
                       Json{{"userId", *user},
                            {"minute", Minute(now)},
                            {"count", a->decision.limit - a->decision.remaining},
                            {"limit", a->decision.limit}},
                       std::move(headers));
}

Task<HttpResponse> RateLimitService::Health(Context&, const HttpRequest&, Instant,
                                            std::string_view) {
  Json out{{"status", "ok"}};
  if (shared_->policy().kind == FailurePolicy::Kind::kCircuitBreaker) {
    out["breaker"] = BreakerName(shared_->breaker());
  }
  co_return JsonAnswer(200, out);
}

Task<HttpResponse> RateLimitService::Metrics(Context&, const HttpRequest&, Instant,
                                             std::string_view) {
  std::optional<StoreGuard::Breaker> breaker;
  if (shared_->policy().kind == FailurePolicy::Kind::kCircuitBreaker) breaker = shared_->breaker();
  co_return HttpResponse{
      200, {{"Content-Type", "text/plain; version=0.0.4"}}, shared_->metrics().Prometheus(breaker)};
}

Task<Result<RulesLimiter::Answer>> RateLimitService::Decide(Context& ctx, const Request& request) {
  // Counted as what it was.
  const auto counted = [&](RulesLimiter::Answer a, bool degraded) {
    metrics().Decided(ServiceMetrics::OutcomeOf(a.decision.allowed, degraded),
                      a.rule ? std::string_view(a.rule->rule_id) : std::string_view());
    return a;
  };
  // Made without the store.
  const auto degraded = [&](bool admit) {
    return counted(
        RulesLimiter::Answer{
            Decision{admit, 0, 0, request.now, admit ? Duration(0) : shared_->policy().retry_after},
            std::nullopt},
        true);
  };
  const StoreGuard::Call call =
      shared_->WithGuard([&](StoreGuard& g) { return g.Before(request.now); });
  if (!call.store) co_return degraded(true);
  Result<RulesLimiter::Answer> a = co_await limiter_.DecideByRules(ctx, request);
  if (a.ok()) {
    shared_->WithGuard([&](StoreGuard& g) { g.Answered(call); });
    co_return counted(*std::move(a), false);
  }
  if (absl::IsInvalidArgument(a.status())) {
    shared_->WithGuard([&](StoreGuard& g) { g.Excused(call); });
    co_return a;
  }
  metrics().StoreFailed(a.status());
  shared_->LogFailure("the store", a.status(), request.now);
  const std::optional<bool> admit =
      shared_->WithGuard([&](StoreGuard& g) { return g.Failed(call, request.now); });
  if (!admit) co_return a;
  co_return degraded(*admit);
}

// The admin API.

std::optional<HttpResponse> RateLimitService::Unenforceable(const Rule& rule) const {
  if (!admin_.enforceable) return std::nullopt;
  const Status s = admin_.enforceable(rule);
  if (s.ok()) return std::nullopt;
  return ErrorAnswer(400, "algorithm: " + std::string(s.message()));
}

std::optional<HttpResponse> RateLimitService::Refusal(const HttpRequest& request) const {
  if (admin_.store == nullptr || admin_.token.empty()) {
    return ErrorAnswer(404,
                       "the admin API is off: the service was given no rules store and token "
                       "(ratelab serve --admin-token-file)");
  }
  const std::optional<std::string_view> auth = request.Header("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (!auth || !auth->starts_with(kBearer)) {
    return ErrorAnswer(401, "the admin API needs Authorization: Bearer TOKEN",
                       {{"WWW-Authenticate", "Bearer"}});
  }
  if (!SameSecret(auth->substr(kBearer.size()), admin_.token)) {
    return ErrorAnswer(403, "the token is not the admin API's");
  }
  return std::nullopt;
}

Task<HttpResponse> RateLimitService::ListRules(Context&, const HttpRequest& request, Instant now,
                                               std::string_view) {
  Result<std::vector<QueryParam>> filters = ParseQuery(request.query);
  if (!filters.ok()) co_return BadRequest(filters.status());
  constexpr std::string_view kFilters[] = {"scope_type", "scope_value", "endpoint", "algorithm"};
  for (const QueryParam& f : *filters) {
    if (std::find(std::begin(kFilters), std::end(kFilters), f.name) == std::end(kFilters)) {
      co_return ErrorAnswer(400, "unknown filter '" + f.name +
                                     "' (expected scope_type, scope_value, endpoint or algorithm)");
    }
  }
  Result<RuleSet> rules = admin_.store->List();
  if (!rules.ok()) co_return RulesStoreFailed(rules.status(), now);
  Json list = Json::array();
  for (const Rule& r : rules->rules()) {
    const Json rule = RuleToJson(r);
    if (std::all_of(filters->begin(), filters->end(),
                    [&](const QueryParam& f) { return rule[f.name] == f.value; })) {
      list.push_back(rule);
    }
  }
  co_return JsonAnswer(200, Json{{"rules", list}});
}

Task<HttpResponse> RateLimitService::GetRule(Context&, const HttpRequest&, Instant now,
                                             std::string_view id) {
  Result<RuleSet> rules = admin_.store->List();
  if (!rules.ok()) co_return RulesStoreFailed(rules.status(), now);
  const Rule* rule = rules->Find(id);
  if (rule == nullptr) co_return NoSuchRule(id);
  co_return JsonAnswer(200, RuleToJson(*rule));
}

Task<HttpResponse> RateLimitService::CreateRule(Context&, const HttpRequest& request, Instant now,
                                                std::string_view) {
  Result<nlohmann::json> body = BodyObject(request.body, "a rule (docs/rules.md)");
  if (!body.ok()) co_return BadRequest(body.status());
  Result<Rule> rule = RuleFromJson(*body);
  if (!rule.ok()) co_return BadRequest(rule.status());
  if (std::optional<HttpResponse> refused = Unenforceable(*rule)) co_return *std::move(refused);
  Result<RuleSet> rules = admin_.store->List();
  if (!rules.ok()) co_return RulesStoreFailed(rules.status(), now);
  if (std::optional<HttpResponse> taken = Taken(*rules, *rule, true)) co_return *std::move(taken);
  if (Status s = admin_.store->Put(*rule); !s.ok()) co_return RulesStoreFailed(s, now);
  co_return JsonAnswer(201, RuleToJson(*rule), {{"Location", "/ratelimit/rules/" + rule->rule_id}});
}

Task<HttpResponse> RateLimitService::ReplaceRule(Context&, const HttpRequest& request, Instant now,
                                                 std::string_view id) {
  Result<nlohmann::json> body = BodyObject(request.body, "a rule (docs/rules.md)");
  if (!body.ok()) co_return BadRequest(body.status());
  if (const auto given = body->find("rule_id");
      given != body->end() && !(given->is_string() && given->get<std::string>() == id)) {
    co_return ErrorAnswer(400, "rule_id: the body's is not the path's (" + std::string(id) + ")");
  }
  (*body)["rule_id"] = std::string(id);
  Result<Rule> rule = RuleFromJson(*body);
  if (!rule.ok()) co_return BadRequest(rule.status());
  if (std::optional<HttpResponse> refused = Unenforceable(*rule)) co_return *std::move(refused);
  Result<RuleSet> rules = admin_.store->List();
  if (!rules.ok()) co_return RulesStoreFailed(rules.status(), now);
  if (rules->Find(id) == nullptr) co_return NoSuchRule(id);
  if (std::optional<HttpResponse> taken = Taken(*rules, *rule, false)) co_return *std::move(taken);
  if (Status s = admin_.store->Put(*rule); !s.ok()) co_return RulesStoreFailed(s, now);
  co_return JsonAnswer(200, RuleToJson(*rule));
}

Task<HttpResponse> RateLimitService::DeleteRule(Context&, const HttpRequest&, Instant now,
                                                std::string_view id) {
  if (Status s = admin_.store->Delete(id); !s.ok()) {
    if (s.code() == absl::StatusCode::kNotFound) co_return NoSuchRule(id);
    co_return RulesStoreFailed(s, now);
  }
  co_return HttpResponse{204, {}, ""};
}

}  // namespace ratelab
