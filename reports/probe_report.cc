#include "reports/probe_report.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "live/probe_findings.h"
#include "model/named.h"
#include "reports/view_parts.h"
#include "reports/witness_picture.h"

namespace ratelab {

namespace {

constexpr size_t kWitnessShown = 16;

constexpr char kJudgedHow[] =
    "Judged on [sent, answered] of each request, on the probe's clock: only what breaks the "
    "promise wherever each decision fell; an answer neither 2xx/3xx nor a denial counts as "
    "unknown, never as admitted. Linearizable: some order of the requests, each decided inside "
    "its interval on the server's clock, gives every admission and denial the policy's model "
    "gives (a denial none explains is a false denial).";

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

std::string Fixed(double v, int places) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", places, v);
  return buffer;
}

// Exchange `n` of `result`, as a report shows it.
ProbeExchangeReport ExchangeReport(const ProbeResult& result, int64_t n) {
  ProbeExchangeReport out;
  out.n = n;
  const HttpExchange* e = nullptr;
  for (const HttpExchange& x : result.exchanges) {
    if (x.n == n) e = &x;
  }
  if (e == nullptr) {
    out.error = "not recorded";
    return out;
  }
  out.user = e->label;
  out.sent_s = Seconds(e->sent - result.start);
  out.answered_s = Seconds(e->answered - result.start);
  out.status = e->status;
  if (!e->error.empty()) out.error = e->error;
  for (std::string_view name : kProbeHeaders) {
    if (std::optional<std::string_view> v = FindHeader(e->headers, name)) {
      out.headers[std::string(name)] = std::string(*v);
    }
  }
  return out;
}

ProbeViolationReport ViolationReportOf(const ProbeResult& result, const Violation& v) {
  ProbeViolationReport out{v.invariant, v.key, v.summary, {}};
  for (const HistoryEvent& e : v.witness) {
    out.witness.push_back(ExchangeReport(result, result.exchanges[static_cast<size_t>(e.id)].n));
  }
  if (v.window) {
    out.window =
        WindowReport{Seconds(v.window->from - result.start), Seconds(v.window->to - result.start),
                     v.window->closed, v.window->span};
  }
  return out;
}

std::string Outcome(const ProbeExchangeReport& e) {
  return e.status != 0 ? absl::StrCat(e.status) : "no answer (" + e.error.value_or("") + ")";
}

// `value` with each quoted string longer than a dozen characters (a RateLimit header's policy
// id, a UUID the server repeats in every answer) cut to its first eight, "..." after them: the
// rows stay readable; report.json has them whole.
std::string CutQuoted(std::string_view value) {
  constexpr size_t kLongest = 12, kKept = 8;
  std::string out;
  for (size_t i = 0; i < value.size();) {
    const size_t open = value.find('"', i);
    const size_t close = open == std::string_view::npos ? open : value.find('"', open + 1);
    if (close == std::string_view::npos) {
      out += value.substr(i);
      break;
    }
    out += value.substr(i, open + 1 - i);
    const std::string_view quoted = value.substr(open + 1, close - open - 1);
    out += quoted.size() > kLongest ? std::string(quoted.substr(0, kKept)) + "..."
                                    : std::string(quoted);
    out += '"';
    i = close + 1;
  }
  return out;
}

// The headers of `e` a probe reads, "Name: value" each in the probe's order, joined by `between`
// (Date only where a Retry-After is a date), long quoted ids cut (CutQuoted).
std::string ShownHeaders(const ProbeExchangeReport& e, std::string_view between) {
  std::string out;
  for (std::string_view name : kProbeHeaders) {
    const auto it = e.headers.find(std::string(name));
    if (it == e.headers.end()) continue;
    // The server's Date only beside a Retry-After it explains (a date, not seconds).
    if (name == "Date") {
      const auto retry = e.headers.find("Retry-After");
      if (retry == e.headers.end() || WholeNumber(retry->second)) continue;
    }
    absl::StrAppend(&out, out.empty() ? "" : std::string(between), std::string(name), ": ",
                    CutQuoted(it->second));
  }
  return out;
}

// The promise's violations, then linearizability's.
std::vector<const ProbeViolationReport*> AllViolations(const ProbeReport& r) {
  std::vector<const ProbeViolationReport*> out;
  for (const ProbeViolationReport& v : r.violations) out.push_back(&v);
  if (r.linearizable.violation) out.push_back(&*r.linearizable.violation);
  return out;
}

// "linearizable (4982 calls by 2 user(s); 120 search states)", and where an unknown search got to.
std::string LinearizableVerdict(const ProbeReport& r) {
  const ProbeLinearizableReport& l = r.linearizable;
  return absl::StrCat(std::string(LinearVerdictName(l.verdict)), " (", l.calls, " calls by ",
                      l.users, " user(s); ", l.states, " search states",
                      l.lead.empty() ? "" : "; " + l.lead, ")");
}

}  // namespace

