// Task<T>: the coroutine type every protocol returns.
//
// A Task is lazy: nothing runs until it is awaited by another coroutine or started by a driver
// (an executor, the simulator). When it finishes it resumes whoever awaited it (symmetric
// transfer, so deep chains do not grow the stack). Destroying a Task destroys its frame and,
// through it, any Task it was awaiting: that is how a crashed node's in-flight requests vanish.
// A Task is owned by one thread at a time; it is not thread-safe.
//
// Errors travel as Result<T> values; exceptions are not how a protocol reports one. But nothing
// that throws inside a coroutine (a library's writer, an allocation) may end the process: an
// exception that escapes a task's body is kept, and thrown again to whoever awaits the task or
// asks for its result, so it reaches a driver that can answer for it (a server's 500).
#ifndef RATELAB_IMPL_CORE_TASK_H_
#define RATELAB_IMPL_CORE_TASK_H_

#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "impl/core/frame_pool.h"

namespace ratelab {

class Context;

namespace internal {
// The frame pool of a coroutine's argument when it is a Context (step.h), else none.
template <typename A>
FramePool* FramePoolOf(const A& arg) {
  if constexpr (std::is_same_v<A, Context>) {
    return arg.frames();
  } else {
    return nullptr;
  }
}
}  // namespace internal

template <typename T>
class [[nodiscard]] Task {
 public:
  struct promise_type;
  using Handle = std::coroutine_handle<promise_type>;

  struct promise_type {
    std::optional<T> value;
    std::exception_ptr exception;  // escaped the body: thrown again on await or result()
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
    void unhandled_exception() noexcept { exception = std::current_exception(); }

    // The frame: from the pool of the first Context among the coroutine's arguments (a
    // simulated run's, FramePool), else the heap.
    template <typename... Args>
    static void* operator new(std::size_t size, const Args&... args) {
      FramePool* pool = nullptr;
      ((pool = pool != nullptr ? pool : internal::FramePoolOf(args)), ...);
      return PoolNew(size, pool);
    }
    static void operator delete(void* frame, std::size_t size) { PoolDelete(frame, size); }
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

  // Awaiting a Task runs it and yields its value (or throws what escaped it).
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
    handle_.promise().continuation = caller;
    return handle_;
  }
  T await_resume() { return std::move(result()); }

  // For drivers: runs the task until its first suspension (or its end). Call once.
  void Start() { handle_.resume(); }
  bool done() const { return handle_ && handle_.done(); }
  // The value of a finished task; throws what escaped its body instead, if something did.
  // Requires done().
  T& result() {
    promise_type& p = handle_.promise();
    if (p.exception) std::rethrow_exception(p.exception);
    return *p.value;
  }

 private:
  explicit Task(Handle h) : handle_(h) {}
  void Reset() {
    if (handle_) handle_.destroy();
    handle_ = {};
  }

  Handle handle_;
};

// Runs `task` to its end and returns its value (or throws what escaped it). For tasks whose steps
// never suspend (an InlineExecutor): a task that suspends anyway terminates the program rather than
// return junk.
template <typename T>
T RunInline(Task<T> task) {
  task.Start();
  if (!task.done()) std::terminate();
  return std::move(task.result());
}

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_TASK_H_
