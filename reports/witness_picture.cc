#include "reports/witness_picture.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "model/time.h"
#include "reports/view_parts.h"

namespace ratelab {

namespace {

using view_parts::Escape;
using view_parts::Offset;

constexpr double kWidth = 960;
constexpr double kLeft = 104;  // lane names
constexpr double kRight = 60;  // room for the last bar's label
constexpr double kPlot = kWidth - kLeft - kRight;
constexpr double kLegend = 40;  // two rows of legend above the plot
constexpr double kRow = 14;     // a row of bars
constexpr double kBar = 8;
constexpr double kLaneGap = 6;
constexpr double kAxis = 30;
constexpr double kMinBar = 3;
constexpr double kCharWidth = 6.2;    // at font-size 11, about
constexpr size_t kMostLabelled = 60;  // past this, bars carry no label (their tooltip says it)
constexpr size_t kLaneChars = 15;     // the most of a lane's name that fits beside the plot

// A number for an SVG attribute, to a tenth of a pixel.
std::string Px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// "+250ms", "-1s", "0": an offset on the axis or in a tooltip.
std::string Signed(double seconds) {
  if (std::round(seconds * 1e6) == 0) return "0";
  return (seconds < 0 ? "-" : "+") + Offset(std::abs(seconds));
}

// The step between the axis's ticks: 1, 2 or 5 times a power of ten seconds, at most about
// seven ticks across `span`.
double TickStep(double span) {
  const double raw = std::max(span / 7, 1e-9);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

const char* FillOf(PictureRequest::Outcome o) {
  switch (o) {
    case PictureRequest::Outcome::kAdmitted:
      return "#2e7d32";
    case PictureRequest::Outcome::kDenied:
      return "#c62828";
    case PictureRequest::Outcome::kOther:
      break;
  }
  return "#9e9e9e";
}

std::string Text(double x, double y, const std::string& text, const std::string& attrs = "") {
  return "<text x=\"" + Px(x) + "\" y=\"" + Px(y) + "\"" + attrs + ">" + Escape(text) + "</text>\n";
}

std::string Rect(double x, double y, double w, double h, const std::string& attrs) {
  return "<rect x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" width=\"" + Px(std::max(w, 0.0)) +
         "\" height=\"" + Px(h) + "\"" + attrs + "/>";
}

std::string Line(double x1, double y1, double x2, double y2, const std::string& attrs) {
  return "<line x1=\"" + Px(x1) + "\" y1=\"" + Px(y1) + "\" x2=\"" + Px(x2) + "\" y2=\"" + Px(y2) +
         "\"" + attrs + "/>\n";
}

constexpr char kGridStroke[] = " stroke=\"#6b7280\" stroke-dasharray=\"2 3\"";

// The edges of `grid` in [lo, hi]: none where there are more than kMostGridEdges.
std::vector<double> GridEdges(const std::optional<GridReport>& grid, double lo, double hi) {
  if (!grid || grid->period_ms <= 0) return {};
  const double period = grid->period_ms / 1000.0;
  const double first = std::ceil((lo - grid->first_s) / period);
  const double last = std::floor((hi - grid->first_s) / period);
  if (!(last >= first) || last - first + 1 > static_cast<double>(kMostGridEdges)) return {};
  std::vector<double> out;
  for (double k = first; k <= last; ++k) out.push_back(grid->first_s + k * period);
  return out;
}

// The bucket's level over `p`'s admissions, where each took effect at a known instant: (time,
// tokens) from full at the first, rising at one token an interval up to the burst, each
// admission taking its cost; none without a bucket, or where an admission's instant is unknown.
std::vector<std::pair<double, double>> BucketLevel(const WitnessPicture& p) {
  if (!p.bucket || p.bucket->burst <= 0 || p.bucket->interval_ms <= 0) return {};
  std::vector<const PictureRequest*> admitted;
  for (const PictureRequest& r : p.requests) {
    if (r.outcome != PictureRequest::Outcome::kAdmitted) continue;
    if (!r.effect_s) return {};
    admitted.push_back(&r);
  }
  if (admitted.empty()) return {};
  // In the order they took effect, those at one instant in the order they were sent.
  std::stable_sort(admitted.begin(), admitted.end(),
                   [](const PictureRequest* a, const PictureRequest* b) {
                     return std::pair(*a->effect_s, a->sent_s) < std::pair(*b->effect_s, b->sent_s);
                   });
  const double full = static_cast<double>(p.bucket->burst);
  const double interval_s = p.bucket->interval_ms / 1e3;
  std::vector<std::pair<double, double>> level;
  double t = *admitted.front()->effect_s, tokens = full;
  level.emplace_back(t, tokens);
  for (const PictureRequest* r : admitted) {
    const double at = *r->effect_s;
    if (tokens + (at - t) / interval_s >= full) {
      if (tokens < full) level.emplace_back(t + (full - tokens) * interval_s, full);
      tokens = full;
    } else {
      tokens += (at - t) / interval_s;
    }
    level.emplace_back(at, tokens);
    tokens -= static_cast<double>(r->cost);
    level.emplace_back(at, tokens);
    t = at;
  }
  return level;
}

// The legend: a swatch and its words per item, wrapping onto a second row.
std::string Legend(const WitnessPicture& p, bool effects, bool level, bool grid) {
  struct Item {
    std::string swatch, words;
  };
  std::vector<Item> items;
  const auto bar = [](const char* fill, const std::string& extra = "") {
    return Rect(0, -8, 14, kBar, " fill=\"" + std::string(fill) + "\"" + extra);
  };
  items.push_back({bar(FillOf(PictureRequest::Outcome::kAdmitted)), "admitted"});
  items.push_back({bar(FillOf(PictureRequest::Outcome::kDenied)), "denied"});
  items.push_back({bar(FillOf(PictureRequest::Outcome::kOther)), "no answer, or failed"});
  if (!p.marked.empty()) {
    items.push_back({bar("#555", " stroke=\"#111\" stroke-width=\"1\""), p.marked + " (outlined)"});
  }
  items.push_back({"", effects ? "bar: sent to answered; tick: when it took effect"
                               : "bar: sent to answered, when it may have taken effect"});
  if (p.window) {
    items.push_back(
        {Rect(0, -10, 14, 12, " fill=\"#3b82f6\" fill-opacity=\"0.18\""), p.window_words});
  }
  if (!p.faults.empty()) {
    items.push_back({Rect(0, -10, 14, 12, " fill=\"#f59e0b\" fill-opacity=\"0.25\""), "a fault"});
  }
  if (grid) {
    items.push_back({Line(7, -12, 7, 2, kGridStroke), "where the limiter's own windows begin"});
  }
  if (level) {
    items.push_back({Line(0, -4, 14, -4, " stroke=\"#7e22ce\" stroke-width=\"1.5\""),
                     "the bucket's level, " + std::to_string(p.bucket->burst) +
                         " tokens at most (dashed: empty), as these admissions leave it"});
  }
  std::string s = "<g class=\"legend\" font-size=\"11\">\n";
  double x = 4, y = 14;
  for (const Item& item : items) {
    const double width = (item.swatch.empty() ? 0 : 20) + item.words.size() * kCharWidth + 18;
    if (x + width > kWidth && x > 4) {
      x = 4;
      y += 18;
    }
    if (!item.swatch.empty()) {
      s += "<g transform=\"translate(" + Px(x) + "," + Px(y) + ")\">" + item.swatch + "</g>";
      x += 20;
    }
    s += Text(x, y, item.words);
    x += item.words.size() * kCharWidth + 18;
  }
  return s + "</g>\n";
}

}  // namespace

std::string WitnessSvg(const WitnessPicture& p) {
  if (p.requests.empty()) return "";
  // The span shown: every request, and the window; the first request's send is the zero.
  std::vector<const PictureRequest*> requests;
  for (const PictureRequest& r : p.requests) requests.push_back(&r);
  std::stable_sort(
      requests.begin(), requests.end(),
      [](const PictureRequest* a, const PictureRequest* b) { return a->sent_s < b->sent_s; });
  const double zero = requests.front()->sent_s;
  double lo = zero, hi = zero;
  bool effects = false;
  for (const PictureRequest* r : requests) {
    hi = std::max({hi, r->sent_s, r->answered_s.value_or(r->sent_s)});
    effects = effects || r->effect_s.has_value();
  }
  if (p.window) {
    lo = std::min(lo, p.window->from_s);
    hi = std::max(hi, p.window->to_s);
  }
  if (hi - lo < 1e-9) hi = lo + 1e-3;
  const double pad = (hi - lo) * 0.03;
  lo -= pad;
  hi += pad;
  const auto x_of = [&](double s) {
    return kLeft + (std::clamp(s, lo, hi) - lo) / (hi - lo) * kPlot;
  };
  // A bar's left and right: sent to answered (to the plot's end when never answered), at least
  // kMinBar wide.
  const auto extent_of = [&](const PictureRequest& r) {
    const double x0 = x_of(r.sent_s);
    return std::pair{x0,
                     std::max(r.answered_s ? x_of(*r.answered_s) : kLeft + kPlot, x0 + kMinBar)};
  };

  // Lanes in the order they first send; in each, a bar goes in the first row it fits.
  const bool labelled = requests.size() <= kMostLabelled;
  std::vector<std::string> lanes;
  std::map<std::string, std::vector<double>> rows_of;  // each row's rightmost pixel used
  std::vector<std::pair<size_t, size_t>> place;        // (lane, row) of each of `requests`
  for (const PictureRequest* r : requests) {
    if (std::find(lanes.begin(), lanes.end(), r->lane) == lanes.end()) lanes.push_back(r->lane);
    const size_t lane = std::find(lanes.begin(), lanes.end(), r->lane) - lanes.begin();
    std::vector<double>& rows = rows_of[r->lane];
    const auto [x0, x1] = extent_of(*r);
    const double used = x1 + (labelled ? 4 + r->label.size() * kCharWidth : 0) + 2;
    size_t row = 0;
    while (row < rows.size() && rows[row] > x0) ++row;
    if (row == rows.size()) rows.push_back(0);
    rows[row] = used;
    place.emplace_back(lane, row);
  }
  std::vector<double> lane_top;
  double y = kLegend + 4;
  for (const std::string& lane : lanes) {
    lane_top.push_back(y);
    y += rows_of[lane].size() * kRow + kLaneGap;
  }
  const double plot_bottom = y;
  const double height = plot_bottom + kAxis;

  std::string s =
      "<svg class=\"witness\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
      "viewBox=\"0 0 " +
      Px(kWidth) + " " + Px(height) + "\" width=\"" + Px(kWidth) + "\" height=\"" + Px(height) +
      "\" font-family=\"sans-serif\">\n<title>" + Escape(p.caption) + "</title>\n";
  const std::vector<std::pair<double, double>> level = BucketLevel(p);
  const std::vector<double> edges = GridEdges(p.grid, lo, hi);
  s += Legend(p, effects, !level.empty(), !edges.empty());
  // Behind the bars: the faults, the window, then the limiter's own window edges.
  for (const FaultReport& f : p.faults) {
    if (f.to_s < lo || f.from_s > hi) continue;
    const double x0 = x_of(f.from_s), x1 = std::max(x_of(f.to_s), x0 + 2);
    s += Rect(x0, kLegend, x1 - x0, plot_bottom - kLegend,
              " class=\"fault\" fill=\"#f59e0b\" fill-opacity=\"0.25\"") +
         "<title>" + Escape(f.what) + ": " + Signed(f.from_s - zero) + " to " +
         Signed(f.to_s - zero) + "</title>\n";
  }
  if (p.window) {
    const double x0 = x_of(p.window->from_s), x1 = std::max(x_of(p.window->to_s), x0 + 1);
    s += Rect(x0, kLegend, x1 - x0, plot_bottom - kLegend,
              " class=\"window\" fill=\"#3b82f6\" fill-opacity=\"0.18\"") +
         "<title>" +
         Escape("[" + Signed(p.window->from_s - zero) + ", " + Signed(p.window->to_s - zero) +
                (p.window->closed ? "]" : ")")) +
         "</title>\n";
    s += Line(x0, kLegend, x0, plot_bottom, " stroke=\"#1d4ed8\"");
    s += Line(
        x1, kLegend, x1, plot_bottom,
        std::string(" stroke=\"#1d4ed8\"") + (p.window->closed ? "" : " stroke-dasharray=\"4 3\""));
  }
  // Over the window's edges, where one of the limiter's falls on them.
  for (double edge : edges) {
    s += Line(x_of(edge), kLegend, x_of(edge), plot_bottom,
              std::string(" class=\"grid\"") + kGridStroke) +
         "<title>" + Escape("a window of the limiter's begins at " + Signed(edge - zero)) +
         "</title>\n";
  }
  if (!level.empty()) {
    double lowest = 0;
    for (const auto& [at, tokens] : level) lowest = std::min(lowest, tokens);
    const double full = static_cast<double>(p.bucket->burst);
    const auto y_of = [&](double tokens) {
      return plot_bottom - 2 - (tokens - lowest) / (full - lowest) * (plot_bottom - kLegend - 4);
    };
    std::string points;
    for (const auto& [at, tokens] : level) {
      points += (points.empty() ? "" : " ") + Px(x_of(at)) + "," + Px(y_of(tokens));
    }
    s += "<polyline class=\"level\" points=\"" + points +
         "\" fill=\"none\" stroke=\"#7e22ce\" stroke-width=\"1.5\" stroke-opacity=\"0.8\"/>\n";
    s += Line(kLeft, y_of(0), kLeft + kPlot, y_of(0),
              " stroke=\"#7e22ce\" stroke-dasharray=\"2 3\" stroke-opacity=\"0.6\"");
  }
  // The lanes, their names, and the axis with its ticks.
  for (size_t i = 0; i < lanes.size(); ++i) {
    if (i > 0) {
      s += Line(4, lane_top[i] - kLaneGap / 2, kWidth - 4, lane_top[i] - kLaneGap / 2,
                " stroke=\"#ddd\"");
    }
    // A long name keeps its end, which tells lanes apart; its tooltip has it whole.
    const std::string name = lanes[i].size() <= kLaneChars
                                 ? lanes[i]
                                 : "..." + lanes[i].substr(lanes[i].size() - kLaneChars + 3);
    s += "<g>" + Text(4, lane_top[i] + kRow - 3, name, " font-size=\"11\"") + "<title>" +
         Escape(lanes[i]) + "</title></g>\n";
  }
  s += Line(kLeft, plot_bottom, kLeft + kPlot, plot_bottom, " stroke=\"#333\"");
  const double step = TickStep(hi - lo);
  for (double k = std::ceil((lo - zero) / step); zero + k * step <= hi; k += 1) {
    const double x = x_of(zero + k * step);
    s += Line(x, plot_bottom, x, plot_bottom + 4, " stroke=\"#333\"");
    s += Text(x, plot_bottom + 16, Signed(k * step), " font-size=\"10\" text-anchor=\"middle\"");
  }
  s += Text(kLeft + kPlot, height - 2, "since the first request was sent",
            " font-size=\"10\" text-anchor=\"end\" fill=\"#555\"");
  // The bars.
  for (size_t i = 0; i < requests.size(); ++i) {
    const PictureRequest& r = *requests[i];
    const double top = lane_top[place[i].first] + place[i].second * kRow + (kRow - kBar) / 2;
    const auto [x0, x1] = extent_of(r);
    // One stroke: the mark's where marked, else grey and dashed where never answered (an
    // element may name an attribute once).
    std::string attrs = std::string(" class=\"bar\" fill=\"") + FillOf(r.outcome) + "\"";
    if (r.marked) {
      attrs += " stroke=\"#111\" stroke-width=\"1\"";
    } else {
      attrs += " fill-opacity=\"0.55\"";
      if (!r.answered_s) attrs += " stroke=\"#555\"";
    }
    if (!r.answered_s) attrs += " stroke-dasharray=\"3 2\"";
    s += "<g>" + Rect(x0, top, x1 - x0, kBar, attrs) + "<title>" + Escape(r.words) + "</title>";
    if (r.effect_s) {
      const double x = x_of(*r.effect_s);
      s += Line(x, top - 3, x, top + kBar + 3, " stroke=\"#000\" stroke-width=\"1.5\"");
    }
    if (labelled) {
      s += Text(x1 + 4, top + kBar, r.label,
                std::string(" font-size=\"10\"") + (r.marked ? " font-weight=\"bold\"" : ""));
    }
    s += "</g>\n";
  }
  return s + "</svg>\n";
}

void MarkFor(CheckId invariant, WitnessPicture& p) {
  const bool linear = invariant == CheckId::kLinearizable;
  const bool denials = invariant == CheckId::kFalseDenials;
  p.marked = linear    ? "the call no order places (the others numbered in the order that came "
                         "closest)"
             : denials ? "the denials no order explains"
                       : "the admissions that break it";
  p.window_words = p.window && p.window->span ? "the span they fell in" : "the window they fell in";
  for (size_t i = 0; i < p.requests.size(); ++i) {
    PictureRequest& r = p.requests[i];
    const bool last = i + 1 == p.requests.size();
    if (linear && !last) r.label = std::to_string(i + 1) + ": " + r.label;
    r.marked = linear    ? last
               : denials ? r.outcome == PictureRequest::Outcome::kDenied
                         : r.outcome == PictureRequest::Outcome::kAdmitted;
  }
}

WitnessPicture PictureOf(const ViolationReport& v, const std::vector<FaultReport>& faults,
                         const std::string& lane_word, std::optional<Instant> start) {
  WitnessPicture p;
  p.window = v.window;
  p.bucket = v.bucket;
  p.grid = v.grid;
  p.caption = "The witness of " + std::string(CheckName(v.invariant)) + " on key " + v.key + ": " +
              std::to_string(v.witness.size()) + " request(s).";
  double from = 0, to = 0;
  for (const WitnessEvent& e : v.witness) {
    PictureRequest r;
    r.lane = lane_word + " " + std::to_string(e.node);
    r.label = "#" + std::to_string(e.id);
    r.sent_s = e.invoke_s;
    r.answered_s = e.complete_s;
    r.cost = e.cost;
    if (start && e.complete_s) {
      if (const std::optional<Instant> at = ParseInstant(e.at)) {
        r.effect_s = static_cast<double>((*at - *start).count()) / 1e9;
      } else if (!e.steps.empty()) {
        r.effect_s = e.steps.back().at_s;
      }
    }
    r.outcome = e.outcome.starts_with("admitted") ? PictureRequest::Outcome::kAdmitted
                : e.outcome.starts_with("denied") ? PictureRequest::Outcome::kDenied
                                                  : PictureRequest::Outcome::kOther;
    const double zero = v.witness.front().invoke_s;
    r.words = "#" + std::to_string(e.id) + " (" + e.key + ", " + r.lane + ", cost " +
              std::to_string(e.cost) + "): sent " + Signed(e.invoke_s - zero) +
              (e.complete_s ? ", answered " + Signed(*e.complete_s - zero) : "") + ": " + e.outcome;
    if (p.requests.empty()) from = to = e.invoke_s;
    from = std::min(from, e.invoke_s);
    to = std::max(to, e.complete_s.value_or(e.invoke_s));
    p.requests.push_back(std::move(r));
  }
  MarkFor(v.invariant, p);
  for (const FaultReport& f : faults) {
    if (f.to_s >= from && f.from_s <= to) p.faults.push_back(f);
  }
  return p;
}

std::string SignedOffset(double seconds) { return Signed(seconds); }

}  // namespace ratelab
