// What the C allocator does with freed memory, chosen per command: the simulation keeps it for
// the next run; a long-lived server hands it back.
#ifndef RATELAB_IMPL_CORE_PROCESS_MEMORY_H_
#define RATELAB_IMPL_CORE_PROCESS_MEMORY_H_

namespace ratelab {

// Keeps freed memory for reuse instead of handing it back to the system: each run allocates its
// history (tens of MB for a long run) afresh, and glibc would otherwise map and unmap it every
// time and page-fault it in again (about 7% of a sweep's time). Process-wide: ratelab's main and
// the benchmarks call it once at start.
void KeepFreedMemoryForReuse();

// glibc's defaults again, fixed (no threshold that drifts up as blocks are freed): large blocks
// mapped and unmapped on their own, the heap's free top handed back. For `serve`, whose memory
// must come back once the keys it held go idle.
void GiveFreedMemoryBack();

// Hands back, now, the free memory the allocator holds in every arena (after many blocks were
// freed at once).
void TrimFreedMemory();

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_PROCESS_MEMORY_H_
