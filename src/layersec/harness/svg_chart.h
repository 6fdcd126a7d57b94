// Charts for the HTML report (report_html.h) as inline SVG: no gnuplot, no
// script, no external resource, so the page stays one self-contained file
// that renders the same offline in any browser. Two kinds: lines (CDFs as
// steps, latency against N, rate or hops; linear, log2 or log10 axes) and
// grouped bars over categories (ratios to a baseline). Every string that
// reaches the SVG (title, labels, series names) is escaped (html_escape);
// points that cannot be drawn (NaN, infinite, <= 0 on a log axis) are left
// out, never drawn at an edge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace layersec::harness {

// `text` with &, <, >, " and ' replaced by entities: safe as HTML/SVG text
// and inside a quoted attribute value.
[[nodiscard]] std::string html_escape(std::string_view text);

enum class AxisScale : std::uint8_t {
  kLinear,
  kLog2,   // ticks at powers of two (group sizes)
  kLog10,  // ticks at decades (with 2 and 5 when the range is short)
};

enum class SeriesStyle : std::uint8_t {
  kLine,         // polyline through the points in order
  kStep,         // empirical CDF: horizontal, then vertical
  kLineMarkers,  // polyline with a marker at every point
  kMarkers,      // markers only
};

struct ChartSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), in drawing order
  SeriesStyle style = SeriesStyle::kLine;
  int color = 0;          // index into the report's palette (wraps)
  bool dashed = false;
  bool paper = false;     // the paper's published figures: dotted, hollow markers
};

// A horizontal reference line (e.g. "unsecured = 1").
struct ChartRule {
  double y = 0;
  std::string label;
};

struct LineChart {
  std::string id;        // element id (sanitised by the renderer)
  std::string title;
  std::string x_label;   // with the unit, e.g. "latency (µs)"
  std::string y_label;
  AxisScale x_scale = AxisScale::kLinear;
  AxisScale y_scale = AxisScale::kLinear;
  bool x_integer = false;  // linear x ticks at whole numbers only (hops, N)
  std::optional<std::pair<double, double>> y_range;  // fixed [lo, hi] (CDF: 0..1)
  std::vector<ChartSeries> series;
  std::vector<ChartRule> rules;
};

struct BarSeries {
  std::string label;
  std::vector<std::optional<double>> values;  // one per category; nullopt: no bar
  int color = 0;
  bool paper = false;  // hatched: the paper's figure
};

struct BarChart {
  std::string id;
  std::string title;
  std::string y_label;
  AxisScale y_scale = AxisScale::kLinear;  // kLog10: bars rise from the axis bottom (wide-ranging ratios)
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
  std::vector<ChartRule> rules;
};

// The SVG element (<svg ...>...</svg>), sized by viewBox so it scales with
// its container. A chart with nothing drawable still renders its axes and
// the text "no data".
[[nodiscard]] std::string render_svg(const LineChart& chart);
[[nodiscard]] std::string render_svg(const BarChart& chart);

// An id safe in HTML and CSS: lower-case letters, digits and '-' only
// (anything else becomes '-'); "x" when nothing is left.
[[nodiscard]] std::string html_id(std::string_view text);

// Tick positions for [lo, hi] under `scale` (4..12 ticks where possible);
// `integer`: linear ticks at whole numbers only.
[[nodiscard]] std::vector<double> axis_ticks(double lo, double hi, AxisScale scale, bool integer = false);
// A tick label: up to 4 significant digits, k / M for thousands / millions
// ("0.5", "12", "1500", "20k", "1.5M").
[[nodiscard]] std::string tick_label(double v);

}  // namespace layersec::harness
