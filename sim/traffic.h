// Traffic generators: who asks, when, for what. Each is deterministic given the Random it is
// handed, so a run's traffic is a function of its seed.
#ifndef RATELAB_SIM_TRAFFIC_H_
#define RATELAB_SIM_TRAFFIC_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/time.h"
#include "sim/random.h"

namespace ratelab {

// One request a client will make.
struct Arrival {
  Instant at;
  std::string user;
  std::string endpoint = "/api";
  int64_t cost = 1;
  // The request's own random stream (its node, the latencies of its steps): 0 for the one its
  // position in the run names. A case that is shrunk keeps each request's, so taking one request
  // away changes nothing about the others.
  uint64_t stream = 0;
};

class TrafficGenerator {
 public:
  virtual ~TrafficGenerator() = default;
  // Appends this generator's arrivals to `out` (in any order).
  virtual void Generate(Random& random, std::vector<Arrival>& out) const = 0;
  // One line for reports: "user steady: one request every 10s from 00:00:00.000, 30 requests".
  virtual std::string Describe() const = 0;
  // How many arrivals Generate makes, on average over seeds, computed without making them: for
  // sizing a run before it starts.
  virtual double ExpectedCount() const = 0;
  // The bytes of an arrival's user and endpoint, on average: what its requests' history keeps
  // beside each (a generator's own users and "/api", unless it says otherwise).
  virtual double ExpectedKeyBytes() const { return kTypicalKeyBytes; }
  static constexpr double kTypicalKeyBytes = 12;
};

// `count` requests from `user`, one every `interval`, from `start`.
class ConstantTraffic final : public TrafficGenerator {
 public:
  ConstantTraffic(std::string user, Instant start, Duration interval, int64_t count)
      : user_(std::move(user)), start_(start), interval_(interval), count_(count) {}
  void Generate(Random& random, std::vector<Arrival>& out) const override;
  std::string Describe() const override;
  double ExpectedCount() const override;

 private:
  std::string user_;
  Instant start_;
  Duration interval_;
  int64_t count_;
};

// The boundary attack: `per_side` requests spread evenly over [edge - spread, edge) and as many
// over [edge, edge + spread), so each aligned window sees `per_side` but a span of 2 * spread
// sees twice that. An edge known only to lie in [edge, edge + unsure] (a server's, read from its
// reset header) puts the second half after it all: over [edge + unsure, edge + unsure + spread).
class BoundaryAttackTraffic final : public TrafficGenerator {
 public:
  BoundaryAttackTraffic(std::string user, Instant edge, Duration spread, int64_t per_side,
                        Duration unsure = {})
      : user_(std::move(user)),
        edge_(edge),
        spread_(spread),
        per_side_(per_side),
        unsure_(unsure) {}
  void Generate(Random& random, std::vector<Arrival>& out) const override;
  std::string Describe() const override;
  double ExpectedCount() const override;

 private:
  std::string user_;
  Instant edge_;
  Duration spread_;
  int64_t per_side_;
  Duration unsure_;
};

// `count` requests from `user` at the same instant.
class BurstTraffic final : public TrafficGenerator {
 public:
  BurstTraffic(std::string user, Instant at, int64_t count)
      : user_(std::move(user)), at_(at), count_(count) {}
  void Generate(Random& random, std::vector<Arrival>& out) const override;
  std::string Describe() const override;
  double ExpectedCount() const override;

 private:
  std::string user_;
  Instant at_;
  int64_t count_;
};

// Poisson arrivals (mean gap `mean_gap`) over [start, start + duration), each from one of
// `users` users ("u1".."uN") chosen with Zipf popularity of exponent `exponent`.
class ZipfUsersTraffic final : public TrafficGenerator {
 public:
  ZipfUsersTraffic(int64_t users, double exponent, Instant start, Duration duration,
                   Duration mean_gap)
      : users_(users),
        exponent_(exponent),
        start_(start),
        duration_(duration),
        mean_gap_(mean_gap) {}
  void Generate(Random& random, std::vector<Arrival>& out) const override;
  std::string Describe() const override;
  double ExpectedCount() const override;

 private:
  int64_t users_;
  double exponent_;
  Instant start_;
  Duration duration_;
  Duration mean_gap_;
};

// Poisson arrivals from one user, `mean_gap` apart on average, over [start, start + duration).
class PoissonTraffic final : public TrafficGenerator {
 public:
  PoissonTraffic(std::string user, Instant start, Duration duration, Duration mean_gap)
      : user_(std::move(user)), start_(start), duration_(duration), mean_gap_(mean_gap) {}
  void Generate(Random& random, std::vector<Arrival>& out) const override;
  std::string Describe() const override;
  double ExpectedCount() const override;

