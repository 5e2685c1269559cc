#include "impl/service/service_protocol.h"

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "impl/service/structured_fields.h"

namespace ratelab {

namespace {

// A whole-number header, or `fallback` when it is absent; InvalidArgument when it is not one.
Result<int64_t> NumberHeader(const HttpResponse& answer, std::string_view name, int64_t fallback) {
  const std::optional<std::string_view> text = answer.Header(name);
  if (!text) return fallback;
  int64_t n = 0;
  if (!absl::SimpleAtoi(absl::string_view(text->data(), text->size()), &n)) {
    return absl::InvalidArgumentError(std::string(name) + ": '" + std::string(*text) +
                                      "' is not a whole number");
  }
  return n;
}

std::string ErrorOf(const HttpResponse& answer) {
  const nlohmann::json body = nlohmann::json::parse(answer.body, nullptr, false);
  if (body.is_object() && body.contains("error") && body["error"].is_string()) {
    return body["error"].get<std::string>();
  }
  return "status " + std::to_string(answer.status);
}

// The IETF field `name`, where given, read by `parse`: one member whose `number` (the parameter
// `param`) is `expected`, as the header `says` says. InternalError otherwise.
template <typename Field>
Status HoldsField(const HttpResponse& answer, std::string_view name,
                  Result<std::vector<Field>> (*parse)(std::string_view), int64_t Field::*number,
                  std::string_view param, int64_t expected, std::string_view says) {
  const std::optional<std::string_view> field = answer.Header(name);
  if (!field) return absl::OkStatus();
  const std::string quoted = std::string(name) + ": '" + std::string(*field) + "'";
  const Result<std::vector<Field>> read = parse(*field);
  if (!read.ok()) return absl::InternalError(quoted + ": " + std::string(read.status().message()));
  if (read->size() != 1 || (*read)[0].*number != expected) {
    return absl::InternalError(quoted + " is not one policy with " + std::string(param) + "=" +
                               std::to_string(expected) + ", as " + std::string(says) + " says");
  }
  return absl::OkStatus();
}

}  // namespace

Result<Decision> DecisionFromAnswer(const HttpResponse& answer, Instant now) {
  if (answer.status == 400) return absl::InvalidArgumentError(ErrorOf(answer));
  if (answer.status == 503) return absl::UnavailableError(ErrorOf(answer));
  if (answer.status != 200 && answer.status != 429) {
    return absl::InternalError("the service answered " + std::to_string(answer.status) + ": " +
                               ErrorOf(answer));
  }
  Decision d;
  d.allowed = answer.status == 200;
  Result<int64_t> limit = NumberHeader(answer, "X-RateLimit-Limit", 0);
  if (!limit.ok()) return limit.status();
  d.limit = *limit;
  Result<int64_t> remaining = NumberHeader(answer, "X-RateLimit-Remaining", 0);
  if (!remaining.ok()) return remaining.status();
  d.remaining = *remaining;
  Result<int64_t> reset = NumberHeader(answer, "X-RateLimit-Reset", -1);
  if (!reset.ok()) return reset.status();
  d.reset = *reset < 0 ? now : FromUnixNanos(*reset * 1'000'000'000);
  // The IETF fields, where given, by their grammar, and saying what the X- headers say.
  if (Status s = HoldsField(answer, "RateLimit", ParseRateLimit, &RateLimitField::remaining, "r",
                            d.remaining, "X-RateLimit-Remaining");
      !s.ok()) {
    return s;
  }
  if (Status s = HoldsField(answer, "RateLimit-Policy", ParseRateLimitPolicy,
                            &RateLimitPolicyField::quota, "q", d.limit, "X-RateLimit-Limit");
      !s.ok()) {
    return s;
  }
  if (!d.allowed) {
    Result<int64_t> retry = NumberHeader(answer, "Retry-After", -1);
    if (!retry.ok()) return retry.status();
    d.retry_after = *retry < 0 ? kNever : std::chrono::seconds(*retry);
  }
  return d;
}

ServiceProtocol::ServiceProtocol(RulesLimiter::RulesSource rules, RulesLimiter::ProtocolMaker make,
                                 FailurePolicy on_store_failure)
    : limiter_(std::move(rules), std::move(make)),
      on_store_failure_(on_store_failure),
      service_(std::make_unique<RateLimitService>(limiter_, AdminApi{}, on_store_failure)) {}

void ServiceProtocol::Restart() {
  limiter_.Restart();
  service_ = std::make_unique<RateLimitService>(limiter_, AdminApi{}, on_store_failure_);
}

Task<Result<Decision>> ServiceProtocol::Decide(Context& ctx, const Request& request) {
  const nlohmann::json body = {{"user_id", request.scope_value},
                               {"endpoint", request.endpoint},
                               {"scope", request.scope_type}};
  const HttpRequest http{"POST", "/ratelimit/check", "", {}, body.dump()};
  const HttpResponse answer = co_await service_->Handle(ctx, http, request.now);
  co_return DecisionFromAnswer(answer, request.now);
}

}  // namespace ratelab
