#include "cli/interrupt.h"

#include <atomic>

namespace ratelab {

namespace {

// A signal handler can reach nothing but a global: this flag is the one piece of process-wide
// state in ratelab, and only an InterruptHandler sets it up and reads it (or hands it to work
// that reads it: a check's scripts, SearchOptions::stop). A lock-free atomic, so
// that the handler may set it and any thread read it (a command may watch for it on a thread of
// its own, as `serve` does).
std::atomic<int> g_interrupted = 0;
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

void OnSignal(int signal) {
  g_interrupted.store(1);
  std::signal(signal, SIG_DFL);  // a second one ends the process at once
}

void Install(int signal, struct sigaction* old) {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  action.sa_flags = SA_RESTART;  // a read in flight goes on; the work stops where it checks
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, old);
}

}  // namespace

InterruptHandler::InterruptHandler() {
  g_interrupted.store(0);
  Install(SIGINT, &old_int_);
  Install(SIGTERM, &old_term_);
}

InterruptHandler::~InterruptHandler() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

bool InterruptHandler::interrupted() const { return g_interrupted.load() != 0; }

const std::atomic<int>& InterruptHandler::flag() const { return g_interrupted; }

}  // namespace ratelab
