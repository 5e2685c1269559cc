// The report's plots: gnuplot scripts made from the run's report (report_model.h), drawn to SVG by
// Debian's gnuplot. Every time plot spans the run's requests on the scenario's clock and shades
// the fault periods (a clock jump is a dashed line).
//
//   traffic  offered (grey), admitted (green) and denied (red) per time bin, one panel per limiter
//   window   the most one key held admitted in a claim window, over time, against the limit
//   users    each of the busiest users' admitted share, limiter by limiter
//   latency  the decision latency CDF (only when some decision took time: stores, latency)
#ifndef RATELAB_REPORTS_PLOTS_H_
#define RATELAB_REPORTS_PLOTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "reports/report_model.h"

namespace ratelab {

// Data never becomes code: the numbers and labels a plot shows are in a data file of its own,
// which the script reads by name, and every text from the report that the script shows (a
// limiter's name, a width, a time zone) is a single-quoted gnuplot string, in which gnuplot
// substitutes nothing, without a quote or a line break that could end it.
struct Plot {
  std::string name;     // file stem: "traffic"
  std::string caption;  // one sentence saying what to look for
  std::string script;   // gnuplot, without the terminal and output lines; reads plots/NAME.dat
  std::string data;     // plots/NAME.dat: blocks two blank lines apart, read by `index`
  int height = 360;     // pixels (the width is 960)
};

// The plots `report` calls for, in the order the views show them.
std::vector<Plot> PlotScripts(const RunReport& report);

// What in `script` (a whole plot script, as DrawPlots writes it) is not what the plots write
// outside quoted strings: a word that is not of the plots' own gnuplot vocabulary, a character
// that asks gnuplot to substitute or run something (` @ $ ! " \ ; { }), or a single-quoted
// string that does not end on its line. Empty when there is nothing. For the tests and the
// fuzzer: the proof that no data from a report reaches gnuplot as code.
std::string GnuplotScriptProblem(std::string_view script);

// Writes DIR/NAME.gp and DIR/NAME.dat and draws DIR/NAME.svg for each plot, where DIR is a
// report's plots/: the scripts read plots/NAME.dat and write plots/NAME.svg, so `cd REPORT &&
// gnuplot plots/NAME.gp` draws them again. gnuplot runs in a process group of its own, for at
// most `limit` a plot, and is killed (its whole group) past it, or when ratelab dies. Fails with
// what gnuplot said, with the limit it ran past, or with how to install it when it is missing.
Status DrawPlots(const std::vector<Plot>& plots, const std::string& dir,
                 Duration limit = std::chrono::seconds(60));

}  // namespace ratelab

#endif  // RATELAB_REPORTS_PLOTS_H_
