#include "impl/service/service.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "impl/core/text.h"
#include "impl/rules/rules_json.h"
#include "impl/service/answers.h"
#include "impl/service/headers.h"

namespace ratelab {

namespace {

using Json = nlohmann::ordered_json;

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

// What an answer says when no rule matched its request: it is not limited at all (not "limit 0").
constexpr char kNoRule[] = "no rule matches this request: it is not limited";

// The rate-limit headers of the rule that answered, if one did; a denial without one (the store
// failed, fail-closed) still says when to come back. Written in the memory of `room`.
AnswerHeaders HeadersOf(const RulesLimiter::Answer& a, Instant now, AnswerHeaders room = {}) {
  if (a.rule) {
    return RateLimitHeaders(a.decision, a.rule->policy(), a.rule->rule_id(), now, std::move(room));
  }
  room.clear();
  if (a.decision.allowed) {
    room.push_back({"X-RateLimit-Rule", "none"});
  } else if (a.decision.retry_after != kNever) {
    room.push_back({"Retry-After", HeaderValue::Cat(RetryAfterSeconds(a.decision.retry_after))});
  }
  return room;
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

void ServiceState::StoreFailed(const Status& why) {
  {
    std::lock_guard lock(why_mutex_);
    // Its class only: the caller of /readyz is not told the store's address or message.
    store_failure_ = absl::IsDeadlineExceeded(why) ? "the store's last call timed out"
                                                   : "the store's last call failed";
  }
  store_failing_ = true;
}

std::optional<std::string> ServiceState::NotReady() {
  if (policy().kind == FailurePolicy::Kind::kCircuitBreaker &&
      breaker() == StoreGuard::Breaker::kOpen) {
    return "the circuit breaker is open: requests are decided without the store";
  }
  if (!store_failing_.load()) return std::nullopt;
  std::lock_guard lock(why_mutex_);
  return store_failure_;
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

const std::array<RateLimitService::Route, 12> RateLimitService::kRoutes = {{
    {"GET", "/metrics", false, false, &RateLimitService::Metrics},
    {"POST", "/ratelimit/check", false, false, &RateLimitService::Check},
    {"*", "/ratelimit/auth", false, false, &RateLimitService::Auth},
    {"POST", "/api/hit", false, false, &RateLimitService::Hit},
    {"GET", "/api/usage/", true, false, &RateLimitService::Usage},
    {"GET", "/healthz", false, false, &RateLimitService::Health},
    {"GET", "/readyz", false, false, &RateLimitService::Ready},
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

void RateLimitService::Reuse(HttpResponse written) {
  written.Clear();
  spare_ = std::move(written);
}

HttpResponse RateLimitService::TakeRoom() { return std::exchange(spare_, {}); }

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
  if (!a->rule && d.allowed) {
    co_return JsonAnswer(200, Json{{"allowed", true}, {"limited", false}, {"reason", kNoRule}},
                         HeadersOf(*a, now));
  }
  // Written as Json{...}.dump() would write it, without building the document, in the room of an
  // answer written before.
  HttpResponse room = TakeRoom();
  std::string& out = room.body;
  if (d.allowed) {
    absl::StrAppend(&out, R"({"allowed":true,"remaining":)", d.remaining, R"(,"limit":)", d.limit,
                    R"(,"reset":)", ResetUnixSeconds(d, now), "}");
  } else {
    absl::StrAppend(&out, R"({"allowed":false,"remaining":0,"limit":)", d.limit);
    if (d.retry_after != kNever) {
      absl::StrAppend(&out, R"(,"retry_after":)", RetryAfterSeconds(d.retry_after));
    }
    out += '}';
  }
  co_return JsonTextAnswer(d.allowed ? 200 : 429, std::move(out),
                           HeadersOf(*a, now, std::move(room.headers)));
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
  // Where: the original request's path (NormalizePath cuts its query and fragment).
  std::string_view uri_header = "X-Original-URI";
  std::optional<std::string_view> uri = request.Header(uri_header);
  if (!uri) uri = request.Header(uri_header = "X-Envoy-Original-Path");
  if (!uri || uri->empty()) {
    co_return ErrorAnswer(400, "no endpoint: send X-Original-URI (or X-Envoy-Original-Path)");
  }
  Result<std::string> endpoint = Endpoint(uri_header, *uri);
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
  HttpResponse room = TakeRoom();
  co_return HttpResponse{a->decision.allowed ? 200 : deny,
                         HeadersOf(*a, now, std::move(room.headers)), std::move(room.body)};
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
  if (!a->rule) {
    co_return JsonAnswer(200,
                         Json{{"userId", *user},
                              {"minute", Minute(now)},
                              {"status", "ok"},
                              {"limited", false},
                              {"reason", kNoRule}},
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
  AnswerHeaders headers = HeadersOf(*a, now);
  std::erase_if(headers, [](const AnswerHeader& h) { return h.name == "Retry-After"; });
  if (!a->rule) {
    co_return JsonAnswer(
        200,
        Json{{"userId", *user}, {"minute", Minute(now)}, {"limited", false}, {"reason", kNoRule}},
        std::move(headers));
  }
  co_return JsonAnswer(200,
                       Json{{"userId", *user},
                            {"minute", Minute(now)},
                            {"count", a->decision.limit - a->decision.remaining},
                            {"limit", a->decision.limit}},
                       std::move(headers));
}

// Ready: 200 while the store answers (or none is needed); 503 with the reason while its last call
// failed or the breaker keeps requests from it, so that a load balancer sends traffic elsewhere.
Task<HttpResponse> RateLimitService::Ready(Context&, const HttpRequest&, Instant,
                                           std::string_view) {
  if (std::optional<std::string> why = shared_->NotReady()) {
    co_return JsonAnswer(503, Json{{"status", "not ready"}, {"reason", *why}});
  }
  co_return JsonAnswer(200, Json{{"status", "ready"}});
}

// Live: 200 while the process answers at all, whatever its store does (/readyz says that).
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
                      a.rule ? a.rule->rule_id() : std::string_view());
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
    shared_->StoreAnswered();
    co_return counted(*std::move(a), false);
  }
  if (absl::IsInvalidArgument(a.status())) {
    shared_->WithGuard([&](StoreGuard& g) { g.Excused(call); });
    co_return a;
  }
  metrics().StoreFailed(a.status());
  shared_->StoreFailed(a.status());
  shared_->LogFailure("the store", a.status(), request.now);
  const std::optional<bool> admit =
      shared_->WithGuard([&](StoreGuard& g) { return g.Failed(call, request.now); });
  if (!admit) co_return a;
  co_return degraded(*admit);
}

}  // namespace ratelab