nlohmann::json ToJsonValue(TrafficKind traffic) { return TrafficKindName(traffic); }
void ReadJsonValue(const JsonReader& r, TrafficKind& traffic) {
  // A report written before the probe's traffic took a scenario's names says steady, bursts or
  // boundary.
  const std::string name = r.String();
  const std::optional<TrafficKind> kind = name == "steady"     ? TrafficKind::kConstant
                                          : name == "bursts"   ? TrafficKind::kBurst
                                          : name == "boundary" ? TrafficKind::kBoundaryAttack
                                                               : ProbeTrafficNamed(name);
  if (kind) {
    traffic = *kind;
  } else {
    r.Report("unknown traffic '" + name + "' (expected " + ProbeTrafficChoices() + ")");
  }
}

void ReadProbeCheck(const JsonReader& r, CheckId& check) {
  const std::vector<CheckId> checks = ProbeCheckIds();
  const std::string name = r.String();
  if (const std::optional<CheckId> named = CheckNamed(name, checks)) {
    check = *named;
  } else {
    r.Report("unknown check '" + name + "' (expected " + CheckChoices(checks) + ")");
  }
}

ProbeReport MakeProbeReport(const ProbePlan& plan, const ProbeResult& r) {
  ProbeReport out;
  out.url = plan.url;
  out.method = plan.method;
  out.traffic = plan.traffic;
  out.users = ProbeUsersSent(plan);
  out.connections = plan.concurrency;
  out.policy = r.policy.ToString();
  out.promise = r.promise;
  out.seconds = Seconds(r.elapsed);
  out.load_seconds = Seconds(r.load_elapsed);
  out.interrupted = r.interrupted;
  out.sent = static_cast<int64_t>(r.exchanges.size()) - r.retry_after_requests;
  out.retry_after_requests = r.retry_after_requests;
  out.admitted = r.admitted;
  out.denied = r.denied;
  out.server_errors = r.server_errors;
  out.other = r.other;
  out.unanswered = r.unanswered;
  out.latency_p50_ms = Seconds(r.latency_p50) * 1000;
  out.latency_p99_ms = Seconds(r.latency_p99) * 1000;
  for (const Violation& v : r.violations) out.violations.push_back(ViolationReportOf(r, v));
  const LinearizabilityJudgement& l = r.linearizability;
  out.linearizable = {l.verdict,      l.calls, l.keys,       l.states,
                      l.unknown_keys, l.lead,  std::nullopt, l.broken_keys};
  if (l.violation) out.linearizable.violation = ViolationReportOf(r, *l.violation);
  const auto report = [&](const ProbeFinding& f) {
    ProbeFindingReport finding{f.check, f.summary, {}};
    for (int64_t n : f.exchanges) finding.exchanges.push_back(ExchangeReport(r, n));
    return finding;
  };
  for (const ProbeFinding& f : r.findings) out.findings.push_back(report(f));
  for (const ProbeFinding& f : r.notes) out.notes.push_back(report(f));
  out.retry_after_checked = r.retry_after_checked;
  out.retry_after_note = r.retry_after_note;
  out.false_denials_judged = FalseDenialsJudgedOverIntervals(r.policy);
  return out;
}

