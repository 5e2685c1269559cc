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
#include <vector>

#include "impl/core/status.h"
#include "reports/report_model.h"

namespace ratelab {

struct Plot {
  std::string name;     // file stem: "traffic"
  std::string caption;  // one sentence saying what to look for
  std::string script;   // gnuplot, without the terminal and output lines
  int height = 360;     // pixels (the width is 960)
};

// The plots `report` calls for, in the order the views show them.
std::vector<Plot> PlotScripts(const RunReport& report);

// Writes DIR/NAME.gp and draws DIR/NAME.svg for each plot, where DIR is a report's plots/: the
// scripts write plots/NAME.svg, so `cd REPORT && gnuplot plots/NAME.gp` draws them again. Fails
// with what gnuplot said, or with how to install it when it is missing.
Status DrawPlots(const std::vector<Plot>& plots, const std::string& dir);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_PLOTS_H_
