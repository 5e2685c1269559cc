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

template <typename T>
Result<T> TimedRules::Timed(std::function<Result<T>(RulesStore&)> call) {
  auto done = std::make_shared<std::promise<Result<T>>>();
  std::future<Result<T>> answer = done->get_future();
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
  return Timed<RuleSet>([](RulesStore& s) { return s.List(); });
}

Status TimedRules::Put(const Rule& rule) {
  return Timed<bool>([rule](RulesStore& s) -> Result<bool> {
           if (Status put = s.Put(rule); !put.ok()) return put;
           return true;
         })
      .status();
}

Status TimedRules::Delete(std::string_view rule_id) {
  return Timed<bool>([id = std::string(rule_id)](RulesStore& s) -> Result<bool> {
           if (Status deleted = s.Delete(id); !deleted.ok()) return deleted;
           return true;
         })
      .status();
}

}  // namespace ratelab
