#include "reports/plots.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "reports/view_parts.h"

namespace ratelab {

namespace {

// `s` between `quote`s, a quote inside written as `quote_inside`, and what could end the line
// (and so the string) as a space.
std::string Quoted(std::string_view s, char quote, std::string_view quote_inside) {
  std::string out(1, quote);
  for (const char ch : s) {
    if (ch == quote) {
      out += quote_inside;
    } else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out + quote;
}

// Text from the report as a gnuplot single-quoted string, the only kind gnuplot substitutes
// nothing in (no backquoted commands, no macros, no escapes): a quote is doubled.
std::string Quote(std::string_view s) { return Quoted(s, '\'', "''"); }

// A label in a data file: in double quotes, where nothing can be escaped, so a double quote is a
// single one. (A data file is never run: this keeps its rows whole.)
std::string DataLabel(std::string_view s) { return Quoted(s, '"', "'"); }

// A plot's data file, plots/NAME.dat: blocks of rows, two blank lines apart, each read by its
// index (`index N`). The script names the file; no data is ever part of the script.
class DataFile {
 public:
  explicit DataFile(std::string name) : path_("plots/" + name + ".dat") {}
  // Adds a block of `rows` (each row's text without its newline); returns what a plot reads it
  // by: "'plots/NAME.dat' index N".
  std::string Add(const std::vector<std::string>& rows) {
    if (blocks_ > 0) text_ += "\n\n";
    for (const std::string& row : rows) text_ += row + "\n";
    return Quote(path_) + " index " + std::to_string(blocks_++);
  }
  std::string text() && { return std::move(text_); }

 private:
  std::string path_;
  std::string text_;
  int blocks_ = 0;
};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                   "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
std::string Color(size_t i) { return kColors[i % std::size(kColors)]; }

double BinWidthSeconds(const RunReport& r) { return r.bins.width_ms / 1000.0; }

// A point of the x axis, `s` seconds after the run's start: on the scenario's clock (Unix
// seconds, which gnuplot shows as times of day) when the report has its start, or seconds since
// the start in a report written before it had.
std::string X(const RunReport& r, double s) {
  if (!r.start) return Num(s);
  char buf[48];
  // gnuplot shows a time as UTC: from the start on the zone's clock, it shows the zone's time.
  std::snprintf(buf, sizeof buf, "%.3f",
                static_cast<double>(ToUnixNanos(view_parts::ShownStart(r))) / 1e9 + s);
  return buf;
}
// The same, where gnuplot reads a coordinate (a quoted time on a time axis).
std::string At(const RunReport& r, double s) { return r.start ? "'" + X(r, s) + "'" : X(r, s); }

// The time axis's label: the day its first bin begins on the scenario's clock.
std::string XLabel(const RunReport& r) {
  if (!r.start) return "set xlabel 'seconds since the start'\n";
  const Instant from = view_parts::ShownStart(r) +
                       std::chrono::round<Duration>(std::chrono::duration<double>(r.bins.start_s));
  return "set xlabel " + Quote(view_parts::Zone(r) + ", from " + FormatUtc(from).substr(0, 10)) +
         "\n";
}

// The time axis: fitted to the bins (so to the requests), labelled on the scenario's clock, with
// shading for every fault and a dashed line for every instant one.
std::string TimeAxis(const RunReport& r) {
  const double from = r.bins.start_s,
               to = r.bins.start_s + BinWidthSeconds(r) * static_cast<double>(r.bins.count);
  std::string s = XLabel(r);
  if (r.start) {
    const double span = to - from;
    const char* format = span >= 2 * 86400 ? "%m-%d %H:%M"
                         : span >= 600     ? "%H:%M"
                         : span >= 10      ? "%H:%M:%S"
                                           : "%H:%M:%.3S";
    s += "set xdata time\nset timefmt '%s'\nset format x '" + std::string(format) + "'\n";
  }
  s += "set xrange [" + At(r, from) + ":" + At(r, to) + "]\n";
  int n = 1;
  for (const FaultReport& f : r.faults) {
    if (f.to_s < from || f.from_s > to) continue;
    if (f.to_s > f.from_s) {
      s += "set object " + std::to_string(n++) + " rect from " + At(r, f.from_s) + ", graph 0 to " +
           At(r, f.to_s) + ", graph 1 behind fc rgb '#f3d9b1' fs solid 0.7 noborder\n";
    } else {
      s += "set arrow from " + At(r, f.from_s) + ", graph 0 to " + At(r, f.from_s) +
           ", graph 1 nohead lc rgb '#d08000' dt 2 lw 2\n";
    }
  }
  return s;
}

// What the time plots' shading and dashed lines stand for, if the run has any.
std::string FaultsCaption(const RunReport& r) {
  const bool spans = std::any_of(r.faults.begin(), r.faults.end(),
                                 [](const FaultReport& f) { return f.to_s > f.from_s; });
  const bool instants = std::any_of(r.faults.begin(), r.faults.end(),
                                    [](const FaultReport& f) { return f.to_s == f.from_s; });
  if (spans && instants) return " Shaded: faults; dashed orange: instant faults (clock jumps).";
  if (spans) return " Shaded: faults.";
  if (instants) return " Dashed orange: instant faults (clock jumps).";
  return "";
}

// Whole-number tics when a count axis would otherwise be marked in fractions.
std::string CountTics(int64_t top) { return top <= 10 ? "set ytics 1\n" : ""; }

// A block of `data`: one row per bin, x the bin's start, then one column per series; returns what
// a plot reads it by. Every column has a value per bin (the report reader checks it).
std::string Block(DataFile& data, const RunReport& r,
                  const std::vector<const std::vector<int64_t>*>& series) {
  const double width = BinWidthSeconds(r);
  const size_t count = r.bins.count;
  const auto value = [](int64_t v) { return Num(static_cast<double>(v)); };
  std::vector<std::string> rows;
  for (size_t i = 0; i < count; ++i) {
    std::string row = X(r, r.bins.start_s + width * static_cast<double>(i));
    for (const std::vector<int64_t>* column : series) row += " " + value((*column)[i]);
    rows.push_back(std::move(row));
  }
  // One more row so the last bin's step is drawn to its end.
  if (count > 0) {
    std::string row = X(r, r.bins.start_s + width * static_cast<double>(count));
    for (const std::vector<int64_t>* column : series) row += " " + value((*column)[count - 1]);
    rows.push_back(std::move(row));
  }
  return data.Add(rows);
}

Plot TrafficPlot(const RunReport& r) {
  const std::vector<LimiterReport>& limiters = r.limiters;
  int64_t top = 0;
  for (const LimiterReport& l : limiters) {
    for (int64_t v : l.series.offered) top = std::max(top, v);
  }
  DataFile data("traffic");
  std::string s = TimeAxis(r);
  s += "set multiplot layout " + std::to_string(limiters.size()) + ",1\n";
  s += "set ylabel " + Quote("requests per " + r.bins.width) + "\nset yrange [0:*]\n" +
       CountTics(top);
  s += "set key outside right top\nset style fill solid 0.35 noborder\n";
  for (size_t i = 0; i < limiters.size(); ++i) {
    const SeriesReport& series = limiters[i].series;
    const std::string block = Block(data, r, {&series.offered, &series.admitted, &series.denied});
    s += "set title " + Quote(limiters[i].name) + "\n";
    s += i + 1 < limiters.size() ? "unset xlabel\n" : XLabel(r);
    s += "plot " + block + " using 1:2 with fillsteps lc rgb '#bbbbbb' title 'offered', " + block +
         " using 1:3 with steps lw 2 lc rgb '#2ca02c' title 'admitted', " + block +
         " using 1:4 with steps lw 1.5 lc rgb '#d62728' title 'denied'\n";
  }
  s += "unset multiplot\n";
  return {"traffic",
          "Offered, admitted and denied requests per " + r.bins.width + ", limiter by limiter." +
              FaultsCaption(r),
          s, std::move(data).text(), std::max(360, 220 * static_cast<int>(limiters.size()))};
}

// Where each limiter past the claim peaked, and what the run's numbers say made it: " Past it:
// memory-fixed-window up to 10 at 00:00:59.500, across a window edge; kv-fixed-window-lua
// (fail-open) up to 17 at 00:01:29.000, while the store was unreachable ...".
std::string WindowPeaks(const RunReport& r) {
  const double width = BinWidthSeconds(r), window = r.claim.window_ms / 1000.0;
  std::vector<std::string> peaks;
  for (const LimiterReport& l : r.limiters) {
    const std::vector<int64_t>& peak = l.series.peak_in_window;
    if (l.max_in_any_window <= r.claim.limit || peak.empty()) continue;
    const size_t b = static_cast<size_t>(std::max_element(peak.begin(), peak.end()) - peak.begin());
    const double from = r.bins.start_s + width * static_cast<double>(b), to = from + width;
    std::string why;
    for (const FaultReport& f : r.faults) {
      // The peak's window reaches back a window before its bin.
      if (f.from_s < to && f.to_s > from - window) why = "while " + f.what;
    }
    if (why.empty() && l.algorithm == Algorithm::kFixedWindow) why = "across a window edge";
    if (why.empty() && l.algorithm && Describe(*l.algorithm).bucket) {
      why = "a full bucket, then its refill";
    }
    peaks.push_back(l.name + " up to " + std::to_string(peak[b]) + " in the " +
                    (r.start ? view_parts::OnClock(r, from).substr(11) : Num(from) + " s") +
                    " bin" + (why.empty() ? "" : ", " + why));
  }
  if (peaks.empty()) return "";
  std::string s = " Past it: ";
  for (size_t i = 0; i < peaks.size(); ++i) s += (i == 0 ? "" : "; ") + peaks[i];
  return s + ".";
}

Plot WindowPlot(const RunReport& r) {
  const std::vector<LimiterReport>& limiters = r.limiters;
  const std::string limit = std::to_string(r.claim.limit);
  int64_t top = r.claim.limit;
  for (const LimiterReport& l : limiters) top = std::max(top, l.max_in_any_window);
  DataFile data("window");
  std::string s = TimeAxis(r);
  s += "set multiplot layout " + std::to_string(limiters.size()) + ",1\n";
  s += "set ylabel " + Quote("most for one key in " + r.claim.window) +
       "\nset yrange [0:" + std::to_string(top + 1) + "]\n" + CountTics(top + 1) +
       "set key outside right top\n";
  for (size_t i = 0; i < limiters.size(); ++i) {
    const std::string block = Block(data, r, {&limiters[i].series.peak_in_window});
    s += "set title " + Quote(limiters[i].name) + "\n";
    s += i + 1 < limiters.size() ? "unset xlabel\n" : XLabel(r);
    // The limit drawn last, dashed, so it shows where the series runs along it.
    s += "plot " + block + " using 1:2 with steps lw 2 lc rgb '" + Color(i) +
         "' title 'admitted', " + limit + " with lines dt 2 lw 2 lc rgb 'black' title 'limit " +
         limit + "'\n";
  }
  s += "unset multiplot\n";
  std::string caption = "The most one key held admitted in any " + r.claim.window +
                        " window, over time, against the limit of " + limit +
                        " (dashed): above it, the claim is broken." + WindowPeaks(r);
  caption += FaultsCaption(r);
  return {"window", caption, s, std::move(data).text(),
          std::max(360, 200 * static_cast<int>(limiters.size()))};
}

// The busiest users whose share admitted differs by limiter (by a twentieth or more): the others
// got the same from every limiter, and bars of them say nothing.
std::vector<const UserReport*> UsersThatDiffer(const RunReport& r) {
  std::vector<const UserReport*> out;
  for (const UserReport& u : r.users) {
    if (u.offered == 0 || u.admitted.empty()) continue;
    const auto [lo, hi] = std::minmax_element(u.admitted.begin(), u.admitted.end());
    if (static_cast<double>(*hi - *lo) >= 0.05 * static_cast<double>(u.offered)) {
      out.push_back(&u);
    }
  }
  return out;
}

Plot UsersPlot(const RunReport& r, const std::vector<const UserReport*>& users) {
  const std::vector<LimiterReport>& limiters = r.limiters;
  DataFile data("users");
  std::vector<std::string> rows;
  for (const UserReport* u : users) {
    std::string row = DataLabel(u->key);
    const double offered = static_cast<double>(u->offered);
    for (int64_t a : u->admitted) {
      row += " " + Num(offered > 0 ? static_cast<double>(a) / offered : 0);
    }
    rows.push_back(std::move(row));
  }
  const std::string block = data.Add(rows);
  std::string s =
      "set style data histogram\nset style histogram clustered gap 1\n"
      "set style fill solid 0.8 noborder\nset yrange [0:1.05]\n"
      "set ylabel 'admitted / offered'\nset xtics rotate by -35 left\nset key outside right top\n";
  s += "plot";
  for (size_t i = 0; i < limiters.size(); ++i) {
    s += std::string(i == 0 ? " " : ", ") + block + " using " + std::to_string(i + 2) +
         (i == 0 ? ":xtic(1)" : "") + " lc rgb '" + Color(i) + "' title " + Quote(limiters[i].name);
  }
  const size_t same = r.users.size() - users.size();
  return {"users",
          "The share of their requests admitted, limiter by limiter, for the " +
              std::to_string(users.size()) + " of the " + std::to_string(r.users.size()) +
              " busiest users whose share differs by limiter (busiest first)" +
              (same == 0 ? "."
                         : "; the other " + std::to_string(same) +
                               " got the same share from every limiter."),
          s + "\n", std::move(data).text()};
}

Plot LatencyPlot(const RunReport& r) {
  const std::vector<LimiterReport>& limiters = r.limiters;
  DataFile data("latency");
  std::vector<std::string> rows;
  for (size_t p = 0; p <= 100; ++p) {
    std::string row = Num(static_cast<double>(p) / 100.0);
    for (const LimiterReport& l : limiters) {
      const std::vector<double>& cdf = l.metrics.latency_cdf_ms;
      row += " " + (cdf.size() == 101 ? Num(cdf[p]) : std::string("NaN"));
    }
    rows.push_back(std::move(row));
  }
  const std::string block = data.Add(rows);
  std::string s =
      "set xlabel 'decision latency (ms)'\nset ylabel 'fraction of decisions'\n"
      "set yrange [0:1]\nset key outside right top\nplot";
  for (size_t i = 0; i < limiters.size(); ++i) {
    // Dashed differently, so lines that coincide stay visible.
    s += std::string(i == 0 ? " " : ", ") + block + " using " + std::to_string(i + 2) +
         ":1 with lines lw 2 dt " + std::to_string(i % 5 + 1) + " lc rgb '" + Color(i) +
         "' title " + Quote(limiters[i].name);
  }
  return {"latency",
          "Decision latency, send to answer, on the run's clock: the fraction of decisions that "
          "took at most each latency, limiter by limiter.",
          s + "\n", std::move(data).text()};
}

bool AnyLatency(const RunReport& r) {
  for (const LimiterReport& l : r.limiters) {
    const std::vector<double>& cdf = l.metrics.latency_cdf_ms;
    if (!cdf.empty() && cdf.back() > 0) return true;
  }
  return false;
}

// How a run of gnuplot ended.
struct GnuplotRun {
  int spawn_error = 0;     // errno of starting it (ENOENT: not installed)
  bool timed_out = false;  // killed past its limit
  int status = -1;         // its exit status; -1 when it did not exit by itself
};

// Runs `gnuplot script` in `dir` with stderr in `log`, in a process group of its own that dies
// with ratelab (PR_SET_PDEATHSIG) and is killed whole past `limit`.
GnuplotRun RunGnuplot(const std::string& script, const std::string& log, const std::string& dir,
                      Duration limit) {
  GnuplotRun run;
  // What the child needs, made before fork: it may only make async-signal-safe calls.
  std::string program = "gnuplot";
  char* argv[] = {program.data(), const_cast<char*>(script.c_str()), nullptr};
  int ready[2];  // the child writes its exec's errno here; closed on exec
  if (pipe2(ready, O_CLOEXEC) != 0) {
    run.spawn_error = errno;
    return run;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    run.spawn_error = errno;
    close(ready[0]);
    close(ready[1]);
    return run;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // ratelab died before the line above
    int e = 0;
    const int null = open("/dev/null", O_WRONLY);
    const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (null < 0 || err < 0 || dup2(null, 1) < 0 || dup2(err, 2) < 0 || chdir(dir.c_str()) != 0) {
      e = errno;
    } else {
      execvp("gnuplot", argv);
      e = errno;
    }
    [[maybe_unused]] const ssize_t w = write(ready[1], &e, sizeof e);
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists before a kill
  close(ready[1]);
  int e = 0;
  if (read(ready[0], &e, sizeof e) == static_cast<ssize_t>(sizeof e)) run.spawn_error = e;
  close(ready[0]);
  // Waited for in short sleeps until it exits or its time is up.
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return run;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      run.timed_out = true;
      return run;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // gnuplot's own children (none are asked for) go with it.
  kill(-pid, SIGKILL);
  if (run.spawn_error == 0 && WIFEXITED(status)) run.status = WEXITSTATUS(status);
  return run;
}

}  // namespace

std::string GnuplotScriptProblem(std::string_view script) {
  // Every word the plots write outside quotes.
  static constexpr std::string_view kWords[] = {
      "background", "behind",  "dt",        "dynamic", "fc",    "fill",  "fillsteps", "font",
      "format",     "from",    "fs",        "gap",     "graph", "grid",  "histogram", "index",
      "key",        "layout",  "lc",        "left",    "lines", "lw",    "multiplot", "noborder",
      "noenhanced", "object",  "output",    "outside", "plot",  "rect",  "rgb",       "right",
      "rotate",     "set",     "size",      "solid",   "steps", "style", "svg",       "terminal",
      "time",       "timefmt", "title",     "to",      "top",   "unset", "using",     "with",
      "x",          "xdata",   "xlabel",    "xrange",  "xtic",  "xtics", "ylabel",    "yrange",
      "ytics",      "data",    "clustered", "by"};
  size_t line = 1;
  for (size_t i = 0; i < script.size();) {
    const char c = script[i];
    const auto at = [&] { return "line " + std::to_string(line) + ": "; };
    if (c == '\n') {
      ++line, ++i;
    } else if (c == '\'') {
      // To the closing quote (a doubled one is a quote inside), on this line.
      size_t j = i + 1;
      while (true) {
        if (j >= script.size() || script[j] == '\n') return at() + "a string does not end";
        if (static_cast<unsigned char>(script[j]) < 0x20 || script[j] == 0x7f) {
          return at() + "a control character in a string";
        }
        if (script[j] == '\'') {
          if (j + 1 < script.size() && script[j + 1] == '\'') {
            j += 2;
            continue;
          }
          break;
        }
        ++j;
      }
      i = j + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < script.size() && std::isalnum(static_cast<unsigned char>(script[j]))) ++j;
      const std::string_view word = script.substr(i, j - i);
      if (std::find(std::begin(kWords), std::end(kWords), word) == std::end(kWords) &&
          !(i > 0 && std::isdigit(static_cast<unsigned char>(script[i - 1])))) {  // 1e9, 0.5e-3
        return at() + "the word '" + std::string(word) + "' outside a string";
      }
      i = j;
    } else if (std::string_view("`@$!\"\\;{}").find(c) != std::string_view::npos) {
      return at() + "'" + std::string(1, c) + "' outside a string";
    } else if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
      return at() + "a control character outside a string";
    } else {
      ++i;
    }
  }
  return "";
}

std::vector<Plot> PlotScripts(const RunReport& report) {
  std::vector<Plot> plots = {TrafficPlot(report), WindowPlot(report)};
  // Fairness is a comparison: of two users or more, under two limiters or more.
  if (const std::vector<const UserReport*> users = UsersThatDiffer(report);
      users.size() >= 2 && report.limiters.size() >= 2) {
    plots.push_back(UsersPlot(report, users));
  }
  if (AnyLatency(report)) plots.push_back(LatencyPlot(report));
  return plots;
}

Status DrawPlots(const std::vector<Plot>& plots, const std::string& dir, Duration limit) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError("cannot create " + dir + ": " + ec.message());
  // The scripts write plots/NAME.svg, so they run again from the report's directory as they are.
  const std::string report_dir =
      std::filesystem::absolute(std::filesystem::path(dir)).parent_path().string();
  for (const Plot& p : plots) {
    const std::filesystem::path base =
        std::filesystem::absolute(std::filesystem::path(dir)) / p.name;
    const std::string script = base.string() + ".gp", data = base.string() + ".dat",
                      log = base.string() + ".log";
    std::ofstream d(data);
    if (!(d << p.data) || !d.flush()) return absl::InternalError("cannot write " + data);
    d.close();
    std::ofstream f(script);
    f << "set terminal svg size 960," << p.height
      << " dynamic noenhanced font 'sans,11' background rgb 'white'\n"
      << "set output " << Quote("plots/" + p.name + ".svg") << "\nset grid\n"
      << p.script;
    if (!f.flush()) return absl::InternalError("cannot write " + script);
    f.close();
    const GnuplotRun run = RunGnuplot(script, log, report_dir, limit);
    if (run.spawn_error == ENOENT) {
      return absl::FailedPreconditionError(
          "gnuplot is not installed (Debian package gnuplot-nox; scripts/demo installs it)");
    }
    if (run.timed_out) {
      return absl::DeadlineExceededError("gnuplot took longer than " + FormatDuration(limit) +
                                         " on " + script + " and was stopped");
    }
    if (run.status != 0) {
      std::ifstream in(log);
      std::stringstream said;
      said << in.rdbuf();
      const std::string text = said.str().substr(0, 2000);  // what went wrong first
      return absl::InternalError("gnuplot failed on " + script + ": " +
                                 (run.spawn_error != 0 ? std::strerror(run.spawn_error) : text));
    }
    std::filesystem::remove(log, ec);
  }
  return absl::OkStatus();
}

}  // namespace ratelab
