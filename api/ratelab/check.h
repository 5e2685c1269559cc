// ratelab's C++ API: check a rate limiter of your own, in your own process, from your own tests,
// with the search `ratelab check` runs (random traffic from several clients on a virtual clock,
// faults, the model's promise and no false denials, the witness shrunk to the fewest requests)
// and its words. docs/cpp-api.md says what is stable. Standard C++20 only.
//
//   #include <ratelab/check.h>
//   ratelab::api::Options options;
//   options.model = "fixed-window";
//   options.limit = 5;
//   options.window = std::chrono::seconds(10);
//   const ratelab::api::Verdict v = ratelab::api::Check(
//       [] { return std::make_unique<MyLimiter>(5, std::chrono::seconds(10)); }, options);
//   if (!v.NothingFound()) std::cerr << v.text;  // the witness, and how to replay it
//
// Link the CMake target ratelab::check (find_package(ratelab CONFIG)).
#ifndef RATELAB_API_RATELAB_CHECK_H_
#define RATELAB_API_RATELAB_CHECK_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#define RATELAB_API_EXPORT __attribute__((visibility("default")))

namespace ratelab::api {

// This header's version: a change that breaks a caller's code or its binary raises it.
inline constexpr int kVersion = 1;

// An instant on the run's virtual clock, in nanoseconds since the Unix epoch (UTC).
using Instant = std::chrono::sys_time<std::chrono::nanoseconds>;

// Your limiter, one instance for each limiter process the run simulates. It keeps its state in
// its own memory, and is made again (the state lost) when that process restarts.
class Limiter {
 public:
  virtual ~Limiter() = default;
  // Whether a request of `cost` units for `key` is admitted at `now`, the instant it decides at.
  // An exception it throws fails the run: the verdict says the limiter failed, with its message.
  virtual bool Admit(std::string_view key, int64_t cost, Instant now) = 0;
};

// Makes a fresh limiter: at the start of each run, and at each restart.
using MakeLimiter = std::function<std::unique_ptr<Limiter>()>;

struct Options {
  // The algorithm your limiter implements, which it is held to, by the name `ratelab list
  // algorithms` gives: fixed-window, sliding-log, sliding-counter, token-bucket, gcra,
  // anchored-window, and the conventions beside them (sliding-log-closed, ...).
  std::string model = "fixed-window";
  // Window algorithms: `limit` per `window`.
  int64_t limit = 2;
  std::chrono::nanoseconds window = std::chrono::seconds(10);
  // Bucket algorithms: a bucket of `burst`, `rate` tokens a second.
  int64_t burst = 1;
  double rate = 1;
  // The seeds searched, from `first_seed`: a finding names its seed, and `first_seed` = that seed
  // with `seeds` = 1 replays it.
  uint64_t first_seed = 1;
  uint64_t seeds = 200;
  // Faults injected, as `ratelab check --faults` takes them: "none", or "crash" (a limiter
  // process restarts, its state lost).
  std::string faults = "none";
  // The checks, as `ratelab check --checks` takes them (`ratelab list checks`); empty: the model's
  // promise and no false denials.
  std::string checks;
  // The finest time your limiter sees (a limiter that reads whole milliseconds: 1ms): requests
  // closer than this are judged as it could tell them apart.
  std::chrono::nanoseconds resolution = std::chrono::nanoseconds(1);
  // What the text calls your limiter.
  std::string name = "my limiter";
};

enum class Outcome {
  kNothingFound,   // no violation in the seeds searched
  kViolation,      // a promise broken: `text` has the minimal witness
  kLimiterFailed,  // the limiter threw: `text` has its message, the request and the seed
  kBadInput,       // the options are wrong: `text` says which and why
};

struct Verdict {
  Outcome outcome = Outcome::kBadInput;
  uint64_t seed = 0;  // the seed of a finding (0: none)
  // What `ratelab check` prints: the verdict, what was searched, the witness request by request,
  // and how to replay it.
  std::string text;

  bool NothingFound() const { return outcome == Outcome::kNothingFound; }
};

// Searches `options.seeds` seeds for a violation of what `options.model` promises, shrinks the
// first finding to its minimal witness, and says so. Deterministic: the same options and the same
// limiter give the same verdict and text.
RATELAB_API_EXPORT Verdict Check(const MakeLimiter& make, const Options& options);

// One request, for properties of your own (ratelab/rapidcheck.h draws them).
struct Request {
  std::string key;
  int64_t cost = 1;
  Instant at{};
};

// What ratelab's reference model of `options.model`, with `options`' policy, answers to each of
// `requests` in turn: whether it is admitted. The model is the algorithm stated exactly (a denial
// changes nothing; a key's requests are taken in the order given, an earlier instant than the
// key's latest admission as that instant). Throws std::invalid_argument where Check would say
// bad input, with the same words.
RATELAB_API_EXPORT std::vector<bool> ModelDecisions(const Options& options,
                                                    const std::vector<Request>& requests);

}  // namespace ratelab::api

#endif  // RATELAB_API_RATELAB_CHECK_H_
