// An HTTP exchange as the rate-limit service sees it, whatever carries it: a server library for
// real (`ratelab serve`), or the simulator, which hands the service the same values.
#ifndef RATELAB_IMPL_SERVICE_HTTP_H_
#define RATELAB_IMPL_SERVICE_HTTP_H_

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "impl/core/in_place_text.h"
#include "impl/core/status.h"

namespace ratelab {

struct HttpHeader {
  std::string name;
  std::string value;
  bool operator==(const HttpHeader&) const = default;
};

// A tchar of RFC 9110 (what a method, a header's name or a token is made of), and a token: one
// or more of them. (constexpr: a header's name is held to it as it compiles, HeaderName.)
constexpr bool IsHttpTokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}
constexpr bool IsHttpToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsHttpTokenChar);
}

// The first of `headers` called `name` (case-insensitive), or nothing.
std::optional<std::string_view> FindHeader(const std::vector<HttpHeader>& headers,
                                           std::string_view name);

// Bytes a server leaves free past a request's body, so that a parser reading past the end (as
// simdjson does, JsonBodyReader) reads it where it is.
inline constexpr size_t kHttpBodyPadding = 64;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query (and any fragment)
  std::string query;   // after '?' up to any '#', as sent (percent-encoded)
  std::vector<HttpHeader> headers;
  std::string body;  // with kHttpBodyPadding of capacity past it, from a server

  // The first header called `name` (case-insensitive), or nothing.
  std::optional<std::string_view> Header(std::string_view name) const;
};

// `text` with its %XX escapes decoded (and '+' as a space when `plus_is_space`, as in a query);
// InvalidArgument for a bad escape, or for bytes that are not UTF-8 once decoded, saying that
// `what` ("the query", "the path") has them.
Result<std::string> PercentDecode(std::string_view text, std::string_view what, bool plus_is_space);

// How two spellings of one path are told apart when a path is matched against rules.
struct PathNormalization {
  bool case_sensitive = true;           // false: "/API/Search" is "/api/search"
  bool trailing_slash_matters = false;  // false: "/api/search/" is "/api/search"
};
// The path of `target` (a request target, or a gateway's copy of one) as it is matched and
// counted: the query and the fragment cut; each segment's parameters cut (";jsessionid=1", as a
// servlet container routes "/api/search;x" to "/api/search", and "..;" to ".."); escapes of
// unreserved characters decoded ("%73" is "s") and the others' hex digits in upper case; white
// space around a segment cut ("%20", "%09", as a framework that trims path tokens routes it);
// "." and ".." segments resolved (RFC 3986, 5.2.4), repeated slashes made one, then the
// trailing slash and case as `how` says. So "/api//search", "/api/./search", "/api/x/../search",
// "/api/%73earch", "/api/search#1", "/api/search;x" and "/api/search%20" are all "/api/search".
// InvalidArgument naming `what` for a bad escape or bytes that are not UTF-8. Text that does not
// start with '/' is not a path and comes back as it was (without its query and fragment).
Result<std::string> NormalizePath(std::string_view target, const PathNormalization& how,
                                  std::string_view what);

// The parameters of a query ("a=1&b=x%20y"), percent-decoded ('+' is a space), in order;
// InvalidArgument for a bad escape.
struct QueryParam {
  std::string name;
  std::string value;
};
Result<std::vector<QueryParam>> ParseQuery(std::string_view query);

// The name of a header an answer carries: always a literal the program wrote, kept as a view of it
// and never copied (the constructor takes nothing else), so that an answer's headers cost no
// allocation for their names (most are longer than a string holds in place). A literal that is
// not a token (RFC 9110: one or more tchars) does not compile, so no name can end its line or
// itself early, and none is checked as an answer is written.
class HeaderName {
 public:
  template <size_t N>
  consteval HeaderName(const char (&name)[N]) : name_(name, N - 1) {  // NOLINT: implicit
    if (!IsHttpToken(name_)) throw "a header's name is one or more tchars";
  }
  constexpr std::string_view view() const { return name_; }
  constexpr operator std::string_view() const { return name_; }  // NOLINT: implicit
  bool operator==(const HeaderName&) const = default;

 private:
  std::string_view name_;
};

// The value of a header an answer carries, held in place up to kInPlace bytes and allocated
// past them: the rate-limit headers' values (a rule's quoted UUID and two numbers among them) fit,
// where a string would allocate for each.
class HeaderValue {
 public:
  static constexpr size_t kInPlace = 80;

  HeaderValue() = default;
  HeaderValue(std::string_view text) { Append(text); }               // NOLINT: implicit
  HeaderValue(const std::string& text) { Append(text); }             // NOLINT: implicit
  HeaderValue(const char* text) { Append(std::string_view(text)); }  // NOLINT: implicit

  // The pieces one after another, as absl::StrCat writes them: text as it is, whole numbers in
  // decimal.
  template <typename... Pieces>
  static HeaderValue Cat(const Pieces&... pieces) {
    HeaderValue out;
    (out.Append(pieces), ...);
    return out;
  }
  void Append(std::string_view piece) { text_.append(piece); }
  void Append(char c) { text_.push_back(c); }
  template <std::integral Number>
  requires(!std::same_as<Number, char> && !std::same_as<Number, bool>) void Append(Number n) {
    const absl::AlphaNum digits(n);
    Append(std::string_view(digits.data(), digits.size()));
  }

  std::string_view view() const { return text_.view(); }
  operator std::string_view() const { return view(); }  // NOLINT: implicit
  size_t size() const { return text_.size(); }
  bool empty() const { return text_.empty(); }
  bool operator==(std::string_view other) const { return view() == other; }

 private:
  InPlaceText<kInPlace> text_;
};

struct AnswerHeader {
  AnswerHeader(HeaderName n, HeaderValue v) : name(n), value(std::move(v)) {}
  // With an empty value, made where it is kept, for the value to be written there
  // (AnswerHeaders::emplace_back(name).value).
  explicit AnswerHeader(HeaderName n) : name(n) {}

  HeaderName name;
  HeaderValue value;
  bool operator==(const AnswerHeader&) const = default;
};

// An answer's headers. (Held in place, they cost more to move from the decision to the wire
// than the allocation they save.)
using AnswerHeaders = std::vector<AnswerHeader>;

struct HttpResponse {
  int status = 200;
  AnswerHeaders headers;
  std::string body;  // JSON, unless a header says otherwise

  std::optional<std::string_view> Header(std::string_view name) const;
  // An empty 200 again, keeping the memory of its headers and of its body (up to a kilobyte) for
  // an answer to be written in.
  void Clear();
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_HTTP_H_
