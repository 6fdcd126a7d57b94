#include "layersec/harness/svg_chart.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <tuple>

namespace layersec::harness {

namespace {

// Okabe-Ito (colour-blind safe), then two more that stay apart from them.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                    "#56B4E9", "#000000", "#999999", "#882255", "#44AA99"};
constexpr int kPaletteSize = static_cast<int>(sizeof kPalette / sizeof kPalette[0]);

const char* color(int i) { return kPalette[((i % kPaletteSize) + kPaletteSize) % kPaletteSize]; }

// Layout of every chart (viewBox units; the page scales the SVG to its box).
// The legend sits right of the plot, as wide as its longest label needs.
constexpr double kWidth = 640;
constexpr double kPlotLeft = 64;
constexpr double kPlotTop = 12;
constexpr double kBottomMargin = 48;
constexpr double kLegendRow = 16;
constexpr double kMinHeight = 340;
constexpr std::size_t kLegendChars = 34;
constexpr double kCharWidth = 6.6;  // of the 11-unit legend font, roughly (wide sans fonts)

struct Frame {
  double right = 0;        // plot area's right edge
  double bottom = 0;       // plot area's bottom edge
  double legend_left = 0;
  double height = 0;
};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

Frame make_frame(const std::vector<std::string>& labels) {
  std::size_t longest = 0;
  for (const auto& l : labels) longest = std::max(longest, std::min(utf8_length(l), kLegendChars));
  const double legend = std::clamp(36 + kCharWidth * static_cast<double>(longest), 90.0, 260.0);
  Frame f;
  f.right = kWidth - legend - 10;
  f.legend_left = f.right + 14;
  f.height = std::max(kMinHeight, kPlotTop + kLegendRow * static_cast<double>(labels.size() + 1) + kBottomMargin);
  f.bottom = f.height - kBottomMargin;
  return f;
}

bool drawable(double v, AxisScale s) { return std::isfinite(v) && (s == AxisScale::kLinear || v > 0); }

double to_axis(double v, AxisScale s) {
  switch (s) {
    case AxisScale::kLog2: return std::log2(v);
    case AxisScale::kLog10: return std::log10(v);
    case AxisScale::kLinear: break;
  }
  return v;
}

double linear_step(double lo, double hi) {
  const double raw = (hi - lo) / 6;
  if (!(raw > 0) || !std::isfinite(raw)) return 1;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

// A domain that holds [lo, hi], widened to tick boundaries; `zero`: a linear
// domain starts at 0 when the data are all positive.
std::pair<double, double> nice_domain(double lo, double hi, AxisScale s, bool zero) {
  if (lo > hi) std::swap(lo, hi);
  if (s == AxisScale::kLinear) {
    if (zero && lo > 0) lo = 0;
    if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::abs(lo) * 0.1);
    const double step = linear_step(lo, hi);
    return {std::floor(lo / step) * step, std::ceil(hi / step) * step};
  }
  const double base = s == AxisScale::kLog2 ? 2.0 : 10.0;
  const double a = std::floor(to_axis(lo, s));
  double b = std::ceil(to_axis(hi, s));
  if (b <= a) b = a + 1;
  return {std::pow(base, a), std::pow(base, b)};
}

// Maps data values to SVG coordinates over a domain.
struct Axis {
  AxisScale scale = AxisScale::kLinear;
  double lo = 0, hi = 1;          // data domain
  double from = 0, to = 1;        // pixel range
  [[nodiscard]] double map(double v) const {
    const double a = to_axis(lo, scale), b = to_axis(hi, scale);
    return from + (to_axis(v, scale) - a) / (b - a) * (to - from);
  }
};

std::string truncated(const std::string& s) {
  if (s.size() <= kLegendChars) return s;
  std::size_t cut = kLegendChars - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return s.substr(0, cut) + "…";
}

void open_svg(std::ostringstream& o, const std::string& id, const std::string& title, const Frame& f,
              std::size_t points) {
  o << "<svg class=\"chart-svg\" id=\"" << html_id(id) << "-svg\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
    << num(kWidth) << ' ' << num(f.height) << "\" role=\"img\" aria-label=\"" << html_escape(title)
    << "\" data-points=\"" << points << "\" font-family=\"inherit\" font-size=\"12\">"
    << "<title>" << html_escape(title) << "</title>";
}

// Grid lines, tick labels and axis titles; x ticks only when `x_ticks`.
void draw_axes(std::ostringstream& o, const Frame& f, const Axis& x, const Axis& y, bool x_integer,
               const std::string& x_label, const std::string& y_label, bool x_ticks) {
  const auto yt = axis_ticks(y.lo, y.hi, y.scale);
  const auto xt = x_ticks ? axis_ticks(x.lo, x.hi, x.scale, x_integer) : std::vector<double>{};
  o << "<g class=\"grid\" stroke=\"#e3e6ea\" stroke-width=\"1\">";
  for (double t : yt) {
    o << "<line x1=\"" << num(kPlotLeft) << "\" x2=\"" << num(f.right) << "\" y1=\"" << num(y.map(t)) << "\" y2=\""
      << num(y.map(t)) << "\"/>";
  }
  for (double t : xt) {
    o << "<line y1=\"" << num(kPlotTop) << "\" y2=\"" << num(f.bottom) << "\" x1=\"" << num(x.map(t)) << "\" x2=\""
      << num(x.map(t)) << "\"/>";
  }
  o << "</g><rect x=\"" << num(kPlotLeft) << "\" y=\"" << num(kPlotTop) << "\" width=\"" << num(f.right - kPlotLeft)
    << "\" height=\"" << num(f.bottom - kPlotTop) << "\" fill=\"none\" stroke=\"#6b7280\"/>";
  o << "<g class=\"ticks\" fill=\"#374151\" font-size=\"11\">";
  for (double t : yt) {
    o << "<text x=\"" << num(kPlotLeft - 6) << "\" y=\"" << num(y.map(t) + 4) << "\" text-anchor=\"end\">"
      << html_escape(tick_label(t)) << "</text>";
  }
  for (double t : xt) {
    o << "<text x=\"" << num(x.map(t)) << "\" y=\"" << num(f.bottom + 15) << "\" text-anchor=\"middle\">"
      << html_escape(tick_label(t)) << "</text>";
  }
  o << "</g><text class=\"axis-title\" x=\"" << num((kPlotLeft + f.right) / 2) << "\" y=\"" << num(f.bottom + 36)
    << "\" text-anchor=\"middle\" fill=\"#111827\">" << html_escape(x_label) << "</text>"
    << "<text class=\"axis-title\" transform=\"translate(15 " << num((kPlotTop + f.bottom) / 2)
    << ") rotate(-90)\" text-anchor=\"middle\" fill=\"#111827\">" << html_escape(y_label) << "</text>";
}

void draw_rules(std::ostringstream& o, const Frame& f, const std::vector<ChartRule>& rules, const Axis& y) {
  for (const auto& r : rules) {
    if (!drawable(r.y, y.scale) || r.y < y.lo || r.y > y.hi) continue;
    const double py = y.map(r.y);
    o << "<g class=\"rule\"><line x1=\"" << num(kPlotLeft) << "\" x2=\"" << num(f.right) << "\" y1=\"" << num(py)
      << "\" y2=\"" << num(py) << "\" stroke=\"#111827\" stroke-dasharray=\"1 3\"/><text x=\"" << num(kPlotLeft + 4)
      << "\" y=\"" << num(py - 4) << "\" font-size=\"10\" fill=\"#111827\" stroke=\"#ffffff\" stroke-width=\"3\" "
      << "paint-order=\"stroke\">"
      << html_escape(r.label) << "</text></g>";
  }
}

// The fill of a paper bar: diagonal hatching in the series' colour.
std::string hatch_id(const std::string& chart, std::size_t i) { return html_id(chart) + "-hatch-" + std::to_string(i); }

void hatch_pattern(std::ostringstream& o, const std::string& id, int c) {
  o << "<defs><pattern id=\"" << id << "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
    << "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffffff\"/><rect width=\"2.5\" "
    << "height=\"6\" fill=\"" << color(c) << "\"/></pattern></defs>";
}

// One legend entry: a swatch in the series' style and its (truncated) label.
// `fill`: a bar swatch with that fill; empty: a line swatch.
void legend_entry(std::ostringstream& o, const Frame& f, std::size_t i, const std::string& label, int c, bool dashed,
                  bool paper, const std::string& fill) {
  const double y = kPlotTop + 6 + kLegendRow * static_cast<double>(i);
  const double x = f.legend_left;
  o << "<g class=\"legend-entry\"><title>" << html_escape(label) << "</title>";
  if (!fill.empty()) {
    o << "<rect x=\"" << num(x) << "\" y=\"" << num(y - 5) << "\" width=\"18\" height=\"10\" fill=\"" << fill
      << "\" stroke=\"" << color(c) << "\"/>";
  } else {
    o << "<line x1=\"" << num(x) << "\" x2=\"" << num(x + 18) << "\" y1=\"" << num(y) << "\" y2=\"" << num(y)
      << "\" stroke=\"" << color(c) << "\" stroke-width=\"2\""
      << (paper ? " stroke-dasharray=\"2 3\"" : dashed ? " stroke-dasharray=\"6 4\"" : "") << "/>";
    if (paper) {
      o << "<circle cx=\"" << num(x + 9) << "\" cy=\"" << num(y) << "\" r=\"3\" fill=\"#ffffff\" stroke=\"" << color(c)
        << "\" stroke-width=\"1.5\"/>";
    }
  }
  o << "<text x=\"" << num(x + 24) << "\" y=\"" << num(y + 4) << "\" font-size=\"11\" fill=\"#111827\">"
    << html_escape(truncated(label)) << "</text></g>";
}

void no_data(std::ostringstream& o, const Frame& f) {
  o << "<text class=\"no-data\" x=\"" << num((kPlotLeft + f.right) / 2) << "\" y=\"" << num((kPlotTop + f.bottom) / 2)
    << "\" text-anchor=\"middle\" fill=\"#6b7280\">no data</text>";
}

template <typename Series>
std::vector<std::string> labels_of(const std::vector<Series>& series) {
  std::vector<std::string> out;
  for (const auto& s : series) out.push_back(s.label);
  return out;
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_id(std::string_view text) {
  std::string out;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) && u < 0x80) {
      out += static_cast<char>(std::tolower(u));
    } else if (out.empty() || out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  return out.empty() ? "x" : out;
}

std::vector<double> axis_ticks(double lo, double hi, AxisScale scale, bool integer) {
  std::vector<double> t;
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi < lo) return t;
  if (scale == AxisScale::kLinear) {
    const double step = integer ? std::max(1.0, std::round(linear_step(lo, hi))) : linear_step(lo, hi);
    for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9 && t.size() < 40; v += step)
      t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    return t;
  }
  if (lo <= 0) return t;
  if (scale == AxisScale::kLog2) {
    const int a = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
    const int b = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
    const int every = (b - a) > 11 ? 2 : 1;
    for (int e = a; e <= b; e += every) t.push_back(std::ldexp(1.0, e));
    return t;
  }
  const int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int b = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  const bool minor = (b - a) <= 2;
  for (int e = a; e <= b; ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !minor) continue;
      const double v = m * std::pow(10.0, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.push_back(v);
    }
  }
  return t;
}

