// The search behind `ratelab check`: its draws are a function of the seed, made of the
// simulator's own traffic and fault draws; shrinking keeps the invariant broken with fewer
// requests. (A store that cannot be reached is an error, never "nothing found":
// live/server_stores_test.cc.)
#include "sim/search.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>

namespace ratelab {
namespace {

using std::chrono::seconds;

Case Base(Algorithm a, int64_t limit, Duration window) {
  Case c;
  c.policy =
      Describe(a).bucket ? Policy::Bucket(a, limit, window) : Policy::Window(a, limit, window);
  c.checks = {CheckId::kPromise};
  return c;
}

TEST(SearchFaults, ReadsANamedListAndRemembersItsOrder) {
  Result<SearchFaults> f = ParseSearchFaults("store-restart,crash,store-restart");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->ToString(), "store-restart,crash");
  EXPECT_EQ(f->Sorted(), "crash,store-restart");
  EXPECT_EQ(*f, (SearchFaults{FaultKind::kCrash, FaultKind::kStoreRestart}));
  EXPECT_NE(*f, (SearchFaults{FaultKind::kCrash}));
  EXPECT_EQ(ParseSearchFaults("none")->ToString(), "none");
  EXPECT_EQ(ParseSearchFaults("")->ToString(), "none");
  const Result<SearchFaults> bad = ParseSearchFaults("crash,meteor");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "unknown fault 'meteor' (expected none, or a comma-separated list of clock-skew, "
            "crash, store-failover, store-outage, store-restart or store-stall)");
  // One vocabulary: a fault a scenario file gives by `type` has the same name here, and one a
  // search does not draw is refused, saying where it can be given.
  EXPECT_EQ(ParseSearchFaults("latency-spike").status().message(),
            "unknown fault 'latency-spike' (expected none, or a comma-separated list of "
            "clock-skew, crash, store-failover, store-outage, store-restart or store-stall; a "
            "scenario file can give a latency-spike)");
  EXPECT_FALSE(ParseSearchFaults("restart").ok()) << "the store's restart is store-restart";
}

TEST(Draw, TheSameSeedDrawsTheSameCase) {
  const Case base = Base(Algorithm::kFixedWindow, 3, seconds(10));
  const SearchFaults all = {FaultKind::kCrash, FaultKind::kStoreRestart, FaultKind::kStoreOutage,
                            FaultKind::kClockSkew};
  std::set<size_t> sizes;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Case a = Draw(base, seed, all, 3), b = Draw(base, seed, all, 3);
    ASSERT_EQ(a.arrivals.size(), b.arrivals.size());
    for (size_t i = 0; i < a.arrivals.size(); ++i) {
      EXPECT_EQ(a.arrivals[i].at, b.arrivals[i].at);
      EXPECT_EQ(a.arrivals[i].user, b.arrivals[i].user);
    }
    ASSERT_EQ(a.faults.size(), b.faults.size());
    sizes.insert(a.arrivals.size());
  }
  EXPECT_GT(sizes.size(), 5u) << "different seeds draw different traffic";
}

// The search's cases add two keys that see one request each, and leave the drawn requests (and
// their random streams) as they were.
TEST(Draw, KeysUsedOnceAreAddedBesideTheTrafficDrawn) {
  const Case base = Base(Algorithm::kTokenBucket, 3, seconds(1));
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Case drawn = Draw(base, seed, {}, 2);
    Case c = drawn;
    AddKeysUsedOnce(c, seed);
    ASSERT_EQ(c.arrivals.size(), drawn.arrivals.size() + 2);
    std::map<std::string, int> once;
    std::vector<Arrival> rest;
    for (const Arrival& a : c.arrivals) {
      if (a.user.starts_with("once")) {
        ++once[a.user];
        EXPECT_GT(a.stream, drawn.arrivals.size()) << "a stream after the drawn ones";
      } else {
        rest.push_back(a);
      }
    }
    EXPECT_EQ(once, (std::map<std::string, int>{{"once1", 1}, {"once2", 1}}));
    ASSERT_EQ(rest.size(), drawn.arrivals.size());
    for (size_t i = 0; i < rest.size(); ++i) {
      EXPECT_EQ(rest[i].at, drawn.arrivals[i].at);
      EXPECT_EQ(rest[i].stream, drawn.arrivals[i].stream);
    }
  }
}

