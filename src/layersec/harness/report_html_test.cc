#include "layersec/harness/report_html.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "layersec/harness/machine_info.h"
#include "layersec/harness/paper.h"
#include "layersec/harness/report_scenarios.h"
#include "layersec/harness/report_zonal.h"
#include "layersec/harness/results.h"
#include "layersec/harness/results_output.h"
#include "layersec/harness/stats.h"
#include "layersec/harness/zonal.h"
#include "layersec/harness/zonal_report.h"

namespace layersec::harness {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

ScenarioResult make_row(const std::string& name, const std::string& series, const std::string& paper_id,
                        const std::string& security, const std::string& keys, int n, double base_us) {
  ScenarioResult r;
  r.name = name;
  r.series = series;
  r.paper_id = paper_id;
  r.label = name;
  r.security = security;
  r.key_distribution = keys;
  r.delivery = n > 1 ? "multicast" : "unicast";
  r.subscribers = n;
  r.timing_model = kParallelEcus;
  for (int i = 0; i < 40; ++i) r.samples_us.push_back(base_us + i % 7);
  r.latency = summarize(r.samples_us);
  r.one_way = r.latency;
  r.iterations = 40;
  r.rss_kib = 4096;
  r.cpu_pct = 0.5;
  if (security != "none") r.secoc_path_p50_us = 3.5;
  return r;
}

// The paper's ten plus a group-size series, with baselines applied.
std::vector<ScenarioResult> demo_like_rows() {
  std::vector<ScenarioResult> rows;
  const char* cfg[][3] = {{"unsecured", "none", "none"}, {"secoc-psk", "secoc", "psk"},
                          {"secoc-rsa", "secoc", "rsa-mode-b"}, {"hybrid-psk", "hybrid", "psk"},
                          {"hybrid-rsa", "hybrid", "rsa-mode-b"}};
  const char* ids[] = {"1", "2a", "2b", "3a", "3b"};
  for (int c = 0; c < 5; ++c) {
    for (int m = 0; m < 2; ++m) {
      rows.push_back(make_row(std::string(cfg[c][0]) + (m ? "-multicast" : "-unicast"), "paper-scenarios",
                              std::string(ids[c]) + (m ? "-B" : "-A"), cfg[c][1], cfg[c][2], m ? 2 : 1,
                              20.0 + 10 * c + 5 * m));
      if (std::string(cfg[c][2]) == "rsa-mode-b") rows.back().establishment_ms = 9.5;
    }
  }
  apply_baselines(rows, "unsecured-unicast", "unsecured-multicast");
  std::vector<ScenarioResult> groups;
  for (int n : {1, 2, 4, 8}) {
    groups.push_back(make_row("group-hybrid-psk-n" + std::to_string(n), "group-size", "", "hybrid", "psk", n, 40 + n));
    groups.push_back(make_row("group-unsecured-n" + std::to_string(n), "group-size", "", "none", "none", n, 20 + n));
  }
  apply_group_size_baselines(groups);
  rows.insert(rows.end(), groups.begin(), groups.end());
  return rows;
}

RunInfo test_info() {
  RunInfo info;
  info.command = "demo";
  info.seed = 7;
  info.iterations = 40;
  info.started_utc = "2026-01-01T00:00:00Z";
  info.method = "method text";
  info.notes = {"a note"};
  info.settings = {{"group sizes", "1 2 4 8"}};
  return info;
}

MachineInfo test_machine() {
  MachineInfo m;
  m.host = "testhost";
  m.cpu_model = "Test CPU";
  m.logical_cpus = 2;
  m.physical_cores = 2;
  m.kernel = "Linux 6.1";
  m.os = "Debian";
  m.build_type = "Release, assertions off";
  m.compiler = "GCC 12";
  m.commit = "abc123";
  return m;
}

TEST(HarnessReportHtmlTest, EscapesEveryStringPutIntoThePage) {
  const std::string evil = "<script>alert(1)</script>\"onmouseover=\"x'&<img src=x onerror=y>";
  auto rows = demo_like_rows();
  rows[3].name = evil;
  rows[3].label = evil;
  rows[3].notes = evil;
  rows[12].name = evil;  // a group-size row: legend and table
  rows.push_back(make_row(evil, evil, "", "secoc", evil, 2, 30));  // its own series, section title and id
  RunInfo info = test_info();
  info.command = evil;
  info.method = evil;
  info.notes = {evil};
  info.settings = {{evil, evil}};
  info.started_utc = evil;
  MachineInfo m = test_machine();
  m.cpu_model = evil;
  m.commit = evil;
  nlohmann::json zonal = {{"method", evil},
                          {"options", {{evil, evil}}},
                          {"rows", {{{"hops", 1}, {"shaper", evil}, {"st_max_us", 5.0}, {evil, evil}}}},
                          {"compromised_switch", {{"switch", evil}, {"example_read", evil}, {"accepted", 0}}},
                          {evil, {{{evil, evil}}}}};
  const std::string html = render_report_html(scenario_report(info, m, rows, {zonal_report_section(zonal)}));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("\"onmouseover"), std::string::npos);
  EXPECT_EQ(html.find("x'&<"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;&quot;onmouseover=&quot;x&#39;&amp;&lt;img"),
            std::string::npos);
  // Every id and class the writer made from a name is sanitised.
  const std::regex id_attr("id=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), id_attr); it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(std::regex_match((*it)[1].str(), std::regex("[a-z0-9-]+"))) << (*it)[1].str();
  }
  // Every tag in the page is one the writer emits.
  const std::regex tag("<([a-zA-Z][a-zA-Z0-9]*)");
  const std::set<std::string> allowed = {"html", "head", "meta", "title", "style", "body", "header", "h1", "p", "main",
                                         "nav", "a", "div", "section", "h2", "h3", "dl", "dt", "dd", "ul", "li",
                                         "span", "table", "caption", "thead", "tbody", "tr", "th", "td", "figure",
                                         "figcaption", "svg", "g", "line", "rect", "text", "path", "circle",
                                         "details", "summary", "footer", "defs", "pattern"};
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(allowed.count((*it)[1].str())) << (*it)[1].str();
  }
}

