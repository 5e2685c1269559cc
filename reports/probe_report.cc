#include "reports/probe_report.h"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "reports/view_parts.h"

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

const HttpExchange* Find(const ProbeResult& r, int64_t n) {
  for (const HttpExchange& e : r.exchanges) {
    if (e.n == n) return &e;
  }
  return nullptr;
}

std::string Outcome(const HttpExchange& e) {
  return e.answered_ok() ? absl::StrCat(e.status) : "no answer (" + e.error + ")";
}

// The promise's violations, then linearizability's.
std::vector<const Violation*> AllViolations(const ProbeResult& r) {
  std::vector<const Violation*> out;
  for (const Violation& v : r.violations) out.push_back(&v);
  if (r.linearizability.violation) out.push_back(&*r.linearizability.violation);
  return out;
}

// "linearizable (4982 calls by 2 user(s); 120 search states)", and where an unknown search got to.
std::string LinearizableVerdict(const ProbeResult& r) {
  const LinearizabilityJudgement& l = r.linearizability;
  return absl::StrCat(std::string(LinearVerdictName(l.verdict)), " (", l.calls, " calls by ",
                      l.keys, " user(s); ", l.states, " search states",
                      l.lead.empty() ? "" : "; " + l.lead, ")");
}

}  // namespace

std::string DescribeExchange(const ProbeResult& r, int64_t n) {
  const HttpExchange* e = Find(r, n);
  if (e == nullptr) return absl::StrCat("#", n, " (not recorded)");
  std::string out = absl::StrCat("+", Fixed(Seconds(e->sent - r.start), 3), "s..+",
                                 Fixed(Seconds(e->answered - r.start), 3), "s  #", n, " ", e->label,
                                 "  ", Outcome(*e));
  for (std::string_view name : kProbeHeaders) {
    if (std::optional<std::string_view> v = FindHeader(e->headers, name)) {
      absl::StrAppend(&out, "  ", std::string(name), ": ", std::string(*v));
    }
  }
  return out;
}

std::string RenderProbeText(const ProbeResult& r) {
  const int64_t load = static_cast<int64_t>(r.exchanges.size()) - r.retry_after_requests;
  std::string out = absl::StrCat(
      "sent       ", load, " in ", Fixed(Seconds(r.elapsed), 1), " s",
      r.retry_after_requests > 0
          ? absl::StrCat(" (and ", r.retry_after_requests, " to retry Retry-After)")
          : "",
      "; answered ", load - r.unanswered, ": ", r.admitted, " admitted, ", r.denied, " denied, ",
      r.server_errors, " 5xx, ", r.other, " other; ", r.unanswered, " without an answer\n");
  absl::StrAppend(&out, "latency    p50 ", Fixed(Seconds(r.latency_p50) * 1000, 3), " ms, p99 ",
                  Fixed(Seconds(r.latency_p99) * 1000, 3), " ms, from sent to answered\n");
  absl::StrAppend(&out, std::string(InvariantName(r.promise)), " (", r.policy.ToString(),
                  " per user): ", r.violations.empty() ? "kept" : "BROKEN", "\n");
  absl::StrAppend(&out, "linearizable: ", LinearizableVerdict(r), "\n");
  for (const Violation* shown : AllViolations(r)) {
    const Violation& v = *shown;
    absl::StrAppend(&out, "  [", std::string(InvariantName(v.invariant)), "] ", v.key, ": ",
                    v.summary, "\n");
    for (size_t i = 0; i < v.witness.size() && i < kWitnessShown; ++i) {
      const int64_t n = r.exchanges[static_cast<size_t>(v.witness[i].id)].n;
      absl::StrAppend(&out, "    ", DescribeExchange(r, n), "\n");
    }
    if (v.witness.size() > kWitnessShown) {
      absl::StrAppend(&out, "    ... and ", v.witness.size() - kWitnessShown, " more\n");
    }
  }
  for (const ProbeFinding& f : r.findings) {
    absl::StrAppend(&out, "finding    [", std::string(ProbeCheckName(f.check)), "] ", f.summary,
                    "\n");
    for (int64_t n : f.exchanges) absl::StrAppend(&out, "    ", DescribeExchange(r, n), "\n");
  }
  absl::StrAppend(&out, "Retry-After ", r.retry_after_checked ? "retried" : "not retried",
                  r.retry_after_note.empty() ? "" : " (" + r.retry_after_note + ")", "\n");
  if (r.clean()) absl::StrAppend(&out, "nothing found\n");
  absl::StrAppend(&out, kJudgedHow, "\n");
  return out;
}