std::string tick_label(double v) {
  char buf[32];
  const double a = std::abs(v);
  if (a >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.4gM", v / 1e6);
  } else if (a >= 1e4) {
    std::snprintf(buf, sizeof buf, "%.4gk", v / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

std::string render_svg(const LineChart& c) {
  // The data domain over every drawable point and rule.
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  std::size_t points = 0;
  for (const auto& s : c.series) {
    for (const auto& [x, y] : s.points) {
      if (!drawable(x, c.x_scale) || !drawable(y, c.y_scale)) continue;
      ++points;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y);
      y_hi = std::max(y_hi, y);
    }
  }
  for (const auto& r : c.rules) {
    if (points && drawable(r.y, c.y_scale)) {
      y_lo = std::min(y_lo, r.y);
      y_hi = std::max(y_hi, r.y);
    }
  }
  const Frame f = make_frame(labels_of(c.series));
  std::ostringstream o;
  open_svg(o, c.id, c.title, f, points);
  Axis x{c.x_scale, 1, 10, kPlotLeft, f.right};
  Axis y{c.y_scale, 1, 10, f.bottom, kPlotTop};
  if (points) {
    std::tie(x.lo, x.hi) = nice_domain(x_lo, x_hi, c.x_scale, /*zero=*/false);
    if (c.x_integer && c.x_scale == AxisScale::kLinear) std::tie(x.lo, x.hi) = std::make_pair(x_lo - 0.2, x_hi + 0.2);
    std::tie(y.lo, y.hi) = c.y_range ? *c.y_range : nice_domain(y_lo, y_hi, c.y_scale, /*zero=*/true);
  }
  draw_axes(o, f, x, y, c.x_integer, c.x_label, c.y_label, true);
  if (!points) no_data(o, f);
  draw_rules(o, f, c.rules, y);
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    std::vector<std::pair<double, double>> px;
    for (const auto& [vx, vy] : s.points) {
      if (drawable(vx, c.x_scale) && drawable(vy, c.y_scale)) px.emplace_back(x.map(vx), y.map(vy));
    }
    o << "<g class=\"series" << (s.paper ? " paper" : "") << "\" data-series=\"" << html_escape(s.label)
      << "\" data-points=\"" << px.size() << "\"><title>" << html_escape(s.label) << "</title>";
    const char* dash = s.paper ? " stroke-dasharray=\"2 3\"" : s.dashed ? " stroke-dasharray=\"6 4\"" : "";
    if (px.size() >= 2 && s.style != SeriesStyle::kMarkers) {
      o << "<path fill=\"none\" stroke=\"" << color(s.color) << "\" stroke-width=\"2\"" << dash << " d=\"M"
        << num(px[0].first) << ' ' << num(px[0].second);
      for (std::size_t k = 1; k < px.size(); ++k) {
        if (s.style == SeriesStyle::kStep) {
          o << "H" << num(px[k].first) << "V" << num(px[k].second);
        } else {
          o << "L" << num(px[k].first) << ' ' << num(px[k].second);
        }
      }
      o << "\"/>";
    }
    if (s.style == SeriesStyle::kLineMarkers || s.style == SeriesStyle::kMarkers || px.size() == 1 || s.paper) {
      for (const auto& [mx, my] : px) {
        o << "<circle cx=\"" << num(mx) << "\" cy=\"" << num(my) << "\" r=\"3.2\" fill=\""
          << (s.paper ? "#ffffff" : color(s.color)) << "\" stroke=\"" << color(s.color) << "\" stroke-width=\"1.5\"/>";
      }
    }
    o << "</g>";
    legend_entry(o, f, i, s.label, s.color, s.dashed, s.paper, "");
  }
  o << "</svg>";
  return o.str();
}

std::string render_svg(const BarChart& c) {
  const bool log = c.y_scale != AxisScale::kLinear;
  const AxisScale ys = log ? AxisScale::kLog10 : AxisScale::kLinear;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  std::size_t bars = 0;
  for (const auto& s : c.series) {
    for (const auto& v : s.values) {
      if (v && std::isfinite(*v) && (log ? *v > 0 : *v >= 0)) {
        lo = std::min(lo, *v);
        hi = std::max(hi, *v);
        ++bars;
      }
    }
  }
  for (const auto& r : c.rules) {
    if (bars && drawable(r.y, ys)) {
      lo = std::min(lo, r.y);
      hi = std::max(hi, r.y);
    }
  }
  const Frame f = make_frame(labels_of(c.series));
  std::ostringstream o;
  open_svg(o, c.id, c.title, f, bars);
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    if (c.series[i].paper) hatch_pattern(o, hatch_id(c.id, i), c.series[i].color);
  }
  Axis y{ys, 0, 1, f.bottom, kPlotTop};
  if (bars) std::tie(y.lo, y.hi) = log ? nice_domain(lo, hi, ys, false) : nice_domain(0, hi * 1.08, ys, true);
  if (!bars && log) std::tie(y.lo, y.hi) = std::make_pair(1.0, 10.0);
  const Axis x{AxisScale::kLinear, 0, 1, kPlotLeft, f.right};
  draw_axes(o, f, x, y, false, "", c.y_label, false);
  if (!bars) no_data(o, f);
  const std::size_t nc = std::max<std::size_t>(c.categories.size(), 1);
  const std::size_t ns = std::max<std::size_t>(c.series.size(), 1);
  const double group = (f.right - kPlotLeft) / static_cast<double>(nc);
  const double bar = group * 0.8 / static_cast<double>(ns);
  for (std::size_t k = 0; k < c.categories.size(); ++k) {
    const double cx = kPlotLeft + group * (static_cast<double>(k) + 0.5);
    o << "<text class=\"category\" x=\"" << num(cx) << "\" y=\"" << num(f.bottom + 15)
      << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#374151\">" << html_escape(c.categories[k]) << "</text>";
  }
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    const std::string fill = s.paper ? "url(#" + hatch_id(c.id, i) + ")" : color(s.color);
    o << "<g class=\"series" << (s.paper ? " paper" : "") << "\" data-series=\"" << html_escape(s.label) << "\"><title>"
      << html_escape(s.label) << "</title>";
    for (std::size_t k = 0; k < s.values.size() && k < c.categories.size(); ++k) {
      const auto& v = s.values[k];
      if (!v || !std::isfinite(*v) || (log ? *v <= 0 : *v < 0)) continue;
      const double bx = kPlotLeft + group * static_cast<double>(k) + group * 0.1 + bar * static_cast<double>(i);
      const double by = y.map(*v);
      o << "<rect class=\"bar\" x=\"" << num(bx) << "\" y=\"" << num(by) << "\" width=\"" << num(bar * 0.92)
        << "\" height=\"" << num(std::max(0.0, f.bottom - by)) << "\" fill=\"" << fill << "\" stroke=\""
        << color(s.color) << "\"><title>" << html_escape(c.categories[k] + ", " + s.label + ": " + tick_label(*v))
        << "</title></rect>";
      if (bar >= 24) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f", *v);
        o << "<text x=\"" << num(bx + bar * 0.46) << "\" y=\"" << num(by - 3)
          << "\" text-anchor=\"middle\" font-size=\"9\" fill=\"#374151\">" << buf << "</text>";
      }
    }
    o << "</g>";
    legend_entry(o, f, i, s.label, s.color, false, s.paper, fill);
  }
  draw_rules(o, f, c.rules, y);
  o << "</svg>";
  return o.str();
}

}  // namespace layersec::harness
