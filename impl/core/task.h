// Task<T>: the coroutine type every protocol returns.
//
// A Task is lazy: nothing runs until it is awaited by another coroutine or started by a driver
// (an executor, the simulator). When it finishes it resumes whoever awaited it (symmetric
// transfer, so deep chains do not grow the stack). Destroying a Task destroys its frame and,
// through it, any Task it was awaiting: that is how a crashed node's in-flight requests vanish.
// A Task is owned by one thread at a time; it is not thread-safe.
//
// Exceptions are not part of the contract: errors travel as Result<T> values. An exception that
// escapes a coroutine terminates the program.
#ifndef RATELAB_IMPL_CORE_TASK_H_
#define RATELAB_IMPL_CORE_TASK_H_

#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

namespace ratelab {

template <typename T>
class [[nodiscard]] Task {
 public:
  struct promise_type;
  using Handle = std::coroutine_handle<promise_type>;

  struct promise_type {
    std::optional<T> value;
    std::coroutine_handle<> continuation = std::noop_coroutine();

    Task get_return_object() { return Task(Handle::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    auto final_suspend() noexcept {
      struct ResumeContinuation {
        bool await_ready() noexcept { return false; }
        std::coroutine_handle<> await_suspend(Handle h) noexcept {
          return h.promise().continuation;
        }
        void await_resume() noexcept {}
      };
      return ResumeContinuation{};
    }
    template <typename U>
    void return_value(U&& v) {
      value.emplace(std::forward<U>(v));
    }
    void unhandled_exception() noexcept { std::terminate(); }
  };

  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      Reset();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { Reset(); }

  // Awaiting a Task runs it and yields its value.
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
    handle_.promise().continuation = caller;
    return handle_;
  }
  T await_resume() { return std::move(*handle_.promise().value); }

  // For drivers: runs the task until its first suspension (or its end). Call once.
  void Start() { handle_.resume(); }
  bool done() const { return handle_ && handle_.done(); }
  // The value of a finished task. Requires done().
  T& result() { return *handle_.promise().value; }

 private:
  explicit Task(Handle h) : handle_(h) {}
  void Reset() {
    if (handle_) handle_.destroy();
    handle_ = {};
  }

  Handle handle_;
};

// Runs `task` to its end and returns its value. For tasks whose steps never suspend (an
// InlineExecutor): a task that suspends anyway terminates the program rather than return junk.
template <typename T>
T RunInline(Task<T> task) {
  task.Start();
  if (!task.done()) std::terminate();
  return std::move(task.result());
}

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_TASK_H_
