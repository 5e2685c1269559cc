#include "cli/interrupt.h"

#include <atomic>

namespace ratelab {

namespace {

// A signal handler can reach nothing but a global: this flag is the one piece of process-wide
// state in ratelab, and only an InterruptHandler sets it up and reads it.
volatile std::sig_atomic_t g_interrupted = 0;

void OnSignal(int signal) {
  g_interrupted = 1;
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
  g_interrupted = 0;
  Install(SIGINT, &old_int_);
  Install(SIGTERM, &old_term_);
}

InterruptHandler::~InterruptHandler() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

bool InterruptHandler::interrupted() const { return g_interrupted != 0; }

}  // namespace ratelab
