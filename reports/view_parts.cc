#include "reports/view_parts.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "impl/core/text.h"
#include "judge/oracles.h"
#include "reports/timeline.h"

namespace ratelab::view_parts {

namespace {

std::string OptionalFixed(const std::optional<double>& v, int digits) {
  return v ? Fixed(*v, digits) : "n/a";
}

// How the reports call a check, when not by its name.
struct CheckCalled {
  CheckId check;
  std::string_view title;   // in a table header; the claim's followed by the claim
  std::string_view phrase;  // in a sentence
};
constexpr CheckCalled kCheckCalled[] = {
    {CheckId::kPromise, "own promise", "own promise"},
    {CheckId::kAnyWindowCap, "claim", "the claim"},
};

const CheckCalled* Called(CheckId check) {
  for (const CheckCalled& c : kCheckCalled) {
    if (c.check == check) return &c;
  }
  return nullptr;
}

// A number of a comparison over seeds: "2", or "2 (worst 43, seed 7)".
std::string SpreadCell(const SpreadReport& s, int digits) {
  const auto number = [&](double v) {
    return Fixed(v, digits == 0 && std::abs(v - std::round(v)) > 0.01 ? 1 : digits);
  };
  if (number(s.worst) == number(s.median)) return number(s.median);
  return number(s.median) + " (worst " + number(s.worst) + ", seed " +
         std::to_string(s.worst_seed) + ")";
}

// What a limiter broke over the seeds: "broke the claim in 20 of 20 seeds; own promise in 1 (first:
// seed 4)", "FAILED in 2 of 20 seeds (first: seed 3)", or "kept the claim and every check". The
// claim is a check like any other (any-window-cap, which every scenario judges), named first.
std::string SeedsVerdict(const LimiterSpreadReport& l, uint64_t count, bool claim_given) {
  const auto in = [&](uint64_t seeds, uint64_t first) {
    return " in " + std::to_string(seeds) + " of " + std::to_string(count) + " seeds" +
           (seeds == count ? "" : " (first: seed " + std::to_string(first) + ")");
  };
  std::vector<std::string> broke;
  for (const CheckSeeds& c : l.checks) {
    if (c.seeds == 0) continue;
    AddBroken(broke, c.check, CheckPhrase(c.check) + in(c.seeds, c.first_seed));
  }
  std::string s = l.seeds_failed == 0 ? "" : "FAILED" + in(l.seeds_failed, l.first_failed_seed);
  if (!broke.empty()) s += (s.empty() ? "broke " : "; broke ") + Listed(broke);
  return s.empty() ? (claim_given ? "kept the claim and every check" : "kept every check") : s;
}

}  // namespace

void AddBroken(std::vector<std::string>& broke, CheckId check, std::string item) {
  const bool claim = check == CheckId::kAnyWindowCap;
  broke.insert(claim ? broke.begin() : broke.end(), std::move(item));
}

std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const auto u = static_cast<unsigned char>(ch);
    // What XML cannot hold at all, escaped or not (bytes that are not UTF-8, control
    // characters but tab and line breaks), is U+FFFD: a JUnit file must stay readable.
    if (u >= 0x80) {
      const size_t n = Utf8SequenceAt(s, i);
      if (n == 0) {
        out += "\xef\xbf\xbd";
      } else {
        out.append(s, i, n);
        i += n - 1;
      }
      continue;
    }
    if ((u < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || u == 0x7f) {
      out += "\xef\xbf\xbd";
      continue;
    }
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string Fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Title(const RunReport& r) {
  const std::string seed = std::to_string(r.seed);
  if (!r.across_seeds || r.across_seeds->count == 0)
    return "ratelab: " + r.scenario + ", seed " + seed;
  const SeedsSpreadReport& s = *r.across_seeds;
  return "ratelab: " + r.scenario + ", seeds " + std::to_string(s.first) + ".." +
         std::to_string(s.first + s.count - 1) + " (seed " + seed + " in full)";
}

std::string Claim(const RunReport& r) {
  return std::to_string(r.claim.limit) + " in any " + r.claim.window;
}

std::string HeldTo(const RunReport& r) {
  return r.claim.not_given ? "its own promise" : "the claim " + Claim(r) + " per key";
}

std::string Yardstick(const RunReport& r) { return r.claim.not_given ? Claim(r) : "the claim"; }

std::string NoClaimSentence(const RunReport& r) {
  if (!r.claim.not_given) return "";
  return "The scenario gives no claim, so each limiter is held to its own promise; over-admitted, "
         "false denials and the most in any " +
         r.claim.window + " are measured against " + Claim(r) +
         " (the first limiter's), to compare them by.";
}

std::string Zone(const RunReport& r) {
  return r.utc_offset ? "UTC" + FormatUtcOffset(*r.utc_offset) : "UTC";
}

Instant ShownStart(const RunReport& r) {
  return *r.start + r.utc_offset.value_or(Duration::zero());
}

std::string OnClock(const RunReport& r, double at_s) {
  return FormatInstant(ShownStart(r) + std::chrono::round<std::chrono::milliseconds>(
                                           std::chrono::duration<double>(at_s)));
}

std::optional<Instant> AfterStart(Instant start, double seconds) {
  const double ns = static_cast<double>(ToUnixNanos(start)) + seconds * 1e9;
  if (!(ns > -9e18 && ns < 9e18)) return std::nullopt;
  return start + std::chrono::round<Duration>(std::chrono::duration<double>(seconds));
}

std::string Offset(double seconds) {
  const auto d =
      std::chrono::round<Duration>(std::chrono::duration<double>(std::round(seconds * 1e6) / 1e6));
  return d == Duration::zero() ? "0" : FormatDuration(d);
}

std::string Sentences(const std::vector<std::string>& sentences) {
  std::string s;
  for (const std::string& sentence : sentences) s += (s.empty() ? "" : " ") + sentence;
  return s;
}

std::string Listed(const std::vector<std::string>& items, std::string_view last) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == items.size() ? std::string(last) : ", ") + items[i];
  }
  return s;
}

