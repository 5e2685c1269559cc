// The ratelab binary: every command lives in RunRatelab.
#include <iostream>
#include <string>
#include <vector>

#include "cli/ratelab_cli.h"
#include "sim/simulation.h"

int main(int argc, char** argv) {
  ratelab::KeepFreedMemoryForReuse();
  std::vector<std::string> args(argv + 1, argv + argc);
  return ratelab::RunRatelab(args, std::cout, std::cerr);
}
