#include "layersec/harness/report_tsn.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "layersec/harness/report_html.h"
#include "support/vectors.h"

namespace layersec::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A document in tsn_bench_json's layout (bench/tsn_bench_report.cc): one
// port, the shaper on, ST and BE without and with MACsec.
json tsn_doc() {
  auto row = [](const std::string& cls, bool macsec, double thr, double loss) {
    json r = {{"name", std::string("port100/") + (macsec ? "macsec" : "plain") + "/shaper/be-udp/" + cls},
              {"class", cls},
              {"transport", "udp"},
              {"macsec", macsec},
              {"shaper", true},
              {"port_mbit_s", 100},
              {"throughput_mbit_s", thr},
              {"jitter_ms", 0.05},
              {"loss_pct", loss},
              {"latency_p50_us", cls == "ST" ? json(300.0) : json(nullptr)},
              {"latency_p99_us", cls == "ST" ? json(420.5) : json(nullptr)},
              {"latency_max_us", cls == "ST" ? json(900.0) : json(nullptr)},
              {"bound_us", cls == "ST" ? json(443.2) : json(nullptr)},
              {"be_transport", "udp"},
              {"offered_mbit_s", cls == "ST" ? 42.0 : 100.0},
              {"share_mbit_s", cls == "ST" ? 60.0 : 40.0}};
    if (cls == "ST" && !macsec) {  // iperf3 and the probe
      r["probe_sent"] = 2000;
      r["probe_received"] = 2000;
      r["links"] = {{"sender", {{"tx", 1}}}};
    } else if (cls == "ST") {  // the generator
      r["st_source"] = "gen";
      r["generator"] = {{"sent", 15750}, {"received", 15749}, {"lost", 1}};
    }
    return r;
  };
  return {{"rows", json::array({row("ST", false, 42.0, 0), row("BE", false, 39.0, 2.5), row("ST", true, 41.9, 0),
                                row("BE", true, 38.0, 3.5)})},
          {"goals", json::array({{{"goal", "ST loss 0 while BE saturates the port"},
                                  {"row", "port100/plain/shaper/be-udp/ST"},
                                  {"met", true},
                                  {"detail", "iperf3 loss 0.000 %"}},
                                 {{"goal", "ST p99 within the analytic bound"},
                                  {"row", "port100/macsec/shaper/be-udp/ST"},
                                  {"met", false},
                                  {"detail", "p99 420.5 us, bound 443.2 us"}}})},
          {"reference",
           {{"source", "TSN lab paper: its hardware testbed, not this run"},
            {"without_macsec",
             {{"st_throughput_mbit_s", {508.9, 621.3}},
              {"be_throughput_mbit_s", {240.6, 266.2}},
              {"st_jitter_ms", {0.019, 0.066}},
              {"be_loss_pct_max", 10}}},
            {"with_macsec", {{"st_throughput_mbit_s", {116.3, 202.7}}, {"loss_pct_max", 84}}}}},
          {"method", "two network namespaces"},
          {"notes", json::array({"a note"})}};
}

const ReportTable* find_table(const ReportSection& s, const std::string& id) {
  for (const auto& t : s.tables) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

std::size_t column(const ReportTable& t, const std::string& head) {
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    if (t.columns[c].head == head) return c;
  }
  ADD_FAILURE() << "no column " << head << " in " << t.id;
  return 0;
}