TEST(Draw, TrafficSpansThreeWindowsAndFaultsAreOnlyOfTheKindsAsked) {
  const Case base = Base(Algorithm::kFixedWindow, 2, seconds(10));
  const Instant start = kDefaultScenarioStart;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const Case c = Draw(base, seed, {FaultKind::kStoreOutage}, 2);
    ASSERT_FALSE(c.arrivals.empty());
    EXPECT_TRUE(std::is_sorted(c.arrivals.begin(), c.arrivals.end(),
                               [](const Arrival& a, const Arrival& b) { return a.at < b.at; }));
    for (const Arrival& a : c.arrivals) {
      EXPECT_GE(a.at, start - seconds(1)) << "a boundary attack starts just before an edge";
      EXPECT_LT(a.at, start + seconds(30) + seconds(1));
      EXPECT_TRUE(a.user == "u1" || a.user == "u2") << a.user;
    }
    EXPECT_EQ(c.nodes.size(), 2u);
    EXPECT_EQ(c.nodes[1].clock_offset, Duration(0)) << "no skew unless asked";
    for (const FaultSpec& f : c.faults) {
      EXPECT_EQ(f.kind, FaultKind::kStoreOutage);
      // Just after some request: within a round trip of the latest request before it.
      const Instant at = start + f.at;
      bool near = false;
      for (const Arrival& a : c.arrivals) {
        near = near || (a.at <= at && at - a.at <= 2 * (kSearchLatencyBase + kSearchLatencyJitter));
      }
      EXPECT_TRUE(near) << "seed " << seed;
    }
  }
  int skewed = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    skewed += Draw(base, seed, {FaultKind::kClockSkew}, 2).nodes[1].clock_offset != Duration(0);
  }
  EXPECT_GT(skewed, 15);
}

// Each request draws its node and its latencies from its own stream: taking one away (as the
// shrink does) leaves every other request on the same node, its first step applied as long after
// it was sent as before (a step's first draw is its way out to the store).
TEST(Shrink, TakingARequestAwayLeavesTheOthersDrawsAsTheyWere) {
  const std::shared_ptr<const ProtocolInfo> protocol = RegistryProtocol("kv-gcra-lua");
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Case drawn = Draw(Base(Algorithm::kGcra, 2, seconds(1)), seed, {}, 3);
    ASSERT_GT(drawn.arrivals.size(), 4u);
    const Result<CaseRun> whole = RunCase(protocol, drawn, seed, nullptr);
    ASSERT_TRUE(whole.ok()) << whole.status();
    for (size_t gone : {size_t{0}, drawn.arrivals.size() / 2}) {
      Case less = drawn;
      less.arrivals.erase(less.arrivals.begin() + static_cast<std::ptrdiff_t>(gone));
      const Result<CaseRun> run = RunCase(protocol, less, seed, nullptr);
      ASSERT_TRUE(run.ok()) << run.status();
      for (size_t i = 0; i < less.arrivals.size(); ++i) {
        const HistoryEvent& before = whole->history[i < gone ? i : i + 1];
        const HistoryEvent& after = run->history[i];
        ASSERT_EQ(after.node, before.node) << "seed " << seed << ", request " << i;
        ASSERT_FALSE(after.steps.empty());
        EXPECT_EQ(after.steps[0].at - after.invoke, before.steps[0].at - before.invoke)
            << "seed " << seed << ", request " << i;
      }
    }
  }
}

TEST(Shrink, KeepsTheRaceWithTwoRequestsAndNeverGrows) {
  const std::shared_ptr<const ProtocolInfo> racy = RegistryProtocol("kv-token-bucket-hgetall-hset");
  const Case base = Base(Algorithm::kTokenBucket, 1, seconds(1));
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Case drawn = Draw(base, seed, {}, 3);
    Result<CaseRun> run = RunCase(racy, drawn, seed, nullptr);
    ASSERT_TRUE(run.ok()) << run.status();
    if (!run->first) continue;
    Result<Case> minimal = Shrink(racy, drawn, seed, run->first->invariant, 2000, false, nullptr);
    ASSERT_TRUE(minimal.ok()) << minimal.status();
    EXPECT_EQ(minimal->arrivals.size(), 2u) << "2 requests, 1 token: both succeed";
    Result<CaseRun> again = RunCase(racy, *minimal, seed, nullptr);
    ASSERT_TRUE(again.ok());
    ASSERT_TRUE(again->first);
    EXPECT_EQ(again->first->invariant, run->first->invariant);
    // With no runs to spend, nothing is taken away.
    Result<Case> untouched = Shrink(racy, drawn, seed, run->first->invariant, 0, false, nullptr);
    ASSERT_TRUE(untouched.ok());
    EXPECT_EQ(untouched->arrivals.size(), drawn.arrivals.size());
    return;
  }
  FAIL() << "no seed in 1..20 found the race";
}

