#include "reports/witness_picture.h"

#include <gtest/gtest.h>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <sstream>

#include "judge/oracles.h"
#include "reports/probe_report.h"
#include "reports/run_report.h"
#include "reports/view_parts.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;

const Instant kStart = *ParseInstant("2026-01-01T12:00:00Z");

HistoryEvent Answered(int64_t id, int node, Duration sent, bool admitted) {
  HistoryEvent e;
  e.id = id;
  e.key = "user:<u1>&/api";
  e.node = node;
  e.invoke = e.apply = kStart + sent;
  e.complete = e.invoke + milliseconds(2);
  e.decision = Decision{admitted, 1, 0, {}, {}};
  return e;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The SVG parses as XML (as a browser reads an inline <svg> it is fed as a file), and its root
// is an <svg>.
void ExpectWellFormed(const std::string& svg) {
  std::istringstream in(svg);
  boost::property_tree::ptree tree;
  ASSERT_NO_THROW(boost::property_tree::read_xml(in, tree)) << svg;
  EXPECT_EQ(tree.count("svg"), 1u);
}

TEST(WitnessPicture, DrawsEachRequestInItsNodesLaneWithTheWindowItBrokeMarked) {
  // Three admitted in one aligned window of 1s with a limit of 2, from two nodes, and a denial.
  const History h = {
      Answered(0, 1, milliseconds(100), true), Answered(1, 2, milliseconds(300), true),
      Answered(2, 1, milliseconds(500), false), Answered(3, 2, milliseconds(700), true)};
  const std::vector<Violation> found = CheckAlignedWindowCap(h, 2, std::chrono::seconds(1), {});
  ASSERT_EQ(found.size(), 1u);
  ViolationReport v = MakeViolationReport(CheckId::kPromise, found.front(), kStart);
  ASSERT_TRUE(v.window.has_value());
  EXPECT_DOUBLE_EQ(v.window->from_s, 0);
  EXPECT_DOUBLE_EQ(v.window->to_s, 1);
  v.witness.insert(v.witness.begin() + 2, WitnessEvents({h[2]}, kStart).front());

  const std::string svg = WitnessSvg(PictureOf(v, {}, "node", kStart));
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "class=\"bar\""), 4u);
  EXPECT_EQ(Count(svg, "class=\"bar\" fill=\"#2e7d32\" stroke=\"#111\""), 3u)
      << "the admissions marked";
  EXPECT_EQ(Count(svg, "class=\"window\""), 1u);
  EXPECT_NE(svg.find(">node 1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">node 2</text>"), std::string::npos);
  EXPECT_NE(svg.find(">#3</text>"), std::string::npos);
  // A tooltip in words, the key escaped; the window's edges as offsets from the first request.
  EXPECT_NE(svg.find("#2 (user:&lt;u1&gt;&amp;/api, node 1, cost 1): sent +400ms, answered "
                     "+402ms: denied"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<title>[-100ms, +900ms)</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("the window they fell in"), std::string::npos);
  // A tick where each decision took effect.
  EXPECT_EQ(Count(svg, "stroke=\"#000\""), 4u);
}

// A fixed window's boundary burst: the limiter's own window edges are drawn behind the span that
// broke N in any W, so the picture shows the edge the 2N straddle; too many edges draw none.
TEST(WitnessPicture, DrawsTheLimitersOwnWindowEdgesWhereItHasThem) {
  const History h = {
      Answered(0, 1, milliseconds(800), true), Answered(1, 1, milliseconds(900), true),
      Answered(2, 1, milliseconds(1100), true), Answered(3, 1, milliseconds(1200), true)};
  std::vector<Violation> found = CheckAnyWindowCap(h, 2, std::chrono::seconds(1)).violations;
  ASSERT_FALSE(found.empty());
  SetGrid(found.front(), Policy::Window(Algorithm::kFixedWindow, 2, std::chrono::seconds(1)));
  ASSERT_TRUE(found.front().grid.has_value());
  const ViolationReport v = MakeViolationReport(CheckId::kAnyWindowCap, found.front(), kStart);
  ASSERT_TRUE(v.grid.has_value());
  EXPECT_DOUBLE_EQ(v.grid->first_s, 0) << "the start is on an edge of the epoch's 1s grid";
  EXPECT_DOUBLE_EQ(v.grid->period_ms, 1000);
  const std::string svg = WitnessSvg(PictureOf(v, {}, "node", kStart));
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "class=\"grid\""), 1u) << "the edge at 1s, between the pairs: " << svg;
  EXPECT_NE(svg.find("a window of the limiter&#39;s begins at +200ms"), std::string::npos) << svg;
  EXPECT_NE(svg.find("where the limiter&#39;s own windows begin"), std::string::npos);

  ViolationReport dense = v;
  dense.grid->period_ms = 1;  // hundreds of edges in the span: none drawn, nor in the legend
  const std::string none = WitnessSvg(PictureOf(dense, {}, "node", kStart));
  EXPECT_EQ(Count(none, "class=\"grid\""), 0u);
  EXPECT_EQ(none.find("own windows begin"), std::string::npos);

  // A limiter without aligned windows has none.
  Violation bucket = found.front();
  bucket.grid.reset();
  SetGrid(bucket, Policy::Bucket(Algorithm::kGcra, 2, milliseconds(500)));
  EXPECT_FALSE(bucket.grid.has_value());
}

