#include "cli/check_command.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "absl/strings/str_split.h"
#include "cli/policy_flags.h"
#include "cli/ratelab_cli.h"
#include "cli/user_script.h"
#include "impl/core/system_clock.h"
#include "impl/limiters/kv_user_lua.h"
#include "impl/limiters/protocol.h"
#include "impl/store/memory_kv.h"
#include "reports/result_json.h"
#include "reports/timeline.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"

namespace ratelab {

namespace {

using std::chrono::milliseconds;

// One candidate run: everything explicit, so shrinking can take parts away.
struct Case {
  Policy policy;
  Durability durability = Durability::kAlways;
  std::vector<Arrival> arrivals;
  std::vector<FaultSpec> faults;
  std::vector<NodeSpec> nodes;
  std::vector<std::string> checks;
};

constexpr Duration kLatencyBase = milliseconds(1);
constexpr Duration kLatencyJitter = milliseconds(3);

Scenario ToScenario(const std::string& protocol, const Case& c,
                    const std::shared_ptr<const LimiterSpec::Custom>& custom,
                    const std::shared_ptr<KvStoreSource>& kv_store) {
  Scenario s;
  s.kv_store = kv_store;
  s.name = "check " + protocol;
  s.nodes = c.nodes;
  s.to_store = {kLatencyBase, kLatencyJitter};
  s.from_store = s.to_store;
  s.buggify = Scenario::BuggifyMode::kAuto;
  LimiterSpec spec;
  spec.protocol = protocol;
  spec.policy = c.policy;
  spec.durability = c.durability;
  spec.custom = custom;
  s.limiters.push_back(spec);
  s.claim_limit = c.policy.limit;
  s.claim_window = c.policy.IsBucket() ? c.policy.limit * c.policy.window : c.policy.window;
  s.traffic.push_back(std::make_unique<ReplayTraffic>("the case", c.arrivals));
  s.faults = c.faults;
  s.checks = c.checks;
  return s;
}

// The span a case's traffic covers: three windows (a bucket's window: the time to fill it).
Duration Span(const Policy& p) { return 3 * (p.IsBucket() ? p.limit * p.window : p.window); }

// Random traffic and faults for `seed`: one or two users, Poisson at three times the limit, and
// now and then a burst or a boundary attack; faults placed just after requests, where they cut
// protocols between steps.
Case Draw(const Case& base, uint64_t seed, const std::set<std::string>& faults, int concurrency) {
  Random r = Random(seed).Fork(7);
  Case c = base;
  const Scenario start_of;  // for the default start instant
  const Instant start = start_of.start;
  const Policy& p = c.policy;
  const Duration w = p.IsBucket() ? p.limit * p.window : p.window;
  const Duration span = Span(p);
  const int users = static_cast<int>(r.Uniform(1, 3));
  for (int u = 1; u <= users; ++u) {
    const std::string user = "u" + std::to_string(u);
    const Duration gap = w / (3 * p.limit);
    for (Instant t = start + r.Exponential(gap); t < start + span; t += r.Exponential(gap)) {
      c.arrivals.push_back({t, user, "/api", 1});
    }
    if (r.Chance(0.5)) {
      const Instant at = start + Duration(r.Uniform(0, span.count()));
      for (int64_t i = 0; i <= p.limit; ++i) c.arrivals.push_back({at, user, "/api", 1});
    }
    if (r.Chance(0.5)) {
      const Instant edge = start + w * r.Uniform(1, 3);
      const Duration step = std::max(Duration(1), w / (100 * p.limit));
      for (int64_t i = 1; i <= p.limit; ++i) {
        c.arrivals.push_back({edge - i * step, user, "/api", 1});
        c.arrivals.push_back({edge + (i - 1) * step, user, "/api", 1});
      }
    }
  }
  std::stable_sort(c.arrivals.begin(), c.arrivals.end(),
                   [](const Arrival& a, const Arrival& b) { return a.at < b.at; });
  c.nodes.assign(static_cast<size_t>(concurrency), NodeSpec{});
  if (faults.count("skew") && concurrency > 1) {
    c.nodes[1].clock_offset = Duration(r.Uniform(-w.count() / 4, w.count() / 4 + 1));
  }
  const auto near_a_request = [&] {
    const Arrival& a =
        c.arrivals[static_cast<size_t>(r.Uniform(0, static_cast<int64_t>(c.arrivals.size())))];
    return a.at - start + Duration(r.Uniform(0, (2 * (kLatencyBase + kLatencyJitter)).count()));
  };
  if (c.arrivals.empty()) return c;
  if (faults.count("crash") && r.Chance(0.7)) {
    FaultSpec f;
    f.kind = FaultSpec::Kind::kCrash;
    f.node = static_cast<int>(r.Uniform(0, concurrency));
    f.at = near_a_request();
    f.amount = Duration(r.Uniform(milliseconds(1).count(), (w / 10).count() + 2));
    c.faults.push_back(f);
  }
  if (faults.count("restart") && r.Chance(0.5)) {
    FaultSpec f;
    f.kind = FaultSpec::Kind::kStoreRestart;
    f.at = near_a_request();
    f.amount = milliseconds(r.Uniform(1, 50));
    c.faults.push_back(f);
  }
  if (faults.count("outage") && r.Chance(0.5)) {
    FaultSpec f;
    f.kind = FaultSpec::Kind::kStoreOutage;
    f.at = near_a_request();
    f.amount = Duration(r.Uniform(milliseconds(1).count(), (w / 10).count() + 2));
    c.faults.push_back(f);
  }
  return c;
}

// The first violation of a run of `c`, if any; `history` gets the run's history.
// The protocol under check: a registry name, or a user's script.
struct Subject {
  std::string protocol;
  std::shared_ptr<const LimiterSpec::Custom> custom;
  std::shared_ptr<KvStoreSource> kv_store;  // null: MemoryKv
  // The first run that could not be made (a real store that failed): the search stops there.
  Status failure;
};

// The first violation of a run of `c`, if any; `history` and `faults` get the run's history and
// its faults' windows.
std::optional<Violation> FirstViolation(Subject& subject, const Case& c, uint64_t seed,
                                        History* history = nullptr,
                                        std::vector<FaultWindow>* faults = nullptr) {
  if (!subject.failure.ok()) return std::nullopt;
  Result<Comparison> run =
      RunScenario(ToScenario(subject.protocol, c, subject.custom, subject.kv_store), seed);
  if (!run.ok()) {
    subject.failure = run.status();
    return std::nullopt;
  }
  if (history != nullptr) *history = run->limiters.front().history;
  if (faults != nullptr) *faults = run->faults;
  for (const CheckResult& check : run->limiters.front().checks) {
    if (!check.violations.empty()) return check.violations.front();
  }
  return std::nullopt;
}

// Takes parts of `c` away while the run still breaks `invariant`: chunks of requests (halves,
// then quarters, down to single ones), faults one at a time, then a smaller limit. At most
// `budget` runs.
Case Shrink(Subject& subject, Case c, uint64_t seed, const std::string& invariant, int budget) {
  const auto still_fails = [&](const Case& candidate) {
    if (budget-- <= 0) return false;
    const std::optional<Violation> v = FirstViolation(subject, candidate, seed);
    return v && v->invariant == invariant;
  };
  for (bool progress = true; progress && budget > 0;) {
    progress = false;
    for (size_t chunk = std::max<size_t>(1, c.arrivals.size() / 2); chunk >= 1; chunk /= 2) {
      for (size_t at = 0; at < c.arrivals.size();) {
        Case candidate = c;
        const auto first = candidate.arrivals.begin() + static_cast<std::ptrdiff_t>(at);
        candidate.arrivals.erase(
            first, first + static_cast<std::ptrdiff_t>(std::min(chunk, c.arrivals.size() - at)));
        if (!candidate.arrivals.empty() && still_fails(candidate)) {
          c = std::move(candidate);
          progress = true;
        } else {
          at += chunk;
        }
      }
      if (chunk == 1) break;
    }
    for (size_t i = 0; i < c.faults.size();) {
      Case candidate = c;
      candidate.faults.erase(candidate.faults.begin() + static_cast<std::ptrdiff_t>(i));
      if (still_fails(candidate)) {
        c = std::move(candidate);
        progress = true;
      } else {
        ++i;
      }
    }
    if (c.policy.limit > 1) {
      Case candidate = c;
      --candidate.policy.limit;
      if ((subject.custom || CheckProtocol(subject.protocol, candidate.policy).ok()) &&
          still_fails(candidate)) {
        c = std::move(candidate);
        progress = true;
      }
    }
  }
  return c;
}

// The witness as a timeline (reports/timeline.h): each request's send, steps and answer, and
// the faults that touch them, in time order, relative to the first row.
std::string Timeline(const std::vector<HistoryEvent>& events,
                     const std::vector<FaultWindow>& faults) {
  const Instant start = Scenario().start;
  const std::vector<TimelineRow> rows =
      WitnessTimeline(WitnessJson(events, start), FaultsJson(faults, start));
  std::string out;
  for (const TimelineRow& r : rows) {
    const auto since =
        std::chrono::round<Duration>(std::chrono::duration<double>(r.at_s - rows.front().at_s));
    std::string when = "+" + FormatDuration(since);
    when.resize(std::max<size_t>(when.size() + 1, 15), ' ');
    const std::string who = r.id < 0 ? "" : "#" + std::to_string(r.id) + " " + r.node + "  ";
    out += "  " + when + who + r.what + "\n";
  }
  return out;
}

// The words of a comma-separated list; none in an empty one.
std::vector<std::string> Words(const std::string& text) {
  if (text.empty()) return {};
  return absl::StrSplit(text, ',');
}

// The command that replays `seed` with the options the user gave.
std::string Reproduce(const CheckOptions& o, uint64_t seed) {
  std::string out = "ratelab check " + o.protocol;
  if (o.script.lua) out = "ratelab check" + o.script.Flags();
  if (o.policy.limit) out += " --limit " + std::to_string(*o.policy.limit);
  if (o.policy.window) out += " --window " + *o.policy.window;
  if (o.policy.rate) out += " --rate " + nlohmann::json(*o.policy.rate).dump();
  if (o.policy.burst) out += " --burst " + std::to_string(*o.policy.burst);
  out += " --seed " + std::to_string(seed);
  if (o.faults != CheckOptions().faults) out += " --faults " + o.faults;
  if (o.concurrency != CheckOptions().concurrency) {
    out += " --concurrency " + std::to_string(o.concurrency);
  }
  if (o.durability != CheckOptions().durability) out += " --durability " + o.durability;
  if (o.store != CheckOptions().store) out += " --store " + o.store;
  if (o.checks) out += " --checks " + *o.checks;
  if (o.claim) out += " --claim";
  return out;
}

std::set<std::string> ParseFaults(const std::string& text, std::string* error) {
  std::set<std::string> out;
  for (const std::string& word : Words(text)) {
    if (word != "crash" && word != "restart" && word != "skew" && word != "outage" &&
        word != "none") {
      *error = "--faults: unknown fault '" + word +
               "' (expected a comma-separated list of crash, restart, skew, outage, or none)";
      return {};
    }
    if (word != "none") out.insert(word);
  }
  return out;
}

}  // namespace

int CheckCommand(const CheckOptions& o, std::ostream& out, std::ostream& err) {
  Subject subject{o.protocol, nullptr, nullptr, absl::OkStatus()};
  if (o.script.lua && !o.protocol.empty()) {
    err << "ratelab check: give a protocol or --lua, not both\n";
    return kExitBadInput;
  }
  if (o.script.lua) {
    Result<std::shared_ptr<const LimiterSpec::Custom>> custom = LoadUserScript(o.script);
    if (!custom.ok()) {
      err << "ratelab check: " << custom.status().message() << "\n";
      return kExitBadInput;
    }
    subject.protocol = "lua:" + *o.script.lua;
    subject.custom = *std::move(custom);
  } else if (o.protocol.empty()) {
    err << "ratelab check: name a protocol (see ratelab list protocols) or give --lua FILE\n";
    return kExitBadInput;
  } else if (o.script.DescribesAScript()) {
    err << "ratelab check: --model, --keys, --args and --reply describe a --lua script\n";
    return kExitBadInput;
  }
  const ProtocolInfo* info = subject.custom ? &subject.custom->info : FindProtocol(o.protocol);
  if (info == nullptr) {
    err << "ratelab check: unknown protocol '" << o.protocol << "' (see ratelab list protocols)\n";
    return kExitBadInput;
  }
  const std::string& name = subject.protocol;
  const bool bucket = Describe(*AlgorithmFromName(info->algorithm)).bucket;
  Case base;
  Result<Policy> policy =
      PolicyFromFlags(subject.protocol, info->algorithm, o.policy, kCheckPolicyDefaults);
  if (!policy.ok()) {
    err << "ratelab check: " << policy.status().message() << "\n";
    return kExitBadInput;
  }
  base.policy = *policy;
  if (Status s = subject.custom ? absl::OkStatus() : CheckProtocol(o.protocol, base.policy);
      !s.ok()) {
    err << "ratelab check: " << s.message() << "\n";
    return kExitBadInput;
  }
  if (o.concurrency < 1 || o.concurrency > 64) {
    err << "ratelab check: --concurrency must be between 1 and 64\n";
    return kExitBadInput;
  }
  if (o.seeds < 1) {
    err << "ratelab check: --seeds must be at least 1\n";
    return kExitBadInput;
  }
  std::string fault_error;
  const std::set<std::string> faults = ParseFaults(o.faults, &fault_error);
  if (!fault_error.empty()) {
    err << "ratelab check: " << fault_error << "\n";
    return kExitBadInput;
  }
  const std::optional<Durability> durability = DurabilityFromName(o.durability);
  if (!durability) {
    err << "ratelab check: --durability '" << o.durability
        << "' is not one of none, everysec, always\n";
    return kExitBadInput;
  }
  base.durability = *durability;
  if (o.store != CheckOptions().store) {
    Result<std::shared_ptr<KvStoreSource>> source = KvStoreSource::Make(o.store);
    if (!source.ok()) {
      err << "ratelab check: --store: " << source.status().message() << "\n";
      return kExitBadInput;
    }
    subject.kv_store = *std::move(source);
  }
  std::set<std::string> faults_here = faults;
  if (subject.kv_store && !subject.kv_store->owns_server() && info->store == "kv" &&
      faults_here.contains("restart")) {
    if (o.faults != CheckOptions().faults) {
      err << "ratelab check: --faults restart needs a Redis that ratelab starts (--store redis): "
             "it cannot restart the one at "
          << o.store << "\n";
      return kExitBadInput;
    }
    faults_here.erase("restart");
    err << "note: no store restarts: ratelab cannot restart the Redis at " << o.store << "\n";
  }
  if (o.checks) {
    if (o.checks->empty()) {
      err << "ratelab check: --checks: name at least one check (see ratelab list checks)\n";
      return kExitBadInput;
    }
    for (const std::string& name : Words(*o.checks)) {
      if (Status s = CheckCheckName(name); !s.ok()) {
        err << "ratelab check: --checks: " << s.message() << "\n";
        return kExitBadInput;
      }
      base.checks.push_back(name);
    }
  } else {
    base.checks = {"promise"};
    if (!bucket) base.checks.push_back("false-denials");
    if (info->store != "memory") base.checks.push_back("key-expiry");
  }
  if (o.claim) base.checks.push_back("any-window-cap");

  const SystemClock clock;
  const Instant began = clock.Now();
  const uint64_t first = o.seed.value_or(1), last = o.seed ? *o.seed : o.seeds;
  for (uint64_t seed = first; seed <= last; ++seed) {
    if (seed % 50 == 0) err << "progress: " << seed << "/" << last << " seeds, nothing yet\n";
    const Case drawn = Draw(base, seed, faults_here, o.concurrency);
    const std::optional<Violation> found = FirstViolation(subject, drawn, seed);
    if (!subject.failure.ok()) break;
    if (!found) continue;
    const double seconds = std::chrono::duration<double>(clock.Now() - began).count();
    const Case minimal = Shrink(subject, drawn, seed, found->invariant, 2000);
    History history;
    std::vector<FaultWindow> fault_windows;
    const std::optional<Violation> shown =
        FirstViolation(subject, minimal, seed, &history, &fault_windows);
    if (!subject.failure.ok()) break;
    const Violation& v = shown ? *shown : *found;
    // The minimal case is the witness: every request in it is needed to break the invariant.
    std::vector<HistoryEvent> witness;
    for (const HistoryEvent& e : history) {
      if (shown) witness.push_back(e);
    }
    std::vector<std::string> fault_words;
    for (const FaultSpec& f : minimal.faults) fault_words.push_back(f.Describe(Scenario().start));
    err << "found after " << seed - first + 1 << " seed(s) in " << seconds << " s\n";
    if (o.json) {
      nlohmann::json json_witness = nlohmann::json::array();
      for (const HistoryEvent& e : witness) {
        json_witness.push_back({{"id", e.id},
                                {"node", e.node},
                                {"key", e.key},
                                {"outcome", !e.decision           ? "no answer"
                                            : e.decision->allowed ? "admitted"
                                                                  : "denied"}});
      }
      out << nlohmann::json{{"protocol", name},
                            {"policy", minimal.policy.ToString()},
                            {"verdict", "violation"},
                            {"seed", seed},
                            {"seeds_searched", seed - first + 1},
                            {"invariant", v.invariant},
                            {"summary", v.summary},
                            {"requests", minimal.arrivals.size()},
                            {"faults", fault_words},
                            {"reproduce", Reproduce(o, seed)},
                            {"witness", json_witness}}
                 .dump(2)
          << "\n";
    } else {
      out << name << ": VIOLATION of " << v.invariant << " (seed " << seed << ", "
          << seed - first + 1 << " seed(s) searched)\n"
          << "minimal case: " << minimal.policy.ToString() << ", " << minimal.arrivals.size()
          << " request(s) (from " << drawn.arrivals.size() << "), " << minimal.nodes.size()
          << " node(s)";
      for (const std::string& f : fault_words) out << "; " << f;
      out << "\n"
          << v.summary << "\nwitness (" << witness.size() << " request(s)):\n"
          << Timeline(witness, fault_windows) << "reproduce: " << Reproduce(o, seed) << "\n";
    }
    return kExitViolation;
  }
  if (!subject.failure.ok()) {
    err << "ratelab check: " << subject.failure.message() << "\n";
    return kExitBadInput;
  }
  const double seconds = std::chrono::duration<double>(clock.Now() - began).count();
  err << "searched " << last - first + 1 << " seed(s) in " << seconds << " s\n";
  if (o.json) {
    out << nlohmann::json{{"protocol", name},
                          {"policy", base.policy.ToString()},
                          {"verdict", "none"},
                          {"seeds_searched", last - first + 1}}
               .dump(2)
        << "\n";
  } else {
    out << name << ": nothing found in " << last - first + 1 << " seed(s) ("
        << base.policy.ToString() << "; checks:";
    for (const std::string& c : base.checks) out << " " << c;
    std::string fault_list;
    for (const std::string& f : faults_here) fault_list += (fault_list.empty() ? "" : ",") + f;
    out << "; faults: " << (fault_list.empty() ? std::string("none") : fault_list) << ")\n";
  }
  return kExitOk;
}

}  // namespace ratelab