TEST(HarnessReportTsnTest, RowsGoalsAndThePapersFiguresBesideThisRuns) {
  const ReportSection s = tsn_report_section(tsn_doc(), "/x/tsn.json");
  EXPECT_EQ(s.id, "tsn");
  const ReportTable* rows = find_table(s, "table-tsn");
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(rows->rows.size(), 4u);
  EXPECT_EQ(rows->rows[0][column(*rows, "delivered")], "42.0");
  EXPECT_EQ(rows->rows[0][column(*rows, "p99")], "420.5");
  EXPECT_EQ(rows->rows[0][column(*rows, "bound")], "443.2");
  EXPECT_EQ(rows->rows[0][column(*rows, "timed")], "2000/2000");
  EXPECT_EQ(rows->rows[2][column(*rows, "timed")], "15749/15750");  // the generator's frames
  EXPECT_EQ(rows->rows[1][column(*rows, "p99")], "–");  // BE: no probe
  EXPECT_EQ(rows->rows[3][column(*rows, "loss")], "3.50");
  // The row of a goal not met is flagged, the others not.
  EXPECT_EQ(rows->row_flags, (std::vector<std::string>{"", "", "failed", ""}));
  // The paper's figures: a paper column beside this run's per port.
  const ReportTable* paper = find_table(s, "table-tsn-paper");
  ASSERT_NE(paper, nullptr);
  ASSERT_EQ(paper->columns.size(), 4u);
  EXPECT_EQ(paper->columns[2].head, "100 Mbit/s port");
  EXPECT_FALSE(paper->columns[2].paper);
  EXPECT_TRUE(paper->columns[3].paper);
  ASSERT_EQ(paper->rows.size(), 6u);
  EXPECT_EQ(paper->rows[0][0], "ST throughput, without MACsec");
  EXPECT_EQ(paper->rows[0][2], "42.0");
  EXPECT_EQ(paper->rows[0][3], "508.9–621.3");
  EXPECT_EQ(paper->rows[3][3], "10.0");  // BE loss at most, the paper's
  EXPECT_EQ(paper->rows[5][2], "3.5");   // loss with MACsec at most, this run (ST 0, BE 3.5)
  EXPECT_EQ(paper->rows[5][3], "84.0");
  // Goals: a badge each, a highlight counting them; the notes after.
  ASSERT_EQ(s.notes.size(), 3u);
  EXPECT_EQ(s.notes[0].status, "met");
  EXPECT_EQ(s.notes[1].status, "not-met");
  EXPECT_EQ(s.notes[2].text, "a note");
  ASSERT_EQ(s.highlights.size(), 1u);
  EXPECT_EQ(s.highlights[0].value, "1 of 2");
  EXPECT_EQ(s.highlights[0].status, "not-met");
  // Charts per port: throughput (without / with MACsec per class) and ST latency against the bound.
  ASSERT_EQ(s.figures.size(), 2u);
  const auto& thr = std::get<BarChart>(s.figures[0].chart);
  EXPECT_EQ(thr.id, "chart-tsn-throughput-100");
  EXPECT_EQ(thr.categories, (std::vector<std::string>{"ST Qbv", "BE Qbv"}));
  ASSERT_EQ(thr.series.size(), 2u);
  EXPECT_EQ(thr.series[1].values[1], 38.0);
  const auto& lat = std::get<BarChart>(s.figures[1].chart);
  EXPECT_EQ(lat.id, "chart-tsn-latency-100");
  EXPECT_EQ(lat.categories, (std::vector<std::string>{"plain Qbv", "MACsec Qbv"}));
  EXPECT_EQ(lat.series[2].values[0], 443.2);
  EXPECT_EQ(s.details, (std::vector<std::string>{"two network namespaces"}));
  // On the page: the paper's group is labelled as the paper's.
  ReportDocument doc;
  doc.sections = {s};
  const std::string html = render_report_html(doc);
  EXPECT_NE(html.find("the TSN lab paper&#39;s (published)"), std::string::npos);
  EXPECT_NE(html.find("id=\"chart-tsn-latency-100\""), std::string::npos);
}

TEST(HarnessReportTsnTest, TwoPortsAndBothBeTransportsGetChartsPerPortAndLongerLabels) {
  json d = tsn_doc();
  json extra = d["rows"];
  for (auto& r : extra) {
    r["port_mbit_s"] = 1000;
    r["be_transport"] = "tcp";
  }
  for (auto& r : extra) d["rows"].push_back(r);
  const ReportSection s = tsn_report_section(d);
  ASSERT_EQ(s.figures.size(), 4u);
  EXPECT_EQ(std::get<BarChart>(s.figures[2].chart).id, "chart-tsn-throughput-1000");
  EXPECT_EQ(std::get<BarChart>(s.figures[0].chart).categories, (std::vector<std::string>{"ST Qbv udp", "BE Qbv udp"}));
  const ReportTable* paper = find_table(s, "table-tsn-paper");
  ASSERT_NE(paper, nullptr);
  ASSERT_EQ(paper->columns.size(), 5u);
  EXPECT_EQ(paper->columns[3].head, "1000 Mbit/s port");
}

TEST(HarnessReportTsnTest, GarbageIsShownAsDashesNeverAnError) {
  EXPECT_NO_THROW((void)tsn_report_section(json(3)));
  EXPECT_NO_THROW((void)tsn_report_section(json::parse(R"({"rows": 5, "goals": {"x": 1}, "reference": []})")));
  const ReportSection s = tsn_report_section(
      json::parse(R"({"rows": [1, "x", {"class": 7, "port_mbit_s": "fast", "throughput_mbit_s": "lots"}],
                      "goals": [3, {"met": "yes"}], "reference": {"without_macsec": {"st_throughput_mbit_s": ["a"]}}})"));
  const ReportTable* rows = find_table(s, "table-tsn");
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(rows->rows.size(), 1u);
  EXPECT_EQ(rows->rows[0][column(*rows, "delivered")], "–");
  EXPECT_EQ(rows->rows[0][column(*rows, "port")], "fast");
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0].status, "not-met");  // "met" must be true, not a string
  // Markup in a row name reaches the page as text.
  json evil = tsn_doc();
  evil["rows"][0]["name"] = "<script>alert(1)</script>";
  ReportDocument doc;
  doc.sections = {tsn_report_section(evil)};
  const std::string html = render_report_html(doc);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

class HarnessReportTsnFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("layersec-report-tsn-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  fs::path dir_;
};

TEST_F(HarnessReportTsnFilesTest, FoundInTheFolderOrGivenAndGivenFilesMustBeGood) {
  std::ostringstream out, err;
  // Nothing there: no sections, no error.
  auto none = result_file_sections(dir_.string(), {}, out, err);
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(err.str(), "");
  // tsn.json and zonal.json in the folder: a section each.
  write(dir_ / "tsn.json", tsn_doc().dump());
  write(dir_ / "zonal.json", R"({"rows": []})");
  auto both = result_file_sections(dir_.string(), {}, out, err);
  ASSERT_TRUE(both.has_value());
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].id, "tsn");
  EXPECT_EQ((*both)[1].id, "zonal");
  EXPECT_NE(out.str().find("report.html: the bench tsn results of " + (dir_ / "tsn.json").string()), std::string::npos);
  // The demo makes its own zonal section.
  auto demo = result_file_sections(dir_.string(), {.tsn_json = "", .zonal_json = "", .zonal = false}, out, err);
  ASSERT_TRUE(demo.has_value());
  EXPECT_EQ(demo->size(), 1u);
  // A found file that is not JSON is left out and said so; the rest goes on.
  write(dir_ / "zonal.json", "{not json");
  std::ostringstream err2;
  auto partial = result_file_sections(dir_.string(), {}, out, err2);
  ASSERT_TRUE(partial.has_value());
  EXPECT_EQ(partial->size(), 1u);
  EXPECT_NE(err2.str().find((dir_ / "zonal.json").string() + ": not valid JSON"), std::string::npos) << err2.str();
  EXPECT_NE(err2.str().find("left out of report.html"), std::string::npos);
  // A given file that is missing, not JSON, not an object or a directory: an error naming it.
  write(dir_ / "array.json", "[1, 2]");
  for (const auto& [given, why] : std::vector<std::pair<fs::path, std::string>>{
           {dir_ / "missing.json", "No such file or directory"},
           {dir_ / "zonal.json", "not valid JSON"},
           {dir_ / "array.json", "not a JSON object"},
           {dir_, "not a regular file"}}) {
    std::ostringstream e;
    auto r = result_file_sections(dir_.string(), {.tsn_json = given.string(), .zonal_json = "", .zonal = false}, out, e);
    EXPECT_FALSE(r.has_value()) << given;
    EXPECT_NE(e.str().find(given.string()), std::string::npos) << e.str();
    EXPECT_NE(e.str().find(why), std::string::npos) << e.str();
  }
}

// A real `layersec bench tsn --json` document (tests/report/tsn_bench_sample.json):
// every row the bench wrote is in the table, with its figures.
TEST(HarnessReportTsnTest, ARecordedBenchTsnDocument) {
  std::ifstream in(layersec::testing::source_dir() / "tests/report/tsn_bench_sample.json");
  ASSERT_TRUE(in.good());
  const json d = json::parse(in);
  const ReportSection s = tsn_report_section(d);
  const ReportTable* rows = find_table(s, "table-tsn");
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(rows->rows.size(), d["rows"].size());
  for (std::size_t i = 0; i < rows->rows.size(); ++i) {
    EXPECT_EQ(rows->rows[i][0], d["rows"][i]["name"].get<std::string>());
    EXPECT_NE(rows->rows[i][column(*rows, "delivered")], "–");
    if (d["rows"][i]["class"] == "ST") {
      for (const char* h : {"p50", "p99", "max", "bound", "timed"}) EXPECT_NE(rows->rows[i][column(*rows, h)], "–") << h;
    }
  }
  EXPECT_EQ(s.notes.size(), d["goals"].size() + d["notes"].size());
  const ReportTable* paper = find_table(s, "table-tsn-paper");
  ASSERT_NE(paper, nullptr);
  for (const auto& r : paper->rows) EXPECT_NE(r.back(), "–") << r[0];
}

}  // namespace
}  // namespace layersec::harness