// The text timeline marks the window's edges among its rows, on the same offsets as the rows.
TEST(WitnessTimelineText, MarksTheWindowsEdgesOnTheRowsOffsets) {
  const History h = {Answered(0, 1, milliseconds(100), true),
                     Answered(1, 2, milliseconds(300), true),
                     Answered(2, 2, milliseconds(1200), true)};
  const std::vector<Violation> found = CheckAlignedWindowCap(h, 1, std::chrono::seconds(1), {});
  ASSERT_EQ(found.size(), 1u);
  const std::string text =
      view_parts::TimelineText(MakeViolationReport(CheckId::kPromise, found.front(), kStart), {});
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "  -100ms         ---- the window [-100ms, +900ms) they fell in begins");
  EXPECT_LT(text.find("#1 node 2  admitted"), text.find("  +900ms         ---- the window ends"))
      << text;
  EXPECT_EQ(text.find("#2"), std::string::npos) << "not of the witness";
}

// A closed span judged on instants cut to the millisecond holds the uncut ones of the next
// millisecond too; a half-open window's edges on ticks hold the same instants either way.
TEST(WitnessTimelineText, AWindowJudgedOnCutInstantsIsWidenedToTheUncutOnes) {
  Violation span{CheckId::kAnyWindowCap,
                 "k",
                 "",
                 {},
                 Violation::Window{kStart, kStart + milliseconds(5), true, true}};
  UncutWindow(span, milliseconds(1));
  EXPECT_EQ(span.window->to, kStart + milliseconds(6));
  EXPECT_FALSE(span.window->closed);
  EXPECT_TRUE(span.window->span);
  Violation window{
      CheckId::kAlignedWindowCap, "k", "", {}, Violation::Window{kStart, kStart + milliseconds(5)}};
  UncutWindow(window, milliseconds(1));
  EXPECT_EQ(window.window->to, kStart + milliseconds(5));
}

// A bucket's witness draws the bucket's level behind it: full at the first admission, each taking
// its cost, below empty where the promise broke; over any span, the span is said to be one.
TEST(WitnessPicture, ABucketsWitnessDrawsItsLevelAndAnySpanIsCalledASpan) {
  const History h = {Answered(0, 1, milliseconds(0), true), Answered(1, 2, milliseconds(100), true),
                     Answered(2, 1, milliseconds(200), true)};
  const std::vector<Violation> found = CheckBucketConformance(h, 2, std::chrono::seconds(1));
  ASSERT_EQ(found.size(), 1u);
  const ViolationReport v = MakeViolationReport(CheckId::kPromise, found.front(), kStart);
  ASSERT_TRUE(v.bucket.has_value());
  EXPECT_EQ(v.bucket->burst, 2);
  EXPECT_DOUBLE_EQ(v.bucket->interval_ms, 1000);
  const std::string svg = WitnessSvg(PictureOf(v, {}, "node", kStart));
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "<polyline class=\"level\""), 1u);
  EXPECT_NE(svg.find("level, 2 tokens at most"), std::string::npos);
  // Without the instants of effect (stress, probe), no level: where each fell is unknown.
  EXPECT_EQ(Count(WitnessSvg(PictureOf(v, {}, "thread", std::nullopt)), "<polyline"), 0u);
  // Nor where one admission's instant is unknown (a report whose "at" is not an instant).
  ViolationReport unknown = v;
  unknown.witness[1].at = "not an instant";
  unknown.witness[1].steps.clear();
  EXPECT_EQ(Count(WitnessSvg(PictureOf(unknown, {}, "node", kStart)), "<polyline"), 0u);

  const AnyWindowReport any = CheckAnyWindowCap(h, 2, std::chrono::seconds(1));
  ASSERT_EQ(any.violations.size(), 1u);
  const ViolationReport spanned =
      MakeViolationReport(CheckId::kAnyWindowCap, any.violations.front(), kStart);
  ASSERT_TRUE(spanned.window.has_value());
  EXPECT_TRUE(spanned.window->span);
  EXPECT_NE(view_parts::TimelineText(spanned, {}).find("---- the span [+0s, +200ms]"),
            std::string::npos);
  EXPECT_NE(WitnessSvg(PictureOf(spanned, {}, "node", kStart)).find("the span they fell in"),
            std::string::npos);
}

TEST(WitnessPicture, TwoHundredRequestsAreAllDrawnUnlabelledWithinAFewScreens) {
  History h;
  for (int i = 0; i < 200; ++i) h.push_back(Answered(i, i % 4, milliseconds(5 * i), true));
  const std::vector<Violation> found = CheckAlignedWindowCap(h, 10, std::chrono::seconds(10), {});
  ASSERT_EQ(found.size(), 1u);
  ViolationReport v = MakeViolationReport(CheckId::kPromise, found.front(), kStart);
  v.witness = WitnessEvents(h, kStart);
  const std::string svg = WitnessSvg(PictureOf(v, {}, "node", kStart));
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "class=\"bar\""), 200u);
  EXPECT_EQ(Count(svg, ">#1</text>"), 0u) << "no labels at 200";
  const size_t at = svg.find("height=\"");
  ASSERT_NE(at, std::string::npos);
  EXPECT_LT(std::stod(svg.substr(at + 8)), 2000);
}

