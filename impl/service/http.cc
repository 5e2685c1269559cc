#include "impl/service/http.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace ratelab {

bool IsHttpTokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsHttpToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsHttpTokenChar);
}

std::optional<std::string_view> FindHeader(const std::vector<HttpHeader>& headers,
                                           std::string_view name) {
  for (const HttpHeader& h : headers) {
    if (absl::EqualsIgnoreCase(absl::string_view(h.name),
                               absl::string_view(name.data(), name.size()))) {
      return h.value;
    }
  }
  return std::nullopt;
}

Result<std::string> PercentDecode(std::string_view text, std::string_view what,
                                  bool plus_is_space) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+' && plus_is_space) {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      const auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      if (i + 2 >= text.size()) {
        return absl::InvalidArgumentError(std::string(what) + " has a cut-short escape at '" +
                                          std::string(text.substr(i)) + "'");
      }
      const int hi = hex(text[i + 1]), lo = hex(text[i + 2]);
      if (hi < 0 || lo < 0) {
        return absl::InvalidArgumentError(std::string(what) + " has a bad escape '" +
                                          std::string(text.substr(i, 3)) + "'");
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return out;
}

Result<std::vector<QueryParam>> ParseQuery(std::string_view query) {
  std::vector<QueryParam> out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    Result<std::string> name = PercentDecode(part.substr(0, eq), "the query", true);
    if (!name.ok()) return name.status();
    Result<std::string> value = PercentDecode(
        eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1), "the query", true);
    if (!value.ok()) return value.status();
    out.push_back({*std::move(name), *std::move(value)});
  }
  return out;
}

std::optional<std::string_view> HttpRequest::Header(std::string_view name) const {
  return FindHeader(headers, name);
}

std::optional<std::string_view> HttpResponse::Header(std::string_view name) const {
  return FindHeader(headers, name);
}

}  // namespace ratelab
