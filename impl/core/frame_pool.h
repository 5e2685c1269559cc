// FramePool: memory for the coroutine frames and requests of one run, given back to be taken
// again, so that a simulated request (or one serve decides in process) is decided with no
// allocation once the run has held as many at once as it will. A coroutine whose arguments hold a
// Context with a pool (step.h) takes its frame from that pool (Task's promise); any other takes it
// from the heap.
//
// Single-threaded: one run's, or one serve thread's (its decisions in process, each run to its end
// on that thread). It must outlive every block taken from it (a Simulation declares it before the
// nodes and requests whose frames it holds). Under AddressSanitizer a block given back
// is poisoned until it is taken again, so a frame used after its end is still caught.
#ifndef RATELAB_IMPL_CORE_FRAME_POOL_H_
#define RATELAB_IMPL_CORE_FRAME_POOL_H_

#include <array>
#include <cstddef>
#include <new>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define RATELAB_FRAME_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RATELAB_FRAME_POOL_ASAN 1
#endif
#endif
#ifdef RATELAB_FRAME_POOL_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace ratelab {

class FramePool {
 public:
  FramePool() = default;
  ~FramePool() {
    for (size_t c = 0; c < kClasses; ++c) {
      for (void* p : free_[c]) {
        Unpoison(p, c);
        ::operator delete(p);
      }
    }
  }
  FramePool(const FramePool&) = delete;
  FramePool& operator=(const FramePool&) = delete;

  // A block of at least `size` bytes, aligned as ::operator new aligns.
  void* Take(size_t size) {
    const size_t c = ClassOf(size);
    if (c >= kClasses) return ::operator new(size);
    if (free_[c].empty()) return ::operator new((c + 1) * kGrain);
    void* p = free_[c].back();
    free_[c].pop_back();
    Unpoison(p, c);
    return p;
  }
  // The blocks given back and not yet taken again.
  size_t kept() const {
    size_t n = 0;
    for (const std::vector<void*>& blocks : free_) n += blocks.size();
    return n;
  }
  // Gives back a block Take(size) gave.
  void Give(void* p, size_t size) {
    const size_t c = ClassOf(size);
    if (c >= kClasses) {
      ::operator delete(p);
      return;
    }
    Poison(p, c);
    free_[c].push_back(p);
  }

 private:
  // Sizes in steps of 64 bytes, up to 4 KiB; a larger block is the heap's.
  static constexpr size_t kGrain = 64;
  static constexpr size_t kClasses = 64;
  static size_t ClassOf(size_t size) { return size == 0 ? 0 : (size - 1) / kGrain; }

  static void Poison([[maybe_unused]] void* p, [[maybe_unused]] size_t c) {
#ifdef RATELAB_FRAME_POOL_ASAN
    ASAN_POISON_MEMORY_REGION(p, (c + 1) * kGrain);
#endif
  }
  static void Unpoison([[maybe_unused]] void* p, [[maybe_unused]] size_t c) {
#ifdef RATELAB_FRAME_POOL_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, (c + 1) * kGrain);
#endif
  }

  std::array<std::vector<void*>, kClasses> free_;  // blocks given back, by size class
};

// What precedes an object PoolNew makes: the pool it came from, in room that keeps the object
// aligned as ::operator new aligns.
inline constexpr size_t kPoolHeader = __STDCPP_DEFAULT_NEW_ALIGNMENT__;
static_assert(kPoolHeader >= sizeof(FramePool*));

// Memory for an object (a coroutine frame, a simulated request) from `pool` when there is one,
// else the heap. The object is preceded by the pool it came from, so that PoolDelete gives it
// back there.
inline void* PoolNew(size_t size, FramePool* pool) {
  void* block =
      pool != nullptr ? pool->Take(size + kPoolHeader) : ::operator new(size + kPoolHeader);
  *static_cast<FramePool**>(block) = pool;
  return static_cast<std::byte*>(block) + kPoolHeader;
}

inline void PoolDelete(void* object, size_t size) {
  void* block = static_cast<std::byte*>(object) - kPoolHeader;
  FramePool* pool = *static_cast<FramePool**>(block);
  if (pool != nullptr) {
    pool->Give(block, size + kPoolHeader);
  } else {
    ::operator delete(block);
  }
}

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_FRAME_POOL_H_
