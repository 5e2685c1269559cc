// Where a Lua state's memory comes from: a Lua state makes and drops small blocks by the
// million (strings, tables, closures, call frames), and a script check makes a state a seed.
// Blocks of up to 512 bytes come from lists of free blocks, one list per 16-byte size, carved
// from 64 KiB slabs that are given back only when the arena goes (after lua_close); larger ones
// come from malloc. The arena counts what the state holds, as asked for, and refuses to grow it
// past a cap while `enforce` is set.
#ifndef RATELAB_IMPL_STORE_LUA_ARENA_H_
#define RATELAB_IMPL_STORE_LUA_ARENA_H_

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

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
  std::array<FreeBlock*, kLargest / kGranule> free_{};
  std::vector<std::unique_ptr<char[]>> slabs_;
  char* next_ = nullptr;  // the unused rest of the last slab
  char* end_ = nullptr;
  size_t used_ = 0;
  size_t cap_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_LUA_ARENA_H_
