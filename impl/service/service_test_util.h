// What the service's tests share: a RateLimitService deciding by rules through in-process
// protocols on an inline executor, and a request sent to it.
#ifndef RATELAB_IMPL_SERVICE_SERVICE_TEST_UTIL_H_
#define RATELAB_IMPL_SERVICE_SERVICE_TEST_UTIL_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "impl/rules/rules_limiter.h"
#include "impl/service/service.h"
#include "impl/service/service_protocol.h"
#include "testing/rules.h"

namespace ratelab::service_testing {

inline constexpr char kToken[] = "s3cret-token";

inline constexpr Instant kMidnight =
    FromUnixNanos(int64_t{1'767'225'600} * 1'000'000'000);  // 00:00:00

inline Rule MakeRule(ScopeType type, std::string endpoint, Algorithm algorithm, int64_t max,
                     int64_t window_seconds, std::optional<int64_t> burst = std::nullopt) {
  return testing_rules::MakeRule(type, "*", std::move(endpoint), algorithm, max, window_seconds,
                                 burst);
}

struct Fixture {
  RuleSet rules;
  RulesLimiter limiter;
  std::unique_ptr<RateLimitService> service;
  InlineExecutor executor;
  Context ctx{executor};
  std::vector<HttpHeader> headers;  // sent with every request

  explicit Fixture(std::vector<Rule> r, AdminApi admin = {},
                   std::shared_ptr<ServiceState> shared = nullptr,
                   RulesLimiter::ProtocolMaker make = InProcessProtocols())
      : rules(*RuleSet::Make(std::move(r))),
        limiter([this]() -> const RuleSet& { return rules; }, std::move(make)),
        service(std::make_unique<RateLimitService>(
            limiter, std::move(admin),
            shared ? std::move(shared) : std::make_shared<ServiceState>(FailurePolicy{}))) {}

  // `path` may hold a query.
  HttpResponse Send(std::string method, std::string path, std::string body,
                    Instant now = kMidnight) {
    HttpRequest request{std::move(method), std::move(path), "", headers, std::move(body)};
    const size_t question = request.path.find('?');
    if (question != std::string::npos) {
      request.query = request.path.substr(question + 1);
      request.path.resize(question);
    }
    return RunInline(service->Handle(ctx, request, now));
  }
};

inline nlohmann::json Body(const HttpResponse& r) { return nlohmann::json::parse(r.body); }

}  // namespace ratelab::service_testing

#endif  // RATELAB_IMPL_SERVICE_SERVICE_TEST_UTIL_H_
