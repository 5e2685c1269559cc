#include "impl/service/structured_fields.h"

#include <algorithm>
#include <array>

#include "impl/service/http.h"

namespace ratelab {

namespace {

bool LcAlpha(char c) { return c >= 'a' && c <= 'z'; }
bool Alpha(char c) { return LcAlpha(c) || (c >= 'A' && c <= 'Z'); }
bool Digit(char c) { return c >= '0' && c <= '9'; }
bool Base64(char c) { return Alpha(c) || Digit(c) || c == '+' || c == '/' || c == '='; }

constexpr std::array<std::pair<SfBareItem::Kind, std::string_view>, 6> kKindNames = {{
    {SfBareItem::Kind::kInteger, "an Integer"},
    {SfBareItem::Kind::kDecimal, "a Decimal"},
    {SfBareItem::Kind::kString, "a String"},
    {SfBareItem::Kind::kToken, "a Token"},
    {SfBareItem::Kind::kByteSequence, "a Byte Sequence"},
    {SfBareItem::Kind::kBoolean, "a Boolean"},
}};

// RFC 8941's parsing algorithms (section 4.2) over one field value.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<std::vector<SfItem>> List() {
    std::vector<SfItem> out;
    SkipSpaces();
    if (AtEnd()) return out;
    while (true) {
      if (Peek() == '(') return Error("an Inner List, which these fields do not have");
      Result<SfItem> item = Item();
      if (!item.ok()) return item.status();
      out.push_back(*std::move(item));
      Result<bool> last = AfterMember();
      if (!last.ok()) return last.status();
      if (*last) return out;
    }
  }

  // An sf-dictionary (RFC 8941 4.2.2) of Items: a key alone is the Boolean true.
  Result<std::vector<std::pair<std::string, SfItem>>> Dictionary() {
    std::vector<std::pair<std::string, SfItem>> out;
    SkipSpaces();
    if (AtEnd()) return out;
    while (true) {
      Result<std::string> key = Key("a key");
      if (!key.ok()) return key.status();
      SfItem item;
      if (Peek() == '=') {
        ++at_;
        if (Peek() == '(') return Error("an Inner List, which these fields do not have");
        Result<SfItem> value = Item();
        if (!value.ok()) return value.status();
        item = *std::move(value);
      } else {
        item.value = SfBareItem{SfBareItem::Kind::kBoolean, 1, ""};
        if (Status s = Parameters(item); !s.ok()) return s;
      }
      // A key given again takes the later value, in the earlier place.
      const auto same = std::find_if(out.begin(), out.end(),
                                     [&](const auto& member) { return member.first == *key; });
      if (same != out.end()) {
        same->second = std::move(item);
      } else {
        out.emplace_back(*std::move(key), std::move(item));
      }
      Result<bool> last = AfterMember();
      if (!last.ok()) return last.status();
      if (*last) return out;
    }
  }

 private:
  // After a list's or a dictionary's member: true at the end; false past the ',' before the
  // next member.
  Result<bool> AfterMember() {
    SkipWhitespace();
    if (AtEnd()) return true;
    if (Peek() != ',') return Error("expected ',' or the end after a member");
    ++at_;
    SkipWhitespace();
    if (AtEnd()) return Error("a ',' with no member after it");
    return false;
  }

