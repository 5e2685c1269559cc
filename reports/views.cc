#include "reports/views.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/plots.h"
#include "reports/timeline.h"

namespace ratelab {

namespace {

using nlohmann::json;

// How many violations of one check of one limiter the HTML and Markdown show (all are in the
// JSON).
constexpr size_t kShownViolations = 3;

std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
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

std::string Str(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

std::string Claim(const json& r) {
  return std::to_string(r["claim"]["limit"].get<int64_t>()) + " in any " +
         Str(r["claim"]["window"]);
}

// What a check is called in a table header.
std::string CheckTitle(const json& r, const std::string& name) {
  if (name == "promise") return "own promise";
  if (name == "any-window-cap") return "claim: " + Claim(r);
  return name;
}

std::string Verdict(int64_t broken) {
  if (broken == 0) return "kept";
  return "broken for " + std::to_string(broken) + (broken == 1 ? " key" : " keys");
}

std::string OptionalFixed(const json& v, int digits) {
  return v.is_null() ? "n/a" : Fixed(v.get<double>(), digits);
}

// The rows of the verdict table (header first), shared by the HTML and the Markdown.
std::vector<std::vector<std::string>> VerdictRows(const json& r) {
  const json& limiters = r["limiters"];
  std::vector<std::string> header = {"limiter",
                                     "policy",
                                     "offered",
                                     "admitted",
                                     "denied",
                                     "unanswered",
                                     "max in any " + Str(r["claim"]["window"]) + " / limit",
                                     "over-admitted",
                                     "false denials"};
  if (!limiters.empty()) {
    for (const json& c : limiters[0]["checks"]) header.push_back(CheckTitle(r, Str(c["name"])));
  }
  std::vector<std::vector<std::string>> rows = {header};
  for (const json& l : limiters) {
    const json& m = l["metrics"];
    std::vector<std::string> row = {
        Str(l["name"]),
        Str(l["policy"]),
        Str(l["offered"]),
        Str(l["admitted"]),
        Str(l["denied"]),
        Str(l["unanswered"]),
        Str(l["max_in_any_window"]) + " (" + Fixed(m["burst_ratio"].get<double>(), 2) + "x)",
        Str(m["over_admitted"]),
        Str(m["false_denials"])};
    for (const json& c : l["checks"]) row.push_back(Verdict(c["violations"].get<int64_t>()));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::vector<std::string>> MetricRows(const json& r) {
  std::vector<std::vector<std::string>> rows = {
      {"limiter", "fairness (Jain, contended users)", "state bytes per key", "keys with state",
       "store steps per decision", "latency p50 / p95 / p99 (ms)"}};
  for (const json& l : r["limiters"]) {
    const json& m = l["metrics"];
    const json& lat = m["latency_ms"];
    rows.push_back({Str(l["name"]),
                    OptionalFixed(m["fairness"], 3) + " (" + Str(m["contended_users"]) + ")",
                    OptionalFixed(m["state_bytes_per_key"], 1), Str(m["state_keys"]),
                    Fixed(m["steps_per_decision"].get<double>(), 2),
                    lat.is_null() ? "n/a"
                                  : Fixed(lat["p50"].get<double>(), 3) + " / " +
                                        Fixed(lat["p95"].get<double>(), 3) + " / " +
                                        Fixed(lat["p99"].get<double>(), 3)});
  }
  return rows;
}

std::string HtmlTable(const std::vector<std::vector<std::string>>& rows) {
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

std::string HtmlWitness(const json& v, const json& faults) {
  std::string s = "<p class=\"summary\"><b>" + Escape(Str(v["invariant"])) + "</b> on key <code>" +
                  Escape(Str(v["key"])) + "</code>: " + Escape(Str(v["summary"])) + "</p>\n";
  s += "<table class=\"timeline\">\n<tr><th>time (s since start)</th><th>+ms</th><th>request</th>"
       "<th>node</th><th>what happened</th></tr>\n";
  const std::vector<TimelineRow> rows = WitnessTimeline(v["witness"], faults);
  for (const TimelineRow& row : rows) {
    const bool admitted = row.what == "admitted", denied = row.what.rfind("denied", 0) == 0;
    s += std::string("<tr") +
         (admitted ? " class=\"good\""
          : denied ? " class=\"bad\""
                   : "") +
         "><td>" + Fixed(row.at_s, 6) + "</td><td>" +
         Fixed((row.at_s - rows.front().at_s) * 1000, 3) + "</td><td>" +
         (row.id < 0 ? std::string() : "#" + std::to_string(row.id)) + "</td><td>" +
         Escape(row.node) + "</td><td>" + Escape(row.what) + "</td></tr>\n";
  }
  return s + "</table>\n";
}

// Calls `visit(limiter, check name, how many keys broke it)` for every check of every limiter,
// in order; returns how many checks were broken.
template <typename Visit>
int64_t ForEachCheck(const json& r, Visit visit) {
  int64_t broken = 0;
  for (const json& l : r["limiters"]) {
    for (const json& c : l["checks"]) {
      const int64_t n = c["violations"].get<int64_t>();
      broken += n > 0;
      visit(l, Str(c["name"]), n);
    }
  }
  return broken;
}

// Violations of `limiter`'s check `check`, at most `max` (all when max is 0).
std::vector<const json*> ViolationsOf(const json& limiter, const std::string& check, size_t max) {
  std::vector<const json*> out;
  for (const json& v : limiter["violations"]) {
    if (Str(v["check"]) == check && (max == 0 || out.size() < max)) out.push_back(&v);
  }
  return out;
}

// SVG from gnuplot, made fit to sit inline beside others: no XML prolog, its ids prefixed with
// the plot's name so two plots' ids cannot clash.
std::string InlineSvg(const std::string& name, std::string svg) {
  if (const size_t at = svg.find("<svg"); at != std::string::npos) svg.erase(0, at);
  if (const size_t at = svg.find("<title>Gnuplot</title>"); at != std::string::npos) {
    svg.replace(at, 22, "<title>" + name + "</title>");
  }
  // Prefix every id, and every reference to one.
  for (const std::string_view before : {"id='", "id=\"", "href='#", "href=\"#", "url(#"}) {
    for (size_t at = svg.find(before); at != std::string::npos; at = svg.find(before, at + 1)) {
      svg.insert(at + before.size(), name + "-");
    }
  }
  return svg;
}

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
.summary { margin-bottom: .2em; }
@media print { h2 { page-break-before: auto; } figure, table { page-break-inside: avoid; } }
)";

}  // namespace

std::string RenderHtml(const json& r, const std::map<std::string, std::string>& svgs,
                       const std::string& plot_error) {
  const std::string title = "ratelab: " + Str(r["scenario"]) + ", seed " + Str(r["seed"]);
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                  Escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  s += "<h1>" + Escape(title) + "</h1>\n";
  if (!Str(r["description"]).empty()) s += "<p>" + Escape(Str(r["description"])) + "</p>\n";
  s += "<h2>The scenario</h2>\n<p>Every limiter is held to the claim <b>" + Escape(Claim(r)) +
       "</b> per key, on the same traffic:</p>\n<ul>\n";
  for (const json& t : r["traffic"]) s += "<li>" + Escape(Str(t)) + "</li>\n";
  s += "</ul>\n";
  if (!r["faults"].empty()) {
    s += "<p>Faults (shaded on the time plots):</p>\n<ul>\n";
    for (const json& f : r["faults"]) s += "<li>" + Escape(Str(f["what"])) + "</li>\n";
    s += "</ul>\n";
  }
  s += "<p>Seed " + Escape(Str(r["seed"])) + ", history hash <code>" +
       Escape(Str(r["history_hash"])) + "</code>" +
       (r.value("buggify", false) ? ", BUGGIFY on (rare step delays made common)" : "") + ".</p>\n";

  s += "<h2>Verdicts</h2>\n" + HtmlTable(VerdictRows(r));
  s += "<p><i>own promise</i>: what the limiter's algorithm guarantees (aligned windows for the "
       "fixed window and the counter, any window for the log, burst plus rate for the buckets). "
       "<i>claim</i>: every limiter held to the scenario's claim. <i>over-admitted</i>: admitted "
       "requests past the claim in the window ending at them; <i>false denials</i>: denied "
       "requests an exact sliding log would have admitted.</p>\n";
  for (const json& note : r["notes"])
    s += "<p class=\"note\">Note: " + Escape(Str(note)) + "</p>\n";
  s += "<h2>Costs and fairness</h2>\n" + HtmlTable(MetricRows(r));
  if (!r["faults"].empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"fault", "limiter", "offered", "admitted", "denied", "unanswered"}};
    for (const json& l : r["limiters"]) {
      for (const json& f : l["metrics"]["during_faults"]) {
        rows.push_back({Str(f["fault"]), Str(l["name"]), Str(f["offered"]), Str(f["admitted"]),
                        Str(f["denied"]), Str(f["unanswered"])});
      }
    }
    s += "<h2>During the faults</h2>\n" + HtmlTable(rows);
  }

  s += "<h2>Plots</h2>\n";
  if (!plot_error.empty()) s += "<p class=\"bad\">No plots: " + Escape(plot_error) + "</p>\n";
  for (const Plot& p : PlotScripts(r)) {
    auto it = svgs.find(p.name);
    if (it == svgs.end()) continue;
    s += "<figure id=\"plot-" + p.name + "\">\n" + InlineSvg(p.name, it->second) + "<figcaption>" +
         Escape(p.caption) + "</figcaption>\n</figure>\n";
  }

  s += "<h2>Violations</h2>\n";
  const int64_t broken = ForEachCheck(r, [&](const json& l, const std::string& check, int64_t n) {
    if (n == 0) return;
    s += "<h3>" + Escape(Str(l["name"])) + ": " + Escape(CheckTitle(r, check)) + " " +
         Escape(Verdict(n)) + "</h3>\n";
    for (const json* v : ViolationsOf(l, check, kShownViolations))
      s += HtmlWitness(*v, r["faults"]);
    if (n > static_cast<int64_t>(kShownViolations)) {
      s += "<p>... and " + std::to_string(n - static_cast<int64_t>(kShownViolations)) +
           " more, each with its witness in report.json.</p>\n";
    }
  });
  if (broken == 0) s += "<p class=\"good\">None: every limiter kept every check.</p>\n";

  if (r.contains("reproduce")) {
    s += "<h2>Reproduce</h2>\n<pre>" + Escape(Str(r["reproduce"])) +
         "</pre>\n<p>The same seed gives the same history hash.</p>\n";
  }
  return s + "</body>\n</html>\n";
}

std::string RenderMarkdown(const json& r, const std::vector<std::string>& plots) {
  const auto cell = [](std::string v) {
    for (size_t at = v.find('|'); at != std::string::npos; at = v.find('|', at + 2)) {
      v.replace(at, 1, "\\|");
    }
    return v;
  };
  std::string s = "## ratelab: " + Str(r["scenario"]) + ", seed " + Str(r["seed"]) + "\n\n";
  s += "Claim held to every limiter: **" + Claim(r) + "** per key. History hash `" +
       Str(r["history_hash"]) + "`.\n\n";
  const auto rows = VerdictRows(r);
  for (size_t i = 0; i < rows.size(); ++i) {
    s += "|";
    for (const std::string& c : rows[i]) s += " " + cell(c) + " |";
    s += "\n";
    if (i == 0) {
      s += "|";
      for (size_t k = 0; k < rows[0].size(); ++k) s += k < 2 ? " --- |" : " ---: |";
      s += "\n";
    }
  }
  s += "\n### Findings\n\n";
  const int64_t broken = ForEachCheck(r, [&](const json& l, const std::string& check, int64_t n) {
    if (n == 0) return;
    const std::vector<const json*> first = ViolationsOf(l, check, 1);
    s += "- **" + cell(Str(l["name"])) + "** broke *" + CheckTitle(r, check) + "* (" + Verdict(n) +
         ")" + (first.empty() ? "" : ": " + Str((*first[0])["summary"])) + "\n";
  });
  if (broken == 0) s += "None: every limiter kept every check.\n";
  for (const json& note : r["notes"]) s += "\n> " + Str(note) + "\n";
  if (!plots.empty()) {
    s += "\n### Plots\n\n";
    for (const std::string& p : plots) s += "- [" + p + "](plots/" + p + ".svg)\n";
  }
  s += "\nThe full report, with every witness as a timeline: `report.html`.\n";
  if (r.contains("reproduce")) s += "\nReproduce: `" + Str(r["reproduce"]) + "`\n";
  return s;
}

std::string RenderJunit(const json& r) {
  int64_t tests = 0;
  std::string cases;
  const int64_t failures = ForEachCheck(r, [&](const json& l, const std::string& check, int64_t n) {
    ++tests;
    cases += "    <testcase classname=\"" + Escape(Str(r["scenario"]) + "." + Str(l["name"])) +
             "\" name=\"" + Escape(check) + "\" time=\"0\"";
    if (n == 0) {
      cases += "/>\n";
      return;
    }
    const std::vector<const json*> first = ViolationsOf(l, check, 1);
    std::string message = Verdict(n), body;
    if (!first.empty()) {
      const json& v = *first[0];
      message += ": " + Str(v["summary"]);
      body = Str(v["invariant"]) + " on key " + Str(v["key"]) + "\n";
      for (const TimelineRow& row : WitnessTimeline(v["witness"], r["faults"])) {
        body +=
            Fixed(row.at_s, 6) + "s  " +
            (row.id < 0 ? std::string() : "#" + std::to_string(row.id) + "  " + row.node + "  ") +
            row.what + "\n";
      }
    }
    cases += ">\n      <failure type=\"" + Escape(check) + "\" message=\"" + Escape(message) +
             "\">" + Escape(body) + "</failure>\n    </testcase>\n";
  });
  const std::string counts = " tests=\"" + std::to_string(tests) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"0\"";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ratelab\"" + counts +
         ">\n  <testsuite name=\"" + Escape("ratelab." + Str(r["scenario"])) + "\"" + counts +
         " skipped=\"0\" time=\"0\">\n" + cases + "  </testsuite>\n</testsuites>\n";
}

Result<ReportFiles> WriteReport(const json& report, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError("cannot create " + dir + ": " + ec.message());
  ReportFiles files;
  const auto write = [&](const std::string& name, const std::string& text,
                         std::string* path) -> Status {
    *path = (fs::path(dir) / name).string();
    std::ofstream f(*path);
    if (!(f << text) || !f.flush()) return absl::InternalError("cannot write " + *path);
    return absl::OkStatus();
  };
  std::vector<Plot> plots;
  std::string html, markdown, junit;
  try {
    // Every view reads the fields it needs: a file that is not a run's data fails here, before
    // anything is written.
    plots = PlotScripts(report);
    RenderHtml(report, {}, "");
    if (Status s = write("report.json", report.dump(2) + "\n", &files.json); !s.ok()) return s;
    const fs::path plot_dir = fs::path(dir) / "plots";
    if (Status s = DrawPlots(plots, plot_dir.string()); !s.ok()) {
      files.plot_error = std::string(s.message());
    }
    std::map<std::string, std::string> svgs;
    std::vector<std::string> names;
    if (files.plot_error.empty()) {
      for (const Plot& p : plots) {
        const fs::path svg = plot_dir / (p.name + ".svg");
        std::ifstream in(svg);
        std::stringstream text;
        text << in.rdbuf();
        svgs[p.name] = text.str();
        names.push_back(p.name);
        files.plots.push_back(svg.string());
      }
    }
    html = RenderHtml(report, svgs, files.plot_error);
    markdown = RenderMarkdown(report, names);
    junit = RenderJunit(report);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(std::string("not a ratelab result: ") + e.what());
  }
  if (Status s = write("report.html", html, &files.html); !s.ok()) return s;
  if (Status s = write("report.md", markdown, &files.markdown); !s.ok()) return s;
  if (Status s = write("junit.xml", junit, &files.junit); !s.ok()) return s;
  return files;
}

}  // namespace ratelab