TEST(HarnessReportHtmlTest, ThePageIsSelfContained) {
  const std::string html =
      render_report_html(scenario_report(test_info(), test_machine(), demo_like_rows(), {}));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  for (const char* bad : {"<script", "<link", "<img", "<iframe", "<object", "@import", " src=", "href=\"http",
                          "https://"}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  }
  // url() only for the SVG patterns of this page.
  EXPECT_GT(count(html, "url(#"), 0u);
  EXPECT_EQ(count(html, "url("), count(html, "url(#"));
  // The only URL is the SVG namespace name (an identifier, never fetched).
  EXPECT_EQ(count(html, "http://"), count(html, "http://www.w3.org/2000/svg"));
}

TEST(HarnessReportHtmlTest, ThePaperScenariosSitBesideThePapersFigures) {
  const auto rows = demo_like_rows();
  const ReportDocument doc = scenario_report(test_info(), test_machine(), rows, {});
  const ReportSection* paper = nullptr;
  for (const auto& s : doc.sections) {
    if (s.id == "paper-scenarios") paper = &s;
  }
  ASSERT_NE(paper, nullptr);
  ASSERT_EQ(paper->tables.size(), 3u);  // latency, cost, then the key establishment
  const ReportTable& t = paper->tables[0];
  ASSERT_EQ(t.rows.size(), 10u);
  EXPECT_NE(t.paper_group.find("the paper's"), std::string::npos);
  std::size_t paper_cols = 0;
  for (const auto& c : t.columns) {
    paper_cols += c.paper;
    if (c.paper) {
      EXPECT_EQ(c.unit.find("µs"), std::string::npos) << c.head;  // the paper's are ms, %, MiB
    }
  }
  EXPECT_EQ(paper_cols, 6u);
  // 3b-B beside the paper's Table 19 mean and p99 ratio.
  const auto& last = t.rows.back();
  EXPECT_EQ(last[0], "3b-B");
  EXPECT_EQ(last[t.columns.size() - 6], cell_number(paper_scenario("3b-B")->mean_ms, 2));
  EXPECT_EQ(last.back(), cell_ratio(paper_scenario("3b-B")->p99_ms / paper_scenario("1-B")->p99_ms));
  // Cost: ours beside Tables 16 and 18.
  EXPECT_EQ(paper->tables[1].rows.size(), 10u);
  EXPECT_EQ(paper->tables[1].rows[0].back(), cell_number(paper_scenario("1-A")->mem_mib, 1));
  // Establishment: ours beside Table 17.
  EXPECT_EQ(paper->tables[2].rows.size(), 4u);
  // Charts: overhead (mean, p99: ours and the paper's) and the CDF of the ten.
  ASSERT_EQ(paper->figures.size(), 3u);
  const auto& bars = std::get<BarChart>(paper->figures[0].chart);
  ASSERT_EQ(bars.series.size(), 2u);
  EXPECT_TRUE(bars.series[1].paper);
  EXPECT_EQ(bars.categories.size(), 10u);
  const auto& cdf = std::get<LineChart>(paper->figures[2].chart);
  EXPECT_EQ(cdf.series.size(), 10u);
  // The rendered page has every table and chart once.
  const std::string html = render_report_html(doc);
  for (const char* id : {"table-paper-scenarios-sim", "table-paper-cost-sim", "table-establishment-paper-scenarios", "chart-overhead-mean-sim",
                         "chart-overhead-p99-sim", "chart-cdf-paper-scenarios", "table-group-size", "chart-group-size",
                         "chart-group-growth", "chart-cdf-group-size"}) {
    EXPECT_EQ(count(html, std::string("id=\"") + id + "\""), 1u) << id;
  }
  EXPECT_NE(html.find("Test CPU"), std::string::npos);
  EXPECT_NE(html.find("abc123"), std::string::npos);
  EXPECT_NE(html.find("1 2 4 8"), std::string::npos);
}

