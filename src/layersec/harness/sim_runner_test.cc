// The simulated runner fills every field of a row from what it measured,
// keeps the relations of the two timing models, and a spec that cannot run
// is counted and reported while the others still run.
#include "layersec/harness/sim_runner.h"

#include <gtest/gtest.h>

#include "layersec/harness/testbed_test_support.h"

#include <sstream>

namespace layersec::harness {
namespace {

TEST(HarnessTestbedTest, ScenarioRunnerFillsEveryField) {
  ScenarioSpec spec;
  spec.name = "hybrid-psk-multicast";
  spec.series = "paper-scenarios";
  spec.paper_id = "3a-B";
  spec.testbed = test_options(Security::kHybrid, KeyDistribution::kPsk, 2, true);
  spec.iterations = 12;
  spec.warmup = 2;
  const ScenarioResult r = run_scenario(spec, nullptr);
  EXPECT_EQ(r.latency.count, 12u);
  EXPECT_EQ(r.samples_us.size(), 12u);
  EXPECT_EQ(r.timeouts, 0u);
  EXPECT_EQ(r.security_rejections, 0u);
  EXPECT_LE(r.latency.p50, r.latency.p99);
  EXPECT_LE(r.latency.p99, r.latency.max);
  EXPECT_GT(r.latency.min, 0.0);
  EXPECT_EQ(r.one_way.count, 12u);
  EXPECT_EQ(r.timing_model, "parallel-ecus");
  ASSERT_TRUE(r.serial_latency.has_value());
  ASSERT_TRUE(r.serial_one_way.has_value());
  EXPECT_EQ(r.serial_latency->count, 12u);
  // Per iteration model <= serial, so every order statistic too.
  EXPECT_LE(r.latency.min, r.serial_latency->min);
  EXPECT_LE(r.latency.p50, r.serial_latency->p50);
  EXPECT_LE(r.latency.max, r.serial_latency->max);
  EXPECT_LE(r.one_way.max, r.serial_one_way->max);
  EXPECT_EQ(r.secoc_ops_per_iteration, 7u);
  EXPECT_GT(r.secoc_path_us, 0.0);
  EXPECT_GT(r.secoc_path_p50_us, 0.0);
  EXPECT_GT(r.rss_kib, 0u);
  EXPECT_GE(r.frames_on_wire, 12u * 3u);  // at least the event and 2 answers per iteration
  EXPECT_EQ(r.delivery, "multicast");
  EXPECT_EQ(r.security, "hybrid");
}

TEST(HarnessTestbedTest, GroupSizeSeriesReportsTheParallelModelAndTheGoal) {
  auto specs = group_size_specs({2, 6}, 4, 3, /*hybrid_only=*/true);
  ASSERT_EQ(specs.size(), 2u);
  std::vector<ScenarioResult> rows;
  for (auto& spec : specs) {
    spec.warmup = 1;
    rows.push_back(run_scenario(spec, nullptr));
  }
  for (const auto& r : rows) {
    EXPECT_EQ(r.series, "group-size");
    EXPECT_EQ(r.timing_model, "parallel-ecus");
    EXPECT_EQ(r.latency.count, 4u);
    ASSERT_TRUE(r.serial_latency.has_value());
    EXPECT_LE(r.latency.max, r.serial_latency->max);
    EXPECT_EQ(r.secoc_ops_per_iteration, 1u + 3u * static_cast<std::uint64_t>(r.subscribers));
  }
  const auto goals = group_size_goals(rows);
  ASSERT_EQ(goals.size(), 1u);
  EXPECT_EQ(goals[0].n_large, 6);
  EXPECT_EQ(goals[0].timing_model, "parallel-ecus");
  EXPECT_DOUBLE_EQ(goals[0].ratio_p99, rows[1].one_way.p99 / rows[0].one_way.p99);
  EXPECT_DOUBLE_EQ(goals[0].ratio_half_rtt_p99, rows[1].latency.p99 / rows[0].latency.p99);
  const auto lines = group_size_goal_lines(rows);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("N=6"), std::string::npos);
  // The line states the verdict the goal computed ("-> MET (" never matches "-> NOT MET (").
  EXPECT_NE(lines[0].find(goals[0].met ? "-> MET (" : "-> NOT MET ("), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find(goals[0].met ? "-> NOT MET" : "-> MET"), std::string::npos) << lines[0];
}

TEST(HarnessSimRunnerTest, AFailingSpecIsCountedAndTheOthersRun) {
  ScenarioSpec ok;
  ok.name = "unsecured-unicast";
  ok.testbed = test_options(Security::kNone, KeyDistribution::kNone);
  ok.iterations = 3;
  ok.warmup = 0;
  ScenarioSpec rsa = ok;  // Mode B without credentials: the testbed refuses it
  rsa.name = "secoc-rsa-unicast";
  rsa.testbed = test_options(Security::kSecoc, KeyDistribution::kRsaModeB);
  std::ostringstream err;
  const SimRun run = run_scenarios({rsa, ok}, nullptr, /*progress=*/false, err);
  EXPECT_EQ(run.failures, 1);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_EQ(run.rows[0].name, "unsecured-unicast");
  EXPECT_EQ(run.rows[0].latency.count, 3u);
  EXPECT_NE(err.str().find("layersec: scenario secoc-rsa-unicast failed: "), std::string::npos) << err.str();
}

}  // namespace
}  // namespace layersec::harness
