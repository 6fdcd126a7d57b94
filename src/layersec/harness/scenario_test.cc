// The spec sets are what the demo and `bench scenarios` promise: the paper's
// ten sub-scenarios in Table 14's order, and the sweeps with every series.
#include "layersec/harness/scenario.h"

#include <gtest/gtest.h>

#include <set>

namespace layersec::harness {
namespace {

TEST(HarnessTestbedTest, PaperSpecsAreTheTenSubScenarios) {
  const auto specs = paper_scenario_specs(500, 1);
  ASSERT_EQ(specs.size(), 10u);
  const char* ids[] = {"1-A", "1-B", "2a-A", "2a-B", "2b-A", "2b-B", "3a-A", "3a-B", "3b-A", "3b-B"};
  for (std::size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(specs[i].paper_id, ids[i]);
    EXPECT_EQ(specs[i].iterations, 500);
    EXPECT_EQ(specs[i].testbed.payload_bytes, 64u);
    EXPECT_EQ(specs[i].testbed.subscribers, specs[i].testbed.multicast ? 2 : 1);
  }
}

TEST(HarnessResultsTest, BenchSpecsCoverTheSweeps) {
  BenchScenarioOptions o;
  const auto specs = bench_scenario_specs(o);
  bool tp = false, n64 = false, load = false, p1400 = false;
  for (const auto& s : specs) {
    tp = tp || s.series == "someip-tp";
    n64 = n64 || (s.testbed.subscribers == 64 && s.testbed.keys == KeyDistribution::kGroupModeB);
    load = load || s.testbed.background_mbps > 0;
    p1400 = p1400 || s.testbed.payload_bytes == 1400;
  }
  EXPECT_TRUE(tp);
  EXPECT_TRUE(n64);
  EXPECT_TRUE(load);
  EXPECT_TRUE(p1400);
  EXPECT_EQ(max_subscribers(specs), 64);
}

TEST(HarnessScenarioTest, SpecsHaveUniqueNamesAndSeeds) {
  BenchScenarioOptions o;
  o.seed = 7;
  std::vector<std::vector<ScenarioSpec>> sets = {paper_scenario_specs(20, 1), group_size_specs({1, 2, 4}, 20, 1001),
                                                 bench_scenario_specs(o)};
  for (const auto& specs : sets) {
    std::set<std::string> names;
    std::set<std::uint64_t> seeds;
    for (const auto& s : specs) {
      EXPECT_TRUE(names.insert(s.name).second) << s.name;
      EXPECT_TRUE(seeds.insert(s.testbed.seed).second) << s.name;
    }
  }
  // The seeds are part of the output's reproducibility: spec k of the bench
  // sweep runs with seed + 10 k, the TP rows with a quarter of the iterations.
  const auto bench = bench_scenario_specs(o);
  for (std::size_t k = 0; k < bench.size(); ++k) {
    EXPECT_EQ(bench[k].testbed.seed, 7u + 10u * k) << bench[k].name;
    EXPECT_EQ(bench[k].iterations, bench[k].series == "someip-tp" ? 50 : 200) << bench[k].name;
  }
  const auto groups = group_size_specs({2}, 5, 1001);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "group-hybrid-psk-n2");
  EXPECT_EQ(groups[0].testbed.seed, 1101u);
  EXPECT_EQ(groups[1].name, "group-unsecured-n2");
  EXPECT_EQ(max_subscribers(paper_scenario_specs(1, 1)), 2);
}

}  // namespace
}  // namespace layersec::harness
