// A small expression language over named numbers, for a user script's templates ({rate_per_s*1000})
// and its decision (--decide 'count <= {limit}'):
//
//   or       = and (('or' | '||') and)*
//   and      = not (('and' | '&&') not)*
//   not      = ('not' | '!') not | compare
//   compare  = sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?
//   sum      = term (('+' | '-') term)*
//   term     = factor (('*' | '/' | '%') factor)*
//   factor   = '-' factor | number | name | function '(' or (',' or)* ')' | '(' or ')'
//   function = ceil | floor | round | abs | min | max
//
// Numbers are doubles; a comparison or a logical operator gives 1 (true) or 0 (false), and any
// non-zero number is true. `{name}` is the same as `name`, so a decision can be written the way
// a template is.
#ifndef RATELAB_IMPL_LIMITERS_EXPRESSION_H_
#define RATELAB_IMPL_LIMITERS_EXPRESSION_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"

namespace ratelab {

class Expression {
 public:
  // A name's value; nullopt when it is not a number (text, or nothing by that name).
  using Lookup = std::function<std::optional<double>(std::string_view name)>;

  // Reads `text`, every name of which `known` must accept; InvalidArgument naming what is wrong.
  static Result<Expression> Parse(std::string_view text,
                                  const std::function<bool(std::string_view)>& known);

  // The value, with each name from `lookup`; InvalidArgument naming a name without a number.
  Result<double> Evaluate(const Lookup& lookup) const;

  // The names it uses, in order of first use.
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::string text_;
  std::vector<std::string> names_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_EXPRESSION_H_
