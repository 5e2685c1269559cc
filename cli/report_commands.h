// The commands that write reports:
//   ratelab compare SCENARIO [--seed N | --seeds A..B] [--out DIR] [--strict] [--store STORE]
//   ratelab report RESULT.json [--out DIR]
//   ratelab demo [--seed N] [--out DIR]
// Each writes DIR/report.html, report.md, report.json, junit.xml and plots/ (see
// reports/views.h) and says where they are. Exit status: 0 written (compare --strict: 1 when a
// check is broken), 2 bad input or a file that cannot be written.
#ifndef RATELAB_CLI_REPORT_COMMANDS_H_
#define RATELAB_CLI_REPORT_COMMANDS_H_

#include "cli/command.h"

#endif  // RATELAB_CLI_REPORT_COMMANDS_H_