std::string CheckTitle(const RunReport& r, CheckId check) {
  const CheckCalled* called = Called(check);
  if (called == nullptr) return std::string(CheckName(check));
  if (called->check == CheckId::kAnyWindowCap) return std::string(called->title) + ": " + Claim(r);
  return std::string(called->title);
}

std::string CheckPhrase(CheckId check) {
  const CheckCalled* called = Called(check);
  return std::string(called == nullptr ? CheckName(check) : called->phrase);
}

std::string Verdict(uint64_t broken) {
  if (broken == 0) return "kept";
  return "broken for " + std::to_string(broken) + (broken == 1 ? " key" : " keys");
}

Rows VerdictRows(const RunReport& r) {
  std::vector<std::string> header = {"limiter",
                                     "policy",
                                     "offered",
                                     "admitted",
                                     "denied",
                                     "unanswered",
                                     "max in any " + r.claim.window + " / limit",
                                     "over-admitted",
                                     "false denials"};
  if (!r.limiters.empty()) {
    for (const CheckCount& c : r.limiters[0].checks) header.push_back(CheckTitle(r, c.check));
  }
  Rows rows = {header};
  for (const LimiterReport& l : r.limiters) {
    const MetricsReport& m = l.metrics;
    std::vector<std::string> row = {
        l.name,
        l.policy,
        std::to_string(l.offered),
        std::to_string(l.admitted),
        std::to_string(l.denied),
        std::to_string(l.unanswered),
        std::to_string(l.max_in_any_window) + " (" + Fixed(m.burst_ratio, 2) + "x)",
        std::to_string(m.over_admitted),
        std::to_string(m.false_denials)};
    for (const CheckCount& c : l.checks) row.push_back(Verdict(c.violations));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string TakeSameColumns(Rows& rows, size_t from) {
  if (rows.size() < 3) return "";
  std::vector<std::string> same;
  for (size_t c = rows[0].size(); c-- > std::max<size_t>(from, 1);) {
    const bool all = std::all_of(rows.begin() + 2, rows.end(), [&](const auto& row) {
      return row.size() > c && row[c] == rows[1][c];
    });
    if (!all) continue;
    same.insert(same.begin(), rows[0][c] + " " + rows[1][c]);
    for (std::vector<std::string>& row : rows) row.erase(row.begin() + static_cast<ptrdiff_t>(c));
  }
  return same.empty() ? "" : "The same for every limiter: " + Listed(same) + ".";
}

Rows MetricRows(const RunReport& r) {
  Rows rows = {{"limiter", "fairness (Jain, contended users)", "state bytes per key",
                "state grows with", "keys with state", "store steps per decision",
                "latency p50 / p95 / p99 (ms)"}};
  for (const LimiterReport& l : r.limiters) {
    const MetricsReport& m = l.metrics;
    const bool log = l.algorithm && Describe(*l.algorithm).log;
    rows.push_back(
        {l.name, OptionalFixed(m.fairness, 3) + " (" + std::to_string(m.contended_users) + ")",
         OptionalFixed(m.state_bytes_per_key, 1),
         !l.algorithm ? "n/a"
         : log        ? "keys × limit"
                      : "keys",
         std::to_string(m.state_keys), Fixed(m.steps_per_decision, 2),
         !m.latency_ms ? "n/a"
                       : Fixed(m.latency_ms->p50, 3) + " / " + Fixed(m.latency_ms->p95, 3) + " / " +
                             Fixed(m.latency_ms->p99, 3)});
  }
  return rows;
}

Rows SpreadRows(const RunReport& r, bool with_latency) {
  const SeedsSpreadReport& seeds = *r.across_seeds;
  with_latency =
      with_latency &&
      std::any_of(seeds.limiters.begin(), seeds.limiters.end(), [](const LimiterSpreadReport& l) {
        return l.latency_p99_ms && l.latency_p99_ms->worst > 0;
      });
  Rows rows = {{"limiter", "verdict over " + std::to_string(seeds.count) + " seeds",
                "over-admitted", "false denials", "max in any " + r.claim.window,
                "store steps per decision"}};
  if (with_latency) rows[0].push_back("latency p99 (ms)");
  for (const LimiterSpreadReport& l : seeds.limiters) {
    rows.push_back({l.name, SeedsVerdict(l, seeds.count, !r.claim.not_given),
                    SpreadCell(l.over_admitted, 0), SpreadCell(l.false_denials, 0),
                    SpreadCell(l.max_in_any_window, 0), SpreadCell(l.steps_per_decision, 2)});
    if (with_latency) {
      rows.back().push_back(l.latency_p99_ms ? SpreadCell(*l.latency_p99_ms, 3) : "n/a");
    }
  }
  return rows;
}

std::string AcrossSeedsIntro(const RunReport& r) {
  const SeedsSpreadReport& seeds = *r.across_seeds;
  const uint64_t last = seeds.first + seeds.count - 1;
  return "The scenario run from each of the seeds " + std::to_string(seeds.first) + ".." +
         std::to_string(last) +
         (last < seeds.last ? " (interrupted before " + std::to_string(seeds.last) + ")" : "") +
         (r.claim.not_given ? ", each limiter held to its own promise"
                            : ", every limiter held to the claim " + Claim(r)) +
         ". Each number is the median over the seeds, then the worst and the first seed that gave "
         "it; --seed SEED shows that seed's run in full.";
}

std::string JunitDocument(const std::string& suite, const std::vector<JunitCase>& cases,
                          double seconds) {
  int64_t failures = 0, errors = 0, skipped = 0;
  std::string body;
  for (const JunitCase& c : cases) {
    body += "    <testcase classname=\"" + Escape(c.classname) + "\" name=\"" + Escape(c.name) +
            "\" time=\"" + Fixed(c.seconds, 3) + "\"";
    if (c.failure.empty() && c.message.empty()) {
      if (c.skipped.empty()) {
        body += "/>\n";
      } else {
        ++skipped;
        body += ">\n      <skipped message=\"" + Escape(c.skipped) + "\"/>\n    </testcase>\n";
      }
      continue;
    }
    (c.error ? errors : failures) += 1;
    body += std::string(">\n      <") + (c.error ? "error" : "failure") + " type=\"" +
            Escape(c.name) + "\" message=\"" + Escape(c.message) + "\">" + Escape(c.failure) +
            "</" + (c.error ? "error" : "failure") + ">\n    </testcase>\n";
  }
  const std::string counts = " tests=\"" + std::to_string(cases.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
                             "\"";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ratelab\"" + counts +
         " skipped=\"" + std::to_string(skipped) + "\" time=\"" + Fixed(seconds, 3) +
         "\">\n  <testsuite name=\"" + Escape(suite) + "\"" + counts + " skipped=\"" +
         std::to_string(skipped) + "\" time=\"" + Fixed(seconds, 3) + "\">\n" + body +
         "  </testsuite>\n</testsuites>\n";
}

std::string TimelineText(const ViolationReport& v, const std::vector<FaultReport>& faults) {
  const std::vector<TimelineRow> rows = WitnessTimeline(v.witness, faults);
  if (rows.empty()) return "";
  const double zero = rows.front().at_s;
  const auto when = [&](double at_s) {
    const double d = at_s - zero;
    const std::string offset = Offset(std::abs(d));
    return (d < 0 && offset != "0" ? "-" : "+") + (offset == "0" ? "0s" : offset);
  };
  const auto line = [](std::string at, const std::string& text) {
    at.resize(std::max<size_t>(at.size() + 1, 15), ' ');
    return "  " + at + text + "\n";
  };
  // The window (or span) the witness broke, its edges among the rows on the same offsets.
  std::string opens, closes;
  if (v.window) {
    const std::string what = v.window->span ? "span" : "window";
    opens = "---- the " + what + " [" + when(v.window->from_s) + ", " + when(v.window->to_s) +
            (v.window->closed ? "]" : ")") + " they fell in begins";
    closes = "---- the " + what + " ends";
  }
  std::string out;
  bool opened = opens.empty(), closed = closes.empty();
  for (const TimelineRow& r : rows) {
    if (!opened && v.window->from_s <= r.at_s) {
      out += line(when(v.window->from_s), opens);
      opened = true;
    }
    const bool past =
        v.window && (v.window->closed ? r.at_s > v.window->to_s : r.at_s >= v.window->to_s);
    if (opened && !closed && past) {
      out += line(when(v.window->to_s), closes);
      closed = true;
    }
    const std::string who = r.id < 0 ? "" : "#" + std::to_string(r.id) + " " + r.node + "  ";
    out += line(when(r.at_s), who + r.what);
  }
  if (!opened) out += line(when(v.window->from_s), opens);
  if (!closed) out += line(when(v.window->to_s), closes);
  return out;
}

std::string WitnessText(const ViolationReport& v, const std::vector<FaultReport>& faults) {
  return std::string(CheckName(v.invariant)) + " on key " + v.key + "\n" + TimelineText(v, faults);
}

std::vector<const ViolationReport*> ViolationsOf(const LimiterReport& limiter, CheckId check,
                                                 size_t max) {
  std::vector<const ViolationReport*> out;
  for (const ViolationReport& v : limiter.violations) {
    if (v.check == check && (max == 0 || out.size() < max)) out.push_back(&v);
  }
  return out;
}

namespace {

constexpr char kStyle[] = R"(
body { font-family: sans-serif; max-width: 1000px; margin: 2em auto; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.good, tr.good td { background: #e6f4e6; } td.bad, tr.bad td { background: #fbe3e3; }
code, pre { background: #f6f6f6; padding: .1em .3em; }
pre { padding: .6em; overflow-x: auto; }
figure { margin: 1.5em 0; } figcaption { color: #555; font-size: .9em; }
figure svg { width: 100%; height: auto; }
.verdict { padding: .4em .6em; font-size: 1.1em; } .verdict.good { background: #e6f4e6; }
.verdict.bad { background: #fbe3e3; }
.summary { margin-bottom: .2em; }
nav.contents { font-size: .9em; margin: .5em 0 1em; }
summary { cursor: pointer; } summary h3 { display: inline; font-size: 1.05em; }
details { margin: .8em 0; }
h2, h3, summary { break-after: avoid; page-break-after: avoid; }
.advice { font-size: 1.05em; } .explain { color: #444; font-size: .9em; }
@media print { h2 { page-break-before: auto; } figure, table { page-break-inside: avoid; } }
)";

}  // namespace

std::string HtmlPageStart(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         Escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
}

std::string TextMarkdown(const std::string& title, const std::string& text) {
  // A fence longer than any run of backticks in the text (a script's message may hold some).
  size_t longest = 0, run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  return "## " + title + "\n\n" + fence + "\n" + text + fence + "\n";
}

std::string TextHtml(const std::string& title, const std::string& text) {
  return HtmlPageStart(title) + "<h1>" + Escape(title) + "</h1>\n<pre>" + Escape(text) +
         "</pre>\n</body>\n</html>\n";
}

Result<std::string> WriteViews(const ReportViews& views, const OutputDir& dir) {
  const std::pair<const char*, std::string> files[] = {{"report.html", views.html},
                                                       {"report.md", views.markdown},
                                                       {"report.json", views.json},
                                                       {"junit.xml", views.junit}};
  return dir.WriteAll(files);
}

ReportViews TextViews(const std::string& title, const std::string& text, std::string json,
                      std::string junit) {
  return {TextHtml(title, text), TextMarkdown(title, text), std::move(json), std::move(junit)};
}

std::string Paragraphs(const std::vector<std::string>& texts, const std::string& cls) {
  const std::string open = cls.empty() ? "<p>" : "<p class=\"" + cls + "\">";
  std::string s;
  for (const std::string& t : texts) s += open + Escape(t) + "</p>\n";
  return s;
}

std::string HtmlTable(const Rows& rows) {
  std::string s = "<table>\n<tr>";
  for (const std::string& h : rows[0]) s += "<th>" + Escape(h) + "</th>";
  s += "</tr>\n";
  for (size_t i = 1; i < rows.size(); ++i) {
    s += "<tr>";
    for (const std::string& cell : rows[i]) {
      const char* cls = cell.rfind("broken", 0) == 0 ? " class=\"bad\""
                        : cell == "kept"             ? " class=\"good\""
                                                     : "";
      s += std::string("<td") + cls + ">" + Escape(cell) + "</td>";
    }
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

std::string MarkdownCell(std::string v) {
  for (size_t at = v.find('|'); at != std::string::npos; at = v.find('|', at + 2)) {
    v.replace(at, 1, "\\|");
  }
  return v;
}

std::string MarkdownTable(const Rows& rows, size_t left) {
  std::string s;
  for (size_t i = 0; i < rows.size(); ++i) {
    s += "|";
    for (const std::string& c : rows[i]) s += " " + MarkdownCell(c) + " |";
    s += "\n";
    if (i == 0) {
      s += "|";
      for (size_t k = 0; k < rows[0].size(); ++k) s += k < left ? " --- |" : " ---: |";
      s += "\n";
    }
  }
  return s;
}

}  // namespace ratelab::view_parts
