#include "reports/worst_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "reports/run_report.h"
#include "reports/view_parts.h"
#include "reports/witness_page.h"

namespace ratelab {

namespace {

constexpr size_t kWitnessRequestsShown = 12;

// "9 admitted in one span of 10s (1.80x the limit)".
std::string ValueText(const WorstReport& r, const WorstReport::Search& s) {
  switch (r.claim) {
    case CheckId::kFalseDenialStreak:
      return absl::StrCat(s.value, " false denial(s) in a row");
    case CheckId::kOverBucket:
      return absl::StrCat(s.value, " admitted over the bucket's bound in one span (",
                          view_parts::Fixed(s.amplification, 2), "x what it allows there)");
    default:  // most-in-window
      break;
  }
  return absl::StrCat(s.value, " admitted in one span of the window (",
                      view_parts::Fixed(s.amplification, 2), "x the limit)");
}

}  // namespace

void ReadWorstClaim(const JsonReader& r, CheckId& claim) {
  const Result<CheckId> named = ParseWorstClaim(r.String());
  if (named.ok()) {
    claim = *named;
  } else {
    r.Report(std::string(named.status().message()));
  }
}

std::string WorstBound(const Policy& policy, CheckId claim) {
  switch (claim) {
    case CheckId::kMostInWindow:
      return absl::StrCat("at most ", policy.limit, " in any ",
                          FormatDuration(policy.ClaimWindow()));
    case CheckId::kOverBucket:
      return absl::StrCat("at most ", policy.limit, " + floor(span / ",
                          FormatDuration(policy.window), ") in any span");
    case CheckId::kFalseDenialStreak:
      return "no denial the model had room for";
    default:  // not a measure of the search's (kWorstMeasures)
      break;
  }
  return "";
}

WorstReport::Search MakeWorstSearch(const WorstOptions& options, const WorstResult& result,
                                    std::string reproduce) {
  WorstReport::Search s;
  s.concurrency = options.concurrency;
  s.faults = options.faults.ToString();
  s.value = result.value;
  // The most in a window over N; over a bucket, what was admitted in the span over what it
  // allows there.
  const double allowed = static_cast<double>(result.allowed);
  switch (options.claim) {
    case CheckId::kMostInWindow:
      s.amplification = static_cast<double>(result.value) / allowed;
      break;
    case CheckId::kOverBucket:
      s.amplification = (allowed + static_cast<double>(result.value)) / allowed;
      break;
    default:  // a streak of denials is no multiple of anything
      break;
  }
  s.runs = result.runs;
  s.found_at_run = result.found_at_run;
  s.stopped = result.stopped;
  s.requests = static_cast<int64_t>(result.best.arrivals.size());
  s.reproduce = std::move(reproduce);
  if (result.shown) {
    s.shown = MakeViolationReport(options.claim, *result.shown, options.base.start);
  }
  if (result.failure) s.failure = DescribeFailure(*result.failure);
  return s;
}

std::string RenderWorstText(const WorstReport& r) {
  std::string out =
      absl::StrCat(r.protocol, ", ", r.policy, ": the worst found against \"", r.bound, "\" (",
                   std::string(CheckName(r.claim)),
                   r.max_transit.empty() ? "" : "; transit up to " + r.max_transit, ")\n");
  // A search that reached the same breach as an earlier one (the same value, under the same
  // faults) shows no witness of its own: the earlier one's says at which concurrencies it holds.
  const auto same = [](const WorstReport::Search& a, const WorstReport::Search& b) {
    return !a.failure && !b.failure && a.shown && b.shown && a.value == b.value &&
           a.faults == b.faults;
  };
  for (size_t i = 0; i < r.searches.size(); ++i) {
    const WorstReport::Search& s = r.searches[i];
    absl::StrAppend(&out, "\nconcurrency ", s.concurrency, ", faults ", s.faults, ": ");
    const auto earlier = std::find_if(r.searches.begin(), r.searches.begin() + i,
                                      [&](const WorstReport::Search& e) { return same(e, s); });
    if (earlier != r.searches.begin() + i) {
      absl::StrAppend(&out, ValueText(r, s), "\n  first reached at run ", s.found_at_run, " of ",
                      s.runs, s.stopped ? ", stopped by --duration before its runs were done" : "",
                      "; the same breach as at concurrency ", earlier->concurrency,
                      ", whose witness is above\n  reproduce: ", s.reproduce, "\n");
      continue;
    }
    if (s.failure) {
      absl::StrAppend(&out, "FAILED: ", view_parts::kLimiterFailed, "; not judged. ", *s.failure,
                      "\n");
      continue;
    }
    absl::StrAppend(&out, ValueText(r, s), "\n  first reached at run ", s.found_at_run, " of ",
                    s.runs, s.stopped ? ", stopped by --duration before its runs were done" : "",
                    "\n");
    if (s.shown) {
      // A long witness is cut for a terminal (the JSON has it all).
      ViolationReport shown = *s.shown;
      const size_t all = shown.witness.size();
      if (all > kWitnessRequestsShown) shown.witness.resize(kWitnessRequestsShown);
      absl::StrAppend(&out, "  best case: ", s.requests, " request(s), shrunk; ", shown.summary,
                      "\n", view_parts::TimelineText(shown, {}));
      if (all > kWitnessRequestsShown) {
        absl::StrAppend(&out, "  ... and ", all - kWitnessRequestsShown,
                        " more request(s) of the span (--json shows them all)\n");
      }
      std::vector<std::string> also;
      for (size_t j = i + 1; j < r.searches.size(); ++j) {
        if (same(s, r.searches[j])) also.push_back(absl::StrCat(r.searches[j].concurrency));
      }
      if (!also.empty()) {
        also.insert(also.begin(), absl::StrCat(s.concurrency));
        absl::StrAppend(&out, "  the same breach holds at concurrencies ", view_parts::Listed(also),
                        "\n");
      }
      absl::StrAppend(&out, "  reproduce: ", s.reproduce, "\n");
    } else {
      absl::StrAppend(&out, "  its bound held in every case tried\n");
    }
  }
  if (r.searches.size() > 1) {
    absl::StrAppend(&out, "\nconcurrency  worst  amplification\n");
    for (const WorstReport::Search& s : r.searches) {
      char line[96];
      std::snprintf(line, sizeof line, "%11d  %5lld  %s\n", s.concurrency,
                    static_cast<long long>(s.value),
                    !s.failure ? (view_parts::Fixed(s.amplification, 2) + "x").c_str() : "failed");
      out += line;
    }
  }
  return out;
}

std::string RenderWorstJunit(const WorstReport& r) {
  // A measure, not a verdict: each search's case is skipped with what it measured, never passed
  // (an error where the limiter failed).
  const std::string classname = "worst." + r.protocol;
  std::vector<view_parts::JunitCase> cases;
  for (const WorstReport::Search& s : r.searches) {
    view_parts::JunitCase c{
        classname, absl::StrCat("concurrency ", s.concurrency, ", faults ", s.faults), 0, "", "",
        false};
    if (s.failure) {
      c.message = *s.failure;
      c.error = true;
    } else {
      c.skipped = absl::StrCat("a measure, not a verdict: against \"", r.bound, "\", ",
                               ValueText(r, s), " (reproduce: ", s.reproduce, ")");
    }
    cases.push_back(std::move(c));
  }
  return view_parts::JunitDocument("ratelab.worst", cases, 0);
}

namespace {

std::string WorstTitle(const WorstReport& r) {
  return "ratelab worst: " + r.protocol + ", " + r.policy;
}

}  // namespace

std::string RenderWorstMarkdown(const WorstReport& r) {
  return view_parts::TextMarkdown(WorstTitle(r), RenderWorstText(r));
}

std::string RenderWorstHtml(const WorstReport& r) {
  WitnessPage page;
  page.title = WorstTitle(r);
  page.text = RenderWorstText(r);
  const auto worst = std::max_element(
      r.searches.begin(), r.searches.end(),
      [](const WorstReport::Search& a, const WorstReport::Search& b) { return a.value < b.value; });
  page.verdict = "A measure, not a verdict: against \"" + r.bound + "\"";
  if (worst != r.searches.end()) {
    page.verdict += ", the worst found is " + ValueText(r, *worst) + " at concurrency " +
                    std::to_string(worst->concurrency);
    page.bad = worst->shown.has_value();
  }
  page.sentences.push_back(
      "Each search drives the limiter with the traffic that pushes it "
      "furthest past its claim, at most that many requests in flight, and "
      "shrinks the best case it found; the witness is that case.");
  std::vector<int64_t> drawn;  // the values whose witness is shown already
  for (const WorstReport::Search& s : r.searches) {
    WitnessPage::Shown shown{absl::StrCat("Concurrency ", s.concurrency, ", faults ", s.faults),
                             {},
                             nullptr,
                             {},
                             "node",
                             r.start,
                             s.reproduce};
    if (s.failure) {
      shown.sentences = {
          absl::StrCat("FAILED: ", view_parts::kLimiterFailed, "; not judged. ", *s.failure)};
    } else {
      shown.sentences = {absl::StrCat(
          ValueText(r, s), "; first reached at run ", s.found_at_run, " of ", s.runs,
          s.stopped ? ", stopped by --duration before its runs were done" : "",
          s.shown ? absl::StrCat("; the best case, shrunk, has ", s.requests, " request(s)")
                  : "; its bound held in every case tried")};
      if (s.shown && std::find(drawn.begin(), drawn.end(), s.value) == drawn.end()) {
        shown.violation = &*s.shown;
        drawn.push_back(s.value);
      } else if (s.shown) {
        shown.sentences.push_back("The same measure as a search above, whose witness is drawn.");
      }
    }
    page.shown.push_back(std::move(shown));
  }
  page.searched = {{"what", "searched"},
                   {"limiter", r.protocol},
                   {"policy", r.policy},
                   {"measure", std::string(CheckName(r.claim)) + ": " + r.bound}};
  if (!r.max_transit.empty()) page.searched.push_back(TransitSearched(r.max_transit));
  for (const WorstReport::Search& s : r.searches) {
    page.searched.push_back({absl::StrCat("concurrency ", s.concurrency),
                             absl::StrCat(s.runs, " run(s), faults ", s.faults)});
  }
  return RenderWitnessPage(page);
}

Result<std::string> WriteWorstReport(const WorstReport& r, const OutputDir& dir) {
  return view_parts::WriteViews(
      {RenderWorstHtml(r), RenderWorstMarkdown(r), JsonText(ToJson(r)), RenderWorstJunit(r)}, dir);
}

nlohmann::json ToJson(const WorstReport& r) { return ToJsonValue(r); }

Result<WorstReport> WorstReportFromJson(const nlohmann::json& j) {
  return FromJsonFields<WorstReport>(j);
}

}  // namespace ratelab
