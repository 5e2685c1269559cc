// A user's limiter running as a process of its own (`--exec 'CMD ARGS'`): started with a socket
// as its stdin and stdout, over which ratelab writes lines and reads the lines it answers, and a
// pipe from its stderr, whose last lines are kept for the error that names it. No shell runs the
// command: its words are split here (quotes group words), and nothing in them is expanded.
#ifndef RATELAB_IMPL_LIMITERS_EXEC_PROCESS_H_
#define RATELAB_IMPL_LIMITERS_EXEC_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"

namespace ratelab {

// `command`'s words: split at spaces and tabs, a '...' or "..." quoted part kept whole (a
// backslash in "..." escapes the next character). InvalidArgument for an unclosed quote or no
// words.
Result<std::vector<std::string>> SplitCommandWords(std::string_view command);

class ExecProcess {
 public:
  // Starts `words` (words[0] found on PATH): FailedPrecondition saying why when it cannot be
  // started.
  // It runs in `directory` (empty: ratelab's own), where a relative path among its words is.
  static Result<std::unique_ptr<ExecProcess>> Start(const std::vector<std::string>& words,
                                                    const std::string& directory = "");
  // Closes its stdin, waits a moment for it to exit, then kills its process group: it, if it
  // did not exit, and whatever it left running there.
  ~ExecProcess();
  ExecProcess(const ExecProcess&) = delete;
  ExecProcess& operator=(const ExecProcess&) = delete;

  // Queues `line` (without its newline) to be written.
  void Write(std::string_view line);
  // Writes what is queued, reading what it answers meanwhile (so that neither side waits on the
  // other's full buffer); an error when it has gone.
  Status Flush();
  // The next line it answered, writing what is queued while it waits: FailedPrecondition when it
  // exited or closed its output, or answered nothing for `timeout`.
  Result<std::string> ReadLine(std::chrono::milliseconds timeout);

  // What became of it, e.g. "exited with status 2", "was killed by signal 9", or "is running".
  std::string Fate();
  // Its stderr's last lines (at most 8), each indented on a line of its own, control characters
  // shown as '?'; empty when it wrote none.
  std::string StderrTail() const;

 private:
  ExecProcess(pid_t pid, int io, int err) : pid_(pid), io_(io), err_(err) {}
  // Waits until it can be written to or has something to read, for at most `timeout`, and reads
  // what there is: false when nothing happened in `timeout`.
  Result<bool> Pump(std::chrono::milliseconds timeout);
  void ReadStderr();

  pid_t pid_;
  int io_;   // its stdin and stdout
  int err_;  // its stderr; -1 once closed
  bool out_closed_ = false;
  int status_ = -1;  // its wait status once reaped
  std::string to_write_;
  std::string read_;    // read from its stdout, not yet taken as lines
  size_t taken_ = 0;    // how much of read_ was taken as lines
  std::string stderr_;  // its last stderr bytes
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_EXEC_PROCESS_H_
