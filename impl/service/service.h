// The rate-limit service: one function from an HTTP request to its answer, which `ratelab serve`
// calls for each request it receives and the simulator calls for each simulated one, so that
// what is checked is what is served. Every decision goes rule match -> key -> protocol ->
// decision -> headers through a RulesLimiter (impl/rules/rules_limiter.h); the rules are never
// read from their store on the request path.
//
//   POST /ratelimit/check   the limit service's decision API: {"user_id", "endpoint", "scope"}
//   answered
//                           200 {"allowed": true, "remaining", "limit", "reset"} or
//                           429 {"allowed": false, "remaining": 0, "limit", "retry_after"}
//                           (reset in unix seconds, retry_after in whole seconds, rounded up)
//   POST /api/hit           the hit-counter API's API: {"userId"}, decided on the endpoint
//   /api/hit, answered
//                           200 {userId, minute, count, limit, status: "ok"} or
//                           429 {error: "Rate limit exceeded", limit}
//   GET  /api/usage/ID      the hit-counter API's read of user ID's count (percent-decoded),
//   spending
//                           nothing: 200 {userId, minute, count, limit} with the rate-limit
//                           headers; 501 when the rule's protocol cannot read its count so (only
//                           fixed windows on Redis and PostgreSQL can; in process, all can)
//   GET  /metrics           Prometheus' text format (metrics.h)
//   GET  /healthz           200 {"status": "ok"}, and with a circuit breaker its state:
//                           {"status": "ok", "breaker": "closed" | "open" | "half-open"}
//   ANY  /ratelimit/auth    a gateway's check before each request (nginx auth_request, Envoy
//                           ext_authz): who from X-User-Id, X-Api-Key or X-Real-IP (the first
//                           there; scope user, apiKey or ip), where from X-Original-URI (or
//                           X-Envoy-Original-Path); 200 or 429 (?deny=403 for nginx, which
//                           takes only 2xx, 401 and 403 from its check), no body, the headers
//                           for the gateway to pass on (docs/nginx-ratelab.conf)
//
// The limit service's admin API, on when the service is given a rules store and a token, every call
// with "Authorization: Bearer TOKEN" (401 without one, 403 with another; compared in constant
// time):
//
//   GET    /ratelimit/rules       200 {"rules": [...]}, filtered by ?scope_type=&scope_value=
//                                 &endpoint=&algorithm= (each an exact match)
//   GET    /ratelimit/rules/ID    200 the rule, 404 when there is none
//   POST   /ratelimit/rules       201 the rule made (rule_id derived from its target when not
//                                 given), Location: its URL; 409 when its id or target is taken
//   PUT    /ratelimit/rules/ID    200 the rule replaced; 404 when there is none
//   DELETE /ratelimit/rules/ID    204
//
// Rules are JSON objects of kRuleFields (impl/rules/rules_json.h); a bad one is a 400 naming the
// field. A store that takes no writes (a rules file) answers writes 405. What the admin API
// writes reaches the decisions through the store's own notifications (RulesCache), never
// synchronously.
//
// Every decision's answer carries the rate-limit headers (headers.h) of the rule that answered;
// a request no rule limits is admitted without them. A body that is not what the endpoint takes
// is a 400 naming the field; a store that failed (under the `error` failure policy) a 503; an
// unknown path a 404, a known one with the wrong method a 405 with Allow.
#ifndef RATELAB_IMPL_SERVICE_SERVICE_H_
#define RATELAB_IMPL_SERVICE_SERVICE_H_

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/task.h"
#include "impl/limiters/failure_policy.h"
#include "impl/limiters/in_process_limiter.h"
#include "impl/rules/rules_limiter.h"
#include "impl/rules/rules_store.h"
#include "impl/service/http.h"
#include "impl/service/json_body.h"
#include "impl/service/metrics.h"
#include "impl/service/served_protocols.h"

