#include "impl/service/http.h"

#include "absl/strings/match.h"

namespace ratelab {

namespace {

std::optional<std::string_view> Find(const std::vector<HttpHeader>& headers,
                                     std::string_view name) {
  for (const HttpHeader& h : headers) {
    if (absl::EqualsIgnoreCase(absl::string_view(h.name),
                               absl::string_view(name.data(), name.size()))) {
      return h.value;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string_view> HttpRequest::Header(std::string_view name) const {
  return Find(headers, name);
}

std::optional<std::string_view> HttpResponse::Header(std::string_view name) const {
  return Find(headers, name);
}

}  // namespace ratelab
