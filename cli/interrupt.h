// Ctrl-C and SIGTERM stop a long command cleanly: while an InterruptHandler lives, the first
// SIGINT or SIGTERM only marks the process interrupted (the command then stops its work, stops
// the servers it started, removes its temp dirs and summarises what it measured, exiting
// kExitInterrupted); a second one acts as usual and ends the process at once.
#ifndef RATELAB_CLI_INTERRUPT_H_
#define RATELAB_CLI_INTERRUPT_H_

#include <atomic>
#include <csignal>

namespace ratelab {

class InterruptHandler {
 public:
  InterruptHandler();
  ~InterruptHandler();
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;

  // Whether SIGINT or SIGTERM arrived since this handler was made.
  bool interrupted() const;
  // The flag behind interrupted(), for work that looks at it where no callback can be called (a
  // script's budget: SearchOptions::stop).
  const std::atomic<int>& flag() const;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace ratelab

#endif  // RATELAB_CLI_INTERRUPT_H_
