// The two ways a protocol talks to a Kv store, each a Step (one atomic store operation):
// one command, or one Lua script run by EVALSHA (falling back to EVAL when the server answers
// NOSCRIPT, as it does after a restart: then the request takes two steps).
#ifndef RATELAB_IMPL_LIMITERS_KV_STEPS_H_
#define RATELAB_IMPL_LIMITERS_KV_STEPS_H_

#include <span>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "impl/core/step.h"
#include "impl/core/task.h"
#include "impl/limiters/protocol.h"
#include "impl/store/kv.h"
#include "model/decision.h"
#include "model/time.h"

namespace ratelab {

// What the Kv protocols share: the store and the policy. Their state is all in the store, so a
// restart forgets nothing (a protocol with process state overrides Restart).
class KvProtocol : public Protocol {
 public:
  void Restart() override {}

 protected:
  KvProtocol(Kv& kv, const Policy& policy) : kv_(kv), policy_(policy) {}

  Kv& kv_;
  Policy policy_;
};

// A Lua script with its name (for histories) and SHA-1 (for EVALSHA), computed once.
struct KvScript {
  KvScript(std::string name, std::string body);
  std::string name;
  std::string body;
  std::string sha;
};

// What a history shows for a command: its words, space-separated, long ones shortened.
std::string CommandLabel(std::span<const std::string> argv);

// Runs `argv` on `kv` as one step.
Task<Result<KvReply>> KvCommand(Context& ctx, Kv& kv, std::vector<std::string> argv);

// The first words of an EVALSHA of `script` with `keys` keys: "EVALSHA", its SHA-1 and the number
// of keys, with room for `keys` + `args` more. The caller appends the keys, then the args, each
// moved in (no word is copied on its way to the store), and hands the whole to KvEval.
std::vector<std::string> EvalArgv(const KvScript& script, size_t keys, size_t args);

// Runs `argv`, EvalArgv's words for `script` with its keys and args appended (EVALSHA; EVAL after
// NOSCRIPT).
Task<Result<KvReply>> KvEval(Context& ctx, Kv& kv, const KvScript& script,
                             std::vector<std::string> argv);

// How long a correct protocol keeps a key past the last instant it matters (the key's own
// horizon, measured on the client's clock): the key's TTL runs on the store's clock from when the
// command lands, so a request that spent longer than this in transit could find its key expired
// and start afresh. Protocols pad by the larger of this and one window (or one tolerance).
inline constexpr Duration kTransitAllowance = std::chrono::seconds(1);

// A script's reply read as numbers: a few, held in place.
using ReplyNumbers = absl::InlinedVector<int64_t, 4>;

// The decision a script's {allowed (non-zero), remaining, ms to wait (negative: never)} reply
// says, for a policy of `limit`; the caller sets `reset`.
Decision ScriptDecision(const ReplyNumbers& reply, int64_t limit);

// The first `n` elements of an array reply as integers (numbers may come back as strings);
// the store's error as is, and Internal naming `protocol` when the reply has another shape.
Result<ReplyNumbers> ReplyIntegers(const Result<KvReply>& reply, size_t n,
                                   std::string_view protocol);

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_KV_STEPS_H_
