#include "impl/store/lua_arena.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ratelab {

LuaArena::~LuaArena() = default;

void* LuaArena::Get(size_t size) {
  if (size > kLargest) return std::malloc(size);
  const size_t c = ClassOf(size);
  if (FreeBlock* b = free_[c]; b != nullptr) {
    free_[c] = b->next;
    return b;
  }
  const size_t whole = (c + 1) * kGranule;
  if (static_cast<size_t>(end_ - next_) < whole) {
    // The rest of the slab is too small for this class: it goes to the lists it fits.
    while (static_cast<size_t>(end_ - next_) >= kGranule) {
      const size_t rest = std::min(static_cast<size_t>(end_ - next_), kLargest);
      const size_t fits = rest / kGranule * kGranule;
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
  }
  void* block = next_;
  next_ += whole;
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