namespace ratelab {

// The designs' own policies, for a service given no rules: the hit-counter API's 5 requests a
// minute per user on /api/hit (a fixed window), and the limit service's 100 a minute per user and
// endpoint elsewhere (a token bucket of 100, refilled at 100 a minute).
RuleSet SeedServiceRules();
// How a service reads what its callers send. An identity longer than `max_key_bytes` (a user
// id, an API key, an address, an endpoint: what a counter's key is made of) is a 400 naming it,
// so that no caller can make it keep more than it must. An endpoint that is a path is matched
// and counted as NormalizePath (http.h) writes it, so that no other spelling of a limited path
// escapes its rule.
struct ServiceOptions {
  size_t max_key_bytes = 256;
  PathNormalization paths;
};

// Where a service tells its operator what its callers are not told (a store's failure in full:
// its address, its message). Called from any thread; must be thread-safe.
using OperatorLog = std::function<void(std::string_view line)>;

// What every thread of one service shares: the failure policy's state (one circuit breaker for
// the service, not one a thread), the metrics, how requests are read and the operator's log.
// Thread-safe.
class ServiceState {
 public:
  explicit ServiceState(FailurePolicy on_store_failure, ServiceOptions options = {},
                        OperatorLog log = {})
      : guard_(on_store_failure), options_(std::move(options)), log_(std::move(log)) {}

  // `f(guard)` with the guard to itself; a guard without state (StoreGuard::HasState) is called
  // without the lock.
  template <typename F>
  auto WithGuard(F&& f) {
    if (!guard_.HasState()) return f(guard_);
    std::lock_guard lock(mutex_);
    return f(guard_);
  }
  const FailurePolicy& policy() const { return guard_.policy(); }  // never changes
  StoreGuard::Breaker breaker() {
    return WithGuard([](StoreGuard& g) { return g.breaker(); });
  }
  ServiceMetrics& metrics() { return metrics_; }
  const ServiceOptions& options() const { return options_; }  // never change
  // Writes `what` failed (a store's or the rules store's `status`, in full) to the operator's
  // log: the first failure at once, then at most one line a second (`now` on the service's
  // clock), saying how many were left out since the last.
  void LogFailure(std::string_view what, const Status& status, Instant now);
  // What the store's last call did: answered, or failed (`why`); readiness (/readyz) reads it.
  void StoreAnswered() {
    // Read first: every decision answers, and a write each would bounce the line between threads.
    if (store_failing_.load(std::memory_order_relaxed)) store_failing_ = false;
  }
  void StoreFailed(const Status& why);
  // Why the service is not ready (the store's last call failed, or the breaker is open), or
  // nothing when it is.
  std::optional<std::string> NotReady();

 private:
  std::mutex mutex_;
  StoreGuard guard_;  // guarded by mutex_ when it has state
  std::atomic<bool> store_failing_ = false;
  std::mutex why_mutex_;
  std::string store_failure_;  // the last failure's class, in words; guarded by why_mutex_
  ServiceMetrics metrics_;
  ServiceOptions options_;
  OperatorLog log_;
  std::mutex log_mutex_;                // guards what follows
  std::optional<Instant> last_logged_;  // none before the first
  int64_t left_out_ = 0;                // failures not written since last_logged_
};

// The admin API's store and the token its callers must send; off when either is missing.
struct AdminApi {
  RulesStore* store = nullptr;
  std::string token;
  // Whether the service can enforce a rule written (its counters' store may not have every
  // algorithm): InvalidArgument saying why not, and the write is a 400. None: every rule.
  std::function<Status(const Rule&)> enforceable;
};

class RateLimitService {
 public:
  // Decides with `limiter`; administers `admin.store`. Both must outlive the service. Not
  // thread-safe (nor is the limiter): one per simulated node, or one per server thread, the
  // threads of one server sharing `shared`.
  // `on_store_failure`: what a decision does when the store fails (impl/limiters/
  // failure_policy.h): the error (503), admit, deny (429, Retry-After), or a circuit breaker.
  explicit RateLimitService(RulesLimiter& limiter, AdminApi admin = {},
                            FailurePolicy on_store_failure = {})
      : RateLimitService(limiter, std::move(admin),
                         std::make_shared<ServiceState>(on_store_failure)) {}
  RateLimitService(RulesLimiter& limiter, AdminApi admin, std::shared_ptr<ServiceState> shared)
      : limiter_(limiter),
        admin_(std::move(admin)),
        shared_(std::move(shared)),
        metrics_(shared_->metrics().NewShard()) {}