TEST(WitnessPicture, ANonLinearizableKeyNumbersTheClosestOrderAndMarksTheCallItCannotPlace) {
  ViolationReport v;
  v.invariant = CheckId::kLinearizable;
  v.key = "k";
  v.witness =
      WitnessEvents({Answered(4, 1, milliseconds(0), true), Answered(7, 2, milliseconds(1), true),
                     Answered(5, 1, milliseconds(3), false)},
                    kStart);
  const std::string svg = WitnessSvg(PictureOf(v, {}, "thread", std::nullopt));
  ExpectWellFormed(svg);
  EXPECT_NE(svg.find(">1: #4</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">2: #7</text>"), std::string::npos);
  EXPECT_NE(svg.find("font-weight=\"bold\">#5</text>"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"bar\" fill=\"#c62828\" stroke=\"#111\""), 1u)
      << "only the call no order places";
  EXPECT_EQ(Count(svg, "stroke=\"#111\""), 2u) << "it, and its swatch in the legend";
  EXPECT_NE(svg.find("the call no order places"), std::string::npos);
  EXPECT_EQ(Count(svg, "stroke=\"#000\""), 0u) << "no instant of effect without a start";
  EXPECT_NE(svg.find(">thread 2</text>"), std::string::npos);
  // A marked call never answered (as a report read from a file may say) is still one element
  // with one stroke: well-formed.
  v.witness.back().complete_s.reset();
  v.witness.back().outcome = "no answer";
  const std::string unanswered = WitnessSvg(PictureOf(v, {}, "thread", std::nullopt));
  ExpectWellFormed(unanswered);
  EXPECT_NE(unanswered.find("stroke=\"#111\" stroke-width=\"1\" stroke-dasharray=\"3 2\""),
            std::string::npos)
      << unanswered;
}

TEST(WitnessPicture, AFaultOverTheRequestsIsDrawnBehindThem) {
  ViolationReport v;
  v.invariant = CheckId::kFalseDenials;
  v.key = "k";
  v.witness = WitnessEvents({Answered(0, 1, milliseconds(0), false)}, kStart);
  const std::string svg =
      WitnessSvg(PictureOf(v, {{"store partitioned", 0.001, 0.5}, {"later", 9, 10}}, "node", {}));
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "class=\"fault\""), 1u);
  EXPECT_NE(svg.find("store partitioned: +1ms to +500ms"), std::string::npos) << svg;
  EXPECT_TRUE(WitnessSvg({}).empty());
}

TEST(WitnessPicture, ALongLaneNameKeepsItsEndBesideThePlotAndIsWholeInItsTooltip) {
  WitnessPicture p;
  p.requests.push_back({"user probe-1795987030-0", "#0", 0, 0.001, std::nullopt,
                        PictureRequest::Outcome::kAdmitted, true, "#0"});
  const std::string svg = WitnessSvg(p);
  ExpectWellFormed(svg);
  EXPECT_NE(svg.find(">...1795987030-0</text>\n<title>user probe-1795987030-0</title>"),
            std::string::npos)
      << svg;
}

// probe's witness: a lane per user, each exchange the interval its decision fell in, the span
// marked; its rows cut the long policy id a RateLimit header repeats.
TEST(ProbeWitness, IsDrawnAndItsRowsCutTheRepeatedPolicyId) {
  ProbeReport r;
  r.url = "http://127.0.0.1:1/api";
  r.method = "POST";
  ProbeViolationReport v{
      CheckId::kAnyWindowCap, "u0", "6 admitted", {}, WindowReport{0, 3.5, true, true}};
  for (int i = 0; i < 6; ++i) {
    v.witness.push_back({i,
                         "u0",
                         0.5 * i,
                         0.5 * i + 0.004,
                         200,
                         std::nullopt,
                         {{"RateLimit-Policy", "\"f0264186-c874-5728-b799-0a1230bac88f\";q=5;w=4"},
                          {"RateLimit", "\"f0264186-c874-5728-b799-0a1230bac88f\";r=2;t=2"}}});
  }
  r.violations.push_back(v);
  const std::string html = RenderProbeHtml(r);
  EXPECT_NE(html.find("<svg class=\"witness\""), std::string::npos);
  EXPECT_EQ(Count(html, "class=\"bar\""), 6u);
  EXPECT_NE(html.find(">user u0</text>"), std::string::npos);
  const std::string text = RenderProbeText(r);
  EXPECT_NE(text.find("RateLimit-Policy: \"f0264186...\";q=5;w=4"), std::string::npos) << text;
  EXPECT_EQ(text.find("c874-5728"), std::string::npos) << text;
}

}  // namespace
}  // namespace ratelab
