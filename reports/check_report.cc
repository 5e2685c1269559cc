#include "reports/check_report.h"

#include <algorithm>
#include <functional>

#include "reports/run_report.h"
#include "reports/timeline.h"
#include "reports/view_parts.h"
#include "reports/witness_page.h"

namespace ratelab {

namespace {

using view_parts::Offset;

// ", decided on the server's clock, judged to 1ms (the store expires keys by the millisecond)",
// for a user's script; ", decided at the instant it is sent, ..." for a user's process.
std::string DecidedOn(const CheckReport& r) {
  std::string out = r.clock.empty()        ? ""
                    : r.clock == "process" ? ", decided at the instant it is sent"
                                           : ", decided on the " + r.clock + "'s clock";
  return r.judged_at.empty() ? out : out + ", judged to " + r.judged_at;
}

}  // namespace

namespace {

// False denials that a script's own reply contradicts (a denial that says some remain), or that
// begin at a key's first request, are what a reply read in the wrong order looks like: the hint
// says where to look. Empty for any other finding.
std::string ReplyHint(const Finding& f) {
  if (f.check != CheckId::kFalseDenials || f.witness.empty()) return "";
  const auto denied = [](const HistoryEvent& e) { return e.denied(); };
  const auto says_room = std::find_if(f.witness.begin(), f.witness.end(), [&](const auto& e) {
    return denied(e) && e.decision->remaining > 0;
  });
  std::string why;
  if (says_room != f.witness.end()) {
    why = "#" + std::to_string(says_room->id) + " was denied with " +
          std::to_string(says_room->decision->remaining) + " remaining";
  } else if (std::all_of(f.witness.begin(), f.witness.end(), denied)) {
    why = "every request was denied, the first included";
  } else {
    return "";
  }
  return why +
         ", which a reply read in the wrong order looks like: are --reply's fields (or the "
         "spec's reply) in the order the script returns them?";
}

// The condition a finding needed, in words (Finding::transit); empty when it needed none.
std::string Needs(const Finding& f, const std::string& clock) {
  if (!f.transit) return "";
  const TransitNeeded& t = *f.transit;
  const std::string id = "#" + std::to_string(t.request);
  std::string out = "a request late to the store: " + id + " reached it " +
                    FormatDurationTo(t.took, 4) +
                    " after its client read the clock (this search holds a request up to " +
                    FormatDuration(t.allowed) + " on its way, --max-transit)";
  if (t.gone) {
    out += "; the key " + t.gone->key + " was gone, " + FormatDurationTo(t.gone->before, 4) +
           " before: its time to live of " + FormatDurationTo(t.gone->ttl, 4) +
           (t.gone->set_by >= 0 ? ", set by #" + std::to_string(t.gone->set_by) : "") +
           ", ran out at " + FormatInstantTo(t.gone->gone_from, 3);
  }
  out += "; the same requests with every delay shortened, " + id + "'s to " +
         FormatDurationTo(t.clean, 4) + ", break nothing";
  // Transit a network, a retry or a pause gives any request, or only a long stall.
  out += t.took <= std::chrono::milliseconds(100)
             ? ". Transit that short is ordinary (a slow network, a retry, a pause): the flaw "
               "is real"
             : ". If no request of yours can take that long between reading the clock and "
               "reaching the store, this finding does not apply: --max-transit below it says so";
  if (clock == "client") {
    out +=
        ". A script that decides on its client's clock must keep a key's state for its "
        "window plus the longest transit it allows: a TTL of exactly the window (or the time "
        "to refill) lets a late request find the key gone";
  }
  return out;
}

}  // namespace

std::optional<bool> BreaksAsPrinted(const std::shared_ptr<const ProtocolInfo>& protocol,
                                    const Policy& policy, const ViolationReport& v, Instant start) {
  const CheckId check = v.check;
  if (!IsScenarioCheck(check) || check == CheckId::kKeyExpiry ||
      check == CheckId::kSurvivesRestart) {
    return std::nullopt;
  }
  const LimiterSpec spec = LimiterOf(protocol, policy);
  const ProtocolInfo& info = *spec.Info();
  const Duration resolution = std::max(info.time_resolution, Duration(1));
  const History printed = HistoryOf(v.witness, start);
  const History h = AsDecided(printed, info.clock, resolution);
  const AnyWindowReport any = CheckAnyWindowCap(h, policy.limit, policy.ClaimWindow());
  const std::vector<NeverFreed> none;
  const std::vector<FaultWindow> no_restarts;
  const std::function<Result<History>()> same = [&]() -> Result<History> { return h; };
  const Judged judged{
      .history = h,
      .policy = policy,
      .claim_limit = policy.limit,
      .claim_window = policy.ClaimWindow(),
      .any_window = any,
      .never_expire = none,
      .restarts = no_restarts,
      .without_restarts = same,
      .retry_after_unit = spec.via_http ? Duration(std::chrono::seconds(1)) : Duration(1),
      .wait_unit = info.wait_unit,
      .resolution = resolution,
      .tie = info.tie(),
      .exact = [&] { return AsDecided(printed, info.clock, Duration(1)); }};
  const Result<std::vector<Violation>> found = CheckOf(check).judge(judged);
  if (!found.ok()) return false;
  return std::any_of(found->begin(), found->end(), [&](const Violation& w) {
    return w.invariant == v.invariant && w.key == v.key;
  });
}

CheckReport MakeCheckReport(const std::shared_ptr<const ProtocolInfo>& protocol,
                            const SearchOptions& options, const SearchResult& result,
                            const std::string& reproduce) {
  CheckReport r;
  r.protocol = protocol->name;
  if (protocol->users_own) {
    r.clock = protocol->IsProcess() ? "process" : ScriptClockName(protocol->clock);
    r.judged_at = FormatDuration(protocol->time_resolution) + " (" + protocol->resolution_why + ")";
  }
  r.seeds_searched = result.seeds_searched;
  r.start = options.base.start;
  r.checks = options.base.checks;
  r.fault_kinds = options.faults.Sorted();
  r.max_transit = FormatDuration(MaxTransitOf(options.base));
  r.fallback_decisions = result.fallback_decisions;
  if (result.failure) {
    r.verdict = CheckVerdict::kFailure;
    r.policy = options.base.policy.ToString();
    r.seed = result.failure->seed;
    r.failure = result.failure->request.failure;
    r.failed_request = WitnessEvents({result.failure->request}, options.base.start).front();
    r.reproduce = reproduce;
    return r;
  }
  if (!result.finding) {
    r.verdict = CheckVerdict::kNone;
    r.policy = options.base.policy.ToString();
    return r;
  }
  const Finding& f = *result.finding;
  const Instant start = options.base.start;
  r.verdict = CheckVerdict::kViolation;
  r.policy = f.minimal.policy.ToString();
  r.seed = f.seed;
  r.requests = f.minimal.arrivals.size();
  r.drawn_requests = f.drawn.arrivals.size();
  r.nodes = f.minimal.nodes.size();
  r.reproduce = reproduce;
  // The minimal case is the witness: every request in it is needed to break the invariant.
  r.violation = MakeViolationReport(f.check, f.violation, start, WitnessEvents(f.witness, start));
  if (BreaksAsPrinted(protocol, f.minimal.policy, *r.violation, start) == false) {
    r.violation->summary +=
        " (the witness as printed, judged again on its own, does not break it: replay the seed "
        "to see the whole run)";
  }
  r.faults = FaultReports(f.faults, start);
  r.hint = protocol->users_own ? ReplyHint(f) : "";
  r.needs = Needs(f, r.clock);
  return r;
}

std::string RenderCheckText(const CheckReport& r) {
  if (r.failed_request) {
    const WitnessEvent& e = *r.failed_request;
    return r.protocol + ": FAILED (seed " + std::to_string(r.seed) + ", " +
           std::to_string(r.seeds_searched) + " seed(s) searched): " + view_parts::kLimiterFailed +
           ", so nothing it decided can be trusted\n  " + r.failure + "\nrequest #" +
           std::to_string(e.id) + " (" + e.key + ", node " + std::to_string(e.node) + ", sent at " +
           std::to_string(e.invoke_s) + " s), " + r.policy + "\nreproduce: " + r.reproduce + "\n";
  }
  if (!r.violation) {
    std::string out = r.protocol + ": nothing found in " + std::to_string(r.seeds_searched) +
                      " seed(s) (" + r.policy + DecidedOn(r) + "; checks:";
    for (const CheckId c : r.checks) out += " " + std::string(CheckName(c));
    out += "; faults: " + r.fault_kinds;
    if (!r.max_transit.empty()) out += "; transit up to " + r.max_transit;
    out += ")\n";
    if (r.fallback_decisions > 0) {
      out += "but the limiter failed on " + std::to_string(r.fallback_decisions) +
             " request(s) and its client decided them itself (--on-script-error): nothing found "
             "holds for the limiter as its client runs it\n";
    }
    return out;
  }
  const ViolationReport& v = *r.violation;
  std::string out = r.protocol + ": VIOLATION of " + std::string(CheckName(v.invariant)) +
                    " (seed " + std::to_string(r.seed) + ", " + std::to_string(r.seeds_searched) +
                    " seed(s) searched)\nminimal case: " + r.policy + DecidedOn(r) + ", " +
                    std::to_string(r.requests) + " request(s) (from " +
                    std::to_string(r.drawn_requests) + "), " + std::to_string(r.nodes) + " node(s)";
  for (const FaultReport& f : r.faults) out += "; " + f.what;
  out += "\n" + v.summary + "\n";
  if (!r.needs.empty()) out += "needs " + r.needs + "\n";
  // Where +0s is, to the microsecond: a reader judging the witness again on a clock's ticks
  // needs the instants, not only their offsets.
  const std::vector<TimelineRow> rows = WitnessTimeline(v.witness, r.faults);
  const std::optional<Instant> first =
      rows.empty() ? std::nullopt : view_parts::AfterStart(r.start, rows.front().at_s);
  const std::string zero = first ? ", +0s at " + FormatInstantTo(*first, 6) : "";
  out += "witness (" + std::to_string(v.witness.size()) + " request(s)" + zero + "):\n" +
         view_parts::TimelineText(v, r.faults) + "reproduce: " + r.reproduce + "\n";
  if (!r.hint.empty()) out += "hint: " + r.hint + "\n";
  return out;
}

std::string RenderCheckJunit(const CheckReport& r, double seconds) {
  const std::string classname = "check." + r.protocol;
  const std::string reproduce = r.reproduce.empty() ? "" : "reproduce: " + r.reproduce + "\n";
  std::vector<view_parts::JunitCase> cases;
  if (r.failed_request) {
    cases.push_back({classname, "decides without failing", seconds,
                     "the limiter failed (seed " + std::to_string(r.seed) + "): " + r.failure,
                     reproduce, true});
  }
  bool placed = false;
  for (const CheckId check : r.checks) {
    view_parts::JunitCase c{classname, std::string(CheckName(check)), seconds, "", "", false};
    if (r.violation && r.violation->check == check) {
      placed = true;
      c.message = r.violation->summary;
      c.failure = "minimal case: " + r.policy + DecidedOn(r) + ", " + std::to_string(r.requests) +
                  " request(s), seed " + std::to_string(r.seed) + "\n" +
                  (r.needs.empty() ? "" : "needs " + r.needs + "\n") +
                  view_parts::WitnessText(*r.violation, r.faults) + reproduce;
    }
    cases.push_back(std::move(c));
  }
  if (r.violation && !placed) {  // a check beside the listed ones
    cases.push_back({classname, std::string(CheckName(r.violation->check)), seconds,
                     r.violation->summary,
                     view_parts::WitnessText(*r.violation, r.faults) + reproduce});
  }
  return view_parts::JunitDocument("ratelab.check." + r.protocol, cases, seconds);
}

std::string RenderInterruptedCheckJunit(const CheckReport& r, uint64_t seeds, double seconds) {
  const std::string classname = "check." + r.protocol;
  std::vector<view_parts::JunitCase> cases;
  for (const CheckId check : r.checks) {
    cases.push_back({classname, std::string(CheckName(check)), seconds, "", "", false,
                     "interrupted after " + std::to_string(r.seeds_searched) + " of " +
                         std::to_string(seeds) +
                         " seed(s), nothing found in those: the search did not run through"});
  }
  return view_parts::JunitDocument("ratelab.check." + r.protocol, cases, seconds);
}

std::string RenderCheckHtml(const CheckReport& r) {
  WitnessPage page;
  page.title = "ratelab check: " + r.protocol;
  page.text = RenderCheckText(r);
  const std::string searched = std::to_string(r.seeds_searched) + " seed(s)";
  if (r.failed_request) {
    page.verdict = std::string("FAILED: ") + view_parts::kLimiterFailed +
                   ", so nothing it decided can be trusted";
    page.bad = true;
    const WitnessEvent& e = *r.failed_request;
    page.sentences = {r.failure, "Request #" + std::to_string(e.id) + " (" + e.key + ", node " +
                                     std::to_string(e.node) + ", sent " + Offset(e.invoke_s) +
                                     " after the start), seed " + std::to_string(r.seed) + "."};
  } else if (!r.violation) {
    page.verdict = "Nothing found in " + searched;
    if (r.fallback_decisions > 0) {
      page.sentences.push_back(
          "But the limiter failed on " + std::to_string(r.fallback_decisions) +
          " request(s) and its client decided them itself (--on-script-error): nothing found "
          "holds for the limiter as its client runs it.");
    }
  } else {
    const ViolationReport& v = *r.violation;
    page.verdict = "VIOLATION of " + std::string(CheckName(v.invariant)) + ", found by seed " +
                   std::to_string(r.seed) + " (" + searched + " searched)";
    page.bad = true;
    page.sentences.push_back("Minimal case: " + r.policy + DecidedOn(r) + ", " +
                             std::to_string(r.requests) + " request(s) (shrunk from " +
                             std::to_string(r.drawn_requests) + "), " + std::to_string(r.nodes) +
                             " node(s)" + (r.faults.empty() ? "" : ", with faults") + ".");
    if (!r.needs.empty()) page.sentences.push_back("It needs " + r.needs + ".");
    if (!r.hint.empty()) page.sentences.push_back("Hint: " + r.hint);
    page.shown.push_back({"The witness", {}, &v, r.faults, "node", r.start, ""});
  }
  page.searched = {{"what", "searched"}, {"limiter", r.protocol}, {"policy", r.policy}};
  if (!r.clock.empty()) {
    // DecidedOn's words after ", decided ": "on the client's clock, judged to 1ms (...)".
    constexpr std::string_view kLead = ", decided ";
    page.searched.push_back({"clock", DecidedOn(r).substr(kLead.size())});
  }
  page.searched.push_back({"seeds", searched + (r.shard.empty() ? "" : ", shard " + r.shard)});
  std::string checks;
  for (const CheckId c : r.checks)
    checks += (checks.empty() ? "" : ", ") + std::string(CheckName(c));
  page.searched.push_back({"checks", checks});
  page.searched.push_back({"faults drawn", r.fault_kinds});
  if (!r.max_transit.empty()) page.searched.push_back(TransitSearched(r.max_transit));
  page.reproduce = r.reproduce;
  return RenderWitnessPage(page);
}

Result<std::string> WriteCheckReport(const CheckReport& r, const OutputDir& dir, double seconds) {
  const std::string title = "ratelab check: " + r.protocol;
  const std::string text = RenderCheckText(r);
  return view_parts::WriteViews({RenderCheckHtml(r), view_parts::TextMarkdown(title, text),
                                 JsonText(ToJson(r)), RenderCheckJunit(r, seconds)},
                                dir);
}

}  // namespace ratelab
