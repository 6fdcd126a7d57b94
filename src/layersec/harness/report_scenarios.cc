#include "layersec/harness/report_scenarios.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "layersec/base/file.h"
#include "layersec/harness/paper.h"
#include "layersec/harness/results_format.h"
#include "layersec/harness/stats.h"

namespace layersec::harness {

namespace {

using Rows = std::vector<const ScenarioResult*>;

constexpr std::size_t kMaxCdfSeries = 10;   // lines per CDF chart
constexpr std::size_t kMaxCdfPoints = 300;  // points per CDF line (min and max kept)

// A colour per security configuration, the same on every chart.
int config_color(const ScenarioResult& r) {
  const std::string k = r.security + "/" + r.key_distribution;
  if (r.security == "none") return 6;
  if (k == "secoc/psk") return 0;
  if (k == "secoc/rsa-mode-b") return 5;
  if (k == "hybrid/psk") return 1;
  if (k == "hybrid/rsa-mode-b") return 3;
  if (k == "hybrid/group-mode-b" || k == "secoc/group-psk") return 2;
  if (r.security == "dtls") return 4;
  return 8;
}

std::string config_name(const ScenarioResult& r) {
  if (r.security == "none") return "unsecured";
  if (r.security == "dtls") return "DTLS fan-out";
  std::string s = r.security == "hybrid" ? "Hybrid" : r.security == "secoc" ? "SecOC" : r.security;
  if (r.key_distribution == "psk") return s + "-PSK";
  if (r.key_distribution == "rsa-mode-b") return s + "-RSA";
  if (r.key_distribution == "group-mode-b" || r.key_distribution == "group-psk") return s + ", group key";
  return r.key_distribution.empty() || r.key_distribution == "none" ? s : s + ", " + r.key_distribution;
}

std::string topology_suffix(const std::string& topology) { return topology == "sim" ? "" : " (" + topology + ")"; }

// `rows` grouped by key(row), groups in the order their first row comes.
template <typename Key>
std::vector<std::pair<std::string, Rows>> grouped(const Rows& rows, Key key) {
  std::vector<std::pair<std::string, Rows>> out;
  for (const auto* r : rows) {
    const std::string k = key(*r);
    auto it = std::find_if(out.begin(), out.end(), [&k](const auto& g) { return g.first == k; });
    if (it == out.end()) it = out.insert(out.end(), {k, Rows{}});
    it->second.push_back(r);
  }
  return out;
}

std::string config_and_topology(const ScenarioResult& r) { return config_name(r) + topology_suffix(r.topology); }

bool failed(const ScenarioResult& r) { return r.latency.count == 0 || r.notes.find("FAILED") != std::string::npos; }

std::string us(double v) { return cell_number(v, v >= 1000 ? 0 : 1); }
std::string opt_ratio(const std::optional<double>& v) { return v ? cell_ratio(*v) : "–"; }

std::string series_title(const std::string& s) {
  static const std::map<std::string, std::string> titles = {
      {"paper-scenarios", "The paper's ten sub-scenarios"},
      {"group-size", "Latency against multicast group size"},
      {"payload", "Payload sweep"},
      {"someip-tp", "SOME/IP-TP (64 KiB events)"},
      {"background-load", "Background load"},
      {"dtls-fanout", "DTLS fan-out against a group key"},
      {"rate", "Rate sweep"}};
  const auto it = titles.find(s);
  return it == titles.end() ? s : it->second;
}

// --- columns shared by the tables ---------------------------------------------------

ReportColumn col(std::string head, std::string unit, std::string help, bool numeric = true, bool paper = false) {
  return {std::move(head), std::move(unit), numeric, paper, std::move(help)};
}

const char* kLatencyHelp = "half the closed-loop round trip (the paper's method), microseconds under the row's timing model";

const PaperScenario* paper_baseline(const PaperScenario* p) {
  return p ? paper_scenario(p->id.back() == 'A' ? "1-A" : "1-B") : nullptr;
}

// The paper's ten, latency: ours beside the paper's Table 19.
ReportTable paper_latency_table(const Rows& rows, const std::string& topology) {
  ReportTable t;
  t.id = "table-paper-scenarios-" + topology;
  t.caption = "Latency of the ten sub-scenarios (Table 14)" + topology_suffix(topology) +
              ": half the round trip; ours in µs, the paper's in ms on its two-VM testbed";
  t.ours_group = "this run (" + (rows.empty() ? std::string("-") : rows.front()->timing_model) + ")";
  t.paper_group = "the paper's (published, Table 19)";
  t.columns = {col("ID", "", "paper sub-scenario (Table 14)", false),
               col("scenario", "", "security and delivery", false),
               col("N", "subs", "subscribers"),
               col("mean", "µs", kLatencyHelp),
               col("p50", "µs", kLatencyHelp),
               col("p95", "µs", kLatencyHelp),
               col("p99", "µs", kLatencyHelp),
               col("max", "µs", "largest sample: a preempted iteration shows here"),
               col("mean ×unsec.", "", "mean over the unsecured row of the same delivery mode, this run"),
               col("p99 ×unsec.", "", "p99 over the unsecured row of the same delivery mode, this run"),
               col("mean", "ms", "the paper's Table 19", true, true),
               col("p50", "ms", "the paper's Table 19", true, true),
               col("p95", "ms", "the paper's Table 19", true, true),
               col("p99", "ms", "the paper's Table 19", true, true),
               col("mean ×unsec.", "", "the paper's mean over its unsecured row", true, true),
               col("p99 ×unsec.", "", "the paper's p99 over its unsecured row", true, true)};
  for (const auto* r : rows) {
    const PaperScenario* p = paper_scenario(r->paper_id);
    const PaperScenario* pb = paper_baseline(p);
    std::vector<std::string> c = {r->paper_id,         r->label.empty() ? r->name : r->label,
                                  std::to_string(r->subscribers), us(r->latency.mean),
                                  us(r->latency.p50),  us(r->latency.p95),
                                  us(r->latency.p99),  us(r->latency.max),
                                  opt_ratio(r->ratio_mean), opt_ratio(r->ratio_p99)};
    if (p) {
      c.insert(c.end(), {cell_number(p->mean_ms, 2), cell_number(p->p50_ms, 2), cell_number(p->p95_ms, 2),
                         cell_number(p->p99_ms, 2), pb ? cell_ratio(p->mean_ms / pb->mean_ms) : "–",
                         pb ? cell_ratio(p->p99_ms / pb->p99_ms) : "–"});
    }
    t.rows.push_back(std::move(c));
    t.row_flags.push_back(failed(*r) ? "failed" : r->security == "none" ? "baseline" : "");
  }
  return t;
}

// The paper's ten, cost: SecOC path, CPU and memory beside Tables 16 and 18.
ReportTable paper_cost_table(const Rows& rows, const std::string& topology) {
  ReportTable t;
  t.id = "table-paper-cost-" + topology;
  t.caption = "Cost of the ten sub-scenarios" + topology_suffix(topology) + ": SecOC work, CPU and memory " +
              (topology == "sim" ? "(ours: the whole simulated network in one process)"
                                 : "(ours: SecOC and CPU per iteration over every node; CPU % and RSS of the publisher "
                                   "process)");
  t.paper_group = "the paper's (published, Tables 16 and 18)";
  t.columns = {col("ID", "", "paper sub-scenario (Table 14)", false),
               col("scenario", "", "security and delivery", false),
               col("SecOC p50", "µs/iteration", "median time inside SecOC protect + verify per iteration, all nodes"),
               col("SecOC calls", "per iteration", "protect + verify calls per iteration (1 + 3N in the sim)"),
               col("CPU", "µs/iteration", "CPU time per iteration, all nodes"),
               col("CPU", "%", "CPU per iteration over the pacing, % of one core"),
               col("RSS", "MiB", "peak resident set during the scenario"),
               col("SecOC path", "ms", "the paper's Tables 16, 18", true, true),
               col("latency SD", "ms", "the paper's Tables 16, 18", true, true),
               col("CPU", "%", "the paper's Tables 16, 18", true, true),
               col("memory", "MiB", "the paper's Tables 16, 18", true, true)};
  for (const auto* r : rows) {
    const PaperScenario* p = paper_scenario(r->paper_id);
    const bool secured = r->security != "none" && r->secoc_path_p50_us > 0;
    std::vector<std::string> c = {r->paper_id,
                                  r->label.empty() ? r->name : r->label,
                                  secured ? cell_number(r->secoc_path_p50_us, 2) : "–",
                                  secured ? std::to_string(r->secoc_ops_per_iteration) : "–",
                                  cell_number(r->cpu_us_per_iteration, 1),
                                  cell_number(r->cpu_pct, 2),
                                  cell_number(static_cast<double>(r->rss_kib) / 1024.0, 1)};
    if (p) {
      c.insert(c.end(), {p->secoc_path_ms ? cell_number(*p->secoc_path_ms, 2) : "–", cell_number(p->sd_ms, 2),
                         cell_number(p->cpu_pct, 1), cell_number(p->mem_mib, 1)});
    }
    t.rows.push_back(std::move(c));
    t.row_flags.push_back(failed(*r) ? "failed" : r->security == "none" ? "baseline" : "");
  }
  return t;
}

ReportTable establishment_table(const Rows& rows, const std::string& id) {
  ReportTable t;
  t.id = id;
  t.caption = "Key establishment, once before the measured loop (wall time)";
  t.columns = {col("scenario", "", "", false), col("N", "subs", "subscribers"),
               col("key distribution", "", "", false), col("establishment", "ms", "measured in this run")};
  t.paper_group = "the paper's (Table 17)";
  bool any_paper = false;
  for (const auto* r : rows) {
    if (!r->establishment_ms) continue;
    const PaperScenario* p = r->paper_id.empty() ? nullptr : paper_scenario(r->paper_id);
    any_paper = any_paper || (p && p->establishment_ms);
    t.rows.push_back({(r->paper_id.empty() ? "" : r->paper_id + " ") + r->name, std::to_string(r->subscribers),
                      r->key_distribution, cell_number(*r->establishment_ms, 2),
                      p && p->establishment_ms ? cell_number(*p->establishment_ms, 2) + " ± " +
                                                     format_optional(p->establishment_sd_ms, 1, "–")
                                               : "–"});
  }
  if (any_paper) {
    t.columns.push_back(col("establishment", "ms ± SD", "the paper's Table 17 (RSA-2048)", true, true));
  } else {
    for (auto& r : t.rows) r.pop_back();
  }
  return t;
}

// Every other series: the measured columns, the optional ones only when a row has them.
ReportTable series_table(const Rows& rows, const std::string& series) {
  bool serial = false, secoc = false, est = false, paper = false, multi_topology = false, rate = false;
  for (const auto* r : rows) {
    serial = serial || r->serial_latency.has_value();
    secoc = secoc || r->secoc_path_p50_us > 0;
    est = est || r->establishment_ms.has_value();
    paper = paper || (series == "group-size" && r->security == "hybrid" && paper_hybrid_group_ms(r->subscribers));
    multi_topology = multi_topology || r->topology != rows.front()->topology;
    rate = rate || series == "rate";
  }
  ReportTable t;
  t.id = "table-" + series;
  t.fold_constant_columns = true;
  t.caption = series_title(series) + (multi_topology ? "" : topology_suffix(rows.front()->topology)) +
              (rate ? ": latency columns are the subscribers' one-way latency (rate mode)"
                    : ": latency = half the round trip; to last = one way, notify to the last receiver");
  t.paper_group = "the paper's (Table 21)";
  t.columns = {col("scenario", "", "", false)};
  if (multi_topology) t.columns.push_back(col("topology", "", "", false));
  t.columns.insert(t.columns.end(), {col("N", "subs", "subscribers"), col("payload", "bytes", "")});
  if (rate) t.columns.push_back(col("rate", "events/s", "target notification rate"));
  t.columns.insert(t.columns.end(), {col("mean", "µs", kLatencyHelp), col("p50", "µs", kLatencyHelp),
                                     col("p99", "µs", kLatencyHelp), col("max", "µs", "largest sample")});
  if (!rate) {
    t.columns.insert(t.columns.end(), {col("to last, mean", "µs", "one way: notify to the last subscriber's event callback"),
                                       col("to last, p99", "µs", "one way to the last receiver")});
  }
  if (serial) t.columns.push_back(col("serial p99", "µs", "the same iterations, every node's work on one thread"));
  t.columns.push_back(col("p99 ×unsec.", "", "p99 over the unsecured row of the same parameters, this run"));
  if (secoc) t.columns.push_back(col("SecOC", "µs/iteration", "SecOC protect + verify per iteration, all nodes"));
  t.columns.insert(t.columns.end(), {col("CPU", "%", "CPU per iteration over the pacing"), col("RSS", "MiB", "peak")});
  if (est) t.columns.push_back(col("key setup", "ms", "key establishment, once, before the loop"));
  if (paper) t.columns.push_back(col("hybrid, to last", "ms", "the paper's Table 21 (hybrid PSK)", true, true));
  for (const auto* r : rows) {
    const bool short_label = !r->label.empty() && r->label.size() <= 40 && series != "rate";
    std::vector<std::string> c = {short_label ? r->label : r->name};
    if (multi_topology) c.push_back(r->topology);
    c.insert(c.end(), {std::to_string(r->subscribers), std::to_string(r->payload_bytes)});
    if (rate) c.push_back(r->pacing_ms > 0 ? cell_number(1000.0 / r->pacing_ms, 0) : "–");
    c.insert(c.end(), {us(r->latency.mean), us(r->latency.p50), us(r->latency.p99), us(r->latency.max)});
    if (!rate) c.insert(c.end(), {us(r->one_way.mean), us(r->one_way.p99)});
    if (serial) c.push_back(r->serial_latency ? us(r->serial_latency->p99) : "–");
    c.push_back(opt_ratio(r->ratio_p99));
    if (secoc) c.push_back(r->secoc_path_p50_us > 0 ? cell_number(r->secoc_path_p50_us, 2) : "–");
    c.insert(c.end(), {cell_number(r->cpu_pct, 2), cell_number(static_cast<double>(r->rss_kib) / 1024.0, 1)});
    if (est) c.push_back(r->establishment_ms ? cell_number(*r->establishment_ms, 2) : "–");
    if (paper) {
      const auto ms = r->security == "hybrid" ? paper_hybrid_group_ms(r->subscribers) : std::nullopt;
      c.push_back(ms ? cell_number(*ms, 2) : "–");
    }
    t.rows.push_back(std::move(c));
    t.row_flags.push_back(failed(*r) ? "failed" : r->security == "none" ? "baseline" : "");
  }
  return t;
}

// --- charts -------------------------------------------------------------------------

ChartSeries cdf_series(const ScenarioResult& r, std::string label, bool dashed) {
  std::vector<double> sorted = r.samples_us;
  sorted.erase(std::remove_if(sorted.begin(), sorted.end(), [](double v) { return !std::isfinite(v); }), sorted.end());
  std::sort(sorted.begin(), sorted.end());
  ChartSeries s;
  s.label = std::move(label);
  s.points = cdf_points(sorted, kMaxCdfPoints);
  s.style = SeriesStyle::kStep;
  s.color = config_color(r);
  s.dashed = dashed;
  return s;
}

// CDF charts of `rows` (those with samples): one chart when they fit, else
// one per security configuration, at most kMaxCdfSeries lines each.
std::vector<ReportFigure> cdf_figures(const Rows& rows, const std::string& series, const std::string& what) {
  Rows with;
  for (const auto* r : rows) {
    if (!r->samples_us.empty()) with.push_back(r);
  }
  std::vector<std::pair<std::string, Rows>> groups;
  if (with.size() <= kMaxCdfSeries) {
    groups.emplace_back("", with);
  } else {
    groups = grouped(with, config_and_topology);
  }
  std::vector<ReportFigure> out;
  for (auto& [key, list] : groups) {
    if (list.empty()) continue;
    if (list.size() > kMaxCdfSeries) list.resize(kMaxCdfSeries);
    LineChart c;
    c.id = "chart-cdf-" + series + (key.empty() ? "" : "-" + key);
    c.title = "Latency CDF, " + what + (key.empty() ? "" : ": " + key);
    if (c.title.size() > 70) c.title = "Latency CDF: " + key;
    c.x_label = "latency (µs, log scale; " + timing_model_text(list.front()->timing_model) + ")";
    c.y_label = "fraction of iterations";
    c.x_scale = AxisScale::kLog10;
    c.y_range = std::make_pair(0.0, 1.0);
    // Lines of one configuration, or of a series that varies N: colour by line.
    std::set<int> ns;
    for (const auto* r : list) ns.insert(r->subscribers);
    const bool by_n = !key.empty();
    const bool by_line = by_n || (ns.size() > 1 && series != "paper-scenarios");
    for (const auto* r : list) {
      std::string label = (r->paper_id.empty() ? "" : r->paper_id + " ") + (r->label.empty() ? r->name : r->label);
      if (by_n) label = "N=" + std::to_string(r->subscribers) + (r->payload_bytes != 64 ? ", " + std::to_string(r->payload_bytes) + " B" : "");
      ChartSeries s = cdf_series(*r, label, by_line ? r->security == "none" : r->delivery == "multicast");
      if (by_n) s.color = static_cast<int>(c.series.size());
      if (by_line && !by_n) s.color = static_cast<int>(std::distance(ns.begin(), ns.find(r->subscribers)));
      c.series.push_back(std::move(s));
    }
    const std::string styles = by_n ? "" : by_line ? " One colour per N; unsecured dashed." : " Multicast dashed.";
    out.push_back({"Measured in this run, " + std::to_string(list.front()->latency.count) +
                       " iterations per line (half RTT" + (series == "rate" ? "; rate rows: one way" : "") + ")." +
                       styles,
                   std::move(c)});
  }
  return out;
}

// Overhead over unsecured, ours against the paper's, for the paper's ten.
ReportFigure overhead_figure(const Rows& rows, bool p99, const std::string& topology) {
  BarChart c;
  c.id = std::string("chart-overhead-") + (p99 ? "p99-" : "mean-") + topology;
  c.title = std::string("Overhead over unsecured, ") + (p99 ? "p99" : "mean") + topology_suffix(topology);
  c.y_label = std::string(p99 ? "p99" : "mean") + " latency ÷ unsecured (same delivery)";
  BarSeries ours{"this run", {}, 0, false};
  BarSeries paper{"the paper's (Table 19)", {}, 4, true};
  for (const auto* r : rows) {
    c.categories.push_back(r->paper_id);
    ours.values.push_back(p99 ? r->ratio_p99 : r->ratio_mean);
    const PaperScenario* p = paper_scenario(r->paper_id);
    const PaperScenario* pb = paper_baseline(p);
    if (p && pb) {
      paper.values.push_back(p99 ? p->p99_ms / pb->p99_ms : p->mean_ms / pb->mean_ms);
    } else {
      paper.values.push_back(std::nullopt);
    }
  }
  double lo = 1, hi = 1;
  for (const auto* s : {&ours, &paper}) {
    for (const auto& v : s->values) {
      if (v && std::isfinite(*v) && *v > 0) {
        lo = std::min(lo, *v);
        hi = std::max(hi, *v);
      }
    }
  }
  if (hi / lo > 25) {
    c.y_scale = AxisScale::kLog10;
    c.y_label += " (log scale)";
  }
  c.series = {ours, paper};
  c.rules = {{1.0, "unsecured = 1"}};
  return {"A ratio compares like with like: each bar is a scenario's latency over the unsecured row of the same "
          "delivery mode on the same testbed (ours: this run; the paper's: its Table 19). A = unicast, B = multicast.",
          std::move(c)};
}

// Latency to the last receiver against N, and its growth against N=2 beside
// the paper's Table 21.
std::vector<ReportFigure> group_figures(const Rows& rows) {
  Rows completed;
  for (const auto* r : rows) {
    if (r->latency.count > 0) completed.push_back(r);
  }
  LineChart abs;
  abs.id = "chart-group-size";
  abs.title = "Latency to the last receiver against group size";
  abs.x_label = "subscribers N (log scale)";
  abs.y_label = "one-way latency (µs, log scale)";
  abs.x_scale = AxisScale::kLog2;
  abs.y_scale = AxisScale::kLog10;
  LineChart growth;
  growth.id = "chart-group-growth";
  growth.title = "Growth with group size, relative to N=2";
  growth.x_label = "subscribers N (log scale)";
  growth.y_label = "mean latency to the last receiver ÷ N=2";
  growth.x_scale = AxisScale::kLog2;
  growth.rules = {{1.2, "goal 1.2×"}};
  bool any_serial = false;
  std::set<std::string> topologies;
  for (const auto* r : completed) topologies.insert(r->topology);
  const bool one_topology = topologies.size() <= 1;  // else: means only, the raw path's dashed
  for (auto [k, list] : grouped(completed, config_and_topology)) {
    std::sort(list.begin(), list.end(), [](const auto* a, const auto* b) { return a->subscribers < b->subscribers; });
    const int color = config_color(*list.front());
    const bool raw = list.front()->topology == "netns-raw";
    ChartSeries mean{k + ", mean", {}, SeriesStyle::kLineMarkers, color, raw, false};
    ChartSeries p99{k + ", p99", {}, SeriesStyle::kLine, color, true, false};
    ChartSeries serial{k + ", serial mean", {}, SeriesStyle::kLine, 7, true, false};
    ChartSeries g{k, {}, SeriesStyle::kLineMarkers, color, raw, false};
    double base = 0;
    for (const auto* r : list) {
      if (r->subscribers == 2) base = r->one_way.mean;
    }
    for (const auto* r : list) {
      const double n = r->subscribers;
      mean.points.emplace_back(n, r->one_way.mean);
      p99.points.emplace_back(n, r->one_way.p99);
      if (r->serial_one_way) serial.points.emplace_back(n, r->serial_one_way->mean);
      if (base > 0 && r->subscribers >= 2) g.points.emplace_back(n, r->one_way.mean / base);
    }
    abs.series.push_back(std::move(mean));
    if (one_topology) abs.series.push_back(std::move(p99));
    if (!serial.points.empty() && list.front()->security != "none") {
      abs.series.push_back(std::move(serial));
      any_serial = true;
    }
    if (!g.points.empty()) growth.series.push_back(std::move(g));
  }
  const auto& pts = paper_group_points();
  double h2 = 0, d2 = 0;
  for (const auto& p : pts) {
    if (p.n == 2) {
      h2 = p.hybrid_ms;
      d2 = p.dtls_ms;
    }
  }
  ChartSeries ph{"the paper's hybrid PSK (Table 21)", {}, SeriesStyle::kLineMarkers, 1, false, true};
  ChartSeries pd{"the paper's DTLS (Table 21)", {}, SeriesStyle::kLineMarkers, 4, false, true};
  for (const auto& p : pts) {
    if (h2 > 0) ph.points.emplace_back(p.n, p.hybrid_ms / h2);
    if (d2 > 0) pd.points.emplace_back(p.n, p.dtls_ms / d2);
  }
  growth.series.push_back(std::move(ph));
  growth.series.push_back(std::move(pd));
  double top = 0;
  for (const auto& s : growth.series) {
    for (const auto& [n, y] : s.points) top = std::max(top, std::isfinite(y) ? y : 0.0);
  }
  if (top > 10) {  // a few runaway points would flatten the rest on a linear axis
    growth.y_scale = AxisScale::kLog10;
    growth.y_label += " (log scale)";
  }
  std::vector<ReportFigure> out;
  out.push_back({std::string(one_topology ? "Measured in this run: mean solid, p99 dashed"
                                           : "Measured in this run: means, the raw path's dashed") +
                     (any_serial ? ", the serial one-thread mean grey dashed (every receiver's work one after the other)" : "") +
                     ". One way: notify to the last subscriber's event callback.",
                 std::move(abs)});
  out.push_back({"Each line divided by its own N=2 value, so our microseconds and the paper's milliseconds compare "
                 "as growth. The group-size goal: within 1.2× at the largest N.",
                 std::move(growth)});
  return out;
}

// What a sweep chart draws per configuration.
struct SweepLines {
  bool mean = true;  // mean with markers
  bool p99 = true;   // p99 (dashed, or with markers when alone)
};

// A line chart of the latency (`value`: mean, p99) against `x` per security
// configuration (and topology; the raw path's lines dashed); nothing when the
// rows have fewer than two distinct x values (a sweep of one point).
template <typename X, typename V>
std::optional<ReportFigure> sweep_figure(const Rows& rows, LineChart c, X x, V value, SweepLines lines,
                                         std::string caption) {
  std::set<std::string> topologies;
  std::set<double> xs;
  Rows completed;
  for (const auto* r : rows) {
    topologies.insert(r->topology);
    if (r->latency.count == 0) continue;
    completed.push_back(r);
    xs.insert(x(*r));
  }
  if (xs.size() < 2) return std::nullopt;
  const auto key = [&topologies](const ScenarioResult& r) {
    return topologies.size() > 1 ? config_and_topology(r) : config_name(r);
  };
  for (const auto& [k, list] : grouped(completed, key)) {
    std::vector<std::pair<double, std::pair<double, double>>> pts;
    for (const auto* r : list) pts.push_back({x(*r), value(*r)});
    std::sort(pts.begin(), pts.end());
    const int color = config_color(*list.front());
    const bool raw = list.front()->topology == "netns-raw";
    ChartSeries mean{k + ", mean", {}, SeriesStyle::kLineMarkers, color, raw, false};
    ChartSeries p99{k + ", p99", {}, lines.mean ? SeriesStyle::kLine : SeriesStyle::kLineMarkers, color,
                    lines.mean || raw, false};
    for (const auto& [px, v] : pts) {
      mean.points.emplace_back(px, v.first);
      p99.points.emplace_back(px, v.second);
    }
    if (lines.mean) c.series.push_back(std::move(mean));
    if (lines.p99) c.series.push_back(std::move(p99));
  }
  return ReportFigure{std::move(caption), std::move(c)};
}

LineChart line_chart(std::string id, std::string title, std::string x_label, AxisScale xs, std::string y_label,
                     AxisScale ys) {
  LineChart c;
  c.id = std::move(id);
  c.title = std::move(title);
  c.x_label = std::move(x_label);
  c.x_scale = xs;
  c.y_label = std::move(y_label);
  c.y_scale = ys;
  return c;
}

std::vector<ReportFigure> series_figures(const Rows& rows, const std::string& series) {
  std::optional<ReportFigure> f;
  auto half_rtt = [](const ScenarioResult& r) { return std::make_pair(r.latency.mean, r.latency.p99); };
  auto n = [](const ScenarioResult& r) { return static_cast<double>(r.subscribers); };
  if (series == "payload") {
    f = sweep_figure(rows,
                     line_chart("chart-payload", "Latency against payload size", "payload (bytes)", AxisScale::kLinear,
                                "half-RTT latency (µs)", AxisScale::kLinear),
                     [](const ScenarioResult& r) { return static_cast<double>(r.payload_bytes); }, half_rtt, {},
                     "Measured in this run: mean with markers, p99 dashed.");
  } else if (series == "dtls-fanout") {
    f = sweep_figure(rows,
                     line_chart("chart-dtls-fanout", "Publish to the last receiver against N: DTLS fan-out and a group key",
                                "subscribers N (log scale)", AxisScale::kLog2,
                                "latency to the last receiver (µs, log scale)", AxisScale::kLog10),
                     n, half_rtt, {},
                     "Measured in this run (in-process memory transport): DTLS 1.2 encrypts once per subscriber, a "
                     "group key once per message. Mean with markers, p99 dashed.");
  } else if (series == "rate") {
    LineChart c = line_chart("chart-rate", "One-way p99 against notification rate", "target rate (events/s, log scale)",
                             AxisScale::kLog10, "subscribers' one-way p99 (µs, log scale)", AxisScale::kLog10);
    c.rules = {{1000.0, "saturation limit: p99 1 ms"}};
    f = sweep_figure(rows, std::move(c),
                     [](const ScenarioResult& r) { return r.pacing_ms > 0 ? 1000.0 / r.pacing_ms : 0.0; }, half_rtt,
                     {.mean = false, .p99 = true},
                     "Measured in this run; the raw path's lines dashed. A step saturates when p99 passes 1 ms, events "
                     "are lost or the achieved rate falls short (the run's notes); the sweep stops at the first.");
  }
  if (!f) return {};
  return {std::move(*f)};
}

// --- the sections ---------------------------------------------------------------------

std::string duration_text(std::int64_t ns) {
  if (ns <= 0) return "unknown";
  const double s = static_cast<double>(ns) / 1e9;
  return s < 120 ? cell_number(s, 1) + " s" : cell_number(s / 60, 1) + " min";
}

ReportSection run_section(const RunInfo& info, const MachineInfo& m, std::size_t rows) {
  ReportSection s;
  s.id = "run";
  s.title = "The run";
  ReportFacts settings{"Settings", {{"command", "layersec " + info.command},
                                    {"started (UTC)", info.started_utc},
                                    {"finished (UTC)", utc_timestamp()},
                                    {"duration", duration_text(info.started_monotonic_ns
                                                                   ? monotonic_ns() - info.started_monotonic_ns
                                                                   : 0)},
                                    {"seed", std::to_string(info.seed)},
                                    {"iterations per scenario", std::to_string(info.iterations)},
                                    {"scenarios", std::to_string(rows)}}};
  settings.items.insert(settings.items.end(), info.settings.begin(), info.settings.end());
  settings.items.push_back({"peak RSS", info.peak_rss_per_scenario ? "per scenario" : "process-wide (reset refused)"});
  s.facts = {settings, {"Machine", machine_facts(m)}};
  if (!info.method.empty()) {
    s.details = {info.method};
    s.details_summary = "How the figures were measured";
  }
  return s;
}

std::vector<ReportHighlight> paper_highlights(const Rows& rows) {
  std::vector<ReportHighlight> out;
  for (const auto* r : rows) {
    const PaperScenario* p = paper_scenario(r->paper_id);
    if (!p || r->topology != rows.front()->topology) continue;
    const PaperScenario* pb = paper_baseline(p);
    if ((r->paper_id == "3a-B" || r->paper_id == "2a-B") && r->ratio_mean && r->ratio_p99 && pb) {
      out.push_back({p->label + " (" + p->id + ") over unsecured" + topology_suffix(r->topology),
                     cell_ratio(*r->ratio_mean) + " mean",
                     "p99 " + cell_ratio(*r->ratio_p99) + "; the paper's: mean " + cell_ratio(p->mean_ms / pb->mean_ms) +
                         ", p99 " + cell_ratio(p->p99_ms / pb->p99_ms) + " (Table 19)",
                     ""});
    }
    if (r->paper_id == "3b-A" && r->establishment_ms && p->establishment_ms) {
      out.push_back({"RSA-2048 session establishment (" + p->id + ")", cell_number(*r->establishment_ms, 1) + " ms",
                     "the paper's: " + cell_number(*p->establishment_ms, 1) + " ms (Table 17)", ""});
    }
  }
  return out;
}

}  // namespace

ReportDocument scenario_report(const RunInfo& info, const MachineInfo& machine_now,
                               const std::vector<ScenarioResult>& rows, const std::vector<ReportSection>& extra) {
  MachineInfo machine = machine_now;
  if (!info.load_average.empty()) machine.load_average = info.load_average;  // at the run's start
  ReportDocument doc;
  doc.title = "layersec " + info.command + ": results";
  doc.subtitle = "Started " + info.started_utc + " on " + machine.host + " (" + machine.cpu_model + ", " +
                 std::to_string(machine.logical_cpus) + " CPUs) · " + machine.build_type + " · commit " +
                 machine.commit + " · seed " + std::to_string(info.seed) + ", " + std::to_string(info.iterations) +
                 " iterations per scenario";
  Rows all;
  for (const auto& r : rows) all.push_back(&r);
  doc.sections.push_back(run_section(info, machine, rows.size()));
  for (const auto& [series, list] : grouped(all, [](const ScenarioResult& r) { return r.series; })) {
    ReportSection s;
    s.id = series;
    s.title = series_title(series);
    if (series == "paper-scenarios") {
      s.paragraphs = {"Each row is one of the seed paper's sub-scenarios (Table 14) measured in this run, with the "
                      "paper's published figures beside it in the shaded columns. The paper measured milliseconds on two "
                      "VMs with vsomeip and the kernel macsec driver; ours are microseconds of layersec's own code path. "
                      "Compare the ratios to the unsecured baseline and the order of the scenarios, not the absolute "
                      "numbers."};
      for (const auto& [t, of_topology] : grouped(list, [](const ScenarioResult& r) { return r.topology; })) {
        s.tables.push_back(paper_latency_table(of_topology, t));
        s.tables.push_back(paper_cost_table(of_topology, t));
        s.figures.push_back(overhead_figure(of_topology, false, t));
        s.figures.push_back(overhead_figure(of_topology, true, t));
      }
      for (auto& f : cdf_figures(list, series, "the paper's sub-scenarios")) s.figures.push_back(std::move(f));
      s.highlights = paper_highlights(list);
    } else {
      s.tables.push_back(series_table(list, series));
      if (series == "group-size") {
        for (auto& f : group_figures(list)) s.figures.push_back(std::move(f));
        // One goal per topology: group_size_goals compares N within one set of rows.
        std::vector<std::pair<std::string, GroupGoal>> goals;
        for (const auto& [t, of_topology] : grouped(list, [](const ScenarioResult& r) { return r.topology; })) {
          std::vector<ScenarioResult> subset;
          for (const auto* r : of_topology) subset.push_back(*r);
          for (const auto& g : group_size_goals(subset)) goals.emplace_back(t, g);
        }
        for (const auto& [topology, g] : goals) {
          const std::string text = "Group-keyed latency to the last receiver at N=" + std::to_string(g.n_large) +
                                   " within " + format_fixed(g.limit, 1) + "× of N=2 (" + g.key_distribution + ", " +
                                   g.timing_model + topology_suffix(topology) + "): mean " + cell_ratio(g.ratio_mean) + ", p50 " +
                                   cell_ratio(g.ratio_p50) + ", p99 " + cell_ratio(g.ratio_p99) +
                                   "; half RTT mean " + cell_ratio(g.ratio_half_rtt_mean) + ", p99 " +
                                   cell_ratio(g.ratio_half_rtt_p99) +
                                   (g.n_large != 64 ? " (the goal names N=64; the largest N here is " +
                                                          std::to_string(g.n_large) + ")"
                                                    : "");
          s.notes.push_back({text, g.met ? "met" : "not-met"});
          s.highlights.push_back({"Group-size goal, N=" + std::to_string(g.n_large) + " vs N=2" + topology_suffix(topology),
                                  cell_ratio(g.ratio_p99) + " p99", "mean " + cell_ratio(g.ratio_mean) + ", limit ×1.2",
                                  g.met ? "met" : "not-met"});
        }
      } else {
        for (auto& f : series_figures(list, series)) s.figures.push_back(std::move(f));
      }
      if (series == "dtls-fanout") {
        for (const auto& line : group_size_goal_lines(rows)) {
          if (line.rfind("  dtls-fanout", 0) == 0) s.notes.push_back({line.substr(2), ""});
        }
      }
      for (auto& f : cdf_figures(list, series, series == "group-size" ? "by group size" : series_title(series)))
        s.figures.push_back(std::move(f));
    }
    ReportTable est = establishment_table(list, "table-establishment-" + series);
    if (!est.rows.empty()) s.tables.push_back(std::move(est));
    doc.sections.push_back(std::move(s));
  }
  for (const auto& e : extra) doc.sections.push_back(e);
  ReportSection notes;
  notes.id = "notes";
  notes.title = "Notes";
  for (const auto& n : info.notes) notes.notes.push_back({n, ""});
  for (const auto& r : rows) {
    if (!r.notes.empty()) notes.details.push_back(r.name + ": " + r.notes);
  }
  notes.details_summary = "Notes per scenario (" + std::to_string(notes.details.size()) + ")";
  notes.paragraphs = {"The other files of this folder: results.json and results.csv (every figure, with the paper's "
                      "under \"paper\"), report.md, samples/ (every latency sample in order) and the PNG plots when "
                      "gnuplot was installed."};
  doc.sections.push_back(std::move(notes));
  doc.footer = "Generated by layersec (commit " + machine.commit + ") on " + utc_timestamp() +
               ". Shaded columns, dotted lines, hollow markers and hatched bars are the seed paper's published "
               "figures (its tables as cited), not measurements of this run.";
  return doc;
}

bool write_report_html(const std::string& dir, const RunInfo& info, const std::vector<ScenarioResult>& rows,
                       const std::vector<ReportSection>& extra, std::ostream& out, std::ostream& err) {
  const std::string path = (std::filesystem::path(dir) / "report.html").string();
  try {
    OutputFile f(path);
    f.write(render_report_html(scenario_report(info, collect_machine_info(), rows, extra)));
    f.close();
  } catch (const FileError& e) {
    err << "layersec: " << e.what() << "\n";
    return false;
  }
  out << "report: " << path << "\n";
  return true;
}

}  // namespace layersec::harness
