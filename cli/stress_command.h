// `ratelab stress PROTOCOL` (or `--lua FILE --model ALGORITHM`): real concurrency on the
// protocol's store, a real server or in process (live/stress_run.h), the promise judged on the
// wall-clock history, the result printed
// (reports/stress_report.h).
//
// Exit status: 0 nothing found, 1 the promise was broken, 2 bad input or a store that failed.
#ifndef RATELAB_CLI_STRESS_COMMAND_H_
#define RATELAB_CLI_STRESS_COMMAND_H_

#include "cli/command.h"

#endif  // RATELAB_CLI_STRESS_COMMAND_H_
