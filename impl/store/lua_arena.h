// Where a Lua state's memory comes from: a Lua state makes and drops small blocks by the
// million (strings, tables, closures, call frames), and a script check makes a state a seed.
// Blocks of up to 512 bytes come from lists of free blocks, one list per 16-byte size, carved
// from 64 KiB slabs that are given back only when the arena goes (after lua_close); larger ones
// come from malloc. The arena counts what the state holds, as asked for, and refuses to grow it
// past a cap while `enforce` is set.
//
// It can also take a state back to an earlier one (Keep, then Restore): every block it held then
// holds its bytes again at its address, and what came after is gone. A Lua state keeps all it
// has in the memory its allocator gives it, so a Lua state made anew and kept is new again
// after Restore, byte for byte, at a fraction of the cost of making one: what a check does at
// every seed.
#ifndef RATELAB_IMPL_STORE_LUA_ARENA_H_
#define RATELAB_IMPL_STORE_LUA_ARENA_H_

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace ratelab {

class LuaArena {
 public:
  explicit LuaArena(size_t cap) : cap_(cap) {}
  ~LuaArena();
  LuaArena(const LuaArena&) = delete;
  LuaArena& operator=(const LuaArena&) = delete;

  // Lua's lua_Alloc, with `arena` this: frees when `new_size` is 0, else allocates or resizes;
  // nullptr when the cap or malloc refuses.
  static void* Allocate(void* arena, void* block, size_t old_size, size_t new_size);

  // Marks what the arena holds now as what Restore comes back to; once an arena. Blocks held now
  // are not given back to malloc from then on, even when freed, so that Restore finds them where
  // they were.
  void Keep();
  // Makes the arena hold what it held at Keep, byte for byte at the same addresses, with the
  // same free blocks and the same count; blocks got since are given back. Keep must come first.
  void Restore();

  size_t used() const { return used_; }
  size_t cap() const { return cap_; }
  bool enforce = false;

 private:
  static constexpr size_t kGranule = 16;
  static constexpr size_t kLargest = 512;  // larger blocks come from malloc
  static constexpr size_t kSlab = 64 << 10;
  // The size class of a small block of `size` bytes (size > 0).
  static size_t ClassOf(size_t size) { return (size - 1) / kGranule; }

  void* Get(size_t size);
  void Put(void* block, size_t size);

  struct FreeBlock {
    FreeBlock* next;
  };
  // Poisons the free blocks and the slab's unused rest (AddressSanitizer's builds).
  void PoisonFree();
  // The bytes of slab i in use, were `next` the unused rest of the last.
  size_t SlabUsed(size_t i, const char* next) const;
  void* GetLarge(size_t size);
  void PutLarge(void* block);
  void* ResizeLarge(void* block, size_t new_size);

  std::array<FreeBlock*, kLargest / kGranule> free_{};
  std::vector<std::unique_ptr<char[]>> slabs_;
  char* next_ = nullptr;  // the unused rest of the last slab
  char* end_ = nullptr;
  size_t used_ = 0;
  size_t cap_;
  // Blocks from malloc the state holds, with their sizes.
  absl::flat_hash_map<void*, size_t> large_;

  // What Keep saw, for Restore: the slabs' bytes up to where they were used, the allocator's
  // own fields, and each large block's bytes (those blocks never go back to malloc until the
  // arena goes).
  struct Kept {
    size_t slabs = 0;
    std::vector<char> bytes;
    std::array<FreeBlock*, kLargest / kGranule> free{};
    char* next = nullptr;
    char* end = nullptr;
    size_t used = 0;
    absl::flat_hash_map<void*, std::vector<char>> large;
  };
  std::unique_ptr<Kept> kept_;
  // Slabs Restore let go, for the next Get that needs one.
  static constexpr size_t kMostSpareSlabs = 4;
  std::vector<std::unique_ptr<char[]>> spare_slabs_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_LUA_ARENA_H_
