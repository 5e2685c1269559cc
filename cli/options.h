// Options parsed into typed values where they are declared: the text of an option goes through
// a parse function (text -> Result<T>) as CLI11 reads it, and a text the function refuses is a
// usage error naming the option ("--window: 'soon' is not a positive duration (e.g. 10s)").
#ifndef RATELAB_CLI_OPTIONS_H_
#define RATELAB_CLI_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "impl/core/status.h"
#include "impl/store/durability.h"
#include "impl/store/store_name.h"
#include "judge/checks.h"
#include "model/time.h"
#include "reports/output_dir.h"

namespace ratelab {

// Adds option `name` to `command`: its text, parsed by `parse`, is stored in `target` (a T, or
// an std::optional<T>, set only when the option is given).
template <typename Target, typename Parse>
CLI::Option* AddParsed(CLI::App& command, const std::string& name, Target& target, Parse parse,
                       const std::string& help) {
  return command.add_option_function<std::string>(
      name,
      [&target, parse, name](const std::string& text) {
        auto parsed = parse(text);
        if (!parsed.ok()) {
          throw CLI::ValidationError(name + ": " + std::string(parsed.status().message()));
        }
        target = *std::move(parsed);
      },
      help);
}

// Adds option `name`, whose text is one of `choices`' names: `target` gets the value beside it
// ("--trailing-slash: 'drop' is not ignore or keep").
template <typename T>
CLI::Option* AddChoice(CLI::App& command, const std::string& name, T& target,
                       std::vector<std::pair<std::string, T>> choices, const std::string& help) {
  return AddParsed(
      command, name, target,
      [choices = std::move(choices)](std::string_view text) -> Result<T> {
        std::string names;
        for (size_t i = 0; i < choices.size(); ++i) {
          if (choices[i].first == text) return choices[i].second;
          names += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i].first;
        }
        return absl::InvalidArgumentError("'" + std::string(text) + "' is not " + names);
      },
      help);
}

// `word` as one word of a shell's command line, for a reproduce line: in single quotes, each of
// its own written '\''.
std::string QuoteWord(const std::string& word);

// The parse functions the commands share.
Result<Duration> ParsePositiveDuration(std::string_view text);  // "10s", "1m", "500ms"
Result<Duration> ParseDurationOrZero(std::string_view text);    // the same, or "0"
Result<Instant> ParseStart(std::string_view text);              // "2026-01-01T00:00:00Z"
// A seed: a whole number from 0 to 18446744073709551615, in digits ("-1" is refused, not read as
// 2^64 - 1).
Result<uint64_t> ParseSeed(std::string_view text);
struct SeedRange {
  uint64_t first = 0, last = 0;
  uint64_t count() const { return last - first + 1; }
};
// The most seeds one --seeds names: a sweep keeps a line for each.
inline constexpr uint64_t kMostSweptSeeds = 1'000'000;
// --seeds, the same in every command: "N" for the seeds 1..N, or "A..B" with A <= B, each a
// seed; at most kMostSweptSeeds of them.
Result<SeedRange> ParseSeeds(std::string_view text);
// The help every --shard gives.
inline constexpr char kShardHelp[] =
    "Run only shard K of N of the seeds (K/N: the K-th seed and every N-th after it), so that N "
    "jobs of a CI matrix cover them between them, each seed once";
// The help every --seeds gives, after what the command does with them.
inline constexpr char kSeedsHelp[] =
    ": N for the seeds 1..N, or a range A..B (at most 1000000 seeds)";
// A whole number of at least 1 that fits 63 bits.
Result<int64_t> ParsePositiveInteger(std::string_view text);

// Adds --junit FILE: where to write the command's verdicts as JUnit XML, for CI.
CLI::Option* AddJunitOption(CLI::App& command, std::string& target);
// Writes `text` to the file `path` (--junit), or says why it cannot.
Status WriteTextFile(const std::string& path, const std::string& text);
// The JSON document in the file `path`, or InvalidArgument saying why not (a directory, where
// `expected` names what to give instead; unreadable; not JSON, and where it stops being).
Result<nlohmann::json> ReadJsonFile(const std::string& path, const std::string& expected);

// Adds --force: write into --out beside files ratelab did not write (reports/output_dir.h).
CLI::Option* AddForceFlag(CLI::App& command, bool& target);

// --out DIR and --force, for a command that writes its report directory only when asked (check,
// stress, worst): made ready before any work, written after.
struct OptionalReportDir {
  std::string dir;
  bool force = false;
  void Add(CLI::App& command);
  // The directory made ready; none without --out; or why not.
  Result<std::optional<OutputDir>> Prepare() const;
};
// Says on `err` where report.html is (`html`, what a Write*Report returned), or returns why it
// could not be written.
Status SayReport(const Result<std::string>& html, std::ostream& err);

// Adds --max-simulated, the most requests a run (or one seed's case) may simulate, into `target`
// (initialised to its default, kDefaultMaxSimulated). The simulating commands' bound; probe's
// --max-requests is the most requests it sends.
CLI::Option* AddMaxSimulatedOption(CLI::App& command, int64_t& target);
// --max-transit: the longest the search holds a request between its client reading the clock
// and its call reaching the store (0 to an hour; unset: DefaultMaxTransit of the policy).
CLI::Option* AddMaxTransitOption(CLI::App& command, std::optional<Duration>& target);

// The --store help of the simulating commands.
inline constexpr char kStoreHelp[] =
    "Where the kv protocols keep their state: memory (MemoryKv), redis (a private redis-server "
    "that ratelab starts, on virtual time), or the URL of a running Redis, redis://host:port/db "
    "or unix:///path.sock?db=N, or of a Redis Cluster, redis-cluster://host:port[,host:port...] "
    "(its database must be empty; ratelab empties it before and after each run); or where the "
    "SQL protocols do (the kv ones then on MemoryKv): postgres (a private PostgreSQL server) or "
    "postgresql://... (a database whose schema `ratelab` holds no rows)";

// Adds --store (kStoreHelp) parsed into `target`.
template <typename Target>
CLI::Option* AddStoreOption(CLI::App& command, Target& target, const std::string& help) {
  return AddParsed(command, "--store", target, StoreName::Parse, help);
}

}  // namespace ratelab

#endif  // RATELAB_CLI_OPTIONS_H_