CheckVerdict VerdictOf(const ProbeReport& report) {
  return report.clean() ? CheckVerdict::kNone : CheckVerdict::kViolation;
}

nlohmann::json ToJson(const ProbeReport& report) {
  return WithVerdict(ToJsonValue(report), VerdictOf(report));
}

Result<ProbeReport> ProbeReportFromJson(const nlohmann::json& j) {
  return FromJsonFields<ProbeReport>(j);
}

namespace {

// Why a note of an optional check is no failure, and how to make it one.
std::string OptionalNote(CheckId check) {
  return "optional: --require " + std::string(CheckName(check)) + " makes it a finding";
}

// Why `check` did not run in `r`, or empty when it did.
std::string NotRun(const ProbeReport& r, CheckId check) {
  if (check == CheckId::kRetryAfterDishonest && !r.retry_after_checked) {
    return r.retry_after_note.empty() ? std::string("no Retry-After was retried in the run")
                                      : r.retry_after_note;
  }
  if (check == CheckId::kFalseDenials && !r.false_denials_judged) {
    return "an earlier admission can give this model more room, so a denial is judged by "
           "linearizability alone";
  }
  return "";
}

}  // namespace

std::string DescribeExchange(const ProbeExchangeReport& e) {
  std::string out = absl::StrCat("+", Fixed(e.sent_s, 3), "s..+", Fixed(e.answered_s, 3), "s  #",
                                 e.n, " ", e.user, "  ", Outcome(e));
  const std::string headers = ShownHeaders(e, "  ");
  if (!headers.empty()) absl::StrAppend(&out, "  ", headers);
  return out;
}

namespace {

// "154 in 5.0 s (and 4 to retry Retry-After; 10.5 s in all, judging included)": the load's own
// time, then the whole probe's when it took longer.
std::string Sent(const ProbeReport& r) {
  std::vector<std::string> aside;
  if (r.retry_after_requests > 0) {
    aside.push_back(absl::StrCat("and ", r.retry_after_requests, " to retry Retry-After"));
  }
  // A report written before the load was timed apart has only the whole.
  const double load = r.load_seconds > 0 ? r.load_seconds : r.seconds;
  if (Fixed(r.seconds, 1) != Fixed(load, 1)) {
    aside.push_back(absl::StrCat(Fixed(r.seconds, 1), " s in all, judging included"));
  }
  return absl::StrCat(r.sent, " in ", Fixed(load, 1), " s",
                      aside.empty() ? "" : " (" + absl::StrJoin(aside, "; ") + ")");
}

}  // namespace

std::string RenderProbeText(const ProbeReport& r) {
  std::string out =
      absl::StrCat("sent       ", Sent(r), "; answered ", r.sent - r.unanswered, ": ", r.admitted,
                   " admitted, ", r.denied, " denied, ", r.server_errors, " 5xx, ", r.other,
                   " other; ", r.unanswered, " without an answer\n");
  absl::StrAppend(&out, "latency    p50 ", Fixed(r.latency_p50_ms, 3), " ms, p99 ",
                  Fixed(r.latency_p99_ms, 3), " ms, from sent to answered\n");
  absl::StrAppend(&out, std::string(CheckName(r.promise)), " (", r.policy,
                  " per user): ", r.violations.empty() ? "kept" : "BROKEN", "\n");
  absl::StrAppend(&out, "linearizable: ", LinearizableVerdict(r), "\n");
  for (const ProbeViolationReport* shown : AllViolations(r)) {
    const ProbeViolationReport& v = *shown;
    absl::StrAppend(&out, "  [", std::string(CheckName(v.invariant)), "] ", v.user, ": ", v.summary,
                    "\n");
    for (size_t i = 0; i < v.witness.size() && i < kWitnessShown; ++i) {
      absl::StrAppend(&out, "    ", DescribeExchange(v.witness[i]), "\n");
    }
    if (v.witness.size() > kWitnessShown) {
      absl::StrAppend(&out, "    ... and ", v.witness.size() - kWitnessShown, " more\n");
    }
  }
  for (const ProbeFindingReport& f : r.findings) {
    absl::StrAppend(&out, "finding    [", std::string(CheckName(f.check)), "] ", f.summary, "\n");
    for (const ProbeExchangeReport& e : f.exchanges) {
      absl::StrAppend(&out, "    ", DescribeExchange(e), "\n");
    }
  }
  for (const ProbeFindingReport& f : r.notes) {
    absl::StrAppend(&out, "note       [", std::string(CheckName(f.check)), "] ", f.summary, " (",
                    OptionalNote(f.check), ")\n");
  }
  absl::StrAppend(&out, "Retry-After ", r.retry_after_checked ? "retried" : "not retried",
                  r.retry_after_note.empty() ? "" : " (" + r.retry_after_note + ")", "\n");
  if (r.clean()) {
    // What was searched: the load, the policy, and every check with whether it decided.
    std::string checks = std::string(CheckName(r.promise)) + " linearizable";
    if (r.linearizable.verdict == LinearVerdict::kUnknown) checks += " (undecided)";
    for (const ProbeCheckInfo& check : kProbeChecks) {
      checks += " " + std::string(CheckName(check.id));
      if (const std::string why = NotRun(r, check.id); !why.empty()) {
        checks += " (not run: " + why + ")";
      }
    }
    absl::StrAppend(&out, "nothing found in ", r.sent, " request(s) from ", r.users,
                    " user(s) over ", Fixed(r.load_seconds > 0 ? r.load_seconds : r.seconds, 1),
                    " s (", r.policy, " per user; checks: ", checks, ")\n");
  }
  absl::StrAppend(&out, kJudgedHow, "\n");
  return out;
}

