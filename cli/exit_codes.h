// What `ratelab` exits with.
#ifndef RATELAB_CLI_EXIT_CODES_H_
#define RATELAB_CLI_EXIT_CODES_H_

namespace ratelab {

inline constexpr int kExitOk = 0;         // done; for a checking command: nothing found
inline constexpr int kExitViolation = 1;  // a checking command found a violation
inline constexpr int kExitBadInput = 2;   // bad input, a store that failed, or unwritten output
// The limiter answered with its own error (a script that failed, a reply of another shape than
// its interface says): its verdicts cannot be trusted, so neither 0 nor 1.
inline constexpr int kExitLimiterFailed = 3;
// Stopped by SIGINT or SIGTERM, after saying what was measured (128 + SIGINT, as shells do).
inline constexpr int kExitInterrupted = 130;

// Every exit status with its meaning, for --help and the man page.
struct ExitStatus {
  int code;
  const char* meaning;
};
inline constexpr ExitStatus kExitStatuses[] = {
    {kExitOk, "done; for a checking command (check, run, stress, compare --strict): nothing found"},
    {kExitViolation, "a checking command found a violation"},
    {kExitBadInput,
     "bad input (the option or file and what is wrong with it), a store that failed, or output "
     "that could not be written (a full disk)"},
    {kExitLimiterFailed,
     "the limiter answered with its own error (a script that failed, a reply of another shape "
     "than its interface says): its verdicts cannot be trusted"},
    {kExitInterrupted, "stopped by Ctrl-C or SIGTERM, after saying what was measured"},
};

enum class CheckVerdict;  // reports/report_model.h

// The exit status of a checking command whose report's verdict is `verdict` (VerdictOf): one
// answer, which the JSON's "verdict", the JUnit file and the text say too.
int ExitOf(CheckVerdict verdict);

}  // namespace ratelab

#endif  // RATELAB_CLI_EXIT_CODES_H_
