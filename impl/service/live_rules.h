// The rules a server decides by while they change: LiveRules holds the set in force, replaced
// whole by one thread and read by the server's threads; RulesFollower is the thread that follows
// PostgreSQL's rules table (a RulesCache: LISTEN/NOTIFY, and everything read again after a lost
// connection) and publishes each change. The decision path never waits on PostgreSQL.
#ifndef RATELAB_IMPL_SERVICE_LIVE_RULES_H_
#define RATELAB_IMPL_SERVICE_LIVE_RULES_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "impl/core/status.h"
#include "impl/rules/rules.h"

namespace ratelab {

class LiveRules {
 public:
  explicit LiveRules(RuleSet initial);
  // From any thread: `rules` are in force from the next Latest().
  void Publish(RuleSet rules);
  // The rules in force, from any thread.
  std::shared_ptr<const RuleSet> Latest() const;
  // How many sets were published after the initial one.
  int64_t published() const { return published_.load(); }

  // One reading thread's view: Current() is the set in force, and its reference stays valid
  // until that thread's next call.
  class Reader {
   public:
    explicit Reader(const LiveRules& live) : live_(live) {}
    const RuleSet& Current() {
      in_use_ = live_.Latest();
      return *in_use_;
    }

   private:
    const LiveRules& live_;
    std::shared_ptr<const RuleSet> in_use_;
  };

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const RuleSet> latest_;  // guarded by mutex_
  std::atomic<int64_t> published_ = 0;
};

class RulesFollower {
 public:
  // Reads every rule from `conninfo` (the table made when missing), then follows it on a thread
  // of its own, publishing into the returned follower's rules(). Unavailable when the server
  // cannot be reached at the start; later outages keep the rules last read in force.
  static Result<std::unique_ptr<RulesFollower>> Start(const std::string& conninfo);
  ~RulesFollower();  // stops following
  RulesFollower(const RulesFollower&) = delete;
  RulesFollower& operator=(const RulesFollower&) = delete;

  LiveRules& rules() { return *live_; }

 private:
  struct Impl;
  explicit RulesFollower(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  LiveRules* live_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_LIVE_RULES_H_