nlohmann::json ProbeJson(const ProbePlan& plan, const ProbeResult& r) {
  const auto exchange = [&](int64_t n) {
    nlohmann::json j = {{"n", n}};
    if (const HttpExchange* e = Find(r, n)) {
      j["user"] = e->label;
      j["sent_s"] = Seconds(e->sent - r.start);
      j["answered_s"] = Seconds(e->answered - r.start);
      j["status"] = e->status;
      if (!e->error.empty()) j["error"] = e->error;
      nlohmann::json headers = nlohmann::json::object();
      for (std::string_view name : kProbeHeaders) {
        if (std::optional<std::string_view> v = FindHeader(e->headers, name)) {
          headers[std::string(name)] = std::string(*v);
        }
      }
      j["headers"] = headers;
    }
    return j;
  };
  const auto violation = [&](const Violation& v) {
    nlohmann::json witness = nlohmann::json::array();
    for (const HistoryEvent& e : v.witness) {
      witness.push_back(exchange(r.exchanges[static_cast<size_t>(e.id)].n));
    }
    return nlohmann::json{{"invariant", InvariantName(v.invariant)},
                          {"user", v.key},
                          {"summary", v.summary},
                          {"witness", witness}};
  };
  nlohmann::json violations = nlohmann::json::array();
  for (const Violation& v : r.violations) violations.push_back(violation(v));
  const LinearizabilityJudgement& l = r.linearizability;
  nlohmann::json linearizable = {{"verdict", LinearVerdictName(l.verdict)},
                                 {"calls", l.calls},
                                 {"users", l.keys},
                                 {"states", l.states},
                                 {"unknown_users", l.unknown_keys},
                                 {"lead", l.lead},
                                 {"violation", nullptr}};
  if (l.violation) linearizable["violation"] = violation(*l.violation);
  nlohmann::json findings = nlohmann::json::array();
  for (const ProbeFinding& f : r.findings) {
    nlohmann::json shown = nlohmann::json::array();
    for (int64_t n : f.exchanges) shown.push_back(exchange(n));
    findings.push_back(
        {{"check", ProbeCheckName(f.check)}, {"summary", f.summary}, {"exchanges", shown}});
  }
  return {{"url", plan.url},
          {"method", plan.method},
          {"policy", r.policy.ToString()},
          {"promise", InvariantName(r.promise)},
          {"seconds", Seconds(r.elapsed)},
          {"interrupted", r.interrupted},
          {"sent", r.exchanges.size() - static_cast<size_t>(r.retry_after_requests)},
          {"retry_after_requests", r.retry_after_requests},
          {"admitted", r.admitted},
          {"denied", r.denied},
          {"server_errors", r.server_errors},
          {"other", r.other},
          {"unanswered", r.unanswered},
          {"latency_p50_ms", Seconds(r.latency_p50) * 1000},
          {"latency_p99_ms", Seconds(r.latency_p99) * 1000},
          {"violations", violations},
          {"linearizable", linearizable},
          {"findings", findings},
          {"retry_after_checked", r.retry_after_checked},
          {"retry_after_note", r.retry_after_note}};
}

std::string RenderProbeJunit(const ProbePlan& plan, const ProbeResult& r) {
  const double seconds = Seconds(r.elapsed);
  const std::string classname = "probe." + plan.url;
  std::vector<view_parts::JunitCase> cases;
  view_parts::JunitCase promise{classname, std::string(InvariantName(r.promise)), seconds, "", "",
                                false};
  if (!r.violations.empty()) {
    const Violation& v = r.violations.front();
    promise.message = absl::StrCat(r.violations.size(), " violation(s): ", v.summary);
    for (const HistoryEvent& e : v.witness) {
      absl::StrAppend(&promise.failure,
                      DescribeExchange(r, r.exchanges[static_cast<size_t>(e.id)].n), "\n");
    }
  }
  cases.push_back(promise);
  view_parts::JunitCase linear{classname, "linearizable", 0, "", "", false};
  if (const std::optional<Violation>& v = r.linearizability.violation) {
    linear.message = v->summary;
    for (const HistoryEvent& e : v->witness) {
      absl::StrAppend(&linear.failure,
                      DescribeExchange(r, r.exchanges[static_cast<size_t>(e.id)].n), "\n");
    }
  }
  cases.push_back(linear);
  for (const ProbeCheckInfo& check : kProbeChecks) {
    view_parts::JunitCase c{classname, std::string(check.name), 0, "", "", false};
    for (const ProbeFinding& f : r.findings) {
      if (f.check != check.id) continue;
      c.message = f.summary;
      for (int64_t n : f.exchanges) absl::StrAppend(&c.failure, DescribeExchange(r, n), "\n");
    }
    cases.push_back(c);
  }
  return view_parts::JunitDocument("ratelab.probe", cases, seconds);
}

