// Result rows of the netns scenario sweep (netns_scenarios.h): the node
// reports of one scenario in, one ScenarioResult row out; the saturation
// judgement of a rate step, the goal verdicts and the baseline ratios.
#pragma once

#include <string>
#include <vector>

#include "layersec/harness/netns_scenarios.h"
#include "layersec/harness/results.h"
#include "layersec/harness/stats.h"

namespace layersec::harness {

// A rate as the rows and lines print it: rounded to whole events per second.
[[nodiscard]] std::string netns_rate_text(double hz);
// `v` with `digits` decimals.
[[nodiscard]] std::string netns_fixed(double v, int digits);

// Saturation judgement of one rate step (merged over every subscriber).
struct RateJudgement {
  bool ok = false;
  double p99_us = 0;            // merged subscriber one-way p99
  double loss = 0;              // lost / expected (expected = sent x subscribers)
  double achieved_hz = 0;       // publisher's achieved rate
  std::string reason;           // why not ok ("" when ok)
};
inline constexpr double kSaturationP99Us = 1000.0;
inline constexpr double kSaturationMaxLoss = 0.001;
inline constexpr double kSaturationRateTolerance = 0.05;
// `reports[0]` is the publisher's, the rest the subscribers'.
[[nodiscard]] RateJudgement judge_rate(const NetnsScenario& scenario, const std::vector<NetnsNodeReport>& reports);

// Builds the row of one scenario from its node reports (`reports[0]` the
// publisher's). Closed loop: latency = the publisher's half RTT, one way =
// publisher notify -> last subscriber; rate: both are the merged
// subscribers' one-way latency. A report with ok == false (or a missing
// one, passed as `error`) makes a failed row: notes start with "FAILED:".
[[nodiscard]] ScenarioResult netns_result_row(const NetnsScenario& scenario,
                                              const std::vector<NetnsNodeReport>& reports,
                                              const std::string& error = "");
// True when the row was marked failed by netns_result_row.
[[nodiscard]] bool netns_row_failed(const ScenarioResult& row);

// Verdict of "secured p99 within `limit` x baseline p99": "met", "not met",
// or "inconclusive (...)" when either side has no samples or its p99 is
// dominated by outliers (p99 > kOutlierDominated x p50: on a loaded machine a
// few scheduler stalls decide the p99, not the code path).
inline constexpr double kOutlierDominated = 5.0;
[[nodiscard]] std::string netns_goal_verdict(const Summary& secured, const Summary& baseline, double limit);

// Fills baseline_* and ratio_* of rows[i] from the row named
// scenarios[i].baseline, only when both are on the same path (topology);
// the baseline row gets ratio 1. rows and scenarios are parallel.
void apply_netns_baselines(std::vector<ScenarioResult>& rows, const std::vector<NetnsScenario>& scenarios);

}  // namespace layersec::harness