std::string RenderProbeJunit(const ProbeReport& r) {
  const std::string classname = "probe." + r.url;
  std::vector<view_parts::JunitCase> cases;
  view_parts::JunitCase promise{classname, std::string(CheckName(r.promise)), r.seconds, "", "",
                                false};
  if (!r.violations.empty()) {
    const ProbeViolationReport& v = r.violations.front();
    promise.message = absl::StrCat(r.violations.size(), " violation(s): ", v.summary);
    for (const ProbeExchangeReport& e : v.witness) {
      absl::StrAppend(&promise.failure, DescribeExchange(e), "\n");
    }
  }
  cases.push_back(promise);
  view_parts::JunitCase linear{classname, "linearizable", 0, "", "", false};
  if (const std::optional<ProbeViolationReport>& v = r.linearizable.violation) {
    linear.message = v->summary;
    for (const ProbeExchangeReport& e : v->witness) {
      absl::StrAppend(&linear.failure, DescribeExchange(e), "\n");
    }
  } else if (r.linearizable.verdict == LinearVerdict::kNotLinearizable) {
    // Users already broken, said in the lead.
    linear.message = r.linearizable.lead;
    linear.failure = r.linearizable.lead + "\n";
  } else if (r.linearizable.verdict == LinearVerdict::kUnknown) {
    linear.skipped = "undecided: " + r.linearizable.lead;
  }
  cases.push_back(linear);
  for (const ProbeCheckInfo& check : kProbeChecks) {
    view_parts::JunitCase c{classname, std::string(CheckName(check.id)), 0, "", "", false};
    if (const std::string why = NotRun(r, check.id); !why.empty()) {
      c.skipped = "not checked: " + why;
    }
    for (const ProbeFindingReport& f : r.findings) {
      if (f.check != check.id) continue;
      c.message = f.summary;
      for (const ProbeExchangeReport& e : f.exchanges) {
        absl::StrAppend(&c.failure, DescribeExchange(e), "\n");
      }
    }
    cases.push_back(c);
  }
  return view_parts::JunitDocument("ratelab.probe", cases, r.seconds);
}