  bool AtEnd() const { return at_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[at_]; }
  void SkipSpaces() {
    while (!AtEnd() && text_[at_] == ' ') ++at_;
  }
  void SkipWhitespace() {
    while (!AtEnd() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  Status Error(const std::string& what) const {
    return absl::InvalidArgumentError("at byte " + std::to_string(at_ + 1) + ": " + what);
  }

  Result<SfItem> Item() {
    SfItem item;
    Result<SfBareItem> bare = BareItem();
    if (!bare.ok()) return bare.status();
    item.value = *std::move(bare);
    if (Status s = Parameters(item); !s.ok()) return s;
    return item;
  }

  Status Parameters(SfItem& item) {
    while (Peek() == ';') {
      ++at_;
      SkipSpaces();
      Result<std::string> key = Key("a parameter's name");
      if (!key.ok()) return key.status();
      SfBareItem value{SfBareItem::Kind::kBoolean, 1, ""};
      if (Peek() == '=') {
        ++at_;
        Result<SfBareItem> v = BareItem();
        if (!v.ok()) return v.status();
        value = *std::move(v);
      }
      // A key given again takes the later value, in the earlier place.
      bool seen = false;
      for (auto& [k, v] : item.parameters) {
        if (k == *key) {
          v = value;
          seen = true;
        }
      }
      if (!seen) item.parameters.emplace_back(*std::move(key), std::move(value));
    }
    return absl::OkStatus();
  }

  Result<std::string> Key(std::string_view what) {
    if (!LcAlpha(Peek()) && Peek() != '*') {
      return Error("expected " + std::string(what) + " (a lowercase letter or '*')");
    }
    const size_t start = at_;
    while (!AtEnd() && (LcAlpha(Peek()) || Digit(Peek()) ||
                        std::string_view("_-.*").find(Peek()) != std::string::npos)) {
      ++at_;
    }
    return std::string(text_.substr(start, at_ - start));
  }

  Result<SfBareItem> BareItem() {
    const char c = Peek();
    if (c == '-' || Digit(c)) return Number();
    if (c == '"') return String();
    if (c == '*' || Alpha(c)) return Token();
    if (c == ':') return ByteSequence();
    if (c == '?') return Boolean();
    return Error(AtEnd() ? "expected a value, found the end"
                         : std::string("expected a value, found '") + c + "'");
  }

  Result<SfBareItem> Number() {
    const size_t start = at_;
    const bool negative = Peek() == '-';
    if (negative) ++at_;
    if (!Digit(Peek())) return Error("expected a digit");
    size_t digits = 0, fraction = 0;
    bool decimal = false;
    int64_t value = 0;
    while (!AtEnd() && (Digit(Peek()) || (Peek() == '.' && !decimal))) {
      if (Peek() == '.') {
        if (digits > 12) return Error("a Decimal with more than 12 digits before its '.'");
        decimal = true;
      } else if (decimal) {
        ++fraction;
      } else {
        if (++digits > 15) return Error("an Integer of more than 15 digits");
        value = value * 10 + (Peek() - '0');
      }
      ++at_;
    }
    if (decimal) {
      if (fraction == 0 || fraction > 3) return Error("a Decimal needs 1 to 3 digits after '.'");
      return SfBareItem{SfBareItem::Kind::kDecimal, 0,
                        std::string(text_.substr(start, at_ - start))};
    }
    return SfBareItem{SfBareItem::Kind::kInteger, negative ? -value : value, ""};
  }

  Result<SfBareItem> String() {
    ++at_;  // the opening quote
    std::string out;
    while (true) {
      if (AtEnd()) return Error("a String with no closing '\"'");
      const char c = text_[at_++];
      if (c == '"') return SfBareItem{SfBareItem::Kind::kString, 0, std::move(out)};
      if (c == '\\') {
        if (AtEnd() || (Peek() != '"' && Peek() != '\\')) {
          return Error("a String may escape only '\"' and '\\'");
        }
        out += text_[at_++];
      } else if (c < 0x20 || c > 0x7e) {
        --at_;
        return Error("a String holds only printable ASCII");
      } else {
        out += c;
      }
    }
  }

  Result<SfBareItem> Token() {
    const size_t start = at_;
    ++at_;
    while (!AtEnd() && (IsHttpTokenChar(Peek()) || Peek() == ':' || Peek() == '/')) ++at_;
    return SfBareItem{SfBareItem::Kind::kToken, 0, std::string(text_.substr(start, at_ - start))};
  }

  Result<SfBareItem> ByteSequence() {
    ++at_;
    const size_t start = at_;
    while (!AtEnd() && Base64(Peek())) ++at_;
    if (Peek() != ':') return Error("a Byte Sequence with no closing ':'");
    std::string b64(text_.substr(start, at_ - start));
    ++at_;
    return SfBareItem{SfBareItem::Kind::kByteSequence, 0, std::move(b64)};
  }

  Result<SfBareItem> Boolean() {
    ++at_;
    if (Peek() != '0' && Peek() != '1') return Error("a Boolean is ?0 or ?1");
    return SfBareItem{SfBareItem::Kind::kBoolean, text_[at_++] - '0', ""};
  }

  std::string_view text_;
  size_t at_ = 0;
};

// "member N ("name")", for errors.
std::string Member(size_t index, const SfItem& item) {
  return "member " + std::to_string(index + 1) +
         (item.value.kind == SfBareItem::Kind::kString ? " (\"" + item.value.text + "\")" : "");
}

// The Integer parameter `key` of member `index`: none when absent and not `required`; an error
// when it is not an Integer of at least `min`.
Result<std::optional<int64_t>> IntegerParameter(size_t index, const SfItem& item,
                                                std::string_view key, bool required, int64_t min) {
  const SfBareItem* p = item.Parameter(key);
  const std::string where = Member(index, item) + ": " + std::string(key) + ": ";
  if (p == nullptr) {
    if (!required) return std::optional<int64_t>();
    return absl::InvalidArgumentError(where + "missing");
  }
  if (p->kind != SfBareItem::Kind::kInteger) {
    return absl::InvalidArgumentError(where + "expected an Integer, found " +
                                      std::string(SfKindName(p->kind)));
  }
  if (p->integer < min) {
    return absl::InvalidArgumentError(where + std::to_string(p->integer) + " is below " +
                                      std::to_string(min));
  }
  return std::optional<int64_t>(p->integer);
}

// The members of `text`, each checked to be a String (a policy's name).
Result<std::vector<SfItem>> NamedMembers(std::string_view text) {
  Result<std::vector<SfItem>> list = ParseSfList(text);
  if (!list.ok()) return list.status();
  for (size_t i = 0; i < list->size(); ++i) {
    const SfBareItem& v = (*list)[i].value;
    if (v.kind != SfBareItem::Kind::kString) {
      return absl::InvalidArgumentError(Member(i, (*list)[i]) +
                                        ": expected a String naming a policy, found " +
                                        std::string(SfKindName(v.kind)));
    }
  }
  return list;
}

// Either field: members named by Strings, each with the non-negative Integer `required` and
// perhaps the Integer `optional` of at least `optional_min`, as a Field {name, required,
// optional}.
template <typename Field>
Result<std::vector<Field>> NamedField(std::string_view text, std::string_view required,
                                      std::string_view optional, int64_t optional_min) {
  Result<std::vector<SfItem>> members = NamedMembers(text);
  if (!members.ok()) return members.status();
  std::vector<Field> out;
  for (size_t i = 0; i < members->size(); ++i) {
    const SfItem& m = (*members)[i];
    Result<std::optional<int64_t>> must = IntegerParameter(i, m, required, true, 0);
    if (!must.ok()) return must.status();
    Result<std::optional<int64_t>> may = IntegerParameter(i, m, optional, false, optional_min);
    if (!may.ok()) return may.status();
    out.push_back(Field{m.value.text, **must, *may});
  }
  return out;
}

}  // namespace

std::string_view SfKindName(SfBareItem::Kind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "a value";
}

const SfBareItem* SfItem::Parameter(std::string_view key) const {
  for (const auto& [k, v] : parameters) {
    if (k == key) return &v;
  }
  return nullptr;
}

Result<std::vector<SfItem>> ParseSfList(std::string_view text) { return Parser(text).List(); }

Result<std::vector<std::pair<std::string, SfItem>>> ParseSfDictionary(std::string_view text) {
  return Parser(text).Dictionary();
}

Result<std::vector<RateLimitPolicyField>> ParseRateLimitPolicy(std::string_view text) {
  return NamedField<RateLimitPolicyField>(text, "q", "w", 1);
}

Result<std::vector<RateLimitField>> ParseRateLimit(std::string_view text) {
  return NamedField<RateLimitField>(text, "r", "t", 0);
}

Result<std::vector<RateLimitPolicyField>> ParseAnyRateLimitPolicy(std::string_view text) {
  Result<std::vector<SfItem>> list = ParseSfList(text);
  const bool earlier =
      list.ok() && !list->empty() && std::all_of(list->begin(), list->end(), [](const SfItem& m) {
        return m.value.kind == SfBareItem::Kind::kInteger;
      });
  if (!earlier) return ParseRateLimitPolicy(text);
  std::vector<RateLimitPolicyField> out;
  for (size_t i = 0; i < list->size(); ++i) {
    const SfItem& m = (*list)[i];
    if (m.value.integer < 0) {
      return absl::InvalidArgumentError(Member(i, m) + ": a quota of " +
                                        std::to_string(m.value.integer) + " is below 0");
    }
    Result<std::optional<int64_t>> w = IntegerParameter(i, m, "w", false, 1);
    if (!w.ok()) return w.status();
    out.push_back({"", m.value.integer, *w});
  }
  return out;
}

Result<std::vector<RateLimitField>> ParseAnyRateLimit(std::string_view text) {
  Result<std::vector<RateLimitField>> current = ParseRateLimit(text);
  if (current.ok()) return current;
  Result<std::vector<std::pair<std::string, SfItem>>> dictionary = ParseSfDictionary(text);
  if (!dictionary.ok()) return current;
  std::optional<int64_t> remaining, reset;
  for (const auto& [key, item] : *dictionary) {
    std::optional<int64_t>* slot = key == "remaining" ? &remaining
                                   : key == "reset"   ? &reset
                                                      : nullptr;
    if (key != "limit" && slot == nullptr) continue;
    if (item.value.kind != SfBareItem::Kind::kInteger) {
      return absl::InvalidArgumentError(key + ": expected an Integer, found " +
                                        std::string(SfKindName(item.value.kind)));
    }
    if (item.value.integer < 0) {
      return absl::InvalidArgumentError(key + ": " + std::to_string(item.value.integer) +
                                        " is below 0");
    }
    if (slot != nullptr) *slot = item.value.integer;
  }
  if (!remaining) return current;
  return std::vector<RateLimitField>{{"", *remaining, reset}};
}

}  // namespace ratelab