namespace {

// The headers of `e` a probe reads, "Name: value" each, joined by `between`.
std::string ShownHeaders(const HttpExchange& e, std::string_view between) {
  std::string out;
  for (std::string_view name : kProbeHeaders) {
    if (std::optional<std::string_view> v = FindHeader(e.headers, name)) {
      absl::StrAppend(&out, out.empty() ? "" : std::string(between), std::string(name), ": ",
                      std::string(*v));
    }
  }
  return out;
}

// The verdict of each check, header first: the promise, then each check of what only HTTP
// shows.
view_parts::Rows CheckRows(const ProbeResult& r) {
  view_parts::Rows rows = {{"check", "verdict"}};
  std::set<std::string> users;
  for (const Violation& v : r.violations) users.insert(v.key);
  rows.push_back(
      {absl::StrCat(std::string(InvariantName(r.promise)), " (", r.policy.ToString(), " per user)"),
       users.empty()
           ? "kept"
           : absl::StrCat("broken for ", users.size(), users.size() == 1 ? " user" : " users")});
  rows.push_back({"linearizable", LinearizableVerdict(r)});
  for (const ProbeCheckInfo& check : kProbeChecks) {
    std::string verdict = "kept";
    if (check.id == ProbeCheck::kRetryAfterDishonest && !r.retry_after_checked) {
      verdict = "not checked (" + r.retry_after_note + ")";
    }
    for (const ProbeFinding& f : r.findings) {
      if (f.check == check.id) verdict = "broken: " + f.summary;
    }
    rows.push_back({std::string(check.name), verdict});
  }
  return rows;
}

// What was sent and answered, a row each, header first.
view_parts::Rows SummaryRows(const ProbePlan& plan, const ProbeResult& r) {
  const int64_t load = static_cast<int64_t>(r.exchanges.size()) - r.retry_after_requests;
  return {{"", ""},
          {"endpoint", plan.method + " " + plan.url},
          {"traffic", absl::StrCat(std::string(ProbeTrafficName(plan.traffic)), ", ", plan.users,
                                   " user(s), ", plan.concurrency, " connection(s)")},
          {"sent", absl::StrCat(
                       load, " in ", Fixed(Seconds(r.elapsed), 1), " s",
                       r.retry_after_requests > 0
                           ? absl::StrCat(", and ", r.retry_after_requests, " to retry Retry-After")
                           : "")},
          {"answered", absl::StrCat(load - r.unanswered, ": ", r.admitted, " admitted, ", r.denied,
                                    " denied, ", r.server_errors, " 5xx, ", r.other, " other; ",
                                    r.unanswered, " without an answer")},
          {"latency", absl::StrCat("p50 ", Fixed(Seconds(r.latency_p50) * 1000, 3), " ms, p99 ",
                                   Fixed(Seconds(r.latency_p99) * 1000, 3), " ms")}};
}

// A witness: the exchanges numbered `ns`, a row each, header first.
view_parts::Rows WitnessRows(const ProbeResult& r, const std::vector<int64_t>& ns) {
  view_parts::Rows rows = {{"sent", "answered", "#", "user", "status", "headers"}};
  for (int64_t n : ns) {
    const HttpExchange* e = Find(r, n);
    if (e == nullptr) continue;
    rows.push_back({"+" + Fixed(Seconds(e->sent - r.start), 3) + "s",
                    "+" + Fixed(Seconds(e->answered - r.start), 3) + "s", absl::StrCat(n), e->label,
                    Outcome(*e), ShownHeaders(*e, "; ")});
  }
  return rows;
}

// Each violation shown (at most a few) and each finding: a title and the exchanges that show it.
std::vector<std::pair<std::string, std::vector<int64_t>>> Witnesses(const ProbeResult& r) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  const std::vector<const Violation*> all = AllViolations(r);
  for (size_t i = 0; i < all.size() && i < view_parts::kShownViolations; ++i) {
    const Violation& v = *all[i];
    std::vector<int64_t> ns;
    for (size_t k = 0; k < v.witness.size() && k < kWitnessShown; ++k) {
      ns.push_back(r.exchanges[static_cast<size_t>(v.witness[k].id)].n);
    }
    out.push_back(
        {absl::StrCat(std::string(InvariantName(v.invariant)), ", user ", v.key, ": ", v.summary),
         ns});
  }
  for (const ProbeFinding& f : r.findings)
    out.push_back({std::string(ProbeCheckName(f.check)) + ": " + f.summary, f.exchanges});
  return out;
}