// On one thread, and side by side (the stop well after the threads' first seeds).
TEST(Search, StopsWhenItsProgressSaysSoWithNothingFound) {
  SearchOptions options;
  options.base = Base(Algorithm::kTokenBucket, 1, seconds(1));
  options.seeds.last = 200;
  for (int jobs : {1, 3}) {
    options.jobs = jobs;
    Result<SearchResult> r = Search(RegistryProtocol("kv-token-bucket-lua"), options,
                                    [](uint64_t seed) { return seed < 150; });
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->interrupted);
    EXPECT_EQ(r->seeds_searched, 149u) << jobs;
    EXPECT_FALSE(r->finding);
    // The stop (a user's Ctrl-C) set while seed 150 is told: no run that ended after it counts.
    std::atomic<int> stop{0};
    options.stop = &stop;
    r = Search(RegistryProtocol("kv-token-bucket-lua"), options, [&](uint64_t seed) {
      if (seed == 150) stop = 1;
      return true;
    });
    options.stop = nullptr;
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->interrupted);
    EXPECT_GE(r->seeds_searched, 149u) << jobs;
    EXPECT_LT(r->seeds_searched, 200u) << jobs;
    EXPECT_FALSE(r->finding);
  }
}

TEST(Search, FindsAFlawAndNothingInACorrectProtocolAndCountsTheSeeds) {
  SearchOptions options;
  options.base = Base(Algorithm::kTokenBucket, 1, seconds(1));
  options.seeds.last = 20;
  std::vector<uint64_t> told;
  Result<SearchResult> found =
      Search(RegistryProtocol("kv-token-bucket-hgetall-hset"), options, [&](uint64_t seed) {
        told.push_back(seed);
        return true;
      });
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->finding);
  EXPECT_EQ(found->seeds_searched, found->finding->seed);
  EXPECT_EQ(told.size(), found->seeds_searched);
  EXPECT_EQ(found->finding->check, CheckId::kPromise);
  EXPECT_EQ(found->finding->witness.size(), found->finding->minimal.arrivals.size());

  options.seeds.last = 40;
  Result<SearchResult> none = Search(RegistryProtocol("kv-token-bucket-lua"), options);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->finding);
  EXPECT_EQ(none->seeds_searched, 40u);
}

// What a search said, to compare two searches of the same seeds by: where it stopped, what it
// found there, and the progress it told.
struct Said {
  SearchResult result;
  std::vector<uint64_t> told;
};
Said SearchWithJobs(const std::string& name, SearchOptions options, int jobs) {
  options.jobs = jobs;
  Said said;
  const std::shared_ptr<const ProtocolInfo> protocol = RegistryProtocol(name);
  options.base.checks = DefaultChecks(*protocol);
  Result<SearchResult> r = Search(protocol, options, [&](uint64_t seed) {
    said.told.push_back(seed);
    return true;
  });
  EXPECT_TRUE(r.ok()) << r.status();
  if (r.ok()) said.result = *std::move(r);
  return said;
}

TEST(Search, SideBySideItFindsWhatOneThreadFindsSeedForSeed) {
  struct Range {
    std::string protocol;
    Algorithm algorithm;
    int64_t limit;
    Duration window;
    SearchFaults faults;
    uint64_t first, last;
    uint64_t searched;  // by one thread: where the flaw is, or every seed
  };
  // A flaw at the first seed; one 162 seeds in, after many seeds taken by each thread; none in
  // 300 seeds.
  const Range ranges[] = {
      {"kv-token-bucket-hgetall-hset",
       Algorithm::kTokenBucket,
       3,
       seconds(1),
       {FaultKind::kCrash},
       1,
       20,
       1},
      {"kv-fixed-window-lua-wait",
       Algorithm::kFixedWindow,
       2,
       seconds(10),
       {FaultKind::kStoreFailover},
       146,
       1000,
       162},
      {"kv-gcra-lua",
       Algorithm::kGcra,
       3,
       seconds(1),
       {FaultKind::kCrash, FaultKind::kStoreRestart},
       1,
       300,
       300},
  };
  for (const Range& range : ranges) {
    SCOPED_TRACE(range.protocol);
    SearchOptions options;
    options.base = Base(range.algorithm, range.limit, range.window);
    options.faults = range.faults;
    options.seeds = {range.first, range.last, 1};
    const Said one = SearchWithJobs(range.protocol, options, 1);
    ASSERT_EQ(one.result.seeds_searched, range.searched);
    for (int jobs : {2, 3}) {
      SCOPED_TRACE(jobs);
      const Said many = SearchWithJobs(range.protocol, options, jobs);
      EXPECT_EQ(many.result.seeds_searched, one.result.seeds_searched);
      EXPECT_EQ(many.told, one.told);
      EXPECT_EQ(many.result.fallback_decisions, one.result.fallback_decisions);
      EXPECT_EQ(many.result.interrupted, one.result.interrupted);
      ASSERT_EQ(many.result.finding.has_value(), one.result.finding.has_value());
      EXPECT_EQ(many.result.failure.has_value(), one.result.failure.has_value());
      if (!one.result.finding) continue;
      const Finding &a = *one.result.finding, &b = *many.result.finding;
      EXPECT_EQ(b.seed, a.seed);
      EXPECT_EQ(b.check, a.check);
      EXPECT_EQ(b.minimal.arrivals.size(), a.minimal.arrivals.size());
      EXPECT_EQ(HistoryHash(b.witness), HistoryHash(a.witness));
      EXPECT_EQ(b.violation.summary, a.violation.summary);
    }
  }
}

