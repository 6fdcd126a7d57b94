// `layersec bench scenarios`: the harness pipeline (docs/harness.md, "One
// pipeline") beyond the paper's operating point. Specs (scenario.h:
// bench_scenario_specs) -> a runner (--topology sim: sim_runner.h, plus the
// DTLS fan-out rows of dtls_fanout_rows.h; --topology netns:
// netns_scenarios.h) -> rows with their baselines (results.h) -> the
// terminal table and the writers (results_output.h: --json FILE, --out DIR).
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "layersec/harness/scenario.h"

namespace layersec::harness {

struct NetnsScenarioOptions;  // netns_scenarios.h

// Runs the sweep on options.topology ("sim" or "netns"; anything else is
// refused with status 2). `netns` is read only for "netns". Returns the exit
// status: 0 when every scenario ran and every file was written, 1
// otherwise; netns as run_netns_scenarios (2 without namespaces, 130 when
// interrupted).
int run_bench_scenarios(const BenchScenarioOptions& options, const NetnsScenarioOptions& netns, std::ostream& out,
                        std::ostream& err);

// The options as RunInfo::settings for the reports ("payloads", "64 1400";
// an empty list reads "default").
[[nodiscard]] std::vector<std::pair<std::string, std::string>> bench_settings(const BenchScenarioOptions& options);

}  // namespace layersec::harness
