// The bodies the rate-limit service reads (impl/service/service.h): the input is a request body,
// read by both JSON readers (impl/service/json_body.h), which must agree on it, then sent to
// every endpoint that reads a body: the limit service's decision API, the hit-counter API's hit,
// and the admin API's rule writes (on a read-only store, which refuses a write only after reading
// the rule). Each answers, and never with a 5xx: whatever a body holds is the client's fault.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/service.h"
#include "impl/service/json_body.h"

namespace {

using ratelab::Result;
using ratelab::TopLevelMembers;

bool Agree(const Result<TopLevelMembers>& a, const Result<TopLevelMembers>& b) {
  if (a.ok() != b.ok()) return false;
  if (!a.ok()) return a.status() == b.status();
  return a->members() == b->members();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  ratelab::JsonBodyReader reader;
  if (!Agree(reader.Read(body, "a body"),
             ratelab::JsonBodyReader::ReadByNlohmann(body, "a body"))) {
    __builtin_trap();
  }
  ratelab::fuzz::FuzzedService service;
  constexpr std::pair<const char*, const char*> kRoutes[] = {
      {"POST", "/ratelimit/check"},
      {"POST", "/api/hit"},
      {"POST", "/ratelimit/rules"},
      {"PUT", "/ratelimit/rules/6f1c2a3b-0000-4000-8000-000000000001"},
  };
  for (const auto& [method, path] : kRoutes) {
    ratelab::HttpRequest request;
    request.method = method;
    request.path = path;
    request.headers = {{"Authorization", "Bearer token"}};
    request.body = body;
    const ratelab::HttpResponse answer = service.Answer(request);
    if (answer.status < 200 || answer.status >= 500) __builtin_trap();
  }
  return 0;
}