namespace {

// The verdict of each check, header first: the promise, then each check of what only HTTP
// shows.
view_parts::Rows CheckRows(const ProbeReport& r) {
  view_parts::Rows rows = {{"check", "verdict"}};
  std::set<std::string> users;
  for (const ProbeViolationReport& v : r.violations) users.insert(v.user);
  rows.push_back({absl::StrCat(std::string(CheckName(r.promise)), " (", r.policy, " per user)"),
                  users.empty() ? "kept"
                                : absl::StrCat("broken for ", users.size(),
                                               users.size() == 1 ? " user" : " users")});
  rows.push_back({"linearizable", LinearizableVerdict(r)});
  for (const ProbeCheckInfo& check : kProbeChecks) {
    std::string verdict = "kept";
    if (const std::string why = NotRun(r, check.id); !why.empty()) {
      verdict = "not checked (" + why + ")";
    }
    for (const ProbeFindingReport& f : r.findings) {
      if (f.check == check.id) verdict = "broken: " + f.summary;
    }
    for (const ProbeFindingReport& f : r.notes) {
      if (f.check == check.id) verdict = "note: " + f.summary + " (" + OptionalNote(f.check) + ")";
    }
    rows.push_back({std::string(CheckName(check.id)), verdict});
  }
  return rows;
}

// What was sent and answered, a row each, header first.
view_parts::Rows SummaryRows(const ProbeReport& r) {
  return {{"", ""},
          {"endpoint", r.method + " " + r.url},
          {"traffic", absl::StrCat(std::string(TrafficKindName(r.traffic)), ", ", r.users,
                                   " user(s), ", r.connections, " connection(s)")},
          {"sent", Sent(r)},
          {"answered", absl::StrCat(r.sent - r.unanswered, ": ", r.admitted, " admitted, ",
                                    r.denied, " denied, ", r.server_errors, " 5xx, ", r.other,
                                    " other; ", r.unanswered, " without an answer")},
          {"latency", absl::StrCat("p50 ", Fixed(r.latency_p50_ms, 3), " ms, p99 ",
                                   Fixed(r.latency_p99_ms, 3), " ms")}};
}

// A witness: its exchanges, a row each, header first.
view_parts::Rows WitnessRows(const std::vector<ProbeExchangeReport>& exchanges) {
  view_parts::Rows rows = {{"sent", "answered", "#", "user", "status", "headers"}};
  for (const ProbeExchangeReport& e : exchanges) {
    if (e.error == "not recorded") continue;
    rows.push_back({"+" + Fixed(e.sent_s, 3) + "s", "+" + Fixed(e.answered_s, 3) + "s",
                    absl::StrCat(e.n), e.user, Outcome(e), ShownHeaders(e, "; ")});
  }
  return rows;
}

// A violation's exchanges drawn: a lane per user, each a bar from sent to answered (the interval
// its decision fell in), 2xx and 3xx admitted, 429 denied.
WitnessPicture PictureOf(const ProbeViolationReport& v) {
  WitnessPicture p;
  p.window = v.window;
  p.caption = "The witness of " + std::string(CheckName(v.invariant)) + " for user " + v.user +
              ": " + std::to_string(v.witness.size()) + " exchange(s).";
  for (const ProbeExchangeReport& e : v.witness) {
    if (e.error == "not recorded") continue;
    PictureRequest r;
    r.lane = "user " + e.user;
    r.label = absl::StrCat("#", e.n);
    r.sent_s = e.sent_s;
    if (e.status != 0) r.answered_s = e.answered_s;
    r.outcome = e.status >= 200 && e.status < 400 ? PictureRequest::Outcome::kAdmitted
                : e.status == 429                 ? PictureRequest::Outcome::kDenied
                                                  : PictureRequest::Outcome::kOther;
    const double zero = v.witness.front().sent_s;
    r.words = absl::StrCat("#", e.n, " (user ", e.user, "): sent ", SignedOffset(e.sent_s - zero),
                           e.status != 0 ? ", answered " + SignedOffset(e.answered_s - zero) : "",
                           ": ", Outcome(e));
    if (const std::string headers = ShownHeaders(e, "; "); !headers.empty()) {
      r.words += " (" + headers + ")";
    }
    p.requests.push_back(std::move(r));
  }
  MarkFor(v.invariant, p);
  return p;
}

// Each violation shown (at most a few) and each finding: a title, the exchanges that show it,
// and for a violation its picture.
struct ProbeWitness {
  std::string title;
  std::vector<ProbeExchangeReport> exchanges;
  std::string svg;
};
std::vector<ProbeWitness> Witnesses(const ProbeReport& r) {
  std::vector<ProbeWitness> out;
  const std::vector<const ProbeViolationReport*> all = AllViolations(r);
  for (size_t i = 0; i < all.size() && i < view_parts::kShownViolations; ++i) {
    const ProbeViolationReport& v = *all[i];
    std::vector<ProbeExchangeReport> shown(
        v.witness.begin(), v.witness.begin() + std::min(v.witness.size(), kWitnessShown));
    out.push_back(
        {absl::StrCat(std::string(CheckName(v.invariant)), ", user ", v.user, ": ", v.summary),
         std::move(shown), WitnessSvg(PictureOf(v))});
  }
  for (const ProbeFindingReport& f : r.findings) {
    out.push_back({std::string(CheckName(f.check)) + ": " + f.summary, f.exchanges, ""});
  }
  return out;
}

std::string Title(const ProbeReport& r) { return "ratelab probe: " + r.method + " " + r.url; }

// The verdict in a sentence, naming each check that failed: the same as JUnit's failed cases.
std::string VerdictSentence(const ProbeReport& r) {
  if (r.clean()) {
    return "Nothing found: the promise was kept, the answers are linearizable (or the search "
           "could not tell), and no check of the answers failed.";
  }
  std::vector<std::string> failed;
  if (!r.violations.empty()) {
    failed.push_back(std::string(CheckName(r.promise)) + " (the promise)");
  }
  if (r.linearizable.verdict == LinearVerdict::kNotLinearizable)
    failed.emplace_back("linearizable");
  for (const ProbeCheckInfo& check : kProbeChecks) {
    for (const ProbeFindingReport& f : r.findings) {
      if (f.check == check.id) {
        failed.emplace_back(CheckName(check.id));
        break;
      }
    }
  }
  return absl::StrCat(failed.size(), failed.size() == 1 ? " check" : " checks",
                      " failed: ", view_parts::Listed(failed), ".");
}

}  // namespace

