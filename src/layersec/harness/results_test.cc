#include "layersec/harness/results.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "layersec/base/file.h"
#include "layersec/harness/paper.h"
#include "layersec/harness/plots.h"
#include "layersec/harness/results_csv.h"
#include "layersec/harness/results_json.h"
#include "layersec/harness/results_markdown.h"
#include "layersec/harness/results_output.h"
#include "layersec/harness/results_table.h"

namespace layersec::harness {
namespace {

ScenarioResult row(std::string name, std::string paper_id, std::string security, std::string delivery,
                   std::vector<double> samples) {
  ScenarioResult r;
  r.name = std::move(name);
  r.series = "paper-scenarios";
  r.paper_id = std::move(paper_id);
  r.security = std::move(security);
  r.key_distribution = r.security == "none" ? "none" : "psk";
  r.delivery = std::move(delivery);
  r.subscribers = r.delivery == "multicast" ? 2 : 1;
  r.iterations = static_cast<int>(samples.size());
  r.latency = summarize(samples);
  r.samples_us = std::move(samples);
  return r;
}

std::vector<ScenarioResult> sample_rows() {
  std::vector<ScenarioResult> rows;
  rows.push_back(row("unsecured-unicast", "1-A", "none", "unicast", {10, 10, 10, 20}));
  rows.push_back(row("unsecured-multicast", "1-B", "none", "multicast", {20, 20, 20, 40}));
  rows.push_back(row("secoc-psk-unicast", "2a-A", "secoc", "unicast", {30, 30, 30, 60}));
  rows.push_back(row("secoc-rsa-multicast", "2b-B", "secoc", "multicast", {40, 40, 40, 80}));
  rows.back().establishment_ms = 12.5;
  return rows;
}

TEST(HarnessResultsTest, PaperTablesHaveTheTenScenarios) {
  const auto& p = paper_scenarios();
  ASSERT_EQ(p.size(), 10u);
  EXPECT_EQ(p.front().id, "1-A");
  EXPECT_EQ(p.back().id, "3b-B");
  const auto* worst = paper_scenario("3b-B");
  ASSERT_NE(worst, nullptr);
  EXPECT_DOUBLE_EQ(worst->p99_ms, 40.99);          // Table 19
  EXPECT_DOUBLE_EQ(*worst->establishment_ms, 33.77);  // Table 17
  EXPECT_EQ(paper_scenario("9-Z"), nullptr);
  for (const auto& s : p) {
    EXPECT_LE(s.p50_ms, s.p95_ms) << s.id;
    EXPECT_LE(s.p95_ms, s.p99_ms) << s.id;
    EXPECT_EQ(s.establishment_ms.has_value(), s.id[1] == 'b') << s.id;
  }
  EXPECT_EQ(paper_hybrid_group_ms(16).value_or(0), 35.4);  // Table 21
  EXPECT_FALSE(paper_hybrid_group_ms(3).has_value());
}

TEST(HarnessResultsTest, BaselinesUseTheSameDeliveryMode) {
  auto rows = sample_rows();
  apply_baselines(rows, "unsecured-unicast", "unsecured-multicast");
  const auto& uni = rows[0];
  const auto& secoc = rows[2];
  const auto& rsa_multi = rows[3];
  ASSERT_TRUE(secoc.ratio_p99.has_value());
  EXPECT_DOUBLE_EQ(*secoc.baseline_p99_us, uni.latency.p99);
  EXPECT_DOUBLE_EQ(*secoc.ratio_p99, secoc.latency.p99 / uni.latency.p99);
  EXPECT_DOUBLE_EQ(*rsa_multi.baseline_p99_us, rows[1].latency.p99);
  EXPECT_DOUBLE_EQ(*rows[0].ratio_p99, 1.0);
}

TEST(HarnessResultsTest, JsonRowHasTheDocumentedFields) {
  auto rows = sample_rows();
  apply_baselines(rows, "unsecured-unicast", "unsecured-multicast");
  RunInfo info;
  info.command = "demo";
  info.seed = 7;
  const nlohmann::json j = results_json(info, rows);
  ASSERT_EQ(j["scenarios"].size(), rows.size());
  for (const auto& s : j["scenarios"]) {
    for (const char* k : {"name", "topology", "iterations", "mean_us", "p50_us", "p95_us", "p99_us", "max_us",
                          "cpu_pct", "rss_kib", "baseline_p99_us", "ratio_p99", "paper"}) {
      EXPECT_TRUE(s.contains(k)) << k;
    }
    EXPECT_LE(s["p50_us"].get<double>(), s["p99_us"].get<double>());
    EXPECT_LE(s["p99_us"].get<double>(), s["max_us"].get<double>());
    ASSERT_TRUE(s["paper"].is_object());
    EXPECT_EQ(s["paper"]["label"], "paper");
  }
  EXPECT_EQ(j["scenarios"][2]["paper"]["mean_ms"].get<double>(), 28.37);
  ASSERT_EQ(j["establishment"].size(), 1u);
  EXPECT_EQ(j["establishment"][0]["establishment_ms"].get<double>(), 12.5);
  EXPECT_EQ(j["establishment"][0]["paper"]["establishment_ms"].get<double>(), 31.33);
  EXPECT_EQ(j["run"]["seed"], 7);
  // Samples only on request.
  EXPECT_FALSE(to_json(rows[0]).contains("samples_us"));
  EXPECT_EQ(to_json(rows[0], true)["samples_us"].size(), 4u);
}

TEST(HarnessResultsTest, CsvHasOneLinePerRowAndAConsistentColumnCount) {
  auto rows = sample_rows();
  rows[0].notes = "a, \"quoted\" note";  // notes are not in the CSV, names could be
  rows[0].name = "name,with,commas";
  std::ostringstream out;
  write_csv(out, rows);
  std::istringstream in(out.str());
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), rows.size() + 1);
  EXPECT_EQ(lines[0], csv_header());
  EXPECT_EQ(lines[1].rfind("\"name,with,commas\",", 0), 0u);
  auto columns = [](const std::string& l) {
    std::size_t n = 1;
    bool quoted = false;
    for (char c : l) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++n;
    }
    return n;
  };
  for (const auto& l : lines) EXPECT_EQ(columns(l), columns(lines[0])) << l;
}