// Every protocol on the embedded stores, at its own default policy: the same seed found (or
// none), with the same witness, on three threads as on one.
TEST(Search, SideBySideEveryProtocolOnTheEmbeddedStoresFindsTheSame) {
  for (const ProtocolInfo& p : Protocols()) {
    if (p.store == StoreKind::kSql) continue;  // PostgreSQL's, one at a time
    SCOPED_TRACE(p.name);
    SearchOptions options;
    options.base = Base(p.algorithm, 3, seconds(1));
    if (!p.Suits(options.base.policy).ok()) continue;
    // An in-process limiter's state is its node's, and a crash loses it (a finding at once): one
    // node, no faults; on a store, three nodes, and crashes and restarts.
    if (p.store == StoreKind::kMemory) {
      options.concurrency = 1;
    } else {
      options.faults = {FaultKind::kCrash, FaultKind::kStoreRestart};
    }
    options.seeds.last = 40;
    const Said one = SearchWithJobs(p.name, options, 1), three = SearchWithJobs(p.name, options, 3);
    EXPECT_EQ(three.result.seeds_searched, one.result.seeds_searched);
    ASSERT_EQ(three.result.finding.has_value(), one.result.finding.has_value());
    if (one.result.finding) {
      EXPECT_EQ(three.result.finding->seed, one.result.finding->seed);
      EXPECT_EQ(HistoryHash(three.result.finding->witness),
                HistoryHash(one.result.finding->witness));
    }
  }
}

TEST(Search, RunsSeedsSideBySideOnlyWhereTheyShareNoState) {
  SearchOptions options;
  options.base = Base(Algorithm::kTokenBucket, 1, seconds(1));
  options.seeds.last = 5;
  for (int jobs : {0, kMostJobs + 1}) {
    options.jobs = jobs;
    Result<SearchResult> r = Search(RegistryProtocol("kv-token-bucket-lua"), options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--jobs must be between 1 and 256"), std::string::npos)
        << r.status();
  }
  // A limiter in this process's memory keeps one state, whatever the seed.
  options.jobs = 2;
  const std::shared_ptr<const ProtocolInfo> own =
      InProcessProtocol({"counts", Algorithm::kTokenBucket, Duration(1),
                         [](const Policy& p, const Stores&) -> std::unique_ptr<Protocol> {
                           return RegistryProtocol("memory-token-bucket")->make(p, {});
                         }});
  Result<SearchResult> refused = Search(own, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("one state for every seed"), std::string::npos)
      << refused.status();
  // A server's: its seeds would share its keys (refused before any store is opened).
  class Server final : public StoreSource {
   public:
    Server() : StoreSource(StoreName{StoreName::Kind::kUrl, "redis://127.0.0.1:1"}) {}
    Result<std::unique_ptr<KvBackend>> Open(const Clock&, Durability) override {
      return absl::UnavailableError("no server here");
    }
    Result<std::unique_ptr<SqlBackend>> OpenSql(Durability) override { return NoSqlStore(); }
  };
  options.stores = std::make_shared<Server>();
  Result<SearchResult> shared = Search(RegistryProtocol("kv-token-bucket-lua"), options);
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("would share the server's keys"), std::string::npos)
      << shared.status();
  // The embedded store, named or not, runs them side by side.
  options.stores = MemoryStores();
  Result<SearchResult> ran = Search(RegistryProtocol("kv-token-bucket-lua"), options);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(ran->seeds_searched, 5u);
}

}  // namespace
}  // namespace ratelab
