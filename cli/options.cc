#include "cli/options.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_split.h"
#include "impl/core/input_file.h"
#include "sim/scenario_run.h"

namespace ratelab {

std::string QuoteWord(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Result<Duration> ParsePositiveDuration(std::string_view text) {
  const std::optional<Duration> d = ParseDuration(text);
  if (!d || d->count() <= 0) {
    return absl::InvalidArgumentError("'" + std::string(text) +
                                      "' is not a positive duration (e.g. 10s, 1m, 500ms)");
  }
  return *d;
}

Result<Duration> ParseDurationOrZero(std::string_view text) {
  if (const std::optional<Duration> d = ParseDuration(text);
      text == "0" || (d && d->count() == 0)) {
    return Duration(0);
  }
  return ParsePositiveDuration(text);
}

namespace {
// `text` read whole as a T in decimal digits (a sign only for a signed T), at least `least`;
// nothing when it is not one, or out of T's range.
template <typename T>
std::optional<T> WholeNumber(std::string_view text, T least) {
  T n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < least) {
    return std::nullopt;
  }
  return n;
}
}  // namespace

Result<uint64_t> ParseSeed(std::string_view text) {
  const std::optional<uint64_t> seed = WholeNumber<uint64_t>(text, 0);
  if (!seed) {
    return absl::InvalidArgumentError("'" + std::string(text) +
                                      "' is not a seed (a whole number from 0 to "
                                      "18446744073709551615)");
  }
  return *seed;
}

Result<int64_t> ParsePositiveInteger(std::string_view text) {
  const std::optional<int64_t> n = WholeNumber<int64_t>(text, 1);
  if (!n) {
    return absl::InvalidArgumentError("'" + std::string(text) +
                                      "' is not a whole number of at least 1");
  }
  return *n;
}

CLI::Option* AddJunitOption(CLI::App& command, std::string& target) {
  return command.add_option("--junit", target,
                            "Also write the verdicts to this file as JUnit XML, for CI: a test "
                            "case per (limiter, check), failures with their witness and the "
                            "command that reproduces them");
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!(f << text) || !f.flush()) {
    return absl::InvalidArgumentError("cannot write " + path + ": " + std::strerror(errno));
  }
  return absl::OkStatus();
}

Result<nlohmann::json> ReadJsonFile(const std::string& path, const std::string& expected) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError("cannot read " + path + ": it is a directory (give " +
                                      expected + ")");
  }
  Result<std::string> text = ReadInputFile(path, kReportFile);
  if (!text.ok()) return absl::InvalidArgumentError(text.status().message());
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    return absl::InvalidArgumentError(path + ": not JSON (it stops making sense at byte " +
                                      std::to_string(e.byte) + ")");
  }
}

CLI::Option* AddForceFlag(CLI::App& command, bool& target) {
  return command.add_flag(
      "--force", target,
      "Write into --out even when it holds files ratelab did not write (they are kept)");
}

void OptionalReportDir::Add(CLI::App& command) {
  command.add_option("--out", dir,
                     "Also write the report into this directory: report.html (the verdict, each "
                     "witness drawn and tabled, what was searched), report.md, report.json and "
                     "junit.xml");
  AddForceFlag(command, force);
}

Result<std::optional<OutputDir>> OptionalReportDir::Prepare() const {
  if (dir.empty()) return std::optional<OutputDir>();
  Result<OutputDir> prepared = OutputDir::Prepare(dir, force, "--out");
  if (!prepared.ok()) return prepared.status();
  return std::optional<OutputDir>(*std::move(prepared));
}

Status SayReport(const Result<std::string>& html, std::ostream& err) {
  if (!html.ok()) return html.status();
  err << "report: " << std::filesystem::absolute(*html).string() << "\n";
  return absl::OkStatus();
}

CLI::Option* AddMaxSimulatedOption(CLI::App& command, int64_t& target) {
  // The name this bound had before it was told apart from probe's --max-requests (the most
  // requests probe sends to a live service): refused with where it went, not "not expected".
  command
      .add_option_function<std::string>(
          "--max-requests",
          [](const std::string&) {
            throw CLI::ValidationError(
                "--max-requests: this command simulates its requests; their bound is "
                "--max-simulated (--max-requests is probe's bound on the requests it sends)");
          },
          "")
      ->group("");
  return AddParsed(command, "--max-simulated", target, ParsePositiveInteger,
                   "The most requests a run (for check and worst: one seed's case) may simulate, "
                   "estimated before it starts; more is refused (default " +
                       std::to_string(kDefaultMaxSimulated) + ", about 8 GB)");
}

CLI::Option* AddMaxTransitOption(CLI::App& command, std::optional<Duration>& target) {
  return AddParsed(
      command, "--max-transit", target,
      [](std::string_view text) -> Result<Duration> {
        Result<Duration> d = ParseDurationOrZero(text);
        if (d.ok() && *d > kLongestMaxTransit) {
          return absl::InvalidArgumentError("'" + std::string(text) +
                                            "' is over an hour: no request waits that long on "
                                            "its way to a store and is still answered");
        }
        return d;
      },
      "The longest a request may be held between its client reading the clock and its call "
      "reaching the store (and an answer on its way back): now and then the search delays one "
      "that long, as a pause, a retry or a queue does (default 500ms, or three windows when "
      "that is less; 0: never; see docs/check.md)");
}

Result<SeedRange> ParseSeeds(std::string_view text) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        "'" + std::string(text) +
        "' is neither a number of seeds (N, for 1..N) nor a range A..B of seeds with A <= B");
  };
  SeedRange range;
  if (const size_t dots = text.find(".."); dots != std::string_view::npos) {
    const Result<uint64_t> first = ParseSeed(text.substr(0, dots));
    const Result<uint64_t> last = ParseSeed(text.substr(dots + 2));
    if (!first.ok() || !last.ok() || *first > *last) return bad();
    range = {*first, *last};
  } else {
    const std::optional<uint64_t> n = WholeNumber<uint64_t>(text, 1);
    if (!n) return bad();
    range = {1, *n};
  }
  if (range.count() > kMostSweptSeeds || range.count() == 0) {  // 0: the whole 2^64 wrapped
    return absl::InvalidArgumentError(
        "'" + std::string(text) + "' is more seeds than one command takes (at most " +
        std::to_string(kMostSweptSeeds) + "); take a smaller range, or several");
  }
  return range;
}

Result<Instant> ParseStart(std::string_view text) {
  const std::optional<Instant> at = ParseInstant(text);
  if (!at) {
    return absl::InvalidArgumentError("'" + std::string(text) +
                                      "' is not a UTC instant (e.g. 2026-01-01T00:00:00Z)");
  }
  return *at;
}

}  // namespace ratelab
