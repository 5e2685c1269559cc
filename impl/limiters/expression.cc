#include "impl/limiters/expression.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ratelab {

namespace {

// The grammar of expression.h, by recursive descent over the text. The first problem ends the
// reading: the value is then meaningless and `error` says why.
class Reader {
 public:
  Reader(std::string_view text, const Expression::Lookup& lookup) : text_(text), lookup_(lookup) {}

  Result<double> Read() {
    const double v = Or();
    Skip();
    if (error_.empty() && at_ < text_.size())
      Fail("unexpected '" + std::string(1, text_[at_]) + "'");
    if (!error_.empty()) return absl::InvalidArgumentError(error_);
    return v;
  }

 private:
  void Skip() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '{' || text_[at_] == '}')) {
      ++at_;
    }
  }
  // Takes `token` if it comes next (a word only when whole).
  bool Take(std::string_view token) {
    Skip();
    if (text_.substr(at_, token.size()) != token) return false;
    const size_t end = at_ + token.size();
    if (std::isalpha(static_cast<unsigned char>(token[0])) && end < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
      return false;
    }
    at_ = end;
    return true;
  }
  double Fail(const std::string& what) {
    if (error_.empty()) error_ = what;
    at_ = text_.size();
    return 0;
  }
  static double Truth(bool b) { return b ? 1 : 0; }

  double Or() {
    double v = And();
    while (Take("or") || Take("||")) v = Truth(And() != 0 || v != 0);
    return v;
  }
  double And() {
    double v = Not();
    while (Take("and") || Take("&&")) v = Truth(Not() != 0 && v != 0);
    return v;
  }
  double Not() {
    Skip();
    const bool bang = text_.substr(at_, 1) == "!" && text_.substr(at_, 2) != "!=";
    if (Take("not") || (bang && Take("!"))) {
      if (++depth_ > kMaxDepth) return Fail("nested more than 64 deep");
      const double v = Truth(Not() == 0);
      --depth_;
      return v;
    }
    return Compare();
  }
  double Compare() {
    const double a = Sum();
    // Longest first: "<=" before "<".
    if (Take("<=")) return Truth(a <= Sum());
    if (Take(">=")) return Truth(a >= Sum());
    if (Take("==")) return Truth(a == Sum());
    if (Take("!=")) return Truth(a != Sum());
    if (Take("<")) return Truth(a < Sum());
    if (Take(">")) return Truth(a > Sum());
    return a;
  }
  double Sum() {
    double v = Term();
    for (;;) {
      if (Take("+")) {
        v += Term();
      } else if (Take("-")) {
        v -= Term();
      } else {
        return v;
      }
    }
  }
  double Term() {
    double v = Factor();
    for (;;) {
      if (Take("*")) {
        v *= Factor();
      } else if (Take("/")) {
        v /= Factor();
      } else if (Take("%")) {
        v = std::fmod(v, Factor());
      } else {
        return v;
      }
    }
  }
  double Factor() {
    Skip();
    if (at_ >= text_.size()) return Fail("an expression ends too soon");
    // Each level of nesting is a level of recursion: a bound keeps any text from exhausting the
    // stack.
    if (++depth_ > kMaxDepth) return Fail("nested more than 64 deep");
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    if (Take("-")) return -Factor();
    if (Take("(")) {
      const double v = Or();
      return Take(")") ? v : Fail("a '(' is not closed");
    }
    const size_t from = at_;
    const auto is = [&](auto pred) { return at_ < text_.size() && pred(text_[at_]); };
    if (is([](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; })) {
      while (is([](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; })) {
        ++at_;
      }
      const std::string number(text_.substr(from, at_ - from));
      char* end = nullptr;
      const double v = std::strtod(number.c_str(), &end);
      return *end == '\0' ? v : Fail("'" + number + "' is not a number");
    }
    while (is([](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; })) {
      ++at_;
    }
    const std::string name(text_.substr(from, at_ - from));
    if (name.empty()) return Fail("unexpected '" + std::string(1, text_[at_]) + "'");
    if (Take("(")) return Function(name);
    const std::optional<double> v = lookup_(name);
    return v ? *v : Fail("'" + name + "' is not a number here");
  }
  double Function(const std::string& name) {
    std::vector<double> args = {Or()};
    while (Take(",")) args.push_back(Or());
    if (!Take(")")) return Fail("a '(' is not closed");
    const auto one = [&](double (*f)(double)) {
      return args.size() == 1 ? f(args[0]) : Fail(name + "() takes one number");
    };
    if (name == "ceil") return one(std::ceil);
    if (name == "floor") return one(std::floor);
    if (name == "round") return one(std::round);
    if (name == "abs") return one(std::fabs);
    if (name == "min") return *std::min_element(args.begin(), args.end());
    if (name == "max") return *std::max_element(args.begin(), args.end());
    return Fail("unknown function '" + name + "' (expected ceil, floor, round, abs, min or max)");
  }

  static constexpr int kMaxDepth = 64;

  std::string_view text_;
  const Expression::Lookup& lookup_;
  size_t at_ = 0;
  int depth_ = 0;
  std::string error_;
};

}  // namespace

Result<Expression> Expression::Parse(std::string_view text,
                                     const std::function<bool(std::string_view)>& known) {
  Expression e;
  e.text_ = std::string(text);
  std::string unknown;
  // Read once with every known name at 1: the grammar and the names are checked, nothing else.
  const Lookup stand_in = [&](std::string_view name) -> std::optional<double> {
    if (std::find(e.names_.begin(), e.names_.end(), name) == e.names_.end()) {
      e.names_.emplace_back(name);
    }
    if (known(name)) return 1.0;
    if (unknown.empty()) unknown = name;
    return std::nullopt;
  };
  Result<double> v = Reader(e.text_, stand_in).Read();
  if (!unknown.empty()) return absl::InvalidArgumentError("unknown name '" + unknown + "'");
  if (!v.ok()) return v.status();
  return e;
}

Result<double> Expression::Evaluate(const Lookup& lookup) const {
  return Reader(text_, lookup).Read();
}

}  // namespace ratelab
