// The JSON writer of the harness pipeline (docs/harness.md, "One pipeline"):
// result rows (results.h) as the objects of results.json and of
// `bench scenarios --json`. Builds JSON values only; results_output.h puts
// them into files.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/harness/results.h"
#include "layersec/harness/stats.h"

namespace layersec::harness {

// Adds a latency summary to a result row under the shared key names:
// completed, mean_us, stddev_us, min_us, p50_us, p95_us, p99_us, max_us
// (also the layout of `bench someip` and `bench dtls` rows).
void add_latency_fields(nlohmann::json& row, const Summary& s);

// The paper's figures for one row (object with "label": "paper" and
// "source"), or null when the row reproduces nothing the paper published.
[[nodiscard]] nlohmann::json paper_json(const ScenarioResult& r);
// One row; samples_us only when asked.
[[nodiscard]] nlohmann::json to_json(const ScenarioResult& r, bool with_samples = false);
// {"run": {...}, "scenarios": [...], "establishment": [...]}
[[nodiscard]] nlohmann::json results_json(const RunInfo& info, const std::vector<ScenarioResult>& rows);

}  // namespace layersec::harness
