#include "impl/service/live_rules.h"

#include "impl/rules/postgres_rules.h"

namespace ratelab {

LiveRules::LiveRules(RuleSet initial)
    : latest_(std::make_shared<const RuleSet>(std::move(initial))) {}

void LiveRules::Publish(RuleSet rules) {
  auto next = std::make_shared<const RuleSet>(std::move(rules));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    latest_ = std::move(next);
  }
  published_.fetch_add(1);
}

std::shared_ptr<const RuleSet> LiveRules::Latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return latest_;
}

struct RulesFollower::Impl {
  std::unique_ptr<RulesCache> cache;
  LiveRules live;
  std::atomic<bool> stop = false;
  std::thread thread;

  Impl(std::unique_ptr<RulesCache> c, RuleSet initial)
      : cache(std::move(c)), live(std::move(initial)) {}

  void Follow() {
    RuleSet last = cache->rules();
    while (!stop.load()) {
      // Unavailable while the server is away: the rules read last stay in force, and it is
      // tried again a little later.
      if (!cache->Poll(std::chrono::milliseconds(100)).ok()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (!(cache->rules() == last)) {
        last = cache->rules();
        live.Publish(last);
      }
    }
  }
};

Result<std::unique_ptr<RulesFollower>> RulesFollower::Start(const std::string& conninfo) {
  // Makes the table when it is missing.
  if (Result<std::unique_ptr<PostgresRules>> table = PostgresRules::Open(conninfo); !table.ok()) {
    return table.status();
  }
  Result<std::unique_ptr<RulesCache>> cache = RulesCache::Open(conninfo);
  if (!cache.ok()) return cache.status();
  RuleSet initial = (*cache)->rules();
  auto impl = std::make_unique<Impl>(*std::move(cache), std::move(initial));
  Impl* raw = impl.get();
  raw->thread = std::thread([raw] { raw->Follow(); });
  return std::unique_ptr<RulesFollower>(new RulesFollower(std::move(impl)));
}

RulesFollower::RulesFollower(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)), live_(&impl_->live) {}

RulesFollower::~RulesFollower() {
  impl_->stop = true;
  impl_->thread.join();
}

}  // namespace ratelab
