// A protocol: a limiter written as a short coroutine that performs a few atomic store operations
// (each a Step) and returns a Decision. The same code runs for real (InlineExecutor) and in the
// simulator. Errors from the store come back as a non-OK Result; a denial is an OK Decision.
#ifndef RATELAB_IMPL_LIMITERS_PROTOCOL_H_
#define RATELAB_IMPL_LIMITERS_PROTOCOL_H_

#include <span>
#include <string_view>

#include "impl/core/request.h"
#include "impl/core/status.h"
#include "impl/core/step.h"
#include "impl/core/task.h"
#include "model/decision.h"
#include "model/policy.h"

namespace ratelab {

class Protocol {
 public:
  virtual ~Protocol() = default;
  // Decides `request`. The request and the context must outlive the task.
  virtual Task<Result<Decision>> Decide(Context& ctx, const Request& request) = 0;
  // Forgets the state this process holds (a restart); state in an external store is kept.
  virtual void Restart() = 0;
};

struct ProtocolInfo {
  std::string_view name;
  std::string_view store;      // "memory", "kv", "docs", "sql"
  std::string_view source;     // the seed it reproduces, or "best practice"
  std::string_view algorithm;  // the promise it is checked against
  std::string_view summary;
};
// Every protocol ratelab implements, for `ratelab list`.
std::span<const ProtocolInfo> Protocols();

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_PROTOCOL_H_
