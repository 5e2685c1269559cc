// The team's own rate limiter: N requests per key in each fixed window of W since the epoch.
#ifndef MY_LIMITER_H_
#define MY_LIMITER_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

class MyLimiter {
 public:
  MyLimiter(int64_t limit, std::chrono::nanoseconds window) : limit_(limit), window_(window) {}

  // Whether a request of `cost` for `key` is admitted at `now`.
  bool Allow(std::string_view key, int64_t cost, std::chrono::system_clock::time_point now) {
    Window& w = windows_[std::string(key)];
    const int64_t index = now.time_since_epoch() / window_;
    if (w.index != index) w = {index, 0};
#ifdef MY_LIMITER_FLAW
    if (w.count + cost > limit_ + 1) return false;  // the flaw: one too many
#else
    if (w.count + cost > limit_) return false;
#endif
    w.count += cost;
    return true;
  }

 private:
  struct Window {
    int64_t index = -1;
    int64_t count = 0;
  };
  int64_t limit_;
  std::chrono::nanoseconds window_;
  std::unordered_map<std::string, Window> windows_;
};

#endif  // MY_LIMITER_H_