  StoreGuard::Breaker breaker() const { return shared_->breaker(); }
  // Where it counts (its own shard of the shared metrics); the caller adds how long each
  // request took (Took).
  ServiceMetrics::Shard& metrics() { return metrics_; }

  // The answer to `request`, received at `now` on the node's clock. `request` and `ctx` must
  // outlive the task.
  Task<HttpResponse> Handle(Context& ctx, const HttpRequest& request, Instant now);

  // `written`, an answer of this service's that is on the wire now, kept for its room: the next
  // decision's answer is written in the memory of its body and headers (HttpResponse::Clear), so
  // that a thread that gives each answer back (serve's) answers a decision with no allocation.
  void Reuse(HttpResponse written);

 private:
  // A handler: the request, when it came, and the ID of a path that ends with one.
  using Handler = Task<HttpResponse> (RateLimitService::*)(Context&, const HttpRequest&, Instant,
                                                           std::string_view);
  struct Route {
    std::string_view method;
    std::string_view path;  // "/ratelimit/rules/" with `id`: the ID follows
    bool id;
    bool admin;  // needs the token
    Handler handle;
  };
  // What the service serves, one row an endpoint and method.
  static const std::array<Route, 12> kRoutes;

  Task<HttpResponse> Check(Context& ctx, const HttpRequest& request, Instant now, std::string_view);
  Task<HttpResponse> Hit(Context& ctx, const HttpRequest& request, Instant now, std::string_view);
  Task<HttpResponse> Usage(Context& ctx, const HttpRequest&, Instant now, std::string_view id);
  Task<HttpResponse> Auth(Context& ctx, const HttpRequest& request, Instant now, std::string_view);
  Task<HttpResponse> Health(Context&, const HttpRequest&, Instant, std::string_view);
  Task<HttpResponse> Ready(Context&, const HttpRequest&, Instant, std::string_view);
  Task<HttpResponse> Metrics(Context&, const HttpRequest&, Instant, std::string_view);
  Task<HttpResponse> ListRules(Context&, const HttpRequest& request, Instant, std::string_view);
  Task<HttpResponse> GetRule(Context&, const HttpRequest&, Instant, std::string_view id);
  Task<HttpResponse> CreateRule(Context&, const HttpRequest& request, Instant, std::string_view);
  Task<HttpResponse> ReplaceRule(Context&, const HttpRequest& request, Instant,
                                 std::string_view id);
  Task<HttpResponse> DeleteRule(Context&, const HttpRequest&, Instant, std::string_view id);
  // DecideByRules under the failure policy (a decision made without the store has no rule),
  // counted.
  Task<Result<RulesLimiter::Answer>> Decide(Context& ctx, const Request& request);
  // A rules store's error: the request's fault (400), no such rule (404), a store that takes no
  // writes (405), or the store's own failure (503, logged).
  HttpResponse RulesStoreFailed(const Status& s, Instant now);
  // `value` as the identity `field` gives a counter's key; InvalidArgument naming `field` when it
  // is not UTF-8 or longer than the options allow.
  Result<std::string> Identity(std::string_view field, std::string value) const;
  // The endpoint `value` as `field` gives it, normalized (ServiceOptions::paths) and held to
  // Identity's bounds.
  Result<std::string> Endpoint(std::string_view field, std::string_view value) const;
  // Null when the service can enforce `rule` (AdminApi::enforceable); else the 400 refusing it.
  std::optional<HttpResponse> Unenforceable(const Rule& rule) const;
  // Null when `request` may use the admin API; else its refusal.
  std::optional<HttpResponse> Refusal(const HttpRequest& request) const;
  // An empty answer with the room of the one given to Reuse last (none: no room).
  HttpResponse TakeRoom();

  RulesLimiter& limiter_;
  JsonBodyReader bodies_;
  AdminApi admin_;
  std::shared_ptr<ServiceState> shared_;
  ServiceMetrics::Shard& metrics_;  // in shared_
  HttpResponse spare_;              // given to Reuse, for its room
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_SERVICE_H_
