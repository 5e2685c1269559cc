// The ratelab binary: every command lives in RunRatelab.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "cli/ratelab_cli.h"
#include "impl/core/process_memory.h"

int main(int argc, char** argv) {
  ratelab::KeepFreedMemoryForReuse();
  std::vector<std::string> args(argv + 1, argv + argc);
  const int exit = ratelab::RunRatelab(args, std::cout, std::cerr);
  // Output that did not reach its file (a full disk, a closed pipe) is a failure of the run,
  // whatever the run found: what it found was not told.
  errno = 0;
  std::cout.flush();
  int error = errno;
  bool failed = !std::cout || std::ferror(stdout) != 0;
  if (std::fflush(stdout) != 0) failed = true, error = errno;
  if (failed) {
    std::cerr << "ratelab: cannot write its output to stdout" << (error != 0 ? ": " : "")
              << (error != 0 ? std::strerror(error) : "") << "\n";
    return exit == ratelab::kExitInterrupted ? exit : ratelab::kExitBadInput;
  }
  return exit;
}
