#include "impl/store/lua_arena.h"

#include <sanitizer/asan_interface.h>  // no-ops unless built with AddressSanitizer

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ratelab {

namespace {

// Whether this build poisons free blocks (AddressSanitizer's).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPoisons = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPoisons = true;
#else
constexpr bool kPoisons = false;
#endif
#else
constexpr bool kPoisons = false;
#endif

}  // namespace

// Under AddressSanitizer a block on a free list is poisoned, as a freed block of malloc's is, so
// that a use after Lua freed it is still caught.
LuaArena::~LuaArena() {
  for (const std::unique_ptr<char[]>& slab : slabs_) ASAN_UNPOISON_MEMORY_REGION(slab.get(), kSlab);
  // lua_close leaves no large block held; the kept ones stay the arena's until now.
  for (const auto& [block, size] : large_) {
    if (kept_ == nullptr || !kept_->large.contains(block)) std::free(block);
  }
  if (kept_ != nullptr) {
    for (const auto& [block, bytes] : kept_->large) {
      ASAN_UNPOISON_MEMORY_REGION(block, bytes.size());
      std::free(block);
    }
  }
}

void LuaArena::PoisonFree() {
  if constexpr (kPoisons) {
    for (size_t c = 0; c < free_.size(); ++c) {
      for (FreeBlock* b = free_[c]; b != nullptr;) {
        FreeBlock* next = b->next;
        ASAN_POISON_MEMORY_REGION(b, (c + 1) * kGranule);
        b = next;
      }
    }
    if (next_ != nullptr) ASAN_POISON_MEMORY_REGION(next_, static_cast<size_t>(end_ - next_));
  }
}

size_t LuaArena::SlabUsed(size_t i, const char* next) const {
  return i + 1 == slabs_.size() ? static_cast<size_t>(next - slabs_[i].get()) : kSlab;
}

void LuaArena::Keep() {
  auto kept = std::make_unique<Kept>();
  kept->slabs = slabs_.size();
  for (size_t i = 0; i < slabs_.size(); ++i) {
    ASAN_UNPOISON_MEMORY_REGION(slabs_[i].get(), kSlab);
    const char* slab = slabs_[i].get();
    kept->bytes.insert(kept->bytes.end(), slab, slab + SlabUsed(i, next_));
  }
  kept->free = free_;
  kept->next = next_;
  kept->end = end_;
  kept->used = used_;
  for (const auto& [block, size] : large_) {
    const char* bytes = static_cast<const char*>(block);
    kept->large.emplace(block, std::vector<char>(bytes, bytes + size));
  }
  kept_ = std::move(kept);
  PoisonFree();
}

void LuaArena::Restore() {
  for (const auto& [block, size] : large_) {
    if (!kept_->large.contains(block)) std::free(block);
  }
  large_.clear();
  for (const auto& [block, bytes] : kept_->large) {
    ASAN_UNPOISON_MEMORY_REGION(block, bytes.size());
    std::memcpy(block, bytes.data(), bytes.size());
    large_.emplace(block, bytes.size());
  }
  // Slabs made since wait for the next that are needed, a few of them.
  for (size_t i = kept_->slabs; i < slabs_.size(); ++i) {
    ASAN_UNPOISON_MEMORY_REGION(slabs_[i].get(), kSlab);
    if (spare_slabs_.size() < kMostSpareSlabs) spare_slabs_.push_back(std::move(slabs_[i]));
  }
  slabs_.resize(kept_->slabs);
  size_t at = 0;
  for (size_t i = 0; i < slabs_.size(); ++i) {
    ASAN_UNPOISON_MEMORY_REGION(slabs_[i].get(), kSlab);
    const size_t n = SlabUsed(i, kept_->next);
    std::memcpy(slabs_[i].get(), kept_->bytes.data() + at, n);
    at += n;
  }
  free_ = kept_->free;
  next_ = kept_->next;
  end_ = kept_->end;
  used_ = kept_->used;
  PoisonFree();
}

void* LuaArena::GetLarge(size_t size) {
  void* block = std::malloc(size);
  if (block != nullptr) large_.emplace(block, size);
  return block;
}

void LuaArena::PutLarge(void* block) {
  const auto held = large_.find(block);
  const size_t size = held->second;
  large_.erase(held);
  if (kept_ != nullptr && kept_->large.contains(block)) {
    ASAN_POISON_MEMORY_REGION(block, size);  // Restore's to bring back
    return;
  }
  std::free(block);
}

void* LuaArena::ResizeLarge(void* block, size_t new_size) {
  const auto held = large_.find(block);
  const size_t old_size = held->second;
  void* moved;
  if (kept_ != nullptr && kept_->large.contains(block)) {
    // A kept block stays where it is for Restore: the new size goes elsewhere.
    moved = std::malloc(new_size);
    if (moved == nullptr) return nullptr;
    std::memcpy(moved, block, std::min(old_size, new_size));
    ASAN_POISON_MEMORY_REGION(block, old_size);
  } else {
    moved = std::realloc(block, new_size);
    if (moved == nullptr) return nullptr;
  }
  large_.erase(block);
  large_.emplace(moved, new_size);
  return moved;
}

void* LuaArena::Get(size_t size) {
  if (size > kLargest) return GetLarge(size);
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
    if (!spare_slabs_.empty()) {
      slabs_.push_back(std::move(spare_slabs_.back()));
      spare_slabs_.pop_back();
    } else {
      slabs_.push_back(std::unique_ptr<char[]>(new (std::nothrow) char[kSlab]));
    }
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
    PutLarge(block);
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
    moved = a.ResizeLarge(block, new_size);
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
