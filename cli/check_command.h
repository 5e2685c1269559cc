// `ratelab check PROTOCOL` (or `--lua FILE --model ALGORITHM`): searches for a violation of what
// the protocol's algorithm promises (sim/search.h: random traffic, random interleavings through
// the simulator's latencies and BUGGIFY, and faults), shrinks what it finds, and prints the
// minimal witness as a timeline (reports/check_report.h).
//
// What is checked: the algorithm's own promise (per aligned window for the fixed window and the
// counter, any window for the log, bucket conformance for the buckets: at burst 1, "2 requests,
// 1 token: only 1 succeeds"); no false denials for the window algorithms; for protocols on a
// store, that every key they leave expires; with --claim, "no more than N in any W" as the
// seeds state it. --checks replaces that list, e.g. with survives-restart (the promise across
// node crashes and store restarts; give --durability to say what the store keeps).
//
// Exit status: 0 nothing found, 1 a violation found, 2 bad input or a store that failed.
#ifndef RATELAB_CLI_CHECK_COMMAND_H_
#define RATELAB_CLI_CHECK_COMMAND_H_

#include "cli/command.h"

#endif  // RATELAB_CLI_CHECK_COMMAND_H_