std::string Title(const ProbePlan& plan) {
  return "ratelab probe: " + plan.method + " " + plan.url;
}

std::string VerdictSentence(const ProbeResult& r) {
  if (r.clean()) {
    return "Nothing found: the promise was kept, the answers are linearizable (or the search "
           "could not tell), and no check of the answers failed.";
  }
  return absl::StrCat(r.violations.empty() ? "The promise was kept" : "The promise was BROKEN",
                      r.linearizability.violation ? ", the answers are NOT linearizable" : "",
                      ", and ", r.findings.size(), " check(s) of the answers failed.");
}

}  // namespace

std::string RenderProbeMarkdown(const ProbePlan& plan, const ProbeResult& r) {
  std::string s = "## " + Title(plan) + "\n\n**" + VerdictSentence(r) + "**\n\n";
  s += view_parts::MarkdownTable(SummaryRows(plan, r), 2) + "\n";
  s += view_parts::MarkdownTable(CheckRows(r), 2) + "\n";
  for (const auto& [title, ns] : Witnesses(r)) {
    s += "<details><summary>" + view_parts::Escape(title) + "</summary>\n\n";
    s += view_parts::MarkdownTable(WitnessRows(r, ns), 6) + "\n</details>\n\n";
  }
  return s + kJudgedHow + "\n";
}

std::string RenderProbeHtml(const ProbePlan& plan, const ProbeResult& r) {
  const std::string title = Title(plan);
  std::string s = view_parts::HtmlPageStart(title);
  s += "<h1>" + view_parts::Escape(title) + "</h1>\n";
  s += "<p class=\"advice\">" + view_parts::Escape(VerdictSentence(r)) + "</p>\n";
  s += view_parts::HtmlTable(SummaryRows(plan, r));
  s += "<h2>Checks</h2>\n" + view_parts::HtmlTable(CheckRows(r));
  const auto witnesses = Witnesses(r);
  if (!witnesses.empty()) s += "<h2>Witnesses</h2>\n";
  for (const auto& [what, ns] : witnesses) {
    s += "<h3>" + view_parts::Escape(what) + "</h3>\n" + view_parts::HtmlTable(WitnessRows(r, ns));
  }
  s += "<p class=\"explain\">" + view_parts::Escape(kJudgedHow) + "</p>\n";
  return s + "</body>\n</html>\n";
}

Result<std::string> WriteProbeReport(const ProbePlan& plan, const ProbeResult& r,
                                     const OutputDir& dir) {
  if (Status s = dir.Clear(); !s.ok()) return s;
  const std::pair<const char*, std::string> files[] = {
      {"report.html", RenderProbeHtml(plan, r)},
      {"report.md", RenderProbeMarkdown(plan, r)},
      {"report.json", JsonText(ProbeJson(plan, r))},
      {"junit.xml", RenderProbeJunit(plan, r)}};
  for (const auto& [name, text] : files) {
    const std::string path = (std::filesystem::path(dir.path()) / name).string();
    std::ofstream f(path);
    if (!(f << text) || !f.flush()) return absl::InternalError("cannot write " + path);
  }
  if (Status s = dir.Record(); !s.ok()) return s;
  return (std::filesystem::path(dir.path()) / "report.html").string();
}

}  // namespace ratelab
