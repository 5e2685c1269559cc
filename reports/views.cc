#include "reports/views.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/plots.h"

namespace ratelab {

Result<ReportFiles> WriteReport(const RunReport& report, const OutputDir& out) {
  namespace fs = std::filesystem;
  const std::string& dir = out.path();
  if (Status s = out.Clear(); !s.ok()) return s;
  ReportFiles files;
  const auto write = [&](const std::string& name, const std::string& text,
                         std::string* path) -> Status {
    Result<std::string> written = out.Write(name, text);
    if (!written.ok()) return written.status();
    *path = *std::move(written);
    return absl::OkStatus();
  };
  if (Status s = write("report.json", JsonText(ToJson(report)), &files.json); !s.ok()) {
    return s;
  }
  const std::vector<Plot> plots = PlotScripts(report);
  const fs::path plot_dir = fs::path(dir) / "plots";
  if (Status s = DrawPlots(plots, plot_dir.string()); !s.ok()) {
    files.plot_error = std::string(s.message());
  }
  std::map<std::string, std::string> svgs;
  if (files.plot_error.empty()) {
    for (const Plot& p : plots) {
      const fs::path svg = plot_dir / (p.name + ".svg");
      std::ifstream in(svg);
      std::stringstream text;
      text << in.rdbuf();
      svgs[p.name] = text.str();
      files.plots.push_back(svg.string());
    }
  }
  if (Status s = write("report.html", RenderHtml(report, svgs, files.plot_error), &files.html);
      !s.ok()) {
    return s;
  }
  if (Status s = write("report.md", RenderMarkdown(report), &files.markdown); !s.ok()) {
    return s;
  }
  if (Status s = write("junit.xml", RenderJunit(report), &files.junit); !s.ok()) return s;
  if (Status s = out.Record(); !s.ok()) return s;
  return files;
}

}  // namespace ratelab
