#include "impl/store/lua_arena.h"

#include <sanitizer/asan_interface.h>  // no-ops unless built with AddressSanitizer

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ratelab {

// Under AddressSanitizer a block on a free list is poisoned, as a freed block of malloc's is, so
// that a use after Lua freed it is still caught.
LuaArena::~LuaArena() {
  for (const std::unique_ptr<char[]>& slab : slabs_) ASAN_UNPOISON_MEMORY_REGION(slab.get(), kSlab);
}

void* LuaArena::Get(size_t size) {
  if (size > kLargest) return std::malloc(size);
  const size_t c = ClassOf(size);
  const size_t whole = (c + 1) * kGranule;
  if (FreeBlock* b = free_[c]; b != nullptr) {
    ASAN_UNPOISON_MEMORY_REGION(b, whole);
    free_[c] = b->next;
    return b;
  }
  if (static_cast<size_t>(end_ - next_) < whole) {
    // The rest of the slab is too small for this class: it goes to the lists it fits.
    while (static_cast<size_t>(end_ - next_) >= kGranule) {
      const size_t rest = std::min(static_cast<size_t>(end_ - next_), kLargest);
      const size_t fits = rest / kGranule * kGranule;
      ASAN_UNPOISON_MEMORY_REGION(next_, fits);
      Put(next_, fits);
      next_ += fits;
    }
    slabs_.push_back(std::unique_ptr<char[]>(new (std::nothrow) char[kSlab]));
    if (slabs_.back() == nullptr) {
      slabs_.pop_back();
      return nullptr;
    }
    next_ = slabs_.back().get();
    end_ = next_ + kSlab;
    ASAN_POISON_MEMORY_REGION(next_, kSlab);
  }
  void* block = next_;
  next_ += whole;
  ASAN_UNPOISON_MEMORY_REGION(block, whole);
  return block;
}

void LuaArena::Put(void* block, size_t size) {
  if (size > kLargest) {
    std::free(block);
    return;
  }
  const size_t c = ClassOf(size);
  auto* b = static_cast<FreeBlock*>(block);
  b->next = free_[c];
  free_[c] = b;
  ASAN_POISON_MEMORY_REGION(b, (c + 1) * kGranule);
}

void* LuaArena::Allocate(void* arena, void* block, size_t old_size, size_t new_size) {
  LuaArena& a = *static_cast<LuaArena*>(arena);
  if (new_size == 0) {
    if (block != nullptr) a.Put(block, old_size);
    a.used_ -= old_size;
    return nullptr;
  }
  if (a.enforce && new_size > old_size && a.used_ - old_size + new_size > a.cap_) return nullptr;
  void* moved;
  if (block == nullptr) {
    moved = a.Get(new_size);
  } else if (old_size > kLargest && new_size > kLargest) {
    moved = std::realloc(block, new_size);
  } else if (old_size <= kLargest && new_size <= kLargest &&
             ClassOf(old_size) == ClassOf(new_size)) {
    moved = block;
  } else {
    moved = a.Get(new_size);
    if (moved != nullptr) {
      std::memcpy(moved, block, std::min(old_size, new_size));
      a.Put(block, old_size);
    }
  }
  if (moved != nullptr) a.used_ = a.used_ - old_size + new_size;
  return moved;
}

}  // namespace ratelab
