#include "reports/plots.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/view_parts.h"

extern char** environ;

namespace ratelab {

namespace {

// A gnuplot single-quoted string: no escapes inside, a quote is doubled.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("''") : std::string(1, ch);
  return out + "'";
}

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
  return "set xlabel '" + view_parts::Zone(r) + ", from " + FormatUtc(from).substr(0, 10) + "'\n";
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

// A data block named `name`: one row per bin, x the bin's start, then one column per series.
// Every column has a value per bin (the report reader checks it).
std::string Block(const std::string& name, const RunReport& r,
                  const std::vector<const std::vector<int64_t>*>& series) {
  const double width = BinWidthSeconds(r);
  const size_t count = r.bins.count;
  const auto value = [](int64_t v) { return Num(static_cast<double>(v)); };
  std::string s = "$" + name + " << EOD\n";
  for (size_t i = 0; i < count; ++i) {
    s += X(r, r.bins.start_s + width * static_cast<double>(i));
    for (const std::vector<int64_t>* column : series) s += " " + value((*column)[i]);
    s += "\n";
  }
  // One more row so the last bin's step is drawn to its end.
  if (count > 0) {
    s += X(r, r.bins.start_s + width * static_cast<double>(count));
    for (const std::vector<int64_t>* column : series) s += " " + value((*column)[count - 1]);
  }
  return s + "\nEOD\n";
}

Plot TrafficPlot(const RunReport& r) {
  const std::vector<LimiterReport>& limiters = r.limiters;
  int64_t top = 0;
  for (const LimiterReport& l : limiters) {
    for (int64_t v : l.series.offered) top = std::max(top, v);
  }
  std::string s = TimeAxis(r);
  s += "set multiplot layout " + std::to_string(limiters.size()) + ",1\n";
  s += "set ylabel 'requests per " + r.bins.width + "'\nset yrange [0:*]\n" + CountTics(top);
  s += "set key outside right top\nset style fill solid 0.35 noborder\n";
  for (size_t i = 0; i < limiters.size(); ++i) {
    const SeriesReport& series = limiters[i].series;
    const std::string block = "traffic" + std::to_string(i);
    s += Block(block, r, {&series.offered, &series.admitted, &series.denied});
    s += "set title " + Quote(limiters[i].name) + "\n";
    s += i + 1 < limiters.size() ? "unset xlabel\n" : XLabel(r);
    s += "plot $" + block + " using 1:2 with fillsteps lc rgb '#bbbbbb' title 'offered', $" +
         block + " using 1:3 with steps lw 2 lc rgb '#2ca02c' title 'admitted', $" + block +
         " using 1:4 with steps lw 1.5 lc rgb '#d62728' title 'denied'\n";
  }
  s += "unset multiplot\n";
  return {"traffic",
          "Offered, admitted and denied requests per " + r.bins.width + ", limiter by limiter." +
              FaultsCaption(r),
          s, std::max(360, 220 * static_cast<int>(limiters.size()))};
}

Plot WindowPlot(const RunReport& r) {
  const std::vector<LimiterReport>& limiters = r.limiters;
  const std::string limit = std::to_string(r.claim.limit);
  int64_t top = r.claim.limit;
  for (const LimiterReport& l : limiters) top = std::max(top, l.max_in_any_window);
  std::string s = TimeAxis(r);
  s += "set multiplot layout " + std::to_string(limiters.size()) + ",1\n";
  s += "set ylabel 'most for one key in " + r.claim.window +
       "'\nset yrange [0:" + std::to_string(top + 1) + "]\n" + CountTics(top + 1) +
       "set key outside right top\n";
  for (size_t i = 0; i < limiters.size(); ++i) {
    const std::string block = "window" + std::to_string(i);
    s += Block(block, r, {&limiters[i].series.peak_in_window});
    s += "set title " + Quote(limiters[i].name) + "\n";
    s += i + 1 < limiters.size() ? "unset xlabel\n" : XLabel(r);
    // The limit drawn last, dashed, so it shows where the series runs along it.
    s += "plot $" + block + " using 1:2 with steps lw 2 lc rgb '" + Color(i) +
         "' title 'admitted', " + limit + " with lines dt 2 lw 2 lc rgb 'black' title 'limit " +
         limit + "'\n";
  }
  s += "unset multiplot\n";
  std::string caption = "The most one key held admitted in any " + r.claim.window +
                        " window, over time, against the limit of " + limit +
                        " (dashed): above it, the claim is broken.";
  std::vector<std::string> spiked;
  int64_t spike = 0;
  for (const LimiterReport& l : limiters) {
    if (l.algorithm == Algorithm::kFixedWindow && l.max_in_any_window > r.claim.limit) {
      spiked.push_back(l.name);
      spike = std::max(spike, l.max_in_any_window);
    }
  }
  if (!spiked.empty()) {
    std::string names;
    for (size_t i = 0; i < spiked.size(); ++i) names += (i == 0 ? "" : ", ") + spiked[i];
    caption += " The fixed window's burst across a window edge shows as a spike (" + names +
               ": up to " + std::to_string(spike) + ").";
  }
  caption += FaultsCaption(r);
  return {"window", caption, s, std::max(360, 200 * static_cast<int>(limiters.size()))};
}

Plot UsersPlot(const RunReport& r) {
  const std::vector<LimiterReport>& limiters = r.limiters;
  std::string s = "$users << EOD\n";
  for (const UserReport& u : r.users) {
    // A data label: in double quotes, where a double quote cannot be escaped.
    std::string label = u.key;
    std::replace(label.begin(), label.end(), '"', '\'');
    s += "\"" + label + "\"";
    const double offered = static_cast<double>(u.offered);
    for (int64_t a : u.admitted) {
      s += " " + Num(offered > 0 ? static_cast<double>(a) / offered : 0);
    }
    s += "\n";
  }
  s += "EOD\n";
  s += "set style data histogram\nset style histogram clustered gap 1\n"
       "set style fill solid 0.8 noborder\nset yrange [0:1.05]\n"
       "set ylabel 'admitted / offered'\nset xtics rotate by -35 left\nset key outside right top\n";
  s += "plot";
  for (size_t i = 0; i < limiters.size(); ++i) {
    s += std::string(i == 0 ? " " : ", ") + "$users using " + std::to_string(i + 2) +
         (i == 0 ? ":xtic(1)" : "") + " lc rgb '" + Color(i) + "' title " + Quote(limiters[i].name);
  }
  return {"users",
          "The share of their requests admitted, for each of the " +
              std::to_string(r.users.size()) +
              " busiest users (busiest first), limiter by limiter.",
          s + "\n"};
}

Plot LatencyPlot(const RunReport& r) {
  const std::vector<LimiterReport>& limiters = r.limiters;
  std::string s = "$latency << EOD\n";
  for (size_t p = 0; p <= 100; ++p) {
    s += Num(static_cast<double>(p) / 100.0);
    for (const LimiterReport& l : limiters) {
      const std::vector<double>& cdf = l.metrics.latency_cdf_ms;
      s += " " + (cdf.size() == 101 ? Num(cdf[p]) : std::string("NaN"));
    }
    s += "\n";
  }
  s += "EOD\nset xlabel 'decision latency (ms)'\nset ylabel 'fraction of decisions'\n"
       "set yrange [0:1]\nset key outside right top\nplot";
  for (size_t i = 0; i < limiters.size(); ++i) {
    // Dashed differently, so lines that coincide stay visible.
    s += std::string(i == 0 ? " " : ", ") + "$latency using " + std::to_string(i + 2) +
         ":1 with lines lw 2 dt " + std::to_string(i % 5 + 1) + " lc rgb '" + Color(i) +
         "' title " + Quote(limiters[i].name);
  }
  return {"latency",
          "Decision latency, send to answer, on the run's clock: the fraction of decisions that "
          "took at most each latency, limiter by limiter.",
          s + "\n"};
}

bool AnyLatency(const RunReport& r) {
  for (const LimiterReport& l : r.limiters) {
    const std::vector<double>& cdf = l.metrics.latency_cdf_ms;
    if (!cdf.empty() && cdf.back() > 0) return true;
  }
  return false;
}

// Runs `gnuplot script` in `dir` with stderr in `log`; the exit status, or -1 when it cannot start.
int RunGnuplot(const std::string& script, const std::string& log, const std::string& dir,
               int* spawn_error) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string program = "gnuplot";
  char* argv[] = {program.data(), const_cast<char*>(script.c_str()), nullptr};
  pid_t pid = 0;
  *spawn_error = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (*spawn_error != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::vector<Plot> PlotScripts(const RunReport& report) {
  std::vector<Plot> plots = {TrafficPlot(report), WindowPlot(report)};
  if (!report.users.empty()) plots.push_back(UsersPlot(report));
  if (AnyLatency(report)) plots.push_back(LatencyPlot(report));
  return plots;
}

Status DrawPlots(const std::vector<Plot>& plots, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError("cannot create " + dir + ": " + ec.message());
  // The scripts write plots/NAME.svg, so they run again from the report's directory as they are.
  const std::string report_dir =
      std::filesystem::absolute(std::filesystem::path(dir)).parent_path().string();
  for (const Plot& p : plots) {
    const std::filesystem::path base =
        std::filesystem::absolute(std::filesystem::path(dir)) / p.name;
    const std::string script = base.string() + ".gp", log = base.string() + ".log";
    std::ofstream f(script);
    f << "set terminal svg size 960," << p.height
      << " dynamic noenhanced font 'sans,11' background rgb 'white'\n"
      << "set output " << Quote("plots/" + p.name + ".svg") << "\nset grid\n"
      << p.script;
    if (!f.flush()) return absl::InternalError("cannot write " + script);
    f.close();
    int spawn_error = 0;
    const int status = RunGnuplot(script, log, report_dir, &spawn_error);
    if (spawn_error == ENOENT) {
      return absl::FailedPreconditionError(
          "gnuplot is not installed (Debian package gnuplot-nox; scripts/demo installs it)");
    }
    if (status != 0) {
      std::ifstream in(log);
      std::stringstream said;
      said << in.rdbuf();
      return absl::InternalError("gnuplot failed on " + script + ": " +
                                 (spawn_error != 0 ? std::strerror(spawn_error) : said.str()));
    }
    std::filesystem::remove(log, ec);
  }
  return absl::OkStatus();
}

}  // namespace ratelab