 private:
  std::string user_;
  Instant start_;
  Duration duration_;
  Duration mean_gap_;
};

// A day's rhythm: Poisson arrivals whose rate swings along a sine of period `period`, from
// `trough` times the peak rate (at start) up to the peak rate (`peak_gap` apart on average,
// half a period later), each from one of `users` users ("u1".."uN") chosen uniformly.
class DiurnalTraffic final : public TrafficGenerator {
 public:
  DiurnalTraffic(int64_t users, Instant start, Duration duration, Duration peak_gap,
                 Duration period, double trough)
      : users_(users),
        start_(start),
        duration_(duration),
        peak_gap_(peak_gap),
        period_(period),
        trough_(trough) {}
  void Generate(Random& random, std::vector<Arrival>& out) const override;
  std::string Describe() const override;
  double ExpectedCount() const override;

 private:
  int64_t users_;
  Instant start_;
  Duration duration_;
  Duration peak_gap_;
  Duration period_;
  double trough_;
};

// Requests read from an access log (see log_replay.h), replayed as they were.
class ReplayTraffic final : public TrafficGenerator {
 public:
  ReplayTraffic(std::string source, std::vector<Arrival> arrivals)
      : source_(std::move(source)), arrivals_(std::move(arrivals)) {}
  void Generate(Random& random, std::vector<Arrival>& out) const override;
  std::string Describe() const override;
  double ExpectedCount() const override;
  double ExpectedKeyBytes() const override;  // the log's own addresses and paths

 private:
  std::string source_;
  std::vector<Arrival> arrivals_;
};

// Another generator's arrivals, each to `endpoint` rather than "/api" (a scenario's `endpoint:`).
class EndpointTraffic final : public TrafficGenerator {
 public:
  EndpointTraffic(std::unique_ptr<TrafficGenerator> inner, std::string endpoint)
      : inner_(std::move(inner)), endpoint_(std::move(endpoint)) {}
  void Generate(Random& random, std::vector<Arrival>& out) const override;
  std::string Describe() const override { return inner_->Describe() + ", to " + endpoint_; }
  double ExpectedCount() const override { return inner_->ExpectedCount(); }
  double ExpectedKeyBytes() const override {
    return inner_->ExpectedKeyBytes() - 4 + static_cast<double>(endpoint_.size());
  }

 private:
  std::unique_ptr<TrafficGenerator> inner_;
  std::string endpoint_;
};

// The arrivals of every generator, on average (ExpectedCount).
double ExpectedCount(const std::vector<std::unique_ptr<TrafficGenerator>>& generators);
// Their user and endpoint bytes, on average over every arrival (ExpectedKeyBytes).
double ExpectedKeyBytes(const std::vector<std::unique_ptr<TrafficGenerator>>& generators);

// The kinds of traffic, one vocabulary: a scenario's generators by `type`, and what `probe
// --traffic` sends a running limiter.
enum class TrafficKind {
  kConstant,
  kPoisson,
  kBoundaryAttack,
  kBurst,
  kZipfUsers,
  kDiurnal,
  kReplay
};
struct TrafficInfo {
  TrafficKind id;
  std::string_view name;
  std::string_view summary;  // as a scenario's generator
  // What `probe --traffic` sends of it; empty where a probe cannot.
  std::string_view probe = {};
};
inline constexpr TrafficInfo kTrafficKinds[] = {
    {TrafficKind::kConstant, "constant", "one user at a fixed interval",
     "evenly spaced at --max-rps, the users in turn"},
    {TrafficKind::kPoisson, "poisson", "one user, Poisson arrivals",
     "random (exponential) gaps, half of --max-rps on average, each for a user drawn at random"},
    {TrafficKind::kBoundaryAttack, "boundary-attack",
     "N just before and N just after a window edge",
     "the limit just before and the limit again just after the window edge the server's reset "
     "header names, for one user"},
    {TrafficKind::kBurst, "burst", "many requests from one user at the same instant",
     "--burst-size requests at once (twice the limit unless given), the users in turn, one burst "
     "each window divided by the users"},
    {TrafficKind::kZipfUsers, "zipf-users", "many users with Zipf popularity, Poisson arrivals"},
    {TrafficKind::kDiurnal, "diurnal", "many users, a rate that rises and falls over a period"},
    {TrafficKind::kReplay, "replay",
     "an access log: CSV timestamp,key[,endpoint,cost] or common/combined format"},
};
// Every traffic generator, for `ratelab list`.
std::span<const TrafficInfo> TrafficGenerators();
std::string_view TrafficKindName(TrafficKind kind);

// Runs every generator, each on its own stream forked from `random`, and returns the arrivals
// in time order (ties keep generator order).
std::vector<Arrival> GenerateAll(const std::vector<std::unique_ptr<TrafficGenerator>>& generators,
                                 const Random& random);

}  // namespace ratelab

#endif  // RATELAB_SIM_TRAFFIC_H_