std::string RenderProbeMarkdown(const ProbeReport& r) {
  std::string s = "## " + Title(r) + "\n\n**" + VerdictSentence(r) + "**\n\n";
  s += view_parts::MarkdownTable(SummaryRows(r), 2) + "\n";
  s += view_parts::MarkdownTable(CheckRows(r), 2) + "\n";
  for (const ProbeWitness& w : Witnesses(r)) {
    s += "<details><summary>" + view_parts::Escape(w.title) + "</summary>\n\n";
    s += view_parts::MarkdownTable(WitnessRows(w.exchanges), 6) + "\n</details>\n\n";
  }
  return s + kJudgedHow + "\n";
}

std::string RenderProbeHtml(const ProbeReport& r) {
  const std::string title = Title(r);
  std::string s = view_parts::HtmlPageStart(title);
  s += "<h1>" + view_parts::Escape(title) + "</h1>\n";
  s += "<p class=\"advice\">" + view_parts::Escape(VerdictSentence(r)) + "</p>\n";
  s += view_parts::HtmlTable(SummaryRows(r));
  s += "<h2>Checks</h2>\n" + view_parts::HtmlTable(CheckRows(r));
  const auto witnesses = Witnesses(r);
  if (!witnesses.empty()) s += "<h2>Witnesses</h2>\n";
  for (const ProbeWitness& w : witnesses) {
    s += "<h3>" + view_parts::Escape(w.title) + "</h3>\n" +
         (w.svg.empty() ? "" : "<figure>" + w.svg + "</figure>\n") +
         view_parts::HtmlTable(WitnessRows(w.exchanges));
  }
  s += "<p class=\"explain\">" + view_parts::Escape(kJudgedHow) + "</p>\n";
  return s + "</body>\n</html>\n";
}

Result<std::string> WriteProbeReport(const ProbeReport& r, const OutputDir& dir) {
  return view_parts::WriteViews(
      {RenderProbeHtml(r), RenderProbeMarkdown(r), JsonText(ToJson(r)), RenderProbeJunit(r)}, dir);
}

}  // namespace ratelab