TEST(HarnessReportHtmlTest, GroupSizeGoalAndThePapersTable21Growth) {
  const ReportDocument doc = scenario_report(test_info(), test_machine(), demo_like_rows(), {});
  const ReportSection* g = nullptr;
  for (const auto& s : doc.sections) {
    if (s.id == "group-size") g = &s;
  }
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->notes.size(), 1u);
  EXPECT_EQ(g->notes[0].status, "met");  // 48 / 42 = x1.14 <= 1.2
  ASSERT_EQ(g->highlights.size(), 1u);
  const auto& growth = std::get<LineChart>(g->figures[1].chart);
  std::size_t paper_series = 0;
  for (const auto& s : growth.series) paper_series += s.paper;
  EXPECT_EQ(paper_series, 2u);  // hybrid and DTLS, Table 21
  for (const auto& s : growth.series) {  // every line relative to its own N=2 point
    bool at_two = false;
    for (const auto& [n, y] : s.points) {
      if (n == 2) {
        EXPECT_DOUBLE_EQ(y, 1.0) << s.label;
        at_two = true;
      }
    }
    EXPECT_TRUE(at_two) << s.label;
  }
  // The group table carries the paper's Table 21 column.
  bool paper_col = false;
  for (const auto& c : g->tables[0].columns) paper_col = paper_col || c.paper;
  EXPECT_TRUE(paper_col);
}

TEST(HarnessReportHtmlTest, ConstantColumnsAreFoldedUnderTheTable) {
  ReportTable t;
  t.id = "t";
  t.fold_constant_columns = true;
  t.columns = {{"name", "", false, false, ""}, {"payload", "bytes", true, false, ""}, {"p99", "µs", true, false, ""}};
  t.rows = {{"a", "64", "1.0"}, {"b", "64", "2.0"}, {"c", "64", "3.0"}};
  ReportDocument doc;
  doc.sections.push_back({});
  doc.sections[0].id = "s";
  doc.sections[0].tables = {t};
  std::string html = render_report_html(doc);
  EXPECT_NE(html.find("The same in every row: payload 64 bytes."), std::string::npos);
  EXPECT_EQ(count(html, "payload"), 1u);  // in the note only, not as a column
  EXPECT_EQ(count(html, "<td class=\"num\">"), 3u);  // p99 of each row
  // Fewer than three rows: nothing folded (two equal cells say little).
  doc.sections[0].tables[0].rows.pop_back();
  html = render_report_html(doc);
  EXPECT_EQ(html.find("The same in every row"), std::string::npos);
  EXPECT_EQ(count(html, "<td class=\"num\">"), 4u);
}

