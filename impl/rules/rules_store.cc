#include "impl/rules/rules_store.h"

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

namespace ratelab {

Result<RuleSet> ReadOnlyRules::List() { return rules_; }

Status ReadOnlyRules::Refuse() const {
  return absl::FailedPreconditionError("the rules come from " + source_ +
                                       ", which the admin API only reads; keep them in "
                                       "PostgreSQL to change them here");
}

Status ReadOnlyRules::Put(const Rule&) { return Refuse(); }

Status ReadOnlyRules::Delete(std::string_view) { return Refuse(); }

struct TimedRules::Worker {
  explicit Worker(std::unique_ptr<RulesStore> store) : inner(std::move(store)) {}

  std::unique_ptr<RulesStore> inner;  // used by the thread only
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::function<void()>> calls;  // guarded by mutex
  bool stopping = false;                    // guarded by mutex

  // The thread's loop: each call in turn, until stopping with none left.
  static void Run(std::shared_ptr<Worker> self) {
    std::unique_lock lock(self->mutex);
    while (true) {
      self->wake.wait(lock, [&] { return self->stopping || !self->calls.empty(); });
      if (self->calls.empty()) return;
      std::function<void()> call = std::move(self->calls.front());
      self->calls.pop_front();
      lock.unlock();
      call();
      lock.lock();
    }
  }
};

TimedRules::TimedRules(std::unique_ptr<RulesStore> inner, Duration timeout)
    : worker_(std::make_shared<Worker>(std::move(inner))), timeout_(timeout) {
  std::thread(&Worker::Run, worker_).detach();
}

TimedRules::~TimedRules() {
  {
    std::lock_guard lock(worker_->mutex);
    worker_->stopping = true;
  }
  worker_->wake.notify_all();
}

template <typename Answer>
Answer TimedRules::Timed(std::function<Answer(RulesStore&)> call) {
  auto done = std::make_shared<std::promise<Answer>>();
  std::future<Answer> answer = done->get_future();
  {
    std::lock_guard lock(worker_->mutex);
    worker_->calls.push_back([store = worker_->inner.get(), call = std::move(call), done] {
      done->set_value(call(*store));
    });
  }
  worker_->wake.notify_all();
  if (answer.wait_for(timeout_) != std::future_status::ready) {
    return absl::DeadlineExceededError("the rules store did not answer within " +
                                       FormatDuration(timeout_));
  }
  return answer.get();
}

Result<RuleSet> TimedRules::List() {
  return Timed<Result<RuleSet>>([](RulesStore& s) { return s.List(); });
}

Status TimedRules::Put(const Rule& rule) {
  return Timed<Status>([rule](RulesStore& s) { return s.Put(rule); });
}

Status TimedRules::Delete(std::string_view rule_id) {
  return Timed<Status>([id = std::string(rule_id)](RulesStore& s) { return s.Delete(id); });
}

}  // namespace ratelab