TEST(HarnessResultsTest, MarkdownLabelsThePaperFigures) {
  auto rows = sample_rows();
  RunInfo info;
  info.command = "demo";
  info.method = "METHOD-PARAGRAPH";
  std::ostringstream md;
  write_markdown(md, info, rows);
  const std::string s = md.str();
  EXPECT_NE(s.find("METHOD-PARAGRAPH"), std::string::npos);
  EXPECT_NE(s.find("paper mean ms"), std::string::npos);
  EXPECT_NE(s.find("Table 17"), std::string::npos);
  EXPECT_NE(s.find("2a-A secoc-psk-unicast"), std::string::npos);
  std::ostringstream text;
  write_text_table(text, rows);
  EXPECT_NE(text.str().find("31.33"), std::string::npos);  // establishment, paper
}

ScenarioResult group_row(int n, std::vector<double> samples) {
  ScenarioResult r = row("group-hybrid-psk-n" + std::to_string(n), "", "hybrid", "multicast", std::move(samples));
  r.series = "group-size";
  r.subscribers = n;
  r.timing_model = kParallelEcus;
  r.one_way = r.latency;  // the goal is judged on the one-way figure
  r.latency = summarize(std::vector<double>{100.0 * n});  // half RTT: grows with N, not judged
  return r;
}

TEST(HarnessResultsTest, GroupSizeGoalComparesTheLargestNWithNTwo) {
  std::vector<ScenarioResult> rows;
  rows.push_back(group_row(2, {10, 10, 10, 10}));
  rows.push_back(group_row(8, {11, 11, 11, 11}));
  rows.push_back(group_row(64, {11, 11, 11, 11.5}));
  auto goals = group_size_goals(rows);
  ASSERT_EQ(goals.size(), 1u);
  EXPECT_EQ(goals[0].n_large, 64);
  EXPECT_EQ(goals[0].key_distribution, "psk");
  EXPECT_NEAR(goals[0].ratio_mean, 11.125 / 10, 1e-12);
  EXPECT_NEAR(goals[0].ratio_half_rtt_mean, 32.0, 1e-12);
  EXPECT_TRUE(goals[0].met);
  auto lines = group_size_goal_lines(rows);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("-> MET"), std::string::npos);
  EXPECT_NE(lines[0].find("parallel-ecus"), std::string::npos);
  // p99 beyond 1.2x fails it even with the mean inside.
  std::vector<double> tail(20, 10.0);
  tail.push_back(30.0);
  rows[2] = group_row(64, tail);
  goals = group_size_goals(rows);
  ASSERT_EQ(goals.size(), 1u);
  EXPECT_LE(goals[0].ratio_mean, 1.2);
  EXPECT_GT(goals[0].ratio_p99, 1.2);
  EXPECT_FALSE(goals[0].met);
  EXPECT_NE(group_size_goal_lines(rows)[0].find("NOT MET"), std::string::npos);
  // Unsecured rows and a series without N = 2 are not judged.
  rows.erase(rows.begin());
  EXPECT_TRUE(group_size_goals(rows).empty());
  // And the report carries the goal.
  rows.insert(rows.begin(), group_row(2, {10, 10, 10, 10}));
  std::ostringstream md;
  write_markdown(md, RunInfo{}, rows);
  EXPECT_NE(md.str().find("## Goals"), std::string::npos);
}

