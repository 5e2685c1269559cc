// `ratelab probe URL`: a running HTTP rate limiter judged black-box (sim/probe_run.h): its flags
// into a ProbePlan, the plan printed before anything is sent, the result printed
// (reports/probe_report.h).
//
// Exit status: 0 nothing found, 1 the promise was broken or HTTP showed a finding, 2 bad input or
// a server that answered nothing that can be judged.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/policy_flags.h"
#include "impl/core/system_clock.h"
#include "live/probe_run.h"
#include "model/named.h"
#include "reports/output_dir.h"
#include "reports/probe_report.h"
#include "reports/report_model.h"

namespace ratelab {

namespace {

Result<HttpHeader> ParseHeaderFlag(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError("'" + std::string(text) +
                                      "' is not a header (expected \"Name: value\")");
  }
  std::string_view value = text.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  return HttpHeader{std::string(text.substr(0, colon)), std::string(value)};
}

Result<TrafficKind> ParseTraffic(std::string_view text) {
  if (std::optional<TrafficKind> t = ProbeTrafficNamed(text)) return *t;
  return absl::InvalidArgumentError("'" + std::string(text) + "' is not a traffic (" +
                                    ProbeTrafficChoices() + ")");
}

std::string TrafficHelp() {
  std::string help =
      "How the requests are spread, named as a scenario's traffic (default constant):";
  for (const TrafficInfo& t : kTrafficKinds) {
    if (!t.probe.empty()) help += "\n  " + std::string(t.name) + ": " + std::string(t.probe);
  }
  return help;
}

Result<int> ParseStatus(std::string_view text) {
  const Result<int64_t> n = ParsePositiveInteger(text);
  if (!n.ok() || *n < 100 || *n > 599) {
    return absl::InvalidArgumentError("'" + std::string(text) +
                                      "' is not an HTTP status (100 to 599)");
  }
  return static_cast<int>(*n);
}

class Probe final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "probe",
        "Judge a running HTTP rate limiter black-box: send it capped, paced requests as several "
        "users and hold what it answers to a model; exit 1 when the promise is broken, its "
        "answers are not linearizable, or they show a finding");
    c->footer(
        "The promise is judged on [sent, answered] of each request, on this machine's clock "
        "(a decision took effect somewhere in between): only what is broken wherever each fell "
        "is reported; and whether some order of the requests, each decided inside its "
        "interval, gives every admission and denial the model gives (linearizable: a false "
        "denial fails it). Besides them: 5xx answers, a denial without Retry-After or with one "
        "longer "
        "than the model ever waits, X-RateLimit-* and IETF RateLimit / RateLimit-Policy headers "
        "that break their grammar, a Remaining above what the admissions seen leave, or (for a "
        "fixed or anchored window) rising before the reset it named. What it will send is printed "
        "before it starts; it never sends more than --max-requests, more than --max-rps in any "
        "second, or for longer than --duration. --traffic boundary-attack first sends one request "
        "to "
        "learn the window's edge from its reset header. Only http:// (no TLS).");
    c->add_option("url", plan_.url,
                  "The endpoint, http://host[:port]/path ({user} and {n} "
                  "are filled in)")
        ->required();
    c->add_option("--method", plan_.method, "The request's method")->capture_default_str();
    c->add_option_function<std::vector<std::string>>(
        "--header",
        [this](const std::vector<std::string>& texts) {
          for (const std::string& text : texts) {
            Result<HttpHeader> h = ParseHeaderFlag(text);
            if (!h.ok())
              throw CLI::ValidationError("--header: " + std::string(h.status().message()));
            plan_.headers.push_back(*std::move(h));
          }
        },
        "A header to send, \"Name: value\" ({user} and {n} are filled in); repeatable");
    c->add_option("--body", plan_.body,
                  "The request's body ({user}: the user, {n}: the request's number)");
    c->add_option_function<std::vector<std::string>>(
        "--denied-if",
        [this](const std::vector<std::string>& texts) {
          plan_.denied_statuses.clear();
          for (const std::string& text : texts) {
            if (text.starts_with("body:")) {
              plan_.denied_bodies.push_back(text.substr(5));
              continue;
            }
            Result<int> s = ParseStatus(text);
            if (!s.ok())
              throw CLI::ValidationError("--denied-if: " + std::string(s.status().message()));
            plan_.denied_statuses.push_back(*s);
          }
        },
        "What means denied (default: status 429): a status, or body:TEXT (an answer whose "
        "body holds TEXT, whatever its status); repeatable, e.g. --denied-if 429 --denied-if "
        "503, or --denied-if 'body:\"allowed\":false'");
    c->add_option("--model", model_,
                  "The algorithm to hold the limiter to (ratelab list algorithms), e.g. "
                  "fixed-window (windows aligned to the clock), anchored-window (each user's "
                  "first request opens its window), sliding-log, token-bucket, gcra")
        ->required();
    AddPolicyFlags(*c, policy_, kDefaultPolicy);
    c->add_option_function<std::vector<std::string>>(
         "--require",
         [this](const std::vector<std::string>& names) {
           for (const std::string& name : names) {
             Result<CheckId> check = ParseRequiredCheck(name);
             if (!check.ok())
               throw CLI::ValidationError("--require: " + std::string(check.status().message()));
             plan_.required.push_back(*check);
           }
         },
         "Make an optional check a finding; repeatable. retry-after-missing: a denial must say "
         "when "
         "to retry (RFC 6585 leaves Retry-After to the server, so its absence is otherwise a note)")
        ->type_name("CHECK");
    c->add_flag("--from-headers", plan_.policy_from_headers,
                "Learn the limit and window from the first answer that states them "
                "(RateLimit-Policy's quota and w; else X-RateLimit-Limit or RateLimit-Limit with "
                "--window); window models only");
    c->add_option("--users", plan_.users, "Users the requests go round ({user})")
        ->capture_default_str();
    AddParsed(*c, "--traffic", plan_.traffic, ParseTraffic, TrafficHelp());
    c->add_option("--burst-size", plan_.burst_size,
                  "bursts: the requests in each (default: twice the limit)")
        ->type_name("N");
    AddParsed(*c, "--seed", plan_.seed, ParseSeed, "poisson: the seed of its gaps and users")
        ->default_str("1");
    c->add_option("--user-prefix", user_prefix_,
                  "What {user} starts with; the user's number follows (default probe-S-, S the "
                  "start in unix seconds, so that a run does not meet the counts of the last)");
    c->add_option("--connections", plan_.concurrency, "Connections sending at once")
        ->capture_default_str();
    AddParsed(*c, "--duration", plan_.duration, ParsePositiveDuration,
              "The longest it sends, e.g. 10s, 1m (default 10s, at most 1h)");
    c->add_option("--max-requests", plan_.max_requests,
                  "The most requests it sends (at most 1000000)")
        ->capture_default_str();
    c->add_option("--max-rps", plan_.max_per_second,
                  "The most requests it sends in any second (at most 10000)")
        ->capture_default_str();
    AddParsed(*c, "--retry-after-wait", plan_.retry_after_wait, ParseDurationOrZero,
              "After the load, retry two users of their own once denied: one clearly before "
              "its Retry-After is up (it must be denied), one just after (it must be admitted), "
              "when Retry-After is at most this (default 10s; 0 never)");
    AddParsed(*c, "--timeout", plan_.timeout, ParsePositiveDuration,
              "How long an answer may take (default 5s, at most 1m)");
    c->add_flag("--json", json_, "Print the result as JSON");
    AddJunitOption(*c, junit_);
    c->add_option("--out", out_,
                  "Also write the report into this directory: report.html, report.md, "
                  "report.json and junit.xml");
    AddForceFlag(*c, force_);
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream& err) override {
    const std::optional<Algorithm> model = AlgorithmNamed(model_);
    if (!model) {
      return absl::InvalidArgumentError("unknown algorithm '" + model_ + "' (expected " +
                                        AlgorithmChoices() + ")");
    }
    Result<Policy> policy = PolicyFromFlags("--model " + model_, *model, policy_, kDefaultPolicy);
    if (!policy.ok()) return policy.status();
    plan_.policy = *policy;
    plan_.window_given = policy_.window.has_value();
    const SystemClock clock;
    plan_.user_prefix =
        user_prefix_.empty()
            ? "probe-" + std::to_string(ToUnixNanos(clock.Now()) / 1'000'000'000) + "-"
            : user_prefix_;
    plan_.fresh_users = user_prefix_.empty();
    if (Status s = CheckProbePlan(plan_); !s.ok()) return s;
    std::optional<OutputDir> dir;
    if (!out_.empty()) {
      Result<OutputDir> prepared = OutputDir::Prepare(out_, force_, "--out");
      if (!prepared.ok()) return prepared.status();
      dir = *std::move(prepared);
    }
    err << DescribeProbePlan(plan_) << std::flush;
    const InterruptHandler interrupts;
    Result<ProbeResult> result = RunProbe(
        plan_, clock,
        [&](Duration elapsed, int64_t answered) {
          err << "progress: " << FormatDuration(std::chrono::floor<std::chrono::seconds>(elapsed))
              << ", " << answered << " answered\n";
        },
        [&] { return interrupts.interrupted(); });
    if (!result.ok()) return result.status();
    if (result->interrupted) {
      err << "interrupted after " << FormatDuration(result->elapsed)
          << ": what was answered until then, judged\n";
    }
    const ProbeReport report = MakeProbeReport(plan_, *result);
    out << (json_ ? JsonText(ToJson(report)) : RenderProbeText(report));
    if (!junit_.empty()) {
      if (Status s = WriteTextFile(junit_, RenderProbeJunit(report)); !s.ok()) return s;
    }
    if (dir) {
      Result<std::string> html = WriteProbeReport(report, *dir);
      if (!html.ok()) return html.status();
      err << "report: " << std::filesystem::absolute(*html).string()
          << "\n  also report.md, report.json, junit.xml, beside it\n";
    }
    if (result->interrupted) return kExitInterrupted;
    return ExitOf(VerdictOf(report));
  }

 private:
  ProbePlan plan_;
  std::string model_;
  std::string user_prefix_;
  PolicyFlags policy_;
  bool json_ = false;
  std::string junit_;
  std::string out_;
  bool force_ = false;
};

}  // namespace

std::unique_ptr<Command> ProbeCommand() { return std::make_unique<Probe>(); }

}  // namespace ratelab
