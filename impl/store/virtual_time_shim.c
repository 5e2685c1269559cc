/* Preloaded into redis-server (LD_PRELOAD) so that its wall clock is the simulator's virtual
 * clock: gettimeofday, time and clock_gettime(CLOCK_REALTIME*) read the unix nanoseconds in the
 * 8-byte file named by RATELAB_VIRTUAL_CLOCK (written by VirtualClock, redis_server.h) instead of
 * the machine's clock. Redis takes TIME, key expiry and TTLs from that clock, so they follow
 * virtual time exactly; its timers run on CLOCK_MONOTONIC, which stays real, so the server's
 * event loop keeps working while virtual time stands still.
 *
 * The file is mapped once, when the library loads, before redis-server's main. Nothing here
 * allocates, so it cannot recurse into an allocator that reads the clock (libfaketime does, and
 * fails that way on Debian's jemalloc-linked redis-server). Without the variable, or if the file
 * cannot be mapped, every call goes to the kernel unchanged. The one global is the mapping: a
 * preloaded hook has nowhere else to keep it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const int64_t* ratelab_virtual_now_ns;

__attribute__((constructor)) static void ratelab_map_virtual_clock(void) {
  const char* path = getenv("RATELAB_VIRTUAL_CLOCK");
  if (path == NULL) return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  void* p = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p != MAP_FAILED) ratelab_virtual_now_ns = (const int64_t*)p;
}

static int ratelab_virtual(struct timespec* ts) {
  if (ratelab_virtual_now_ns == NULL) return 0;
  int64_t ns = __atomic_load_n(ratelab_virtual_now_ns, __ATOMIC_ACQUIRE);
  int64_t s = ns / 1000000000;
  int64_t rem = ns % 1000000000;
  if (rem < 0) {
    rem += 1000000000;
    s -= 1;
  }
  ts->tv_sec = (time_t)s;
  ts->tv_nsec = (long)rem;
  return 1;
}

int clock_gettime(clockid_t id, struct timespec* ts) {
  if ((id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) && ratelab_virtual(ts)) return 0;
  return (int)syscall(SYS_clock_gettime, id, ts);
}

int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  struct timespec ts;
  if (ratelab_virtual(&ts)) {
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
  }
  return (int)syscall(SYS_gettimeofday, tv, tz);
}

time_t time(time_t* out) {
  struct timespec ts;
  if (!ratelab_virtual(&ts)) syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}