TEST(HarnessResultsTest, RowsSayWhichTimingModelTheyUse) {
  auto rows = sample_rows();
  rows[0].timing_model = kParallelEcus;
  rows[0].serial_latency = summarize(std::vector<double>{20, 20, 20, 40});
  const nlohmann::json a = to_json(rows[0]);
  EXPECT_EQ(a["timing_model"], "parallel-ecus");
  EXPECT_EQ(a["serial_one_thread"]["timing_model"], "serial-one-thread");
  EXPECT_DOUBLE_EQ(a["serial_one_thread"]["half_rtt"]["p99_us"].get<double>(), rows[0].serial_latency->p99);
  const nlohmann::json b = to_json(rows[1]);  // a row that did not say
  EXPECT_TRUE(b["timing_model"].is_null());
  EXPECT_TRUE(b["serial_one_thread"].is_null());
  std::ostringstream csv;
  write_csv(csv, rows);
  EXPECT_NE(csv.str().find(",parallel-ecus,"), std::string::npos);
}

TEST(HarnessResultsTest, ResultsFolderHoldsJsonCsvReportAndSamples) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("layersec-results-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto rows = sample_rows();
  RunInfo info;
  info.command = "demo";
  std::ostringstream out, err;
  ASSERT_TRUE(write_results_folder(dir.string(), info, rows, /*plots=*/false, out, err)) << err.str();
  for (const char* f : {"results.json", "results.csv", "report.md", "samples/unsecured-unicast.txt"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  }
  std::ifstream in(dir / "results.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["scenarios"].size(), rows.size());
  if (find_program("gnuplot")) {
    const PlotOutcome p = write_plots(dir.string(), rows);
    ASSERT_FALSE(p.files.empty()) << p.message;
    for (const auto& f : p.files) EXPECT_TRUE(is_png(f)) << f;
  }
  fs::remove_all(dir);
}

TEST(HarnessResultsTest, ResultsFolderRefusesASymlinkAndSaysWhere) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("layersec-results-link-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path victim = dir / "victim.txt";
  { std::ofstream(victim) << "precious\n"; }
  fs::create_symlink(victim, dir / "results.csv");
  auto rows = sample_rows();
  std::ostringstream out, err;
  EXPECT_FALSE(write_results_folder(dir.string(), RunInfo{}, rows, /*plots=*/false, out, err));
  EXPECT_NE(err.str().find((dir / "results.csv").string() + ": is a symbolic link"), std::string::npos) << err.str();
  std::ifstream in(victim);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "precious");  // not followed, not truncated
  // The other files are still written.
  EXPECT_TRUE(fs::exists(dir / "results.json"));
  EXPECT_TRUE(fs::exists(dir / "report.md"));
  fs::remove_all(dir);
}

TEST(HarnessResultsTest, WriteResultsWritesTheJsonFileAndReportsFailures) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("layersec-results-json-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto rows = sample_rows();
  RunInfo info;
  info.command = "bench scenarios";
  std::ostringstream out, err;
  ResultsOutput to;
  to.json_path = (dir / "rows.json").string();
  ASSERT_TRUE(write_results(to, info, rows, out, err)) << err.str();
  EXPECT_NE(out.str().find("json: " + to.json_path), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "results.csv"));  // no folder asked for
  std::ifstream in(to.json_path);
  EXPECT_EQ(nlohmann::json::parse(in)["run"]["command"], "bench scenarios");
  // A directory where the file should be: refused, with the path.
  to.json_path = dir.string();
  std::ostringstream out2, err2;
  EXPECT_FALSE(write_results(to, info, rows, out2, err2));
  EXPECT_NE(err2.str().find(dir.string() + ": "), std::string::npos) << err2.str();
  EXPECT_EQ(out2.str().find("json:"), std::string::npos);
  fs::remove_all(dir);
}

TEST(HarnessResultsTest, FiguresAreNamedForTheirTimingModel) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("layersec-results-model-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto rows = sample_rows();
  rows[0].timing_model = kParallelEcus;
  rows[1].timing_model = kSerialOneThread;
  EXPECT_EQ(timing_model_text(kParallelEcus), "critical-path time of the parallel-ECU model");
  EXPECT_EQ(timing_model_text(kSerialOneThread), "elapsed time on one thread");
  EXPECT_EQ(timing_model_text("real-threads"), "elapsed time, real-threads");
  EXPECT_EQ(timing_model_text(""), "timing model unstated");
  std::ostringstream out, err;
  ASSERT_TRUE(write_results_folder(dir.string(), RunInfo{}, rows, /*plots=*/false, out, err)) << err.str();
  auto first_line = [&](const std::string& name) {
    std::ifstream in(dir / "samples" / (name + ".txt"));
    std::string line;
    std::getline(in, line);
    return line;
  };
  EXPECT_NE(first_line(rows[0].name).find("critical-path time of the parallel-ECU model"), std::string::npos);
  EXPECT_NE(first_line(rows[1].name).find("elapsed time on one thread"), std::string::npos);
  std::ostringstream md;
  write_markdown(md, RunInfo{}, rows);
  EXPECT_EQ(md.str().find("real time"), std::string::npos);
  EXPECT_NE(md.str().find("the model's critical-path time"), std::string::npos);
  const auto j = results_json(RunInfo{}, rows);
  EXPECT_EQ(j["run"]["units"].get<std::string>().find("real time"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace layersec::harness
