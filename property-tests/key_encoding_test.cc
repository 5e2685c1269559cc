// The limiter key schema against hostile values: scope types, values and endpoints full of ':',
// '{', '}', '%' and odd bytes. Distinct requests never share a key, and every key a kv protocol
// touches for a request hashes to the one Redis Cluster slot of that request's limiter key, so
// a user value cannot move a limiter to another slot, or split a multi-key script across two.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "impl/core/clock.h"
#include "impl/core/request.h"
#include "impl/limiters/protocol.h"
#include "impl/store/memory_kv.h"
#include "impl/store/redis_cluster.h"

namespace ratelab {
namespace {

// Short strings over the characters that could cause trouble, and a few ordinary ones.
rc::Gen<std::string> HostilePart() {
  return rc::gen::container<std::string>(
      rc::gen::element(':', '{', '}', '%', '3', 'A', 'a', '/', ' ', '\0', '\xff', '7', 'B', 'D'));
}

struct Parts {
  std::string type, value, endpoint;
  bool operator==(const Parts&) const = default;
};

rc::Gen<Parts> HostileParts() {
  return rc::gen::construct<Parts>(rc::gen::nonEmpty(HostilePart()),
                                   rc::gen::nonEmpty(HostilePart()), HostilePart());
}

// A MemoryKv that notes the keys of every command it runs.
class KeyRecordingKv final : public Kv {
 public:
  explicit KeyRecordingKv(const Clock& clock) : kv_(clock, Durability::kAlways) {}
  Result<KvReply> Execute(std::span<const std::string> argv) override {
    for (std::string_view k : KeysOf(argv)) keys.emplace_back(k);
    return kv_.Execute(argv);
  }
  std::vector<std::string> keys;

 private:
  MemoryKv kv_;
};

RC_GTEST_PROP(KeyEncoding, DistinctRequestsNeverShareAKey, ()) {
  const Parts a = *HostileParts();
  const Parts b = *rc::gen::oneOf(
      rc::gen::just(a), HostileParts(),
      rc::gen::construct<Parts>(rc::gen::just(a.type + ":" + a.value), rc::gen::just(std::string()),
                                rc::gen::just(a.endpoint)));
  const std::string ka = LimiterKey(a.type, a.value, a.endpoint);
  const std::string kb = LimiterKey(b.type, b.value, b.endpoint);
  RC_ASSERT((ka == kb) == (a == b));
  // Nothing in the parts can open or close a hash tag.
  RC_ASSERT(ka.find_first_of("{}") == std::string::npos);
}

RC_GTEST_PROP(KeyEncoding, EveryKeyOfARequestHashesToTheSlotOfItsLimiterKey, ()) {
  const Parts p = *HostileParts();
  const Request r{p.type, p.value, p.endpoint, 1, FromUnixMillis(1'800'000'000'000)};
  const int slot = KeySlot(LimiterKey(r));
  for (const ProtocolInfo& info : Protocols()) {
    if (info.store != StoreKind::kKv) continue;
    const Algorithm algorithm = info.algorithm;
    const Policy policy = Describe(algorithm).bucket
                              ? Policy::Bucket(algorithm, 2, std::chrono::seconds(1))
                              : Policy::Window(algorithm, 2, std::chrono::seconds(10));
    ManualClock clock(r.now);
    KeyRecordingKv kv(clock);
    Result<std::unique_ptr<Protocol>> protocol = MakeProtocol(info.name, policy, Stores{&kv, {}});
    RC_ASSERT(protocol.ok());
    InlineExecutor executor;
    for (int i = 0; i < 3; ++i) {  // admitted, admitted, denied: every path's keys
      Context ctx(executor);
      RC_ASSERT(RunInline((*protocol)->Decide(ctx, r)).ok());
    }
    RC_ASSERT(!kv.keys.empty());
    for (const std::string& key : kv.keys) {
      RC_ASSERT(KeySlot(key) == slot);
      RC_ASSERT(key.find("{" + LimiterKey(r) + "}") != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace ratelab