TEST(HarnessReportHtmlTest, ChartsDrawOnlyWhatCanBeDrawn) {
  LineChart c;
  c.id = "t";
  c.title = "t";
  c.x_scale = AxisScale::kLog10;
  c.y_scale = AxisScale::kLog10;
  c.series.push_back({"s",
                      {{1, 1},
                       {10, 100},
                       {0, 5},
                       {-1, 5},
                       {std::numeric_limits<double>::quiet_NaN(), 5},
                       {5, std::numeric_limits<double>::infinity()}},
                      SeriesStyle::kLine,
                      0,
                      false,
                      false});
  const std::string svg = render_svg(c);
  EXPECT_NE(svg.find("data-points=\"2\""), std::string::npos) << svg;
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  LineChart empty;
  empty.title = "empty";
  EXPECT_NE(render_svg(empty).find("no data"), std::string::npos);
  BarChart b;
  b.categories = {"a", "b"};
  b.series = {{"ours", {1.5, std::nullopt}, 0, false}, {"the paper's", {2.0, -1.0}, 4, true}};
  const std::string bars = render_svg(b);
  EXPECT_EQ(count(bars, "class=\"bar\""), 2u);
}

TEST(HarnessReportHtmlTest, AxisTicksAndLabels) {
  EXPECT_EQ(axis_ticks(1, 64, AxisScale::kLog2), (std::vector<double>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(axis_ticks(10, 10000, AxisScale::kLog10), (std::vector<double>{10, 100, 1000, 10000}));
  EXPECT_EQ(axis_ticks(10, 100, AxisScale::kLog10), (std::vector<double>{10, 20, 50, 100}));
  EXPECT_EQ(axis_ticks(0, 1, AxisScale::kLinear), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}));
  EXPECT_TRUE(axis_ticks(0, 10, AxisScale::kLog10).empty());  // no log of 0
  EXPECT_EQ(tick_label(0.5), "0.5");
  EXPECT_EQ(tick_label(1500), "1500");
  EXPECT_EQ(tick_label(20000), "20k");
  EXPECT_EQ(tick_label(1.5e6), "1.5M");
  EXPECT_EQ(html_id("Hybrid-PSK N=2 <b>"), "hybrid-psk-n-2-b");
  EXPECT_EQ(html_id("<>"), "x");
  EXPECT_EQ(cell_ratio(1.234), "×1.23");
  EXPECT_EQ(cell_ratio(std::nan("")), "–");
  EXPECT_EQ(cell_number(std::numeric_limits<double>::infinity()), "–");
}

TEST(HarnessReportHtmlTest, ZonalSectionReadsTheZonalSectionsJson) {
  // A real (short) sweep: every field the section names must be in zonal.json.
  ZonalSweepOptions o;
  o.min_hops = 1;
  o.max_hops = 2;
  o.cycles = 20;
  const nlohmann::json z = zonal_json(run_zonal_sweep(o));
  const ReportSection s = zonal_report_section(z);
  ASSERT_EQ(s.tables.size(), 1u);
  const ReportTable& t = s.tables[0];
  EXPECT_EQ(t.rows.size(), z["rows"].size());
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    if (t.columns[c].head == "bound") continue;          // none for FIFO rows
    if (t.columns[c].head == "sync interval") continue;  // gPTP rows only (ideal clocks here)
    for (const auto& r : t.rows) EXPECT_NE(r[c], "–") << t.columns[c].head;
  }
  ASSERT_EQ(s.figures.size(), 2u);
  EXPECT_GT(std::get<LineChart>(s.figures[0].chart).series.size(), 3u);
  ASSERT_EQ(s.highlights.size(), 1u);
  EXPECT_EQ(s.highlights[0].value, "0");
  EXPECT_EQ(s.highlights[0].status, "met");
  // A field the section does not know becomes a column with its unit; a new
  // top-level array of objects a table; a mistyped figure is left out of the chart.
  nlohmann::json more = z;
  more["rows"][0]["ptp_offset_max_ns"] = 42;
  more["rows"][0]["st_max_us"] = "oops";
  more["ptp"] = nlohmann::json::array({{{"port", 1}, {"offset_ns", 12}}});
  const ReportSection m = zonal_report_section(more);
  bool found = false;
  for (const auto& c : m.tables[0].columns) found = found || (c.head == "ptp offset max" && c.unit == "ns");
  EXPECT_TRUE(found);
  ASSERT_EQ(m.tables.size(), 2u);
  EXPECT_EQ(m.tables[1].rows.size(), 1u);
  ASSERT_EQ(m.tables[1].columns.size(), 2u);  // JSON key order: offset_ns, port
  EXPECT_EQ(m.tables[1].columns[0].head, "offset");
  EXPECT_EQ(m.tables[1].columns[0].unit, "ns");
  const auto& lat = std::get<LineChart>(m.figures[0].chart);
  EXPECT_EQ(lat.series[0].points.size() + 1, std::get<LineChart>(s.figures[0].chart).series[0].points.size());
  // Garbage in: a section, no crash.
  EXPECT_NO_THROW((void)zonal_report_section(nlohmann::json(3)));
  EXPECT_NO_THROW((void)zonal_report_section(nlohmann::json::parse(R"({"rows": [1, "x", {"hops": "a"}]})")));
}

