// Replica failover on a real Redis against the simulator's MemoryKv: a master with a replica, the
// replica falling behind (its link cut, as replication lag leaves it), the master killed and the
// replica promoted. The counts it had not received are lost and show as over-admission, with a
// witness; with WAIT after each admission (kv-fixed-window-lua-wait) an admission no replica took
// is an error instead, and nothing is over-admitted. The same requests on MemoryKv, its replica
// detached at the same point and promoted, get the same answers.
#include <gtest/gtest.h>

#include "impl/core/task.h"
#include "impl/limiters/protocol.h"
#include "impl/store/memory_kv.h"
#include "impl/store/redis_kv.h"
#include "judge/oracles.h"
#include "sim/scenario.h"
#include "testing/redis.h"
#include "testing/redis_replica.h"

namespace ratelab {
namespace {

const Policy kThreePerMinute = Policy::Window(Algorithm::kFixedWindow, 3, std::chrono::minutes(1));

// A Kv whose server can be changed under the protocol: the clients' way to the store, which a
// failover points at the promoted replica.
class SwitchedKv final : public Kv {
 public:
  explicit SwitchedKv(Kv* to) : to_(to) {}
  void SwitchTo(Kv* to) { to_ = to; }
  Result<KvReply> Execute(std::span<const std::string> argv) override { return to_->Execute(argv); }

 private:
  Kv* to_;
};

// What a failover run does at each point, on a real server or on MemoryKv.
struct Failover {
  std::function<void()> detach_replica;  // the replica stops following (lag from here on)
  std::function<void()> fail_over;       // the master is lost, the replica promoted
};

// The requests of one user, a millisecond apart, all in one minute: two before the replica
// falls behind, two after, then three once it is promoted. Each answer: "admitted 1" (its
// Remaining), "denied" or "store failure".
std::vector<std::string> Run(const std::string& protocol, Kv& kv, const Failover& failover,
                             History* history) {
  Result<std::unique_ptr<Protocol>> p = MakeProtocol(protocol, kThreePerMinute, {&kv, nullptr});
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  std::vector<std::string> out;
  for (int i = 0; i < 7; ++i) {
    if (i == 2) failover.detach_replica();
    if (i == 4) failover.fail_over();
    const Instant now =
        kDefaultScenarioStart + std::chrono::seconds(10) + std::chrono::milliseconds(i);
    InlineExecutor inline_executor;
    Context ctx(inline_executor);
    const Result<Decision> d = RunInline((*p)->Decide(ctx, {"user", "u1", "/api", 1, now}));
    HistoryEvent e;
    e.id = i;
    e.key = "u1";
    e.invoke = e.complete = now;
    if (d.ok()) {
      e.decision = *d;
      out.push_back(d->allowed ? "admitted " + std::to_string(d->remaining) : "denied");
    } else {
      EXPECT_TRUE(IsStoreFailure(d.status())) << d.status();
      out.push_back("store failure");
    }
    history->push_back(std::move(e));
  }
  return out;
}

// On MemoryKv: its replica detached and promoted at the same points.
std::vector<std::string> Simulated(const std::string& protocol, History* history) {
  ManualClock clock(kDefaultScenarioStart);
  MemoryKv kv(clock);
  return Run(protocol, kv, {[&] { kv.DetachReplica(); }, [&] { kv.FailOver(); }}, history);
}

// On real servers: a master and its replica; the replica detached once it has caught up, the
// master killed and the clients pointed at the replica, which a new replica then follows (the old
// master's place taken, as MemoryKv's new replica takes it).
void OnRedis(const std::string& protocol, std::vector<std::string>* answers, History* history) {
  RATELAB_START_OR_SKIP(master, StartRedisOnAPort());
  RATELAB_START_OR_SKIP(replica, StartReplicaOf(*master));
  RedisKv to_master(master->endpoint()), to_replica(replica->endpoint());
  SwitchedKv kv(&to_master);
  std::unique_ptr<RedisServer> new_replica;
  *answers = Run(protocol, kv,
                 {[&] { ASSERT_TRUE(DetachReplica(*master, *replica).ok()); },
                  [&] {
                    ASSERT_TRUE(master->Kill().ok());
                    kv.SwitchTo(&to_replica);
                    Result<std::unique_ptr<RedisServer>> follower = StartReplicaOf(*replica);
                    ASSERT_TRUE(follower.ok()) << follower.status();
                    new_replica = *std::move(follower);
                  }},
                 history);
}

TEST(ReplicaFailover, CountsTheReplicaHadNotReceivedAreLostAsInTheSimulator) {
  std::vector<std::string> real;
  History real_history;
  OnRedis("kv-fixed-window-lua", &real, &real_history);
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
  const std::vector<std::string> expected = {
      "admitted 2", "admitted 1",             // replicated
      "admitted 0", "denied",                 // on the master only: lost with it
      "admitted 0", "denied",     "denied"};  // the replica had 2: one more admitted
  EXPECT_EQ(real, expected);
  History simulated_history;
  EXPECT_EQ(Simulated("kv-fixed-window-lua", &simulated_history), real);
  // Four admitted in the minute: a witness of the lost count.
  const std::vector<Violation> v = CheckAlignedWindowCap(real_history, 3, std::chrono::minutes(1));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].witness.size(), 4u) << v[0].ToString();
  EXPECT_EQ(CheckAlignedWindowCap(simulated_history, 3, std::chrono::minutes(1)).size(), 1u);
}

TEST(ReplicaFailover, WithWaitAnAdmissionNoReplicaTookIsAStoreFailureNotALostCount) {
  std::vector<std::string> real;
  History real_history;
  OnRedis("kv-fixed-window-lua-wait", &real, &real_history);
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
  const std::vector<std::string> expected = {
      "admitted 2",    "admitted 1",
      "store failure",  // counted on the master, which no replica followed: WAIT 1 answered 0
      "denied",         // the master's count
      "admitted 0",     // the promoted replica had 2, and its new replica took the third
      "denied",        "denied"};
  EXPECT_EQ(real, expected);
  History simulated_history;
  EXPECT_EQ(Simulated("kv-fixed-window-lua-wait", &simulated_history), real);
  EXPECT_TRUE(CheckAlignedWindowCap(real_history, 3, std::chrono::minutes(1)).empty());
}

}  // namespace
}  // namespace ratelab
