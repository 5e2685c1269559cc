#include "impl/core/process_memory.h"

#include <malloc.h>

namespace ratelab {

void KeepFreedMemoryForReuse() {
  constexpr int kLarge = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kLarge);  // big blocks from the heap, not from mmap
  mallopt(M_TRIM_THRESHOLD, kLarge);  // and not returned to the system when freed
  mallopt(M_TOP_PAD, 256 << 20);      // grow the heap in large steps
}

void GiveFreedMemoryBack() {
  constexpr int kDefault = 128 << 10;
  mallopt(M_MMAP_THRESHOLD, kDefault);
  mallopt(M_TRIM_THRESHOLD, kDefault);
  mallopt(M_TOP_PAD, kDefault);
}

void TrimFreedMemory() { malloc_trim(0); }

}  // namespace ratelab
