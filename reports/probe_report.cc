#include "reports/probe_report.h"

#include <array>
#include <cstdio>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "reports/view_parts.h"

namespace ratelab {

namespace {

constexpr size_t kWitnessShown = 16;

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

}  // namespace

std::string DescribeExchange(const ProbePlan& plan, const ProbeResult& r, int64_t n) {
  const HttpExchange* e = Find(r, n);
  if (e == nullptr) return absl::StrCat("#", n, " (not recorded)");
  std::string out = absl::StrCat("+", Fixed(Seconds(e->sent - r.start), 3), "s..+",
                                 Fixed(Seconds(e->answered - r.start), 3), "s  #", n, " ",
                                 ProbeUser(plan, n), "  ", Outcome(*e));
  for (std::string_view name : kProbeHeaders) {
    if (std::optional<std::string_view> v = FindHeader(e->headers, name)) {
      absl::StrAppend(&out, "  ", std::string(name), ": ", std::string(*v));
    }
  }
  return out;
}

std::string RenderProbeText(const ProbePlan& plan, const ProbeResult& r) {
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
  absl::StrAppend(&out, r.promise, " (", r.policy.ToString(),
                  " per user): ", r.violations.empty() ? "kept" : "BROKEN", "\n");
  for (const Violation& v : r.violations) {
    absl::StrAppend(&out, "  [", v.invariant, "] ", v.key, ": ", v.summary, "\n");
    for (size_t i = 0; i < v.witness.size() && i < kWitnessShown; ++i) {
      const int64_t n = r.exchanges[static_cast<size_t>(v.witness[i].id)].n;
      absl::StrAppend(&out, "    ", DescribeExchange(plan, r, n), "\n");
    }
    if (v.witness.size() > kWitnessShown) {
      absl::StrAppend(&out, "    ... and ", v.witness.size() - kWitnessShown, " more\n");
    }
  }
  for (const ProbeFinding& f : r.findings) {
    absl::StrAppend(&out, "finding    [", f.check, "] ", f.summary, "\n");
    for (int64_t n : f.exchanges) absl::StrAppend(&out, "    ", DescribeExchange(plan, r, n), "\n");
  }
  absl::StrAppend(&out, "Retry-After ", r.retry_after_checked ? "retried" : "not retried",
                  r.retry_after_note.empty() ? "" : " (" + r.retry_after_note + ")", "\n");
  if (r.violations.empty() && r.findings.empty()) {
    absl::StrAppend(&out, "nothing found\n");
  }
  absl::StrAppend(&out,
                  "judged on [sent, answered] of each request, on the probe's clock: only what "
                  "breaks the promise wherever each decision fell; an answer neither 2xx/3xx nor "
                  "a denial counts as unknown, never as admitted.\n");
  return out;
}

nlohmann::json ProbeJson(const ProbePlan& plan, const ProbeResult& r) {
  const auto exchange = [&](int64_t n) {
    nlohmann::json j = {{"n", n}, {"user", ProbeUser(plan, n)}};
    if (const HttpExchange* e = Find(r, n)) {
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
  nlohmann::json violations = nlohmann::json::array();
  for (const Violation& v : r.violations) {
    nlohmann::json witness = nlohmann::json::array();
    for (const HistoryEvent& e : v.witness) {
      witness.push_back(exchange(r.exchanges[static_cast<size_t>(e.id)].n));
    }
    violations.push_back({{"invariant", v.invariant},
                          {"user", v.key},
                          {"summary", v.summary},
                          {"witness", witness}});
  }
  nlohmann::json findings = nlohmann::json::array();
  for (const ProbeFinding& f : r.findings) {
    nlohmann::json shown = nlohmann::json::array();
    for (int64_t n : f.exchanges) shown.push_back(exchange(n));
    findings.push_back({{"check", f.check}, {"summary", f.summary}, {"exchanges", shown}});
  }
  return {{"url", plan.url},
          {"method", plan.method},
          {"policy", r.policy.ToString()},
          {"promise", r.promise},
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
          {"findings", findings},
          {"retry_after_checked", r.retry_after_checked},
          {"retry_after_note", r.retry_after_note}};
}

std::string RenderProbeJunit(const ProbePlan& plan, const ProbeResult& r) {
  const double seconds = Seconds(r.elapsed);
  const std::string classname = "probe." + plan.url;
  std::vector<view_parts::JunitCase> cases;
  view_parts::JunitCase promise{classname, r.promise, seconds, "", "", false};
  if (!r.violations.empty()) {
    const Violation& v = r.violations.front();
    promise.message = absl::StrCat(r.violations.size(), " violation(s): ", v.summary);
    for (const HistoryEvent& e : v.witness) {
      absl::StrAppend(&promise.failure,
                      DescribeExchange(plan, r, r.exchanges[static_cast<size_t>(e.id)].n), "\n");
    }
  }
  cases.push_back(promise);
  for (std::string_view check : kProbeFindingChecks) {
    view_parts::JunitCase c{classname, std::string(check), 0, "", "", false};
    for (const ProbeFinding& f : r.findings) {
      if (f.check != check) continue;
      c.message = f.summary;
      for (int64_t n : f.exchanges) absl::StrAppend(&c.failure, DescribeExchange(plan, r, n), "\n");
    }
    cases.push_back(c);
  }
  return view_parts::JunitDocument("ratelab.probe", cases, seconds);
}

}  // namespace ratelab
