#include "impl/service/http.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "impl/core/text.h"

namespace ratelab {

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
  if (!IsUtf8(out)) {
    return absl::InvalidArgumentError(std::string(what) +
                                      " is not UTF-8 once its escapes are decoded");
  }
  return out;
}

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// An unreserved character of RFC 3986: its escape means the character itself.
bool Unreserved(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

}  // namespace

namespace {

// `segment` without the white space around it, raw or escaped (%20, %09): a framework that
// trims path tokens routes "/api/search%20" as "/api/search".
std::string_view TrimWhiteSpace(std::string_view segment) {
  while (true) {
    if (segment.starts_with(' ') || segment.starts_with('\t')) {
      segment.remove_prefix(1);
    } else if (segment.starts_with("%20") || segment.starts_with("%09")) {
      segment.remove_prefix(3);
    } else if (segment.ends_with(' ') || segment.ends_with('\t')) {
      segment.remove_suffix(1);
    } else if (segment.ends_with("%20") || segment.ends_with("%09")) {
      segment.remove_suffix(3);
    } else {
      return segment;
    }
  }
}

}  // namespace

namespace {

// Whether NormalizePath gives `path` back as it is: a path of non-empty segments, none "." or
// "..", of unreserved characters alone (no escape, no parameter, no white space), in lower case
// unless case matters. Most requests' paths are, and are then copied once.
bool AlreadyNormal(std::string_view path, const PathNormalization& how) {
  if (path == "/") return true;
  if (!path.starts_with('/') || path.ends_with('/')) return false;
  size_t segment_start = 1;
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      const std::string_view segment = path.substr(segment_start, i - segment_start);
      if (segment.empty() || segment == "." || segment == "..") return false;
      segment_start = i + 1;
      continue;
    }
    const char c = path[i];
    if (!Unreserved(c) || (!how.case_sensitive && c >= 'A' && c <= 'Z')) return false;
  }
  return true;
}

}  // namespace

Result<std::string> NormalizePath(std::string_view target, const PathNormalization& how,
                                  std::string_view what) {
  // The query and the fragment are not the path (a client may send a fragment a browser never
  // would; the server behind cuts it).
  const std::string_view path = target.substr(0, target.find_first_of("?#"));
  if (AlreadyNormal(path, how)) return std::string(path);
  if (!IsUtf8(path)) return absl::InvalidArgumentError(std::string(what) + " is not UTF-8");
  if (!path.starts_with('/')) return std::string(path);
  // Escapes: the unreserved decoded, the others kept with upper-case hex digits. A segment's
  // parameters (";jsessionid=..." in "/api/search;jsessionid=1/x") are cut, as a servlet
  // container routes them: they are no part of which path it is.
  std::string decoded;
  decoded.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == ';') {
      const size_t slash = path.find('/', i);
      if (slash == std::string_view::npos) break;
      i = slash - 1;
      continue;
    }
    if (path[i] != '%') {
      decoded += path[i];
      continue;
    }
    const int hi = i + 2 < path.size() ? HexValue(path[i + 1]) : -1;
    const int lo = i + 2 < path.size() ? HexValue(path[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(std::string(what) + " has a bad escape at '" +
                                        std::string(path.substr(i, 3)) + "'");
    }
    const char c = static_cast<char>(hi * 16 + lo);
    if (Unreserved(c)) {
      decoded += c;
    } else {
      decoded += '%';
      decoded += "0123456789ABCDEF"[hi];
      decoded += "0123456789ABCDEF"[lo];
    }
    i += 2;
  }
  // Segments: white space around each cut, then empty ones and "." dropped, ".." takes the one
  // before it away (never past the root); a path that ended in a slash, "." or ".." keeps its
  // trailing slash.
  std::vector<std::string_view> segments;
  bool trailing = false;
  std::string_view rest = std::string_view(decoded).substr(1);
  while (true) {
    const size_t slash = rest.find('/');
    const std::string_view segment = TrimWhiteSpace(rest.substr(0, slash));
    trailing = segment.empty() || segment == "." || segment == "..";
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  std::string out;
  out.reserve(decoded.size());
  for (const std::string_view segment : segments) {
    out += '/';
    out.append(segment.data(), segment.size());
  }
  if (out.empty() || (trailing && how.trailing_slash_matters)) out += '/';
  if (!how.case_sensitive) absl::AsciiStrToLower(&out);
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

void HttpResponse::Clear() {
  constexpr size_t kKeptBody = 1024;
  status = 200;
  headers.clear();
  if (body.capacity() > kKeptBody) {
    std::string().swap(body);
  } else {
    body.clear();
  }
}

std::optional<std::string_view> HttpResponse::Header(std::string_view name) const {
  for (const AnswerHeader& h : headers) {
    const std::string_view n = h.name;
    if (absl::EqualsIgnoreCase(absl::string_view(n.data(), n.size()),
                               absl::string_view(name.data(), name.size()))) {
      return h.value;
    }
  }
  return std::nullopt;
}

}  // namespace ratelab
