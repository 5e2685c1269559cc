#include "cli/exit_codes.h"

#include "reports/report_model.h"

namespace ratelab {

int ExitOf(CheckVerdict verdict) {
  switch (verdict) {
    case CheckVerdict::kViolation:
      return kExitViolation;
    case CheckVerdict::kFailure:
      return kExitLimiterFailed;
    case CheckVerdict::kNone:
      return kExitOk;
  }
  return kExitOk;
}

}  // namespace ratelab
