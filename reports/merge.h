// The shards of one sweep (`run --seeds ... --shard K/N --out DIR`: result.json) or of one search
// (`check --seeds ... --shard K/N --json`), each from a job of a CI matrix, put back together
// into the report the whole would have made: `ratelab merge`.
#ifndef RATELAB_REPORTS_MERGE_H_
#define RATELAB_REPORTS_MERGE_H_

#include <string>
#include <utility>
#include <vector>

#include "impl/core/status.h"
#include "reports/report_model.h"

namespace ratelab {

// A shard's report, and the file it was read from (for errors).
template <typename Report>
using FromFile = std::pair<std::string, Report>;

// The sweep the shards make together: every seed of each, in order, and the first failing run
// the one of the lowest seed. InvalidArgument naming the file when they are not every shard of
// one sweep: one that is not a shard, another scenario or command, another count of shards, a
// shard given twice or one missing.
Result<SweepReport> MergeSweeps(const std::vector<FromFile<SweepReport>>& shards);

// The search the shards make together: the finding (or failure) of the lowest seed, as the
// whole search, which stops at its lowest, would find; else nothing found. Its seeds searched
// are all the shards'. InvalidArgument as MergeSweeps, or for another protocol.
Result<CheckReport> MergeChecks(const std::vector<FromFile<CheckReport>>& shards);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_MERGE_H_