// The series of `bench scenarios` beyond the paper's: a table each and a
// sweep chart where the rows vary the swept value (payload, N, rate).
TEST(HarnessReportHtmlTest, BenchSeriesGetTablesAndSweepCharts) {
  std::vector<ScenarioResult> rows;
  for (std::size_t payload : {64u, 1024u}) {
    for (const char* sec : {"none", "secoc"}) {
      rows.push_back(make_row(std::string(sec) + "-p" + std::to_string(payload), "payload", "", sec,
                              std::string(sec) == "none" ? "none" : "psk", 1, 10.0 + static_cast<double>(payload) / 64));
      rows.back().payload_bytes = payload;
    }
  }
  for (int n : {2, 8}) {
    rows.push_back(make_row("dtls-n" + std::to_string(n), "dtls-fanout", "", "dtls", "none", n, 30.0 * n));
    rows.push_back(make_row("group-n" + std::to_string(n), "dtls-fanout", "", "secoc", "group-psk", n, 12.0));
  }
  for (double pacing : {10.0, 1.0}) {
    rows.push_back(make_row("rate-" + cell_number(pacing, 0), "rate", "", "hybrid", "psk", 2, 20.0 / pacing));
    rows.back().pacing_ms = pacing;
  }
  rows.push_back(make_row("tp", "someip-tp", "", "secoc", "psk", 1, 500));  // one point: no sweep chart
  const ReportDocument doc = scenario_report(test_info(), test_machine(), rows, {});
  std::map<std::string, const ReportSection*> by;
  for (const auto& s : doc.sections) by[s.id] = &s;
  for (const char* id : {"run", "payload", "dtls-fanout", "rate", "someip-tp", "notes"}) {
    ASSERT_TRUE(by.count(id)) << id;
  }
  EXPECT_FALSE(by.count("paper-scenarios"));
  EXPECT_FALSE(by.count("group-size"));

  const auto line = [&](const char* section, const char* chart) -> const LineChart* {
    for (const auto& f : by[section]->figures) {
      const auto* c = std::get_if<LineChart>(&f.chart);
      if (c && c->id == chart) return c;
    }
    return nullptr;
  };
  const LineChart* payload = line("payload", "chart-payload");
  ASSERT_NE(payload, nullptr);
  ASSERT_EQ(payload->series.size(), 4u);  // unsecured and SecOC-PSK, mean and p99
  for (const auto& s : payload->series) {
    ASSERT_EQ(s.points.size(), 2u) << s.label;
    EXPECT_EQ(s.points[0].first, 64);
    EXPECT_EQ(s.points[1].first, 1024);
    EXPECT_FALSE(s.paper);
  }
  const LineChart* dtls = line("dtls-fanout", "chart-dtls-fanout");
  ASSERT_NE(dtls, nullptr);
  EXPECT_EQ(dtls->series.size(), 4u);
  EXPECT_EQ(dtls->x_scale, AxisScale::kLog2);
  const LineChart* rate = line("rate", "chart-rate");
  ASSERT_NE(rate, nullptr);
  ASSERT_EQ(rate->series.size(), 1u);  // p99 only
  ASSERT_EQ(rate->series[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(rate->series[0].points[0].first, 100.0);  // events/s from the rows' pacing
  EXPECT_DOUBLE_EQ(rate->series[0].points[1].first, 1000.0);
  EXPECT_DOUBLE_EQ(rate->series[0].points[1].second, rows[9].latency.p99);
  ASSERT_EQ(rate->rules.size(), 1u);
  EXPECT_EQ(line("someip-tp", "chart-someip-tp"), nullptr);
  EXPECT_NE(line("someip-tp", "chart-cdf-someip-tp"), nullptr);

  // The rate table has the rate column; every table has its rows.
  const ReportTable& rt = by["rate"]->tables.at(0);
  EXPECT_EQ(rt.rows.size(), 2u);
  bool rate_col = false;
  for (const auto& c : rt.columns) rate_col = rate_col || c.unit == "events/s";
  EXPECT_TRUE(rate_col);
  EXPECT_EQ(by["payload"]->tables.at(0).rows.size(), 4u);
  EXPECT_EQ(by["dtls-fanout"]->tables.at(0).rows.size(), 4u);
  const std::string html = render_report_html(doc);
  for (const char* id : {"table-payload", "table-dtls-fanout", "table-rate", "table-someip-tp", "chart-payload",
                         "chart-dtls-fanout", "chart-rate"}) {
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  }
}

TEST(HarnessReportHtmlTest, MachineInfoParsers) {
  MachineInfo m;
  parse_cpuinfo("processor\t: 0\nmodel name\t: Test CPU 9000\nphysical id\t: 0\ncore id\t: 0\n"
                "flags\t\t: fpu sse hypervisor avx\n\nprocessor\t: 1\nmodel name\t: Test CPU 9000\n"
                "physical id\t: 0\ncore id\t: 1\n\nprocessor\t: 2\nphysical id\t: 0\ncore id\t: 1\n",
                m);
  EXPECT_EQ(m.cpu_model, "Test CPU 9000");
  EXPECT_EQ(m.physical_cores, 2);
  EXPECT_TRUE(m.hypervisor);
  EXPECT_EQ(os_pretty_name("NAME=x\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(os_pretty_name("NAME=x\n"), "");
  const MachineInfo now = collect_machine_info();
  EXPECT_GT(now.logical_cpus, 0);
  EXPECT_FALSE(now.kernel.empty());
  EXPECT_FALSE(now.compiler.empty());
  EXPECT_FALSE(now.commit.empty());
  EXPECT_EQ(machine_facts(now).size(), 10u);
}

TEST(HarnessReportHtmlTest, ResultsFolderWritesReportHtmlAndRefusesASymlink) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("layersec-report-html-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto rows = demo_like_rows();
  std::ostringstream out, err;
  ASSERT_TRUE(write_results_folder(dir.string(), test_info(), rows, /*plots=*/false, out, err)) << err.str();
  EXPECT_NE(out.str().find("report: " + (dir / "report.html").string()), std::string::npos);
  std::ifstream in(dir / "report.html");
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("table-paper-scenarios-sim"), std::string::npos);
  EXPECT_NE(html.str().find("</html>"), std::string::npos);
  // A symlink where report.html goes: refused, not followed.
  fs::remove(dir / "report.html");
  const fs::path victim = dir / "victim.txt";
  { std::ofstream(victim) << "precious\n"; }
  fs::create_symlink(victim, dir / "report.html");
  std::ostringstream out2, err2;
  EXPECT_FALSE(write_report_html(dir.string(), test_info(), rows, {}, out2, err2));
  EXPECT_NE(err2.str().find((dir / "report.html").string() + ": is a symbolic link"), std::string::npos) << err2.str();
  std::ifstream v(victim);
  std::string line;
  std::getline(v, line);
  EXPECT_EQ(line, "precious");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace layersec::harness
